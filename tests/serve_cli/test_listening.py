"""Where ``tornado-stm serve`` listens, checked with real clients on loopback.

Ports are validated, the banner shows the port really bound and comes
only after the bind succeeded, several hosts (IPv6 included), Unix
sockets, inherited descriptors, TLS with a certificate made here, and
proxy headers trusted only from the allowed peers.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess

import pytest

from tests.serve_cli.helpers import get, ipv6_loopback, run_serve, start


def one_error_line(result: subprocess.CompletedProcess, *fragments: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], result.stderr
    return errors[0]


@pytest.mark.parametrize("port,problem", [("70001", "70001 is not a port number (0 to 65535)"),
                                          ("-1", "-1 is not a port number"),
                                          ("http", "'http' is not a port number")])
def test_port_must_be_0_to_65535(port, problem) -> None:
    one_error_line(run_serve("shapes_app:app", "--port", port), "--port", problem)


@pytest.mark.parametrize("arguments,fragments", [
    (["--bind", "[::1"], ["--bind", "is not [IPV6]:PORT"]),
    (["--bind", "unix:"], ["--bind", "names no path"]),
    (["--bind", "127.0.0.1:99999"], ["--bind", "99999 is not a port number"]),
    (["--fd", "x"], ["--fd", "is not a file descriptor number"]),
    (["--fd", "987"], ["--fd 987: not an open file descriptor"]),
    (["--forwarded-allow-ips", "10.0.0.300"], ["--forwarded-allow-ips", "'10.0.0.300'"]),
    (["--bind", "unix:/no/such/dir/s.sock"], ["cannot listen on unix:/no/such/dir/s.sock"]),
])
def test_bad_listening_options_are_one_line(arguments, fragments) -> None:
    one_error_line(run_serve("shapes_app:app", *arguments), *fragments)


def test_port_zero_prints_the_port_really_bound(tmp_path) -> None:
    served = start(str(tmp_path / "out"), "shapes_app:app", "--port", "0")
    try:
        assert served.port != 0
        assert get(served.urls[0])[0] == 200
    finally:
        assert served.stop() == 0, served.output()


def test_port_in_use_fails_before_any_banner() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_serve("shapes_app:app", "--port", str(port))
    one_error_line(result, f"cannot listen on 127.0.0.1:{port}", "in use")
    assert "listening on" not in result.stdout


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_several_hosts_ipv6_and_bind_share_port_zero(tmp_path) -> None:
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        other_port = spare.getsockname()[1]
    served = start(str(tmp_path / "out"), "shapes_app:app", "--host", "127.0.0.1",
                   "--host", "::1", "--port", "0", "--bind", f"127.0.0.2:{other_port}",
                   sockets=3)
    try:
        port = served.port
        assert served.urls == [f"http://127.0.0.1:{port}/", f"http://[::1]:{port}/",
                               f"http://127.0.0.2:{other_port}/"]
        for url in served.urls:
            assert get(url)[0] == 200, url
    finally:
        assert served.stop() == 0, served.output()


def test_unix_socket(tmp_path) -> None:
    path = str(tmp_path / "serve.sock")
    served = start(str(tmp_path / "out"), "shapes_app:app", "--bind", f"unix:{path}")
    try:
        assert served.urls == [f"unix:{path}"]
        status, body = get(served.urls[0], "/who")
        assert status == 200
        # curl, as a proxy in front of it would
        curl = subprocess.run(["curl", "-s", "--unix-socket", path, "http://local/"],
                              capture_output=True, timeout=60)
        assert json.loads(curl.stdout)["greeting"] == "hello"
    finally:
        assert served.stop() == 0, served.output()
    # A clean stop removes the socket's file, as it was before the server started.
    assert not os.path.exists(path), served.output()


def test_inherited_descriptor(tmp_path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        served = start(str(tmp_path / "out"), "shapes_app:app", "--fd", str(listener.fileno()),
                       pass_fds=(listener.fileno(),))
    finally:
        listener.close()  # the server has its own copy
    try:
        assert served.urls == [f"http://127.0.0.1:{port}/"]
        assert get(served.urls[0])[0] == 200
    finally:
        assert served.stop() == 0, served.output()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1, made by the openssl command."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=120)
    return cert, key


def test_tls_with_a_self_signed_certificate(tmp_path, certificate) -> None:
    cert, key = certificate
    served = start(str(tmp_path / "out"), "shapes_app:app", "--port", "0",
                   "--certfile", cert, "--keyfile", key)
    try:
        url = served.urls[0]
        assert url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=cert)   # verifies name and chain
        import http.client
        connection = http.client.HTTPSConnection("127.0.0.1", served.port, context=context,
                                                 timeout=60)
        connection.request("GET", "/who")
        answer = json.loads(connection.getresponse().read())
        connection.close()
        assert answer["protocol"] == "https"
        # Plain HTTP on the TLS port gets no answer.
        with pytest.raises((OSError, http.client.HTTPException)):
            get(f"http://127.0.0.1:{served.port}/", timeout=10)
    finally:
        assert served.stop() == 0, served.output()


def test_bad_tls_files_are_one_line(tmp_path, certificate) -> None:
    cert, key = certificate
    one_error_line(run_serve("shapes_app:app", "--certfile", str(tmp_path / "none.pem")),
                   "--certfile", "none.pem: no such file")
    one_error_line(run_serve("shapes_app:app", "--keyfile", key), "--keyfile", "needs --certfile")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    one_error_line(run_serve("shapes_app:app", "--certfile", str(garbage)),
                   "not a PEM certificate")
    other = tmp_path / "other.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(other), "2048"], check=True,
                   capture_output=True, timeout=120)
    one_error_line(run_serve("shapes_app:app", "--certfile", cert, "--keyfile", str(other)),
                   "does not match the certificate")


FORWARDED = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}


@pytest.mark.parametrize("options,believed", [
    ([], False),                                            # Tornado's default: no xheaders
    (["--proxy-headers"], True),                            # from 127.0.0.1, allowed by default
    (["--forwarded-allow-ips", "10.1.2.3,192.168.0.0/16"], False),  # we are not the proxy
    (["--forwarded-allow-ips", "*"], True),
])
def test_proxy_headers_only_from_allowed_peers(tmp_path, options, believed) -> None:
    served = start(str(tmp_path / "out"), "shapes_app:app", "--port", "0", *options)
    try:
        status, body = get(served.urls[0], "/who", headers=FORWARDED)
    finally:
        assert served.stop() == 0, served.output()
    answer = json.loads(body)
    if believed:
        assert answer == {"remote_ip": "203.0.113.7", "protocol": "https"}
    else:
        assert answer == {"remote_ip": "127.0.0.1", "protocol": "http"}
