"""Numbers derived from a round's internals: expert load and balance, routing entropy,
co-activation, routing per reasoning-step type, the routing difference between two runs, and
where in depth the logit lens first predicts the tokens that were generated.

All functions are pure and take the trace records; the figures in ``o3viz.figures.routing_lens``
draw what these return.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from o3viz.trace import Round
from o3viz.trace.layer_records import LensRecord, RoutingRecord


@dataclass
class ExpertLoad:
    """Per MoE layer: how the generated tokens' routing spread over the experts."""

    layers: list[int]
    fraction: np.ndarray  # (R, E) f: share of all expert choices that went to each expert
    mean_prob: np.ndarray  # (R, E) P: mean router probability of each expert (zeros if topk_only)
    cv: np.ndarray  # (R,) coefficient of variation of the choice counts (0 = perfectly even)
    switch_balance: np.ndarray  # (R,) Switch Transformer's N·Σ f·P (1 = balanced, up to N)


def expert_load(rec: RoutingRecord) -> ExpertLoad:
    """Load per layer from the chosen experts (padding ``-1`` ignored).

    >>> import numpy as np
    >>> r = RoutingRecord([0], 2, 1, "probs", np.array([[[0]], [[1]]], np.int32), np.ones((2, 1, 1), np.float16),
    ...                   probs=np.array([[[0.5, 0.5]], [[0.5, 0.5]]], np.float16))
    >>> float(expert_load(r).cv[0]), float(expert_load(r).switch_balance[0])
    (0.0, 1.0)
    """
    g, r, _ = rec.experts.shape
    e = rec.num_experts
    counts = np.zeros((r, e))
    for layer in range(r):
        chosen = rec.experts[:, layer].ravel()
        counts[layer] = np.bincount(chosen[chosen >= 0], minlength=e)[:e]
    total = np.maximum(counts.sum(1, keepdims=True), 1)
    fraction = counts / total
    dist = rec.distribution()
    mean_prob = dist.mean(0) if dist is not None and g else np.zeros((r, e))
    mean = counts.mean(1)
    cv = np.where(mean > 0, counts.std(1) / np.maximum(mean, 1e-12), 0.0)
    return ExpertLoad(list(rec.layers), fraction, mean_prob, cv, e * (fraction * mean_prob).sum(1))


def routing_entropy(rec: RoutingRecord) -> np.ndarray | None:
    """(G, R) entropy (nats) of each token's router distribution in each layer; None if top-k only."""
    dist = rec.distribution()
    if dist is None:
        return None
    p = np.clip(dist, 0, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(np.where(p > 0, p * np.log(p), 0.0)).sum(-1)


def coactivation(rec: RoutingRecord, layer_pos: int) -> np.ndarray:
    """(E, E) how often two experts were chosen for the same token in one layer, as a share of
    tokens (the diagonal is each expert's own share)."""
    e = rec.num_experts
    chosen = rec.experts[:, layer_pos]  # (G, k)
    onehot = np.zeros((chosen.shape[0], e))
    for col in chosen.T:
        ok = col >= 0
        onehot[np.flatnonzero(ok), col[ok]] = 1
    return onehot.T @ onehot / max(chosen.shape[0], 1)


def step_types(rnd: Round) -> list[str]:
    """The Thought Anchors type of each step (classified from its text where the trace has none)."""
    from o3viz.text.classify import classify_step

    n = len(rnd.steps)
    return [s.type or classify_step(s.text, i, n) for i, s in enumerate(rnd.steps)]


@dataclass
class StepRouting:
    """Expert use aggregated per Thought Anchors step type."""

    types: list[str]  # T step types present
    tokens: list[int]  # tokens of each type
    usage: np.ndarray  # (T, R, E) share of each type's expert choices per layer
    distance: np.ndarray  # (T, R) total-variation distance of each type's usage from the whole run's


def routing_by_step_type(rec: RoutingRecord, rnd: Round) -> StepRouting:
    """Which experts each kind of reasoning step used, per layer."""
    g, r, _ = rec.experts.shape
    kinds = np.full(g, "", dtype=object)
    for st, kind in zip(rnd.steps, step_types(rnd), strict=True):
        kinds[max(0, st.token_start) : min(g, st.token_end)] = kind
    types = [t for t in dict.fromkeys(kinds.tolist()) if t]
    overall = _usage(rec.experts, rec.num_experts)
    usage = (
        np.stack([_usage(rec.experts[kinds == t], rec.num_experts) for t in types])
        if types
        else np.zeros((0, r, rec.num_experts))
    )
    distance = 0.5 * np.abs(usage - overall[None]).sum(-1)
    return StepRouting(types, [int((kinds == t).sum()) for t in types], usage, distance)


def _usage(experts: np.ndarray, e: int) -> np.ndarray:
    """(R, E) share of choices per expert from (G', R, k) chosen experts."""
    r = experts.shape[1]
    out = np.zeros((r, e))
    for layer in range(r):
        col = experts[:, layer].ravel()
        out[layer] = np.bincount(col[col >= 0], minlength=e)[:e]
    return out / np.maximum(out.sum(1, keepdims=True), 1)


@dataclass
class RoutingDiff:
    """Routing of run B minus run A per layer and expert (shared layers only)."""

    layers: list[int]
    diff: np.ndarray  # (R, E) load B - load A
    distance: np.ndarray  # (R,) total-variation distance between the two loads
    note: str = ""  # why some layers or experts could not be compared


def routing_diff(a: RoutingRecord, b: RoutingRecord) -> RoutingDiff:
    """Compare expert loads of two runs on their common MoE layers (experts: the smaller count)."""
    common = [layer for layer in a.layers if layer in b.layers]
    e = min(a.num_experts, b.num_experts)
    la, lb = expert_load(a).fraction, expert_load(b).fraction
    fa = np.stack([la[a.layers.index(x), :e] for x in common]) if common else np.zeros((0, e))
    fb = np.stack([lb[b.layers.index(x), :e] for x in common]) if common else np.zeros((0, e))
    note = ""
    if a.num_experts != b.num_experts:
        note = f"A has {a.num_experts} experts and B {b.num_experts}; only experts 0..{e - 1} are compared"
    if len(common) < max(len(a.layers), len(b.layers)):
        note = (note + "; " if note else "") + f"{len(common)} MoE layers in common"
    return RoutingDiff(common, fb - fa, 0.5 * np.abs(fb - fa).sum(1), note)


def first_top1_layer(lens: LensRecord) -> np.ndarray:
    """(G,) the first lens layer (model index) whose top-1 is the token finally generated, -1 if none."""
    hit = lens.rank == 0  # (G, Y)
    first = np.where(hit.any(1), hit.argmax(1), -1)
    layers = np.asarray(lens.layers)
    return np.where(first >= 0, layers[np.maximum(first, 0)], -1)


def answer_token_indices(rnd: Round) -> list[int]:
    """Generated tokens that carry the final answer's characters (its last occurrence in the text)."""
    answer = (rnd.answer or "").strip()
    if not answer:
        return []
    at = rnd.text.rfind(answer)
    if at < 0:
        return []
    end = at + len(answer)
    return [i for i, t in enumerate(rnd.tokens) if t.end > at and t.start < end and t.text.strip()]
