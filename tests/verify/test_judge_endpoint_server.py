"""The judge builds its own endpoint client from ``base_url`` and the served model name, through
``o3viz.clients`` (no ``ask`` callback threaded down from the CLI): from the registry and from
``o3viz verify``, against a stub completions server on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from o3viz.cli.main import main
from o3viz.errors import UsageError
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace
from o3viz.verify.verifiers import VERIFIERS, Solution, make_verifier

pytestmark = [pytest.mark.server]

pytestmark = [pytest.mark.server]  # a stub completions server on 127.0.0.1

SOL = Solution("What is 2 + 3?", ["2 + 3 = 6.", "So the answer is 6."])


@pytest.fixture
def stub():
    """``(base_url, bodies)``: a completions server whose every reply boxes paragraph 0, and the
    JSON body of every request it was sent."""
    bodies: list[dict] = []
    reply = json.dumps({"choices": [{"text": "Paragraph 0 is wrong. \\boxed{0}"}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1", bodies
    finally:
        srv.shutdown()
        srv.server_close()


def test_the_options_carry_no_callback():
    assert "ask" not in {o.name for o in VERIFIERS.get("judge").options}


def test_the_registry_builds_the_judge_from_base_url_and_model(stub):
    base_url, bodies = stub
    opts = {"base_url": base_url, "model": "served-name", "max_tokens": "7", "extra_body": '{"x": 1}'}
    j = make_verifier("judge", opts).verify(SOL)
    assert j.verdicts == ["wrong", None] and j.info["parsed"]
    (body,) = bodies
    assert body["model"] == "served-name" and body["max_tokens"] == 7 and body["x"] == 1
    assert body["temperature"] == 0.0 and "<paragraph_0>" in body["prompt"]


def test_the_judge_needs_the_served_model_name(stub):
    with pytest.raises(UsageError, match=r"needs -V model="):
        make_verifier("judge", base_url=stub[0])
    assert not stub[1]


def test_cli_verify_passes_base_url_and_model_and_the_judge_asks(stub, tmp_path):
    base_url, bodies = stub
    path = small_trace().save(tmp_path / "t.o3trace.json")
    argv = ["verify", str(path), "--verifier", "judge", "--base-url", base_url, "--model", "m"]
    assert main([*argv, "-V", "max_tokens=16"]) == 0
    rec = load_trace(path).final.verdicts[0]
    assert rec.verifier == "judge" and base_url in rec.info["endpoint"]
    assert len(bodies) == 1 and bodies[0]["max_tokens"] == 16
