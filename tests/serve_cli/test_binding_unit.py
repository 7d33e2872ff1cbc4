"""binding.bind_per_loop and take_over: the socket sets one event loop per thread needs
(no server process)."""

from __future__ import annotations

import socket

from tornado_stm import binding


def test_every_loop_gets_its_own_descriptor_of_the_same_listening_sockets(tmp_path):
    wanted = binding.endpoints(["127.0.0.1"], [binding.bind_spec(f"unix:{tmp_path}/s.sock")],
                               None)
    sets = binding.bind_per_loop(wanted, 0, 3)
    try:
        assert len(sets) == 3
        for index in (0, 1):     # the TCP socket, then the Unix one
            socks = [group[index] for group in sets]
            assert len({sock.fileno() for sock in socks}) == 3       # a descriptor each...
            assert len({sock.getsockname() for sock in socks}) == 1  # ...of one socket
        tcp = sets[0][0].getsockname()
        sets[0][0].close()       # a loop that stops closes its own descriptor only
        with socket.create_connection(tcp, timeout=10):
            pass
        connection, _ = sets[1][0].accept()
        connection.close()
    finally:
        for group in sets:
            for sock in group:
                sock.close()


def test_one_loop_is_one_set() -> None:
    sets = binding.bind_per_loop(binding.endpoints(None, None, None), 0, 1)
    try:
        assert len(sets) == 1 and sets[0][0].getsockname()[0] == "127.0.0.1"
    finally:
        for sock in sets[0]:
            sock.close()


def test_a_server_like_the_applications_keeps_its_settings_and_takes_its_sockets() -> None:
    """take_over: each loop's server is configured as the one ``app.listen`` made."""
    import tornado.httpserver
    import tornado.netutil
    import tornado.web

    from tornado_stm.loop.balance import LoadCountingServer

    class Own(tornado.httpserver.HTTPServer):
        pass

    app = tornado.web.Application()
    own = Own(app, xheaders=True, max_body_size=1234, no_keep_alive=True)
    # As add_sockets leaves it, with an accept handler that records its removal
    # (no event loop needed).
    sock = tornado.netutil.bind_sockets(0, "127.0.0.1")[0]
    removed: list[bool] = []
    own._sockets[sock.fileno()] = sock
    own._handlers[sock.fileno()] = lambda: removed.append(True)
    taken = binding.take_over(own, 2)
    try:
        assert taken is not None and taken.like is own
        assert removed == [True] and own._sockets == {} and own._handlers == {}
        assert len(taken.per_loop) == 2 and taken.balancer is not None
        like = binding.server_like(own, "delegate")
        assert isinstance(like, Own) and isinstance(like, LoadCountingServer)
        assert like.xheaders and like.conn_params.max_body_size == 1234
        assert like.conn_params.no_keep_alive and like.request_callback == "delegate"
        assert like._sockets == {} and like._connections == set()
        assert own.request_callback is app                   # the original is left as it was
        assert binding.take_over(own, 2) is None             # nothing left to take
    finally:
        for group in (taken.per_loop or []) if taken is not None else [[sock]]:
            for each in group:
                each.close()
