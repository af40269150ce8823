"""The endpoint path of sampling against a real OpenAI-compatible server: ``transformers serve`` of
the embedded model on 127.0.0.1 (offline). Four samples of a GSM8K task come back as four graded
traces with the endpoint as their model, stored as a set whose tree counts them all."""

from __future__ import annotations

import json

import pytest

from o3viz.samples.request import SampleRequest
from o3viz.samples.sets import read_set, save_set
from o3viz.samples.tree import build_tree
from o3viz.store.store import Store

pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
pytest.importorskip("openai", reason="transformers serve needs openai (requirements-dev.txt)")

pytestmark = [
    pytest.mark.server,
    pytest.mark.timeout(1800),  # server start + four short requests on a loaded machine
]
# transformers serve samples only when the request's generation config says so, and reads
# max_new_tokens from it too
GEN = {"do_sample": True, "temperature": 1.0, "max_new_tokens": 16, "eos_token_id": 2, "pad_token_id": 2}


def test_four_samples_from_transformers_serve_make_a_set(transformers_server, tmp_path):
    from o3viz.clients import OpenAIBackend
    from o3viz.samples.draw import draw_endpoint, draw_settings

    base_url, model_path = transformers_server
    req = SampleRequest(
        task_id="gsm8k:3", n=4, temperature=1.0, max_new_tokens=16, base_url=base_url, model=model_path,
        concurrency=2, request_timeout=600,
    )  # fmt: skip
    backend = OpenAIBackend(
        base_url, model_path, retries=1, timeout=600, extra_body={"generation_config": json.dumps(GEN)}
    )
    seen: list[int] = []
    drawn = draw_endpoint(backend, req, on_progress=lambda done, tokens, n: seen.append(done))
    assert len(drawn.traces) == 4 and not drawn.stopped and seen[-1] == 4
    assert any(t.final.text.strip() for t in drawn.traces)  # real text came back from the server
    for t in drawn.traces:
        assert t.provenance.model_id == f"openai:{base_url}:{model_path}"
        assert t.task.reference == "540" and t.info["sample"]["drawn"] == "endpoint"
        assert t.final.verdict in ("pass", "fail", "unverifiable")
    assert sorted(t.info["sample"]["index"] for t in drawn.traces) == [0, 1, 2, 3]
    store = Store(tmp_path / "store")
    save_set(store, "served", drawn.traces, draw_settings(req, drawn))
    s = read_set(store, "served")
    assert s.n == 4 and s.info["drawn"] == "endpoint" and s.info["base_url"] == base_url
    assert build_tree(s.traces).nodes[0].samples == 4
