"""A stub OpenAI-compatible server on 127.0.0.1 for the endpoint probe's tests (the ``serve``
fixture in conftest.py): each request's path and JSON body are recorded, and ``reply(path, body)
-> (status, bytes)`` answers, which a test may swap while the server runs (a server that comes
back up)."""

from __future__ import annotations

import http.server
import json
import threading


class Stub:
    """A completions server: ``reply(path, body) -> (status, bytes)`` answers; ``bodies`` records."""

    def __init__(self, reply):
        self.reply, self.bodies = reply, []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.bodies.append((self.path, body))
                status, data = stub.reply(self.path, body)
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/v1"

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def completion(text, logprobs=None):
    """One completions reply holding ``text`` (and ``logprobs`` when given)."""
    choice = {"text": text, "index": 0, **({"logprobs": logprobs} if logprobs is not None else {})}
    return 200, json.dumps({"choices": [choice]}).encode()
