"""A small hand-made trace with routing and logit-lens records, shared by the analysis, figure and
page tests (random numbers labelled ``source="random"``; no model involved)."""

from __future__ import annotations

import numpy as np

from o3viz.testing.builders import small_trace
from o3viz.trace import Trace
from o3viz.trace.layer_records import InternalsRecord, LensRecord, RoutingRecord


def trace_with_internals(seed: int = 0, experts: int = 8, layers: int = 3) -> Trace:
    """``small_trace()`` plus routing (softmax, top-2) and a two-layer logit lens whose last layer
    predicts every generated token (rank 0)."""
    t = small_trace()
    rnd = t.final
    g = len(rnd.tokens)
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(experts, 0.3), size=(g, layers)).astype(np.float16)
    chosen = np.argsort(-probs.astype(np.float32), -1)[..., :2].astype(np.int32)
    weights = np.take_along_axis(probs, chosen, -1)
    routing = RoutingRecord(
        list(range(layers)), experts, 2, "softmax", chosen, weights, probs=probs, source="random"
    )
    ids = np.stack([[[tok.id, 7, 8], [99, tok.id, 8]] for tok in rnd.tokens]).astype(np.int32)[:, ::-1]
    lens = LensRecord(
        layers=[1, 3],
        num_layers=4,
        token_ids=np.ascontiguousarray(ids),
        probs=np.tile(np.array([[0.5, 0.3, 0.1], [0.9, 0.05, 0.01]], np.float16), (g, 1, 1)),
        entropy=np.ones((g, 2), np.float16),
        rank=np.tile(np.array([1, 0], np.int32), (g, 1)),
        token_texts={str(i): f"t{i}" for i in np.unique(ids)} | {str(tok.id): tok.text for tok in rnd.tokens},
    )
    rnd.internals = InternalsRecord(routing, lens)
    return t
