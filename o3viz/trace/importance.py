"""Step importance records (Thought Anchors measures) as stored on a round: one record per method
or named source, with per-step scores, dependency edges, the step × step matrix it came from and
its provenance (method, parameters, reader or rollout model).

The shape the map and the tables read (schema version 2, ``rounds[].importance[]``):

- ``scores``: one number (or ``null`` where the method gives none) per step of the round, in step
  order, so ``scores[i]`` belongs to ``round.steps[i]``; larger means more important;
- ``depends_on``: edges ``[step, antecedent, weight]`` with ``antecedent < step`` and ``weight`` in
  ``[0, 1]`` (1 = the strongest edge of this record), read "step depends on antecedent";
- ``series``: further per-step lists aligned the same way (e.g. ``resampling_accuracy``);
- ``matrix``: ``(S, S)`` float32, row ``j`` = the later step, column ``i`` = the earlier step
  (receiver: mean token attention of j on i; suppression: mean KL of j's tokens when i is masked;
  resample: how much more often j reappears in rollouts that kept i than in those that changed it);
- ``head_kurtosis``: ``(L, H)`` float32, the kurtosis of each head's vertical scores (receiver);
- ``receiver_heads``: the ``[layer, head]`` pairs whose vertical scores give ``scores``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from o3viz.trace.codec import (
    arrays_equal,
    check_json_value,
    decode_array,
    encode_array,
    fail,
    literal,
    opt,
    req,
    req_list,
)

ImportanceMethod = Literal["receiver", "suppression", "resample", "published"]
IMPORTANCE_METHODS = ("receiver", "suppression", "resample", "published")
MAX_RECORDS = 32  # importance records per round
MAX_EDGES = 200_000
MAX_HEADS = 4096  # layers, and heads per layer, of a receiver record's head_kurtosis


def _scores(d: dict, key: str, path: str, n_max: int) -> list[float | None]:
    items = req(d, key, list, path) if key in d else []
    if len(items) > n_max:
        raise fail(f"{path}.{key}", f"has {len(items)} items, more than the limit {n_max}")
    out: list[float | None] = []
    for i, v in enumerate(items):
        out.append(None if v is None else opt({"v": v}, "v", float, f"{path}.{key}[{i}]"))
    return out


def _edges(d: dict, path: str) -> list[tuple[int, int, float]]:
    items = req_list(d, "depends_on", path, list, MAX_EDGES) if "depends_on" in d else []
    out = []
    for i, e in enumerate(items):
        where = f"{path}.depends_on[{i}]"
        if len(e) != 3:
            raise fail(where, "must be [step, antecedent, weight]")
        step, ante = (req({"v": x}, "v", int, where) for x in e[:2])
        weight = req({"v": e[2]}, "v", float, where)
        if not 0 <= ante < step:
            raise fail(where, f"antecedent {ante} must come before step {step}")
        out.append((step, ante, weight))
    return out


@dataclass(eq=False)
class ImportanceRecord:
    """One importance measure of one round's steps (see the module docstring for the shapes)."""

    method: str  # receiver | suppression | resample | published
    source: str  # a name unique within the round: the method, or e.g. "thought-anchors"
    scores: list[float | None] = field(default_factory=list)  # (S,)
    depends_on: list[tuple[int, int, float]] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)  # name -> (S,)
    matrix: np.ndarray | None = None  # (S, S) float32, row = later step, column = earlier step
    head_kurtosis: np.ndarray | None = None  # (L, H) float32
    receiver_heads: list[tuple[int, int]] = field(default_factory=list)  # (layer, head)
    params: dict = field(default_factory=dict)  # the method's parameters
    model: dict = field(default_factory=dict)  # reader / rollout model: model_id, revision, proxy
    info: dict = field(default_factory=dict)  # provenance: created_at, versions, cost, notes

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "method": self.method,
            "source": self.source,
            "scores": list(self.scores),
            "depends_on": [[int(a), int(b), float(w)] for a, b, w in self.depends_on],
            "series": {k: list(v) for k, v in self.series.items()},
            "receiver_heads": [[int(a), int(b)] for a, b in self.receiver_heads],
            "params": self.params,
            "model": self.model,
            "info": self.info,
        }
        for k in ("matrix", "head_kurtosis"):
            if getattr(self, k) is not None:
                d[k] = encode_array(getattr(self, k))
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str, n_steps: int) -> ImportanceRecord:
        rec = cls(
            method=literal(d, "method", IMPORTANCE_METHODS, path),
            source=req(d, "source", str, path),
            scores=_scores(d, "scores", path, n_steps),
            depends_on=_edges(d, path),
            params=check_json_value(opt(d, "params", dict, path, {}), f"{path}.params"),
            model=check_json_value(opt(d, "model", dict, path, {}), f"{path}.model"),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )
        series = opt(d, "series", dict, path, {})
        rec.series = {str(k): _scores(series, k, f"{path}.series", n_steps) for k in list(series)[:64]}
        heads = req_list(d, "receiver_heads", path, list, 4096) if "receiver_heads" in d else []
        rec.receiver_heads = [tuple(req_list({"h": h}, "h", f"{path}.receiver_heads", int, 2)) for h in heads]
        # declared shapes are checked before decoding: (S, S) for the round's S steps, and at most
        # at most MAX_HEADS by MAX_HEADS for the kurtosis, so a small file cannot declare a huge matrix
        for k, shape, most in (
            ("matrix", (n_steps, n_steps), n_steps),
            ("head_kurtosis", (None, None), MAX_HEADS),
        ):
            if d.get(k) is not None:
                arr = decode_array(
                    d[k], f"{path}.{k}", shape=shape, max_dim=most, dtypes=("float32", "float16")
                )
                setattr(rec, k, arr)
        if any(max(a, b) >= max(n_steps, 1) for a, b, _ in rec.depends_on):
            raise fail(f"{path}.depends_on", "names a step the round does not have")
        return rec

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImportanceRecord):
            return NotImplemented
        same_arrays = all(
            arrays_equal(getattr(self, k), getattr(other, k)) for k in ("matrix", "head_kurtosis")
        )
        strip = ("matrix", "head_kurtosis")
        a = {k: v for k, v in self.to_dict().items() if k not in strip}
        b = {k: v for k, v in other.to_dict().items() if k not in strip}
        return same_arrays and a == b


