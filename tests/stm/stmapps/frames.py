"""Generators and coroutines of application code."""

SHARED = {"steps": 0}


def counting(limit):
    for index in range(limit):
        SHARED["steps"] += 1
        yield index


def consume_fresh(limit):
    """A generator created inside the section: private, nothing inevitable."""
    return sum(counting(limit))


def consume(generator):
    """A generator created before the section: resuming it is irrevocable."""
    return list(generator)


async def handler_step(value):
    SHARED["steps"] += value
    return SHARED["steps"]
