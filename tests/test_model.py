"""Loading the embedded default model offline, and clear one-line errors for missing models."""

from __future__ import annotations

import os

import pytest

from o3viz.errors import ModelLoadError
from o3viz.model import DEFAULT_MODEL_ID, default_gguf_path, load_model, resolve_model

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def default_model():
    return load_model()


def test_default_model_loads_offline_with_provenance(default_model):
    model, tok = default_model
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert model.config.model_type == "llama" and model.config.num_hidden_layers == 30
    info = model.o3viz_info
    assert info.model_id == DEFAULT_MODEL_ID and info.revision.startswith("gguf-sha256:")
    assert tok.eos_token == "<|im_end|>"


def test_default_model_answers_with_real_weights(default_model):
    import torch

    model, tok = default_model
    ids = tok("The capital of France is", return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=3, do_sample=False)
    assert "Paris" in tok.decode(out[0, ids.shape[1] :])


def test_second_resolve_uses_the_safetensors_cache(default_model):
    target, model_id, _ = resolve_model(None)
    assert os.path.isfile(os.path.join(target, "model.safetensors"))
    assert resolve_model(str(default_gguf_path()))[0] == target  # the same file, the same cache


def test_missing_directory_or_file_gives_one_line_error(tmp_path):
    for name in (str(tmp_path / "nope"), str(tmp_path / "x.gguf"), "./relative/missing"):
        with pytest.raises(ModelLoadError) as info:
            load_model(name)
        assert "\n" not in str(info.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(str(tmp_path / "empty"))


def test_uncached_hub_id_offline_names_the_fix():
    with pytest.raises(ModelLoadError, match="fix:") as info:
        load_model("no-such-org/no-such-model-o3viz")
    assert "HF_HUB_OFFLINE" in str(info.value) and "\n" not in str(info.value)
