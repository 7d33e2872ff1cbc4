"""Drive h_prep: argv TH(or S) NC NR [faults]. BAD if any /p response has now != mine
or on_finish saw another request's token."""
import sys, json, threading, time
import hdrive
TH = sys.argv[1] if len(sys.argv) > 1 else "2"
TH = TH if TH == "S" else int(TH)
NC = int(sys.argv[2]) if len(sys.argv) > 2 else 8
NR = int(sys.argv[3]) if len(sys.argv) > 3 else 100
env = {"TORNADO_STM_FAULTS": sys.argv[4]} if len(sys.argv) > 4 and sys.argv[4] else None
p, host, port = hdrive.start("h_prep:make_app", TH, env_extra=env)
bad = []; n = [0]
def client(ci):
    c = hdrive.Client(host, port)
    for j in range(NR):
        if j % 3 == 2:
            t = "%d_%d" % (ci, j)
            st, h, body = c.get("/e?t=" + t)
            if st != 400 or json.loads(body)["tok"] != t: bad.append(("get/write_error interleaved", st, body, t))
        elif j % 2:
            st, h, body = c.get("/p"); d = json.loads(body)
            if d["mine"] != d["now"]: bad.append(("prepare/get interleaved", d))
        else:
            c.get("/f?t=%d_%d" % (ci, j))
        n[0] += 1
ts = [threading.Thread(target=client, args=(i,)) for i in range(NC)]
for t in ts: t.start()
for t in ts: t.join(90)
time.sleep(0.3)
st, h, body = hdrive.Client(host, port).get("/state"); S = json.loads(body)
hdrive.stop(p)
if S["mismatch"]["n"]: bad.append(("get/on_finish interleaved", S["mismatch"]))
if S["counter"] != sum(1 for j in range(NR) if j % 3 != 2 and j % 2) * NC: bad.append(("counter", S["counter"]))
if bad:
    print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:3]); sys.exit(1)
print("OK", n[0])
