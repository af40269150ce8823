"""Routing capture parity: for every tested MoE family, the experts and weights recorded during
KV-cached generation equal what the model's own MoE block passed to its experts in a plain
(uncached) forward over the same tokens, and the recorded distribution equals the router's scores
recomputed by hand from the layer input. Deliberately wrong variants (an off-by-one token index, a
wrong softmax) must fail the same comparison."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.errors import UsageError
from o3viz.hooks.routing import find_routers, normalise_scores, record_routing
from o3viz.run.loop import run_loop
from o3viz.run.request import RunRequest
from o3viz.testing.moe import FAMILIES, tiny_moe

pytestmark = [pytest.mark.model]

PROMPT = [3, 17, 42, 9, 88, 5, 61]
SIGMOID_FAMILIES = {"deepseek_v3", "glm4_moe", "dots1", "lfm2_moe"}  # choose by sigmoid affinity


def _router_linear(router) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The router's own projection (weight, bias), read from its parameters."""
    linear = (
        router if hasattr(router, "weight") else next(m for m in router.modules() if hasattr(m, "weight"))
    )
    bias = getattr(linear, "bias", None)
    return linear.weight.detach().float(), None if bias is None else bias.detach().float()


def _reference(model, ids: list[int], sigmoid: bool) -> list[dict]:
    """Per MoE layer, from one plain forward: the index and weights the block passed to its
    experts, and the router's probabilities recomputed from the layer input by hand."""
    sites = find_routers(model)
    seen: list[dict] = [{} for _ in sites]
    handles = []
    for pos, site in enumerate(sites):
        block = dict(model.named_modules())[site.name.rsplit(".", 1)[0]]

        def grab(module, args, pos=pos):
            hidden, index, weights = args[:3]
            seen[pos].update(index=index.clone(), weights=weights.float().clone(), hidden=hidden.clone())

        handles.append(block.experts.register_forward_pre_hook(grab))
    try:
        with torch.no_grad():
            model(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    for site, ref in zip(sites, seen, strict=True):
        w, bias = _router_linear(site.module)
        ref["logits"] = torch.nn.functional.linear(ref["hidden"].float(), w, bias)
        ref["probs"] = _by_hand(ref["logits"], sigmoid)
    return seen


def _by_hand(logits: torch.Tensor, sigmoid: bool) -> torch.Tensor:
    if sigmoid:
        s = 1 / (1 + torch.exp(-logits))
        return s / s.sum(-1, keepdim=True)
    e = torch.exp(logits - logits.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


def _mismatches(record, refs: list[dict], prompt_len: int, shift: int = 0) -> list[str]:
    """Where the record disagrees with the reference (row g vs position prompt_len + g + shift)."""
    bad = []
    start = prompt_len + shift
    g = min(record.num_generated, len(refs[0]["index"]) - start)  # rows both sides have
    for r, ref in enumerate(refs):
        index, weights = ref["index"][start : start + g].numpy(), ref["weights"][start : start + g].numpy()
        experts, rec_w = record.experts[:g, r], record.weights[:g, r].astype(np.float32)
        order_ref, order_rec = np.argsort(index, -1), np.argsort(experts, -1)
        if not np.array_equal(
            np.take_along_axis(index, order_ref, -1), np.take_along_axis(experts, order_rec, -1)
        ):
            bad.append(f"layer {r}: experts differ")
        elif not np.allclose(
            np.take_along_axis(weights, order_ref, -1), np.take_along_axis(rec_w, order_rec, -1), atol=2e-3
        ):
            bad.append(f"layer {r}: weights differ")
        probs = record.probs[:g, r].astype(np.float32)
        if not np.allclose(probs, ref["probs"][start : start + g].numpy(), atol=2e-3):
            bad.append(f"layer {r}: probabilities differ")
    return bad


def _generate_with_routing(model, n: int = 6):
    with record_routing(model) as rec:
        gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=n), stop_ids=set())
    return rec.to_record(len(gen.ids)), gen.ids


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_recorded_routing_equals_the_moe_blocks_own_routing(family):
    model = tiny_moe(family)
    record, ids = _generate_with_routing(model)
    sigmoid = family in SIGMOID_FAMILIES
    refs = _reference(model, PROMPT + ids, sigmoid)
    assert record.scoring == ("sigmoid" if sigmoid else "softmax")
    assert _mismatches(record, refs, len(PROMPT)) == []
    # The same comparison fails for a recorder one token off ...
    assert _mismatches(record, refs, len(PROMPT), shift=-1)
    assert _mismatches(record, refs, len(PROMPT), shift=1)
    # ... and for a wrong softmax (the scores normalised the other way, or probabilities softmaxed again).
    wrong = torch.stack([ref["logits"] for ref in refs], 1)[len(PROMPT) :]
    for bad_probs in (
        normalise_scores(wrong, not sigmoid)[0],
        torch.softmax(normalise_scores(wrong, sigmoid)[0], -1),
    ):
        record.probs = bad_probs.numpy().astype(np.float16)
        assert any("probabilities" in m for m in _mismatches(record, refs, len(PROMPT)))


def test_routing_is_decisive_after_sharpening():
    """Flat routers would make the parity test weak: the top expert carries most of the weight."""
    record, _ = _generate_with_routing(tiny_moe("mixtral"))
    assert float(record.probs.astype(np.float32).max(-1).mean()) > 0.5


def test_gated_shared_expert_is_recorded_per_token_and_always_on_ones_are_noted():
    qwen, _ = _generate_with_routing(tiny_moe("qwen2_moe"))
    assert qwen.shared is not None and qwen.shared.shape == (6, 2, 1)
    assert 0 < float(qwen.shared.min()) and float(qwen.shared.max()) < 1
    deepseek, _ = _generate_with_routing(tiny_moe("deepseek_v3"))
    assert deepseek.shared is None and deepseek.info["shared_always_on"] == 1


def test_top_n_keeps_the_n_most_probable_experts():
    from o3viz.hooks.routing import RoutingSpec

    model = tiny_moe("olmoe")
    full, _ = _generate_with_routing(model)
    with record_routing(model, RoutingSpec(top_n=3, prefill=True)) as rec:
        gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=6), stop_ids=set())
    top = rec.to_record(len(gen.ids))
    assert top.probs is None and top.top_index.shape == (6, 2, 3)
    dense = top.distribution()
    keep = dense > 0
    assert np.allclose(dense[keep], full.probs.astype(np.float32)[keep], atol=1e-3)
    assert top.prompt_experts.shape == (len(PROMPT), 2, 2)


def test_hooks_are_removed_after_the_run_and_a_dense_model_is_refused():
    from o3viz.testing.builders import make_tiny_llama

    model = tiny_moe("mixtral")
    hooks = lambda: sum(len(m._forward_hooks) for m in model.modules())  # noqa: E731
    with record_routing(model):
        one = hooks()
        assert one > 0
        with record_routing(model):  # an overlapping run shares the installed hooks
            assert hooks() == one
        assert hooks() == one  # the first run still holds them
    assert not any(m._forward_hooks for m in model.modules())
    dense, _ = make_tiny_llama()
    with pytest.raises(UsageError, match="no mixture-of-experts router"):
        with record_routing(dense):
            pass


def test_probabilities_from_the_router_are_used_as_they_are():
    p = torch.tensor([[0.7, 0.2, 0.1]])
    out, kind = normalise_scores(p, sigmoid=False)
    assert kind == "probs" and torch.equal(out, p)
    logits = torch.tensor([[2.0, 0.5, -1.0]])
    assert normalise_scores(logits, sigmoid=False)[1] == "softmax"
