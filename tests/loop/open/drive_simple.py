"""drive_simple.py APP PATH METHOD N CLIENTS SETTINGS... : hammer one path, print codes, state, errors."""
import collections, json, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from harness import Server, req, jget, SETTINGS

app, path, method, n, clients = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
for name in sys.argv[6:]:
    kw = SETTINGS[name]
    with Server(f"{app}:make_app", **kw) as srv:
        codes = collections.Counter(); lk = threading.Lock(); bad = []
        def call(i):
            p = path.replace("{i8}", str(i // 8)).replace("{i}", str(i))
            try:
                s, b = req(srv.port, method, p, body=b"" if method == "POST" else None, timeout=30)
            except Exception as e:
                s, b = "EXC:" + type(e).__name__, b""
            with lk:
                codes[s] += 1
                if s != 200 and len(bad) < 3: bad.append((p, s, b[:200]))
        t0 = time.time()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(call, range(n)))
        st = jget(srv.port, "/state")[1]
        log = srv.log()
        errs = collections.Counter(l.strip()[:60] for l in log.splitlines() if "Error:" in l or "Exception:" in l)
        print(name, f"{time.time()-t0:.1f}s", dict(codes), json.dumps(st), dict(errs), flush=True)
