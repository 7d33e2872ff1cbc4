"""drive_auth.py N CLIENTS SETTINGS... : /me on 4 tokens while other clients log them out and in."""
import collections, json, random, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from harness import Server, req, jget, SETTINGS, errsum

N, C = int(sys.argv[1]), int(sys.argv[2])
for name in sys.argv[3:]:
    with Server("app_auth:make_app", **SETTINGS[name]) as srv:
        codes = collections.Counter(); lk = threading.Lock()
        def call(i):
            r = random.Random(i); t = r.randrange(4); k = r.randrange(10)
            path = f"/me?t={t}" if k < 6 else (f"/logout?t={t}" if k < 8 else f"/login?t={t}")
            try: s, b = req(srv.port, "GET", path)
            except Exception as e: s = "EXC " + type(e).__name__
            with lk: codes[(path.split("?")[0], s)] += 1
        t0 = time.time()
        with ThreadPoolExecutor(C) as p: list(p.map(call, range(N)))
        st = jget(srv.port, "/state")[1]
        errs = errsum(srv.log())
        print(name, f"{time.time()-t0:.1f}s", dict(sorted(codes.items(), key=str)), json.dumps(st), dict(errs), flush=True)
