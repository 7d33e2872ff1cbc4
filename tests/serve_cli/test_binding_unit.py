"""binding.bind_per_loop: the socket sets one event loop per thread needs (no server)."""

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
