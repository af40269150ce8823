"""The rollout client against hostile local servers (real sockets on 127.0.0.1): it never follows a
redirect to another origin nor sends the API key there, and every request ends within its total
deadline however slowly the server answers; a run's budget bounds all of its requests."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

import pytest

from o3viz.clients import OpenAIBackend, RolloutError, Sampling
from o3viz.clients.post import EndpointError, post

pytestmark = [pytest.mark.server]

GOOD = json.dumps({"choices": [{"text": " 5"}]}).encode()


def _serve(handler_cls):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture
def two_servers():
    """``target`` records every request's Authorization header; ``redirector`` answers 302 (or
    307 to itself) to wherever ``where["to"]`` says."""
    seen: list[str | None] = []
    where = {"to": "", "status": 302}

    class Target(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen.append(self.headers.get("Authorization"))
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", str(len(GOOD)))
            self.end_headers()
            self.wfile.write(GOOD)

        do_GET = do_POST  # a client that turns the POST into a GET on a 302 is still caught

        def log_message(self, *a):
            pass

    class Redirector(Target):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.startswith("/final"):
                seen.append(self.headers.get("Authorization"))
                self.send_response(200)
                self.send_header("Content-Length", str(len(GOOD)))
                self.end_headers()
                self.wfile.write(GOOD)
                return
            self.send_response(where["status"])
            self.send_header("Location", where["to"])
            self.send_header("Content-Length", "0")
            self.end_headers()

    target, redirector = _serve(Target), _serve(Redirector)
    yield redirector, target, where, seen
    for s in (target, redirector):
        s.shutdown()
        s.server_close()


def test_a_redirect_to_another_port_is_refused_and_the_key_never_reaches_it(two_servers):
    redirector, target, where, seen = two_servers
    where["to"] = f"http://127.0.0.1:{target.server_address[1]}/v1/completions"
    backend = OpenAIBackend(
        f"http://127.0.0.1:{redirector.server_address[1]}/v1", "m", api_key="sk-secret", retries=0
    )
    with pytest.raises(RolloutError) as err:
        backend.complete("hi", 1, Sampling(max_tokens=2))
    assert "another origin" in str(err.value) and "\n" not in str(err.value)
    assert seen == []  # the other port got nothing: no request, no Authorization


def test_a_redirect_to_another_host_name_of_the_same_port_is_refused_too(two_servers):
    redirector, _target, where, seen = two_servers
    port = redirector.server_address[1]
    where["to"] = f"http://localhost:{port}/final"  # same machine, but another origin
    with pytest.raises(RolloutError, match="another origin"):
        OpenAIBackend(f"http://127.0.0.1:{port}/v1", "m", api_key="k", retries=0).complete(
            "hi", 1, Sampling(max_tokens=2)
        )
    assert seen == []


def test_a_redirect_on_the_same_origin_is_followed_with_the_key(two_servers):
    redirector, _target, where, seen = two_servers
    where["to"], where["status"] = "/final/completions", 307
    url = f"http://127.0.0.1:{redirector.server_address[1]}/v1"
    assert OpenAIBackend(url, "m", api_key="k").complete("hi", 1, Sampling(max_tokens=2)) == [" 5"]
    assert seen == ["Bearer k"]


class _RawServer:
    """A TCP server on 127.0.0.1 that reads a request and then misbehaves as ``mode`` says:
    ``silent`` (never answers), ``slow_headers`` (a byte of the status line a second),
    ``dribble`` (whole headers, then a body of one byte every 0.2 s)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            if self.mode == "slow_headers":
                for b in b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n":
                    if self.stop.wait(1.0):
                        return
                    conn.sendall(bytes([b]))
            elif self.mode == "dribble":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                while not self.stop.wait(0.2):
                    conn.sendall(b" ")
            else:
                self.stop.wait(60)
        except OSError:
            pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.mark.parametrize("mode", ["silent", "slow_headers", "dribble"])
def test_each_request_ends_within_its_total_deadline_however_slow_the_server(mode):
    srv = _RawServer(mode)
    try:
        t0 = time.monotonic()
        with pytest.raises(EndpointError, match="deadline of 1.5 s"):
            post(f"http://127.0.0.1:{srv.port}/v1/completions", b"{}", {}, deadline_s=1.5, limit=1 << 20)
        assert time.monotonic() - t0 < 3.0
    finally:
        srv.close()


def test_a_run_budget_bounds_all_requests_and_retries_of_a_backend():
    srv = _RawServer("dribble")
    try:
        backend = OpenAIBackend(
            f"http://127.0.0.1:{srv.port}/v1", "m", retries=10, backoff=0.01, timeout=1.0, budget_s=2.0
        )
        t0 = time.monotonic()
        with pytest.raises(RolloutError, match="budget of 2 s is spent"):
            backend.complete("hi", 4, Sampling(max_tokens=2))
        assert time.monotonic() - t0 < 3.5 and backend.spent()
    finally:
        srv.close()


def test_a_backend_request_against_a_dribbling_server_fails_in_one_line_within_its_timeout():
    srv = _RawServer("dribble")
    try:
        backend = OpenAIBackend(f"http://127.0.0.1:{srv.port}/v1", "m", retries=0, timeout=1.5)
        t0 = time.monotonic()
        with pytest.raises(RolloutError, match="deadline of 1.5 s") as err:
            backend.complete("hi", 1, Sampling(max_tokens=2))
        assert time.monotonic() - t0 < 3.0 and "\n" not in str(err.value)
    finally:
        srv.close()
