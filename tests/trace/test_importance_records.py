"""Importance records in the trace file (schema version 2) and the version-1 migration."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from o3viz.errors import TraceError
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import small_trace
from o3viz.trace import SCHEMA_VERSION, load_trace
from o3viz.trace.importance import ImportanceRecord, set_importance

SCHEMA = json.loads((REPO_ROOT / "docs" / "trace.schema.json").read_text())


def _with_importance():
    t = small_trace()
    rec = ImportanceRecord(
        method="suppression",
        source="suppression",
        scores=[0.5, None],
        depends_on=[(1, 0, 1.0)],
        series={"raw": [1.5, None]},
        matrix=np.array([[0, 0], [1.5, 0]], dtype=np.float32),
        head_kurtosis=np.ones((2, 3), dtype=np.float32),
        receiver_heads=[(1, 2)],
        params={"batch": 4},
        model={"model_id": "tiny", "proxy": True},
    )
    set_importance(t.final.importance, rec)
    return t


def test_importance_round_trips_through_save_and_load(tmp_path):
    t = _with_importance()
    back = load_trace(t.save(tmp_path / "t.o3trace.json.gz"))
    assert back == t
    rec = back.final.importance[0]
    assert rec.scores == [0.5, None] and rec.depends_on == [(1, 0, 1.0)] and rec.receiver_heads == [(1, 2)]
    assert rec.matrix.dtype == np.float32 and rec.matrix[1, 0] == 1.5


def test_a_trace_with_importance_matches_the_published_schema():
    jsonschema.validate(_with_importance().to_dict(), SCHEMA)


def test_a_version_1_file_migrates_and_saves_as_the_current_version(tmp_path):
    d = small_trace().to_dict()
    d["schema_version"] = 1
    t = load_trace(json.dumps(d).encode())
    assert t.schema_version == SCHEMA_VERSION == 5 and t.final.importance == []
    assert json.loads(t.save(tmp_path / "m.o3trace.json").read_text())["schema_version"] == 5


def test_a_newer_version_is_refused_in_one_line():
    d = small_trace().to_dict()
    d["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(TraceError, match="schema_version: is 6; this o3viz reads versions 1 to 5"):
        load_trace(json.dumps(d).encode())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.update(depends_on=[[0, 1, 0.5]]), "must come before"),
        (lambda r: r.update(depends_on=[[5, 1, 0.5]]), "names a step"),
        (lambda r: r.update(scores=[0.1, 0.2, 0.3]), "more than the limit 2"),
        (lambda r: r.update(method="vibes"), "must be one of"),
        (lambda r: r.update(scores=["x", 1]), "must be a number"),
    ],
)
def test_malformed_importance_is_refused_naming_the_field(edit, message):
    d = _with_importance().to_dict()
    edit(d["rounds"][0]["importance"][0])
    with pytest.raises(TraceError, match=message) as err:
        load_trace(json.dumps(d).encode())
    assert "rounds[0].importance[0]" in str(err.value)


def test_duplicate_sources_in_one_round_are_refused():
    d = _with_importance().to_dict()
    d["rounds"][0]["importance"] *= 2
    with pytest.raises(TraceError, match="share one source"):
        load_trace(json.dumps(d).encode())


def test_the_map_shows_a_complete_record_rather_than_a_capped_resampling_run():
    from o3viz.trace.importance import ImportanceRecord, pick_record, step_view

    capped = ImportanceRecord("resample", "resample", [None, 0.4, None, None, None, 0.1, None, None])
    full = ImportanceRecord(
        "suppression", "suppression", [0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.9, None], [(3, 1, 0.7)]
    )
    assert pick_record([capped, full]) is full  # resample is preferred, but scored 2 of 8 steps
    complete = ImportanceRecord("resample", "resample", [0.1] * 7 + [None])
    assert pick_record([complete, full]) is complete  # the preference holds for a complete run
    assert pick_record([capped]) is capped  # the only record is still shown
    sizes, deps = step_view([capped, full], 8)
    assert sizes[6] == 1.0 and deps[3] == [1]


def _declared(shape, dtype="float32", data=""):
    return {"dtype": dtype, "shape": shape, "data": data}


@pytest.mark.parametrize(
    ("key", "array", "message"),
    [
        ("matrix", _declared([2, 3], data="A" * 32), r"is \[2, 3\], but must be \[2, 2\]"),
        ("matrix", _declared([1, 1], data="AAAAAA=="), r"is \[1, 1\], but must be \[2, 2\]"),
        ("matrix", _declared([0, 10**15]), r"but must be \[2, 2\]"),
        ("head_kurtosis", _declared([0, 10**15]), "over the limit 4096"),
        ("matrix", _declared([2, 2, 1]), "must have 2 dimensions"),
    ],
    ids=["more-columns-than-steps", "fewer-rows", "zero-by-huge", "huge-kurtosis", "three-dims"],
)
def test_an_importance_array_whose_shape_disagrees_with_the_steps_is_refused(key, array, message):
    d = _with_importance().to_dict()
    d["rounds"][0]["importance"][0][key] = array
    with pytest.raises(TraceError, match=message) as err:
        load_trace(json.dumps(d).encode())
    assert f"rounds[0].importance[0].{key}.shape" in str(err.value) and "\n" not in str(err.value)


def test_a_huge_declared_matrix_is_refused_before_its_data_is_decoded():
    """8 x 6,000,000 float16 in a ~1 MB file: refused on its declared shape, in well under a second
    (it used to take 39 s and 3.6 GB)."""
    import base64
    import gzip
    import time

    d = _with_importance().to_dict()
    d["rounds"][0]["importance"][0]["matrix"] = {"dtype": "float16", "shape": [2, 48_000_000], "data": "X"}
    raw = json.dumps(d).encode().replace(b'"X"', b'"' + base64.b64encode(bytes(96_000_000)) + b'"')
    data = gzip.compress(raw, 9)
    assert len(data) < 1_000_000
    t0 = time.perf_counter()
    with pytest.raises(TraceError, match=r"is \[2, 48000000\], but must be \[2, 2\]"):
        load_trace(data)
    assert time.perf_counter() - t0 < 20  # the gunzip and the JSON scan of 128 MB; no decoding
