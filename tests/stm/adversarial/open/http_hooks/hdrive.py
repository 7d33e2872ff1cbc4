"""Start `tornado-stm serve`, return (proc, host, port); stop with SIGTERM."""
import subprocess, os, re, time, signal, http.client, threading, json

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 5))
HERE = os.path.dirname(os.path.abspath(__file__))
PY_SERVE = os.path.join(ROOT, ".venv-ft", "bin", "tornado-stm")

def start(spec, threads=2, extra=(), env_extra=None):
    if threads in ("S", 0):
        threads, extra = 1, ("--backend", "serial", *extra)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT
    env.pop("TORNADO_STM_FAULTS", None)
    if env_extra: env.update(env_extra)
    p = subprocess.Popen([PY_SERVE, "serve", "--threads", str(threads), spec, "--port", "0", "--no-access-log", *extra],
                         cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    t0 = time.time()
    lines = []
    while time.time() - t0 < 20:
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"http://([\d.]+):(\d+)/", line)
        if m:
            errs = []
            threading.Thread(target=lambda: errs.extend(p.stderr), daemon=True).start()
            threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True).start()
            p.errs = errs; p.outlines = lines
            return p, m.group(1), int(m.group(2))
    p.kill()
    raise RuntimeError("no url: " + "".join(lines) + p.stderr.read())

def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait()
        return "HANG-ON-STOP"
    return p.returncode

class Client:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.c = http.client.HTTPConnection(host, port, timeout=15)
    def get(self, path):
        try:
            self.c.request("GET", path)
            r = self.c.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.c.close(); self.c = http.client.HTTPConnection(self.host, self.port, timeout=15)
            self.c.request("GET", path)
            r = self.c.getresponse()
        body = r.read()
        return r.status, dict(r.getheaders()), body.decode("utf-8", "replace")
