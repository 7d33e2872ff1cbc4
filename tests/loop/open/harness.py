"""Start/stop a tornado-stm server for one app; small HTTP helpers."""
from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/work/main/.venv-ft/bin/python"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, target, threads=2, loop="per-thread", faults=None, backend="stm",
                 extra=(), name=None, probe="/state", env=None):
        self.port = free_port()
        argv = [PY, "-m", "tornado_stm", "serve", target, "--port", str(self.port),
                "--no-access-log", "--backend", backend]
        if backend != "serial":
            argv += ["--threads", str(threads), "--loop", loop]
        argv += list(extra)
        e = dict(os.environ)
        e["PYTHONPATH"] = os.environ.get("STM_ROOT", os.path.abspath(os.path.join(HERE, "..", "..", "..")))
        e.pop("TORNADO_STM_FAULTS", None)
        if faults:
            e["TORNADO_STM_FAULTS"] = faults
        e.update(env or {})
        name = name or f"{target.split(':')[0]}-{backend}-{threads}-{loop}-{'f' if faults else 'n'}"
        os.makedirs(os.path.join(HERE, "logs"), exist_ok=True)
        self.log_path = os.path.join(HERE, "logs", name + ".log")
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=HERE, env=e, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited:\n" + self.log())
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                c.request("GET", probe)
                c.getresponse().read()
                c.close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server did not start:\n" + self.log())

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def errors(self, n=60) -> str:
        lines = self.log().splitlines()
        first = next((i for i, l in enumerate(lines) if l.startswith("[E") or l.startswith("[W")
                      or "Traceback" in l), None)
        return "" if first is None else "\n".join(lines[first:first + n])

    def stop(self, timeout=15):
        p = self.proc
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(10)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return p.returncode

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


def req(port, method, path, body=None, timeout=30, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def jget(port, path):
    s, b = req(port, "GET", path)
    return s, json.loads(b)


SETTINGS = {
    "t2": dict(threads=2),
    "t4": dict(threads=4),
    "t2f": dict(threads=2, faults="abort=0.05,delay=0.0002,seed=5"),
    "t4f": dict(threads=4, faults="abort=0.05,delay=0.0002,seed=5"),
    "t2sh": dict(threads=2, loop="shared"),
    "t2shf": dict(threads=2, loop="shared", faults="abort=0.05,delay=0.0002,seed=5"),
    "serial": dict(backend="serial"),
    "t1": dict(threads=1),
    "t4sh": dict(threads=4, loop="shared"),
    "t4shf": dict(threads=4, loop="shared", faults="abort=0.05,delay=0.0002,seed=5"),
}


def settings_from_argv(default=("serial", "t2", "t2f", "t4", "t2sh")):
    names = sys.argv[1:] or list(default)
    return [(n, SETTINGS[n]) for n in names]


def errsum(log, width=100):
    """Error lines of a server log, timestamps/durations/query values stripped, counted."""
    import collections, re
    out = collections.Counter()
    for l in log.splitlines():
        if "Error" in l or "Exception" in l or l.startswith("[E") or l.startswith("[W") or "assert" in l:
            l = re.sub(r"\[([EWI]) \d{6} \d\d:\d\d:\d\d ", r"[\1 ", l.strip())
            l = re.sub(r"\d+\.\d+ms", "", l)
            l = re.sub(r"\?\S*", "?..", l)
            out[l[:width]] += 1
    return dict(out.most_common(12))
