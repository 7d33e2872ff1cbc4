"""Start the test apps under ``tornado-stm serve`` and under stock Tornado, on free ports.

Both run as real subprocesses of the interpreter running the tests; the
server processes are stopped by the fixture that started them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import tornado.httpclient

from testsupport.serverproc import ServerProcess, free_port, start_server

HERE = os.path.dirname(os.path.abspath(__file__))


def serve_command(target: str, port: int, *options: str) -> list[str]:
    """``tornado-stm serve TARGET`` as ``python -m tornado_stm`` of this interpreter."""
    return [sys.executable, "-m", "tornado_stm", "serve", target, "--port", str(port), *options]


def start_stm_server(target: str, tmp_dir: str, *options: str, probe: str = "/",
                     name: str = "stm", env: dict[str, str] | None = None) -> ServerProcess:
    port = free_port()
    return start_server(serve_command(target, port, *options), port,
                        os.path.join(tmp_dir, f"{name}.out"), cwd=HERE, probe=probe,
                        env={**_env(), **(env or {})})


def start_stock_server(module_file: str, tmp_dir: str, probe: str = "/",
                       name: str = "stock") -> ServerProcess:
    port = free_port()
    return start_server([sys.executable, os.path.join(HERE, module_file), "--port", str(port)],
                        port, os.path.join(tmp_dir, f"{name}.out"), cwd=HERE, probe=probe,
                        env=_env())


def _env() -> dict[str, str]:
    # The servers run with tests/loop as their directory: let them import
    # tornado_stm and bench from the work tree like the tests do.
    root = os.path.dirname(os.path.dirname(HERE))
    return {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}



def post_all(port: int, paths: list[str]) -> list:
    """POST an empty body to each of ``paths`` at once (32 connections); the responses, in order."""
    async def post() -> list:
        client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=32)
        try:
            return await asyncio.gather(*(
                client.fetch(f"http://127.0.0.1:{port}{path}", method="POST", body="",
                             raise_error=False, request_timeout=120, connect_timeout=60)
                for path in paths))
        finally:
            client.close()
    return asyncio.run(post())


def get_json(port: int, path: str) -> dict:
    """GET ``path`` and decode its JSON answer."""
    async def fetch() -> dict:
        client = tornado.httpclient.AsyncHTTPClient(force_instance=True)
        try:
            return json.loads((await client.fetch(f"http://127.0.0.1:{port}{path}")).body)
        finally:
            client.close()
    return asyncio.run(fetch())
