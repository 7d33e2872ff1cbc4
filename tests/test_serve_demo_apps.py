"""`make run`'s app through `tornado-stm serve`: its handlers really run as atomic sections.

The other end-to-end tests check that responses match stock Tornado; this
one checks the part a user cannot see in a response: that the demo apps'
own modules (``apps.primes``, ``apps.astar``..., where the handlers of the
application are) are instrumented, so their handlers are
sections that can run in parallel, and that the PYPYSTM log of the run
names their lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from tests.apps.http_helpers import fetch
from testsupport.serverproc import free_port, start_server


def test_demo_handlers_run_as_sections_named_in_the_log(tmp_path) -> None:
    log_path = tmp_path / "demo.pypystm"
    port = free_port()
    server = start_server([sys.executable, "-m", "tornado_stm", "serve", "apps.demo:make_app",
                           "--port", str(port), "--threads", "2", "--log", str(log_path)],
                          port, str(tmp_path / "serve.out"))
    try:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: fetch(f"{server.url}/primes/500", timeout=120),
                                    range(4)))
        # The banner names the modules instrumented: the handlers' ones among them.
        head = server.output_head()
        instrumented = next(line for line in head.splitlines() if "instrumented (" in line)
        assert "apps.primes" in instrumented and "apps.astar" in instrumented, head
        assert "handlers: 10 in apps.astar, apps.primes, all instrumented" in head, head
    finally:
        assert server.stop() == 0, server.output_tail()
    expected = [2, 3, 5, 7, 11]
    for status, _, body in answers:
        assert status == 200
        assert body["primes"][:5] == expected

    report = json.loads(subprocess.run(
        [sys.executable, "-m", "stmlog_tools", "report", str(log_path), "--json"],
        check=True, capture_output=True, text=True).stdout)
    # One section per request at least (plus make_app's own); every one committed.
    assert report["transactions"]["committed"] >= 5
    dump = subprocess.run([sys.executable, "-m", "stmlog_tools", "dump", str(log_path)],
                          check=True, capture_output=True, text=True).stdout
    # The handler's response (self.write) is held back to its commit: it no
    # longer makes the section inevitable.
    inevitable = [line for line in dump.splitlines() if "STM_BECOME_INEVITABLE" in line]
    assert not any('apps/primes.py", line' in line for line in inevitable), dump
