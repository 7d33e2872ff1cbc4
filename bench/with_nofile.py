"""``python -m bench.with_nofile N COMMAND...``: run COMMAND with RLIMIT_NOFILE raised to N.

``ulimit -n N`` for a child process, done by the process itself (the soft
limit, up to the hard one), so that tests and benchmarks need no shell.
"""

from __future__ import annotations

import os
import resource
import sys


def raise_nofile(wanted: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE to ``wanted`` (at most the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python -m bench.with_nofile N COMMAND [ARGS...]")
    raise_nofile(int(sys.argv[1]))
    os.execvp(sys.argv[2], sys.argv[2:])
