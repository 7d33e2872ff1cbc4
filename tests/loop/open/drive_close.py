"""drive_close.py PATH N CLIENTS SPIN SETTINGS... : clients send a request then close after a short wait."""
import collections, json, random, socket, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from harness import Server, jget, SETTINGS, errsum

PATH, N, CL, SPIN = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for name in sys.argv[5:]:
    with Server("app_close:make_app", **SETTINGS[name]) as srv:
        outc = collections.Counter(); lk = threading.Lock()
        def call(i):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(f"GET {PATH}?id={i}&n={SPIN} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            if i % 2:
                time.sleep(random.Random(i).uniform(0.001, 0.02))
                s.close(); k = "closed"
            else:
                s.settimeout(30); data = b""
                try:
                    while b"done" not in data:
                        d = s.recv(65536)
                        if not d: break
                        data += d
                    k = data.split(b" ")[1] if data else b"EMPTY"
                except Exception as e: k = type(e).__name__
                s.close()
            with lk: outc[k] += 1
        t0 = time.time()
        with ThreadPoolExecutor(CL) as pool: list(pool.map(call, range(N)))
        time.sleep(1.0)
        st = jget(srv.port, "/state")[1]
        errs = errsum(srv.log())
        print(name, f"{time.time()-t0:.1f}s", dict(outc), json.dumps(st), dict(errs), flush=True)
