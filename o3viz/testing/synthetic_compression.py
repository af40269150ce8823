"""A synthetic trace's compression record (segments with scores and states, compress / expand /
release / restore events, per-step scores and memory), for ``o3viz.testing.synthetic``."""

from __future__ import annotations

import numpy as np

from o3viz.trace import CompressionEvent, CompressionRecord, Segment


def synthetic_compression(P: int, segs: list[Segment], G: int, rng: np.random.Generator) -> CompressionRecord:
    """The record of a P-token prompt split into ``segs``, with G generated tokens."""
    seg_dicts, events = [], []
    for s in segs:
        red = float(rng.uniform(0, 1))
        state = "compressed" if red >= 0.7 else ("expanded" if red <= 0.3 else "kept")
        seg_dicts.append(
            {
                "index": s.index,
                "start": s.start,
                "end": s.end,
                "tokens": s.token_end - s.token_start,
                "redundancy": red,
                "score": red,
                "state": state,
                "pointer_to": 0 if state == "compressed" and s.index else None,
            }
        )
        if state == "compressed":
            events.append(CompressionEvent(-1, s.index, "compress", red, "repeated fragment"))
    for k in range(min(6, max(G // 40, 1))):
        seg = int(rng.integers(0, len(segs)))
        events.append(
            CompressionEvent(
                int((k + 1) * G / 7),
                seg,
                ["expand", "release", "restore"][k % 3],
                float(rng.uniform(0.1, 0.9)),
                "needed for detail" if k % 3 == 0 else "cold",
            )
        )
    saved = sum(d["tokens"] for d in seg_dicts if d["state"] == "compressed")
    comp = CompressionRecord(
        seg_dicts, events, P, max(P - saved + len(events), 1), "pointer", {"synthetic": True}
    )
    walk = np.clip(
        np.array([d["score"] for d in seg_dicts]) + np.cumsum(rng.normal(0, 0.02, (G, len(segs))), axis=0),
        0,
        1,
    )
    comp.step_scores = np.round(walk, 3).tolist()  # (G, S)
    comp.memory_tokens = [comp.compressed_tokens + g + 1 for g in range(G)]
    return comp
