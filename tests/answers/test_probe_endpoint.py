"""The endpoint probe. Protocol tests against a stub OpenAI-compatible server on 127.0.0.1 (the
completions+logprobs format, echo scoring, retries, a malformed reply, the chat fallback), then
the endpoint test: ``transformers serve`` of the embedded model, which has ``/v1/completions``
without logprobs, so it shows forced answers without probabilities, said so."""

from __future__ import annotations

import json
import math

import pytest

from o3viz.answers.probe_endpoint import EndpointProbe
from o3viz.answers.probes import PROBES
from o3viz.errors import UsageError
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from tests.answers.stub_server import completion

pytestmark = [pytest.mark.server]

QUESTION = "Janet has 3 apples and buys 4 more. How many apples does she have now?"
REASONING = "Janet starts with 3 apples.\n\nShe buys 4 more apples.\n\n3 + 4 = 7, so she has 7 apples."


@pytest.fixture
def trace():
    return build_trace(Imported("test", REASONING, question=QUESTION), reference="7")


def logprobs_server(path, body):
    """vLLM's completions format: a forced "7" with logprobs, and echoed prompt logprobs in which
    every token of the reference has log-probability -0.5."""
    if not body.get("echo"):
        return completion("7\n", {"tokens": ["7"], "token_logprobs": [-0.1], "text_offset": [0]})
    prompt, ref_at = body["prompt"], body["prompt"].rindex("Final answer: ") + len("Final answer: ")
    pieces = [prompt[:ref_at], *prompt[ref_at:], "!"]  # the reference one character a token
    offsets = [sum(map(len, pieces[:i])) for i in range(len(pieces))]
    values = [None] + [-0.5] * (len(pieces) - 2) + [-3.0]
    return completion(prompt + "!", {"tokens": pieces, "token_logprobs": values, "text_offset": offsets})


def test_completions_with_logprobs_give_forced_answers_and_p_reference(serve, trace):
    stub = serve(logprobs_server)
    probe = EndpointProbe(stub.url, "served-r1", concurrency=4, max_new_tokens=12)
    results = probe.probe(trace, 0, [0, 1, 2], "#### 7")
    assert [(r.step, r.forced) for r in results] == [(0, "7"), (1, "7"), (2, "7")]
    assert all(r.p_reference == pytest.approx(math.exp(-0.5)) for r in results)  # "7" is one token
    asks = [b for p, b in stub.bodies if p == "/v1/completions" and not b.get("echo")]
    assert len(asks) == 3 and all(b["temperature"] == 0.0 and b["max_tokens"] == 12 for b in asks)
    assert all(b["logprobs"] == 1 and b["model"] == "served-r1" for b in asks)
    # an import has no rendered prompt: the paper's prompt, which opens a think block, so the suffix closes it
    assert asks[0]["prompt"].endswith("3 apples.\n</think>\n\nFinal answer: \\boxed{")
    echoes = [b for _, b in stub.bodies if b.get("echo")]
    assert len(echoes) == 3 and all(b["prompt"].endswith("Final answer: \\boxed{7") for b in echoes)
    assert probe.info["mode"] == "completions+logprobs" and probe.info["logprobs"] is True
    assert probe.name == "forced:endpoint:served-r1"


def test_a_reply_without_logprobs_gives_forced_answers_only_and_says_so(serve, trace, capsys):
    stub = serve(lambda path, body: completion(" 7 apples\nmore"))
    probe = EndpointProbe(stub.url, "m")
    results = probe.probe(trace, 0, [0, 1, 2], "7")
    assert [(r.forced, r.p_reference) for r in results] == [("7 apples", None)] * 3
    assert probe.info["mode"] == "completions" and probe.info["logprobs"] is False
    assert capsys.readouterr().err.count("gives no logprobs") == 1
    assert not any(b.get("echo") for _, b in stub.bodies)


def test_no_completions_route_falls_back_to_chat_continuing_the_assistant(serve, trace, capsys):
    def chat_only(path, body):
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            return 404, b'{"detail": "Not Found"}'
        return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": "7"}}]}).encode()

    stub = serve(chat_only)
    probe = EndpointProbe(stub.url, "m")
    results = probe.probe(trace, 0, [2], "7")
    assert (results[0].forced, results[0].p_reference) == ("7", None)
    (_, chat) = next(x for x in stub.bodies if x[0] == "/v1/chat/completions")
    assert chat["messages"][-1]["role"] == "assistant" and chat["continue_final_message"] is True
    assert chat["messages"][-1]["content"].endswith("7 apples.\n</think>\n\nFinal answer: \\boxed{")
    assert "no completions route" in capsys.readouterr().err and probe.info["mode"] == "chat"


def test_429_and_5xx_are_retried_and_a_malformed_reply_is_a_note(serve, trace):
    calls = {"n": 0}

    def flaky(path, body):
        calls["n"] += 1
        if calls["n"] <= 2:
            return (429 if calls["n"] == 1 else 503), b"busy"
        if "She buys" in body["prompt"]:  # step 1 (its text is in no earlier prefix)
            return 200, b'{"choices": [{"text": ' + b"[" * 100 + b"]}"  # malformed, deeply nested
        return completion("7")

    stub = serve(flaky)
    probe = EndpointProbe(stub.url, "m", retries=3, backoff=0.01, concurrency=1, logprobs=False)
    r0, r1 = probe.probe(trace, 0, [0, 1], None)
    assert r0.forced == "7" and calls["n"] >= 3
    assert r1.forced is None and "malformed" in r1.note
    refuse = serve(lambda path, body: (503, b"down"))
    probe = EndpointProbe(refuse.url, "m", retries=1, backoff=0.01)
    (r,) = probe.probe(trace, 0, [0], None)
    assert r.forced is None and "failed after 2 tries" in r.note


def test_the_registry_builds_the_endpoint_probe_and_checks_its_options(serve):
    stub = serve(logprobs_server)
    opts = {"base_url": stub.url, "served_model": "m", "concurrency": "8", "retries": "3"}
    probe = PROBES.make("endpoint", opts, model=None)
    assert isinstance(probe, EndpointProbe) and probe.concurrency == 8 and probe.retries == 3
    with pytest.raises(UsageError, match="needs -V served_model"):
        PROBES.make("endpoint", {"base_url": stub.url})
    with pytest.raises(UsageError, match="concurrency must be 1-64"):
        PROBES.make("endpoint", {**opts, "concurrency": "500"})
    with pytest.raises(UsageError, match="http://"):
        PROBES.make("endpoint", {**opts, "base_url": "file:///etc/passwd"})


@pytest.mark.model
@pytest.mark.timeout(1800)  # the server's start on a loaded machine, then a few requests
def test_transformers_serve_gives_forced_answers_without_probabilities(transformers_server, capsys):
    pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
    from o3viz import load_model
    from o3viz.run.capture import capture

    base_url, model_path = transformers_server
    model, tok = load_model(None)
    t = capture(model, tok, QUESTION, max_new_tokens=24)
    probe = PROBES.make("endpoint", {"base_url": base_url, "served_model": model_path, "concurrency": "2"})
    steps = list(range(len(t.final.steps)))
    results = probe.probe(t, 0, steps, "7")
    assert [r.step for r in results] == steps
    assert all(r.p_reference is None for r in results)
    assert any(r.forced for r in results), [r.note for r in results]
    assert probe.info["mode"] == "completions" and probe.info["logprobs"] is False
    assert "gives no logprobs" in capsys.readouterr().err
