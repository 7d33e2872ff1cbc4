"""drive_tevent.py WAITERS SECONDS SETTINGS... : keep-alive waiters re-wait; pulsers pulse."""
import collections, http.client, sys, threading, time
from harness import Server, jget, SETTINGS, errsum

NW, SECS = int(sys.argv[1]), float(sys.argv[2])
for name in sys.argv[3:]:
    with Server("app_tevent:make_app", **SETTINGS[name]) as srv:
        res = collections.Counter(); lk = threading.Lock(); end = time.time() + SECS
        def waiter(i):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
            while time.time() < end:
                try:
                    c.request("GET", "/wait"); r = c.getresponse(); r.read()
                    with lk: res[("wait", r.status)] += 1
                except Exception as e:
                    with lk: res["EXC " + type(e).__name__] += 1
                    c.close(); c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        def pulser():
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
            while time.time() < end + 1:
                c.request("POST", "/pulse", body=b""); r = c.getresponse(); r.read()
                with lk: res[("pulse", r.status)] += 1
                time.sleep(0.0005)
        ts = [threading.Thread(target=waiter, args=(i,)) for i in range(NW)] + [threading.Thread(target=pulser) for _ in range(2)]
        for t in ts: t.start()
        for t in ts: t.join()
        print(name, dict(res), jget(srv.port, "/state")[1], errsum(srv.log()), flush=True)
