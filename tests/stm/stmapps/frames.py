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


def log_twice(log):
    """Logs through a logger's method and through the logging module's function."""
    import logging
    log.warning("from the section")            # LOG_LINE
    logging.getLogger().warning("from the root logger")


async def log_in_a_step(log):
    log.warning("from a coroutine step")


def with_defaults(a, b=2, *, c=3):
    return a + b + c
