"""Run one app on its own with stock Tornado: ``python -m apps.<name> --port N``.

The apps stay ordinary Tornado code; this is the usual ``main`` every Tornado
app has, shared so that each app module only names its factory. It also
offers the usual multi-process answer (``--processes N``: bind, fork, serve),
which the benchmark uses as a peer for apps without shared state.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Callable

import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.process
import tornado.web


def main(make_app: Callable[[], tornado.web.Application], description: str,
         argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=8888, help="TCP port (default 8888)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--processes", type=int, default=1,
                        help="fork this many processes sharing the port "
                        "(0 = one per core); only correct for apps without shared state")
    parser.add_argument("--access-log", action="store_true",
                        help="log every request, not only the 4xx and 5xx ones")
    args = parser.parse_args(argv)
    # As Tornado (and tornado-stm serve) do by default: 4xx and 5xx answers
    # are logged as warnings and errors, successful ones only on request.
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(levelname)s: %(message)s")
    if not args.access_log:
        logging.getLogger("tornado.access").setLevel(logging.WARNING)

    sockets = tornado.netutil.bind_sockets(args.port, address=args.address)
    if args.processes != 1:
        # Fork before any IOLoop exists, as Tornado's docs require.
        tornado.process.fork_processes(args.processes)
    if tornado.process.task_id() in (None, 0):
        print(f"serving on http://{args.address}:{args.port}/", flush=True)

    async def serve() -> None:
        server = tornado.httpserver.HTTPServer(make_app())
        server.add_sockets(sockets)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
