"""``o3viz sample --base-url``: N requests to an OpenAI-compatible endpoint, each with its own seed,
at most ``--concurrency`` in flight, stored as a set whose samples are graded against the task's
reference; a stop keeps the finished ones. Against a stub completions server on 127.0.0.1 (the
test against ``transformers serve`` of the embedded model is the server tier's, not run here)."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from o3viz.cli.main import main
from o3viz.samples.draw import draw_endpoint, endpoint_backend
from o3viz.samples.request import SampleRequest
from o3viz.samples.sets import read_set
from o3viz.store.store import Store

pytestmark = [pytest.mark.server]  # a stub completions server on 127.0.0.1


@pytest.fixture
def stub():
    """``(base_url, state)``: even seeds answer 540 (gsm8k:3's reference), odd ones 60; ``state``
    holds every request body and the most requests seen in flight at once. Set
    ``state["fail_from"] = k`` and the k-th request on (1-based) gets a 503."""
    state = {"bodies": [], "now": 0, "most": 0, "fail_from": None}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state["bodies"].append(body)
                failing = state["fail_from"] is not None and len(state["bodies"]) >= state["fail_from"]
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            if failing:
                with lock:
                    state["now"] -= 1
                self.send_error(503, "overloaded")
                return
            time.sleep(0.05)
            answer = 540 if body["seed"] % 2 == 0 else 60
            reply = json.dumps(
                {"choices": [{"text": f"He runs 3 * 3 = 9 sprints. The answer is {answer}."}]}
            ).encode()
            with lock:
                state["now"] -= 1
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1", state
    finally:
        srv.shutdown()
        srv.server_close()


def test_n_requests_under_bounded_concurrency_become_a_graded_set(stub, capsys):
    url, state = stub
    args = [
        "sample",
        "--task",
        "gsm8k:3",
        "--n",
        "8",
        "--base-url",
        url,
        "--model",
        "m",
        "--concurrency",
        "3",
    ]
    assert main([*args, "--set", "ep"]) == 0
    assert "set ep: 8 samples stored" in capsys.readouterr().out
    assert len(state["bodies"]) == 8 and len({b["seed"] for b in state["bodies"]}) == 8
    assert 1 < state["most"] <= 3
    s = read_set(Store(), "ep")
    assert s.n == 8 and s.info["drawn"] == "endpoint" and s.info["requested"] == 8
    assert sorted(t.final.answer for t in s.traces) == ["540"] * 4 + ["60"] * 4
    assert sum(t.final.verdict == "pass" for t in s.traces) == 4


def test_a_stop_keeps_the_finished_requests(stub):
    url, _ = stub
    req = SampleRequest(task_id="gsm8k:3", n=8, base_url=url, model="m", concurrency=2)
    seen = []
    drawn = draw_endpoint(
        endpoint_backend(req),
        req,
        on_progress=lambda d, t, n: seen.append(d),
        should_stop=lambda: len(seen) >= 3,
    )
    assert drawn.stopped and 3 <= len(drawn.traces) < 8


def test_a_failed_request_keeps_the_finished_samples_and_says_how_many(stub, capsys):
    url, state = stub
    state["fail_from"] = 31
    args = ["sample", "--task", "gsm8k:3", "--n", "32", "--base-url", url, "--model", "m"]
    assert main([*args, "--concurrency", "1", "--set", "flaky"]) == 1
    out, err = capsys.readouterr()
    assert "HTTP 503" in err and "kept 30 finished sample(s) of 32 asked for" in err
    assert "set flaky: 30 samples stored" in out
    s = read_set(Store(), "flaky")
    assert s.n == 30 and s.stopped and "503" in s.info["error"]
    assert sorted(t.info["sample"]["index"] for t in s.traces) == list(range(30))


def test_a_grown_set_at_its_cap_is_refused_before_any_request(stub, capsys):
    from o3viz.samples.sets import save_set
    from o3viz.testing.sample_sets import text_sample

    url, state = stub
    traces = [text_sample(f"He runs 3 * 3 = 9 sprints. The answer is {i}.") for i in range(250)]
    save_set(Store(), "full", traces, {"prompt": traces[0].task.question, "base_url": url})
    args = ["sample", "--grow", "--set", "full", "--n", "8", "--base-url", url, "--model", "m"]
    assert main(args) == 2
    assert "250 + 8 samples is over the 256 a set holds; add at most 6" in capsys.readouterr().err
    assert state["bodies"] == [] and read_set(Store(), "full").n == 250
    assert main([*args[:5], "6", *args[6:]]) == 0  # what fits is drawn
    assert len(state["bodies"]) == 6 and read_set(Store(), "full").n == 256
