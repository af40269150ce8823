"""The published JSON Schema (docs/trace.schema.json) accepts what o3viz writes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from o3viz.paths import REPO_ROOT as ROOT
from o3viz.testing.builders import sample_paths
from o3viz.testing.builders import small_trace as make_trace
from o3viz.trace import load_trace

SCHEMA = json.loads((ROOT / "docs" / "trace.schema.json").read_text())


def test_schema_accepts_a_full_trace():
    jsonschema.validate(make_trace().to_dict(), SCHEMA)


def test_schema_rejects_a_wrong_version():
    d = make_trace().to_dict()
    d["schema_version"] = 6
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, SCHEMA)


@pytest.mark.parametrize("path", sample_paths(), ids=lambda p: p.name)
def test_every_sample_loads_round_trips_and_matches_the_schema(path):
    trace = load_trace(path)
    assert load_trace(json.dumps(trace.to_dict()).encode()) == trace
    jsonschema.validate(trace.to_dict(), SCHEMA)


def test_capture_samples_carry_attention_and_daa_data():
    """Samples made by capture (not imports, not compressed runs, whose release loop records the
    compression map instead) carry attention with DAA relevance in every round."""
    checked = 0
    for path in sample_paths():
        trace = load_trace(path)
        if trace.task.source == "import" or trace.compression is not None:
            continue
        for rnd in trace.rounds:
            att = rnd.attention
            assert att is not None and att.daa is not None and att.daa.relevance is not None, path.name
            assert att.daa.mode in ("observe", "allocate")
        checked += 1
    if not sample_paths():
        pytest.skip("no samples in sample_traces/")
    assert checked >= 5
