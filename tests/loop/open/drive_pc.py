"""drive_pc.py APP GETPATH POSTPATH N CLIENTS SETTINGS...: N consumers (GET) and N producers (POST) interleaved."""
import collections, json, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from harness import Server, req, jget, SETTINGS

app, gpath, ppath, n, clients = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
for name in sys.argv[6:]:
    kw = SETTINGS[name]
    with Server(f"{app}:make_app", **kw) as srv:
        codes = collections.Counter(); lk = threading.Lock()
        def call(i):
            m, p = ("GET", gpath) if i % 2 == 0 else ("POST", ppath)
            p = p.replace("{i}", str(i))
            try:
                s, b = req(srv.port, m, p, body=b"" if m == "POST" else None, timeout=30)
            except Exception as e:
                s, b = "EXC:" + type(e).__name__, b""
            with lk:
                codes[(m, s)] += 1
        t0 = time.time()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(call, range(2 * n)))
        st = jget(srv.port, "/state")[1]
        log = srv.log()
        errs = collections.Counter(l.strip()[:60] for l in log.splitlines() if "Error:" in l or "Exception:" in l)
        print(name, f"{time.time()-t0:.1f}s", dict(codes), json.dumps(st), dict(errs), flush=True)
