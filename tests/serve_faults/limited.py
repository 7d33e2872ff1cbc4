"""``python limited.py NOFILE ARGS...``: ``tornado-stm ARGS`` with RLIMIT_NOFILE set to NOFILE.

The limit is set in the server's own process, the way ``ulimit -n`` would.
"""

import resource
import runpy
import sys

if __name__ == "__main__":
    limit = int(sys.argv[1])
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, max(limit, hard) if hard != -1 else hard))
    sys.argv = ["tornado-stm", *sys.argv[2:]]
    runpy.run_module("tornado_stm", run_name="__main__", alter_sys=True)
