"""MoEfication: with k = E the MoEfied model's outputs equal the dense model's exactly (tiny model
and the real embedded model); k < E changes them; routing recorded on it is labelled moefied; the
swap is undone after the run; clusters are balanced."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.errors import UsageError
from o3viz.hooks.routing import record_routing
from o3viz.moefy import MoefiedMLP, MoefySetting, balanced_kmeans, cluster_neurons, moefied, parse_moefy
from o3viz.run.loop import run_loop
from o3viz.run.request import RunRequest
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def real_model():
    from o3viz.errors import ModelLoadError
    from o3viz.model import load_model

    try:
        return load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")


PROMPT = [1, 504, 3458, 314, 216, 28, 33, 34, 17, 9]


def _random_clusters(model, experts: int, seed: int = 0) -> np.ndarray:
    n, i = model.config.num_hidden_layers, model.config.intermediate_size
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(i) % experts for _ in range(n)]).astype(np.int32)


@torch.no_grad()
def _logits(model) -> torch.Tensor:
    return model(input_ids=torch.tensor([PROMPT])).logits


def test_k_equal_e_is_exactly_the_dense_model_and_k_below_e_is_not():
    model, tok = make_tiny_llama(num_layers=2)
    dense = _logits(model)
    clusters = _random_clusters(model, 8)
    with moefied(model, tok, MoefySetting(8, 8), clusters):
        assert torch.equal(_logits(model), dense)
    with moefied(model, tok, MoefySetting(8, 2), clusters):
        sparse = _logits(model)
    assert not torch.allclose(sparse, dense, atol=1e-4)
    assert not any(isinstance(m, MoefiedMLP) for m in model.modules())  # swapped back
    assert torch.equal(_logits(model), dense)


def test_k_equal_e_is_exact_on_the_embedded_model(real_model):
    model, tok = real_model
    dense = _logits(model)
    with moefied(model, tok, MoefySetting(16, 16), _random_clusters(model, 16)):
        assert torch.equal(_logits(model), dense)


def test_routing_on_a_moefied_model_is_recorded_and_labelled():
    from o3viz.run.layer_recorders import routing_source

    model, tok = make_tiny_llama(num_layers=2)
    with moefied(model, tok, MoefySetting(8, 3), _random_clusters(model, 8)):
        assert routing_source(model) == "moefied"
        with record_routing(model) as rec:
            gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=5), stop_ids=set())
    record = rec.to_record(len(gen.ids))
    assert record.scoring == "probs" and record.experts.shape == (5, 2, 3)
    assert np.allclose(record.probs.astype(np.float32).sum(-1), 1, atol=1e-2)
    assert (record.weights == 1).all()  # chosen experts are summed unscaled
    top = np.argsort(-record.probs.astype(np.float32), -1)[..., :3]
    assert (np.sort(top, -1) == np.sort(record.experts, -1)).all()  # the largest activation mass wins


def test_a_model_run_without_a_moefy_setting_is_dense_inside_another_runs_swap():
    """The app shares one model: a plain run overlapping a MoEfied run must stay dense."""
    import contextvars

    model, tok = make_tiny_llama(num_layers=2)
    dense = _logits(model)
    with moefied(model, tok, MoefySetting(8, 1), _random_clusters(model, 8)):
        other = contextvars.Context()  # another session's context: no setting active
        assert torch.equal(other.run(_logits, model), dense)


def test_balanced_clusters_and_bad_settings():
    rng = np.random.default_rng(0)
    feats = rng.random((64, 40)).astype(np.float32)
    labels = balanced_kmeans(feats, 8)
    assert np.bincount(labels).tolist() == [8] * 8
    # two groups of neurons that fire on disjoint tokens end up in different experts
    fires = np.zeros((50, 16), np.float32)
    fires[:25, :8], fires[25:, 8:] = 1 + rng.random((25, 8)), 1 + rng.random((25, 8))
    c = cluster_neurons([fires], 2)[0]
    assert len(set(c[:8])) == 1 and len(set(c[8:])) == 1 and c[0] != c[8]
    assert parse_moefy("16,4") == MoefySetting(16, 4)
    for bad in ("16", "a,b", "4,16"):
        with pytest.raises(UsageError):
            setting = parse_moefy(bad)
            model, tok = make_tiny_llama(num_layers=2)
            with moefied(model, tok, setting, _random_clusters(model, setting.experts)):
                pass
