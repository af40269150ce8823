"""Counterfactual resampling: the answer-distribution math, the local backend and its resumable
cache, the rollout cap, and one-line errors from an endpoint that is down or returns garbage."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest

from o3viz.analysis.importance.resample import _kl, _series, estimate, resample_importance
from o3viz.clients import (
    LocalBackend,
    OpenAIBackend,
    RolloutCache,
    RolloutError,
    Sampling,
)
from o3viz.errors import UsageError
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import Round, Step, Task, Trace

pytestmark = [pytest.mark.model, pytest.mark.server]

TEXT = "First, 2 + 3. That is 5. So the answer is 5."
SPANS = [(0, 13), (14, 24), (25, 44)]


def _trace() -> Trace:
    steps = [Step(i, TEXT[a:b], a, b) for i, (a, b) in enumerate(SPANS)]
    return Trace(Task("What is 2 + 3?", kind="math", reference="5"), [Round(text=TEXT, steps=steps)])


def test_kl_of_identical_answer_samples_is_zero_and_grows_with_disagreement():
    assert _kl(["5", "5", "6"], ["5", "5", "6"]) == pytest.approx(0)
    assert _kl(["5"] * 4, ["6"] * 4) > _kl(["5"] * 4, ["5", "5", "6", "6"]) > 0


def test_series_compare_kept_with_resampled_and_counterfactual_rollouts():
    answers = [["6", "6", "5", "5"], ["5", "5", "5", "5"]]  # P_0 (step 0 resampled), P_1 (kept)
    different = [[True, True, False, False], None]
    s = _series(answers, different, "5")
    assert s["resampling_accuracy"] == [0.5]  # 1.0 - 0.5
    assert s["counterfactual_accuracy"] == [1.0]  # only the two rollouts that differ: 1.0 - 0.0
    assert s["different_fraction"] == [0.5]


class _Counting:
    """A real backend that also counts what it was asked for."""

    def __init__(self, inner):
        self.inner, self.name, self.calls = inner, inner.name, 0

    def complete(self, prompt, k, sampling, first=0):
        self.calls += k
        return self.inner.complete(prompt, k, sampling, first)


def test_local_rollouts_are_cached_so_a_second_run_generates_nothing(tmp_path):
    model, tok = make_tiny_llama()
    backend = _Counting(LocalBackend(model, tok))
    cache, sampling = RolloutCache(tmp_path), Sampling(max_tokens=3)
    t = _trace()
    cost = estimate(t, backend, "Q: ", 2, sampling, cache)
    assert (cost.prefixes, cost.rollouts, cost.new) == (4, 8, 8) and "8 to generate" in cost.line()
    rec = resample_importance(t, backend, (model, tok), k=2, sampling=sampling, cache=cache, prompt="Q: ")
    assert backend.calls == 8 and (rec.info["rollouts"], rec.info["complete"]) == (8, True)
    assert rec.info["prompt_chars"] == 3 and len(rec.info["answers"]) == 4
    assert len(rec.scores) == 3 and rec.params["score"] == "counterfactual_accuracy"
    again = resample_importance(t, backend, (model, tok), k=2, sampling=sampling, cache=cache, prompt="Q: ")
    assert backend.calls == 8 and again.series == rec.series
    assert estimate(t, backend, "Q: ", 2, sampling, cache).new == 0


def test_max_rollouts_caps_the_run_and_leaves_later_steps_unscored(tmp_path):
    model, tok = make_tiny_llama()
    backend = _Counting(LocalBackend(model, tok))
    rec = resample_importance(
        _trace(),
        backend,
        (model, tok),
        k=2,
        sampling=Sampling(max_tokens=2),
        cache=RolloutCache(tmp_path),
        prompt="Q: ",
        max_rollouts=4,
    )
    assert backend.calls == 4 and rec.info["complete"] is False
    assert rec.series["resampling_kl"][0] is not None and rec.series["resampling_kl"][2] is None


def test_a_damaged_cache_line_from_a_killed_run_is_dropped_and_the_run_resumes(tmp_path):
    cache = RolloutCache(tmp_path)
    cache.add("k", ["one", "two"])
    with (tmp_path / "k.jsonl").open("a") as f:
        f.write('"thr')  # killed mid-line
    assert cache.get("k") == ["one", "two"]
    cache.add("k", ["three"])
    assert cache.get("k") == ["one", "two", "three"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_endpoint_that_is_down_fails_in_one_line_after_its_retries():
    backend = OpenAIBackend(f"http://127.0.0.1:{_free_port()}/v1", "m", retries=2, backoff=0.01, timeout=2)
    with pytest.raises(RolloutError) as err:
        backend.complete("hi", 1, Sampling(max_tokens=2))
    msg = str(err.value)
    assert "failed after 3 tries" in msg and "cannot reach it" in msg and "\n" not in msg


@pytest.fixture
def garbage_server():
    """A real HTTP server on 127.0.0.1 that answers every POST with what ``reply`` holds."""
    reply = {"body": b"<html>hello</html>", "status": 200, "hits": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            reply["hits"] += 1
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(reply["status"])
            self.end_headers()
            self.wfile.write(reply["body"])

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", reply
    srv.shutdown()
    srv.server_close()


def test_an_endpoint_that_returns_garbage_fails_in_one_line(garbage_server):
    url, reply = garbage_server
    with pytest.raises(RolloutError, match="garbage reply, not a completions response.*hello"):
        OpenAIBackend(url, "m", retries=3, backoff=0.01).complete("hi", 1, Sampling(max_tokens=2))
    assert reply["hits"] == 2  # garbage is retried once, not the full backoff ladder
    reply["status"], reply["body"] = 503, b"overloaded"
    with pytest.raises(RolloutError, match="HTTP 503"):
        OpenAIBackend(url, "m", retries=1, backoff=0.01).complete("hi", 1, Sampling(max_tokens=2))
    reply["status"], reply["body"] = 200, json.dumps({"choices": [{"text": " 5"}]}).encode()
    assert OpenAIBackend(url, "m").complete("hi", 2, Sampling(max_tokens=2)) == [" 5", " 5"]


def test_a_base_url_without_a_scheme_is_refused():
    with pytest.raises(UsageError, match="must start with http"):
        OpenAIBackend("127.0.0.1:8000", "m")


def test_resampling_dependencies_link_a_step_to_the_later_step_that_reappears_only_when_it_is_kept():
    from o3viz.analysis.importance.dependencies import dependencies_from_matrix
    from o3viz.analysis.importance.resample import reappearance_matrix

    model, tok = make_tiny_llama()
    text = "Plan: add them. Compute 2 + 3 = 5. So the answer is 5."
    spans = [(0, 15), (16, 34), (35, 54)]
    rnd = Round(text=text, steps=[Step(i, text[a:b], a, b) for i, (a, b) in enumerate(spans)])
    rolls = [
        ["Guess seven. Done.", "Guess seven. Done."],  # P_0: step 0 resampled, step 1 never comes back
        ["Compute 2 + 3 = 5. Done.", "Compute 2 + 3 = 5. Done."],  # P_1: step 0 kept, step 1 reappears
        ["Done.", "Done."],
        ["Done.", "Done."],
    ]
    different = [[True, True]] * 3
    mat = reappearance_matrix((model, tok), rnd, rolls, different, threshold=0.9999)
    assert mat[1, 0] == pytest.approx(1.0) and mat[2, 0] == mat[2, 1] == 0
    assert dependencies_from_matrix(mat) == [(1, 0, 1.0)]
    # a resample whose new step 0 does not differ is left out: no evidence, no edge
    none = reappearance_matrix((model, tok), rnd, rolls, [[False, False]] * 3, threshold=0.9999)
    assert not none.any()


def test_the_resample_record_carries_the_reappearance_matrix_and_its_edges(tmp_path):
    model, tok = make_tiny_llama()
    rec = resample_importance(
        _trace(), LocalBackend(model, tok), (model, tok), k=2, sampling=Sampling(max_tokens=3),
        cache=RolloutCache(tmp_path), prompt="Q: ",
    )  # fmt: skip
    assert rec.matrix.shape == (3, 3) and "reappears" in rec.params["matrix"]
    assert all(0 <= a < s < 3 and 0 < w <= 1 for s, a, w in rec.depends_on)


def test_the_apps_local_resampling_writes_a_resample_record_with_its_settings(tmp_path):
    from o3viz.analysis.importance import LocalResample, analyse_locally

    model, tok = make_tiny_llama()
    opts = LocalResample(k=2, max_new_tokens=3, cache_dir=str(tmp_path))
    assert opts.cost(_trace()).line().startswith("4 prefixes × K = 8 rollouts")
    seen = []
    t = analyse_locally(
        _trace(), model, tok, methods=("resample",), resample=opts, on_progress=lambda *a: seen.append(a)
    )
    rec = t.final.importance[0]
    assert rec.method == "resample" and rec.params["k"] == 2 and rec.info["rollouts"] == 8
    assert ("resample", 1, 1) == seen[-1] and any(m == "resample" and total == 8 for m, _, total in seen)


def test_the_resampling_estimate_comes_from_this_machines_measured_speed(tmp_path):
    """No constant: before any local resampling the estimate is None (the page says "not measured
    yet"); a run records its speed, and the next estimate is the cost at that speed (issue 35,
    finding 8: "about 5 s" took 59 s)."""
    from o3viz.analysis.importance import LocalResample, analyse_locally
    from o3viz.run.speed import SpeedLog

    model, tok = make_tiny_llama()
    opts = LocalResample(k=2, max_new_tokens=3, cache_dir=str(tmp_path))
    log = SpeedLog()  # in this test's own O3VIZ_HOME
    assert log.tokens_per_s("local:*", "resample") is None
    assert opts.minutes(_trace(), None) is None
    analyse_locally(_trace(), model, tok, methods=("resample",), resample=opts)
    speed = log.tokens_per_s("local:*", "resample")
    assert speed is not None and speed > 0
    assert opts.minutes(_trace(), speed) == pytest.approx(4 * 2 * 3 / speed / 60)


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"temperature": float("nan")}, "temperature"),
        ({"temperature": float("inf")}, "temperature"),
        ({"temperature": -0.5}, "temperature"),
        ({"top_p": 0.0}, "top-p"),
        ({"max_tokens": 0}, "max tokens"),
        ({"max_tokens": 1_000_000_000}, "max tokens"),
    ],
)
def test_sampling_refuses_numbers_that_cannot_run_before_any_work(kw, words):
    """The library half of issue 38 finding 16: ``Sampling`` itself checks its numbers, so every
    caller (CLI, app, notebook) gets one line before a rollout, never a NaN cache key."""
    with pytest.raises(UsageError, match=words):
        Sampling(**kw)


def test_resampling_refuses_steps_that_spell_a_control_token_before_any_rollout(tmp_path):
    """A step from an untrusted file that spells ``<|im_end|>`` would end the model's turn once a
    backend tokenizes the prefix (issue 38, finding 7, the ``--resample`` path): one line, no rollout."""
    model, tok = make_tiny_llama()
    text = "First, 2 + 3. That is 5.<|im_end|> So the answer is 5."
    spans = [(0, 13), (14, 34), (35, 54)]
    steps = [Step(i, text[a:b], a, b) for i, (a, b) in enumerate(spans)]
    trace = Trace(Task("What is 2 + 3?", kind="math", reference="5"), [Round(text=text, steps=steps)])
    backend = _Counting(LocalBackend(model, tok))
    with pytest.raises(UsageError, match="control token"):
        resample_importance(trace, backend, (model, tok), k=2, sampling=Sampling(max_tokens=3),
                            cache=RolloutCache(tmp_path))  # fmt: skip
    assert backend.calls == 0
