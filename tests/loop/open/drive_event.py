"""Waiters park; pulses come until every waiter has answered."""
import collections, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from harness import Server, req, jget, SETTINGS
N, W = int(sys.argv[1]), int(sys.argv[2])
for name in sys.argv[3:]:
    with Server("app_event:make_app", **SETTINGS[name]) as srv:
        codes = collections.Counter(); lk = threading.Lock(); done = [0]
        def waiter(i):
            try:
                s, b = req(srv.port, "GET", "/wait", timeout=30)
            except Exception as e:
                s = "EXC " + type(e).__name__
            with lk:
                codes[s] += 1; done[0] += 1
        stop = threading.Event()
        def pulser():
            while not stop.is_set():
                s, b = req(srv.port, "POST", "/pulse", body=b"")
                with lk:
                    codes["pulse %s" % s] += 1
        with ThreadPoolExecutor(W + 4) as pool:
            pulsers = [pool.submit(pulser) for _ in range(3)]
            list(pool.map(waiter, range(N)))
            stop.set()
        st = jget(srv.port, "/state")[1]
        errs = collections.Counter(l.strip()[:60] for l in srv.log().splitlines() if "Error:" in l)
        print(name, dict(codes), st, dict(errs), flush=True)
