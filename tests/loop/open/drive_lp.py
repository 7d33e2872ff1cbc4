"""drive_lp.py POLLERS POSTS SETTINGS... : keep-alive pollers re-poll after each answer; posters post."""
import collections, http.client, json, sys, threading, time
from harness import Server, jget, SETTINGS, errsum

NP, NPOST = int(sys.argv[1]), int(sys.argv[2])
for name in sys.argv[3:]:
    with Server("app_lp:make_app", **SETTINGS[name]) as srv:
        stop = threading.Event(); res = collections.Counter(); lk = threading.Lock(); bad = []
        def poller(i):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=15)
            last = 0
            while True:
                try:
                    c.request("GET", "/poll"); r = c.getresponse(); b = r.read()
                    try: d = json.loads(b)
                    except ValueError:
                        with lk: bad.append(("notjson", i, r.status, dict(r.getheaders()), b[:120]))
                        raise
                    with lk:
                        res["got"] += 1
                        if d["n"] <= last: bad.append(("order", i, last, d))
                    last = d["n"]
                    if d["m"] == "END": break
                except Exception as e:
                    with lk: res["EXC " + type(e).__name__] += 1; bad.append((i, repr(e)[:100]))
                    break
            c.close()
        ps = [threading.Thread(target=poller, args=(i,)) for i in range(NP)]
        for t in ps: t.start()
        time.sleep(0.3)
        def poster(j):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=15)
            for k in range(NPOST):
                c.request("POST", f"/post?m={j}-{k}", body=b""); r = c.getresponse(); r.read()
                with lk: res[("post", r.status)] += 1
                time.sleep(0.001)
            c.close()
        t0 = time.time()
        qs = [threading.Thread(target=poster, args=(j,)) for j in range(4)]
        for t in qs: t.start()
        for t in qs: t.join()
        deadline = time.time() + 20
        while any(t.is_alive() for t in ps) and time.time() < deadline:
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=15)
            c.request("POST", "/post?m=END", body=b""); c.getresponse().read(); c.close(); time.sleep(0.05)
        hung = sum(t.is_alive() for t in ps)
        for t in ps: t.join(1)
        st = jget(srv.port, "/state")[1]
        errs = errsum(srv.log())
        print(name, f"{time.time()-t0:.1f}s", "hung pollers", hung, dict(res), json.dumps(st), dict(errs), bad[:4], flush=True)
