"""End to end on the real embedded default model (SmolLM2-135M-Instruct): a short capture with
DAA allocate produces a valid, loadable trace whose attention rows are proper distributions."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.errors import ModelLoadError
from o3viz.run.capture import DAAConfig, RunRequest, capture
from o3viz.trace.io import load_trace, save_trace

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def default_model():
    from o3viz.model import load_model

    try:
        return load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")


def test_default_model_capture_end_to_end(default_model, tmp_path):
    model, tok = default_model
    tr = capture(
        model,
        tok,
        RunRequest(
            prompt="What is 12 + 7? Answer with one number.",
            max_new_tokens=20,
            daa=DAAConfig(mode="allocate", strength=0.5),
            explore=1,
        ),
    )
    r, att = tr.final, tr.final.attention
    assert model.config._attn_implementation == "sdpa"
    assert "<|im_start|>assistant" in r.rendered_prompt and r.text.strip()
    assert "".join(t.text for t in r.tokens) == r.text and 1 <= len(r.tokens) <= 20
    assert att.num_layers == 30 and att.num_heads == 9 and att.layers == [0, 15, 29]
    np.testing.assert_allclose(att.mean.astype(np.float32).sum(1), 1.0, atol=1e-3)
    np.testing.assert_allclose(att.daa.before.astype(np.float32).sum(1), 1.0, atol=1e-3)
    descriptors = {r.prompt_tokens[j].text.strip() for j in att.daa.descriptor_tokens}
    assert att.daa.task_type == "math" and {"+", "7"} <= descriptors
    assert tr.provenance.model_id.startswith("SmolLM2") and tr.provenance.revision.startswith("gguf-sha256:")
    assert len(r.branches) == 1 and r.steps and r.answer is not None
    path = save_trace(tr, tmp_path / "run.o3trace.json.gz")
    assert load_trace(path).final.attention == att
