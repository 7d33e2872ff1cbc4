"""A counter kept as a module global that this module's functions read
plainly: no function here declares it ``global``; callers rebind it."""

count = 0


def current():
    return count
