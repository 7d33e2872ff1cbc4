"""drive_sse.py SUBS POSTERS POSTS SETTINGS... : every subscriber must receive every message, once, in
the same order as every other subscriber."""
import collections, http.client, socket, sys, threading, time
from harness import Server, jget, SETTINGS, errsum

NS, NP, NM = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for name in sys.argv[4:]:
    with Server("app_sse:make_app", **SETTINGS[name]) as srv:
        got = [[] for _ in range(NS)]; errs_c = []
        def sub(i):
            s = socket.create_connection(("127.0.0.1", srv.port)); s.settimeout(20)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            buf = b""
            try:
                while b"data: END" not in buf:
                    d = s.recv(65536)
                    if not d: break
                    buf += d
            except Exception as e: errs_c.append(repr(e))
            s.close()
            body = buf.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in buf else b""
            # chunked framing: keep only data lines
            got[i] = [l[6:].decode() for l in body.split(b"\n") if l.startswith(b"data: ")]
        subs = [threading.Thread(target=sub, args=(i,)) for i in range(NS)]
        for t in subs: t.start()
        for _ in range(100):
            if jget(srv.port, "/state")[1]["open"] == NS: break
            time.sleep(0.05)
        def poster(j):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20)
            for k in range(NM):
                c.request("POST", f"/post?m={j}-{k}", body=b""); r = c.getresponse(); r.read()
                if r.status != 200: errs_c.append(("post", r.status))
            c.close()
        t0 = time.time()
        ps = [threading.Thread(target=poster, args=(j,)) for j in range(NP)]
        for t in ps: t.start()
        for t in ps: t.join()
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20); c.request("POST", "/post?m=END", body=b""); c.getresponse().read()
        for t in subs: t.join(25)
        want = NP * NM + 1
        counts = [len(g) for g in got]
        dups = sum(len(g) - len(set(g)) for g in got)
        order = sum(1 for g in got if g != got[0])
        ok = all(n == want for n in counts) and not dups and not order and not errs_c
        print(name, "OK" if ok else "FAIL", f"{time.time()-t0:.1f}s", "want", want, "min/max", min(counts), max(counts),
              "dups", dups, "order-differs", order, errs_c[:3], jget(srv.port, "/state")[1], errsum(srv.log()), flush=True)
