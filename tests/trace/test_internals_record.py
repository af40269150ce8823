"""Internals records (MoE routing, logit lens) in the trace file: save → load → ==, version-1 files
without them still load, the schema accepts them, and bad arrays get one TraceError."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from o3viz.errors import TraceError
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace, save_trace
from o3viz.trace.layer_records import InternalsRecord, LensRecord, RoutingRecord

SCHEMA = json.loads((REPO_ROOT / "docs" / "trace.schema.json").read_text())


def _with_internals(top_n: bool = False):
    t = small_trace()
    g = len(t.final.tokens)
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(8), size=(g, 3)).astype(np.float16)
    experts = np.argsort(-probs, -1)[..., :2].astype(np.int32)
    routing = RoutingRecord(
        [0, 1, 2], 8, 2, "softmax", experts, np.take_along_axis(probs, experts, -1), source="random"
    )
    if top_n:
        routing.top_index, routing.top_probs = experts, np.take_along_axis(probs, experts, -1)
    else:
        routing.probs = probs
    ids = rng.integers(0, 100, (g, 2, 5)).astype(np.int32)
    lens = LensRecord(
        [0, 3],
        4,
        ids,
        np.full((g, 2, 5), 0.1, np.float16),
        np.ones((g, 2), np.float16),
        np.zeros((g, 2), np.int32),
        {str(i): f"t{i}" for i in np.unique(ids)},
    )
    t.final.internals = InternalsRecord(routing, lens)
    return t


@pytest.mark.parametrize("top_n", [False, True])
def test_internals_round_trip_and_match_the_schema(tmp_path, top_n):
    t = _with_internals(top_n)
    assert load_trace(save_trace(t, tmp_path / "a.o3trace.json.gz")) == t
    jsonschema.validate(t.to_dict(), SCHEMA)
    back = load_trace(json.dumps(t.to_dict()).encode()).final.internals
    assert back.routing.distribution().shape == (len(t.final.tokens), 3, 8)


def test_a_trace_without_internals_loads_unchanged():
    t = small_trace()
    d = t.to_dict()
    assert "internals" not in d["rounds"][0]
    assert load_trace(json.dumps(d).encode()).final.internals is None


def test_changed_internals_make_traces_unequal():
    a, b = _with_internals(), _with_internals()
    b.final.internals.routing.experts[0, 0, 0] = 7
    assert a != b


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda r: r["routing"]["experts"].update(shape=[1, 3, 2], data="A" * 32), "experts"),
        (lambda r: r["routing"].update(scoring="magic"), "scoring"),
        (lambda r: r["lens"].update(layers=[0, 9]), "layers"),
        (lambda r: r["routing"].update(num_experts=1), "num_experts"),
    ],
)
def test_bad_internals_give_one_trace_error(edit, message):
    d = _with_internals().to_dict()
    edit(d["rounds"][0]["internals"])
    with pytest.raises(TraceError, match=message):
        load_trace(json.dumps(d).encode())
