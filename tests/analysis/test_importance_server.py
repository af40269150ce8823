"""End to end against a real OpenAI-compatible server: ``transformers serve`` on 127.0.0.1 with the
embedded model (offline, from the local safetensors cache), counterfactual resampling of a short
captured GSM8K trace through ``OpenAIBackend``, and the scores in the saved trace. The test stops
the server it started."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
pytest.importorskip("openai", reason="transformers serve needs openai (requirements-dev.txt)")

pytestmark = [
    pytest.mark.model,
    pytest.mark.server,
    pytest.mark.timeout(1800),  # server start + a capture + 10 requests on a loaded machine
]


@pytest.fixture(scope="module")
def server(transformers_server):
    return transformers_server  # the embedded model served for this module (tests/conftest.py)


@pytest.fixture(scope="module")
def gsm8k_trace():
    from o3viz import load_model
    from o3viz.run.capture import capture
    from o3viz.tasks.spec import load_task

    try:
        spec = load_task("gsm8k:0")
    except Exception as exc:  # noqa: BLE001 - no GSM8K data here: nothing to test against
        pytest.skip(f"GSM8K unavailable: {exc}")
    model, tok = load_model()
    from o3viz.run.request import RunRequest

    trace = capture(model, tok, RunRequest(prompt=spec.prompt, max_new_tokens=48), task=spec.task)
    if len(trace.final.steps) < 3:
        pytest.skip("the capture has fewer than 3 steps")
    trace.final.steps = trace.final.steps[:4]  # a short trace: 5 prefixes
    return trace, (model, tok)


def test_resampling_through_transformers_serve_lands_in_the_trace(server, gsm8k_trace, tmp_path):
    from o3viz.analysis.importance import OpenAIBackend, RolloutCache, Sampling, add_importance
    from o3viz.analysis.importance.resample import resample_importance
    from o3viz.trace import load_trace

    base_url, model_path = server
    trace, reader = gsm8k_trace
    # transformers serve samples only when the request's generation config says so
    gen = {"do_sample": True, "eos_token_id": 2, "pad_token_id": 2}
    backend = OpenAIBackend(
        base_url, model_path, extra_body={"generation_config": json.dumps(gen)}, timeout=300
    )
    rec = resample_importance(
        trace,
        backend,
        reader,
        k=2,
        sampling=Sampling(max_tokens=6, seed=1),
        cache=RolloutCache(tmp_path / "c"),
    )
    add_importance(trace, rec)
    back = load_trace(trace.save(tmp_path / "r.o3trace.json"))
    got = back.final.importance[0]
    assert got.method == "resample" and got.model["model_id"] == f"openai:{base_url}:{model_path}"
    assert got.info["rollouts"] == 10 and got.info["complete"] is True
    assert len(got.scores) == 4 and all(v is not None for v in got.series["resampling_kl"])
    assert all(v is not None for v in got.series["resampling_accuracy"])  # GSM8K has a reference
    texts = [t for f in (tmp_path / "c").glob("*.jsonl") for t in map(json.loads, f.read_text().splitlines())]
    assert len(texts) == 10 and any(t.strip() for t in texts)  # real text came back from the server