def importance_list(d: dict, path: str, n_steps: int) -> list[ImportanceRecord]:
    """``round.importance`` from a round's dict (absent: empty); sources must be unique."""
    items = opt(d, "importance", list, path, [])
    if len(items) > MAX_RECORDS:
        raise fail(f"{path}.importance", f"has {len(items)} records, more than the limit {MAX_RECORDS}")
    recs = [ImportanceRecord.from_dict(x, f"{path}.importance[{i}]", n_steps) for i, x in enumerate(items)]
    names = [r.source for r in recs]
    if len(set(names)) != len(names):
        raise fail(f"{path}.importance", "two records share one source name")
    return recs


def set_importance(records: list[ImportanceRecord], rec: ImportanceRecord) -> None:
    """Add ``rec`` to ``records``, replacing a record of the same source."""
    records[:] = [r for r in records if r.source != rec.source] + [rec]


PREFERENCE = ("resample", "suppression", "receiver", "published")  # which record a map shows first


def pick_record(records: list[ImportanceRecord], source: str | None = None) -> ImportanceRecord | None:
    """The record named ``source``; else, in ``PREFERENCE`` order, the first that scores at least
    half of the steps it covers (a capped resampling run that scored two steps would hide a
    complete suppression record), else the record that scores the most steps."""
    if source is not None:
        return next((r for r in records if r.source == source), None)
    ordered = sorted(
        records, key=lambda r: PREFERENCE.index(r.method) if r.method in PREFERENCE else len(PREFERENCE)
    )
    scored = [(sum(v is not None for v in r.scores), len(r.scores), r) for r in ordered]
    for n, total, rec in scored:
        if n and 2 * n >= total:
            return rec
    best = max(scored, key=lambda x: x[0], default=None)
    return best[2] if best and best[0] else (ordered[0] if ordered else None)


def rank_scores(rec: ImportanceRecord, n: int) -> list[float | None]:
    """The record's scores as ranks among the scored steps, in [0, 1]. Where the record says which
    steps clear their noise floor (``series["clears_floor"]``), a step under it is 0 and only the
    others are ranked, into (0, 1]: a step the noise could explain is never drawn as important.

    >>> rec = ImportanceRecord("resample", "resample", [0.9, 0.5, 0.1], series={"clears_floor": [0.0, 1.0, 1.0]})
    >>> rank_scores(rec, 3)
    [0.0, 1.0, 0.5]
    """
    scores = list(rec.scores[:n]) + [None] * (n - len(rec.scores))
    floor = rec.series.get("clears_floor") or []
    under = [i < len(floor) and floor[i] == 0.0 and scores[i] is not None for i in range(n)]
    out: list[float | None] = [0.0 if u else None for u in under]
    kept = sorted((v, i) for i, v in enumerate(scores) if v is not None and not under[i])
    for r, (_, i) in enumerate(kept):
        if any(under):
            out[i] = (r + 1) / len(kept)
        else:
            out[i] = r / (len(kept) - 1) if len(kept) > 1 else 1.0
    return out


def step_view(
    records: list[ImportanceRecord], n_steps: int, source: str | None = None, min_weight: float = 0.0
) -> tuple[list[float | None], list[list[int]]]:
    """Per step: importance scaled to [0, 1] by rank among the scored steps (robust to the
    methods' different units and outliers), and the antecedents with edge weight ≥ ``min_weight``.
    A step under its noise floor is 0 (``rank_scores``).

    >>> rec = ImportanceRecord("suppression", "suppression", [0.5, 2.0, None], [(1, 0, 0.9)])
    >>> step_view([rec], 3)
    ([0.0, 1.0, None], [[], [0], []])
    """
    rec = pick_record(records, source)
    deps: list[list[int]] = [[] for _ in range(n_steps)]
    if rec is None:
        return [None] * n_steps, deps
    out = rank_scores(rec, n_steps)
    for step, ante, weight in rec.depends_on:
        if step < n_steps and weight >= min_weight:
            deps[step].append(ante)
    return out, deps
