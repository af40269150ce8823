"""Schema 3: a branch's ``parent`` and a trace's ``branches`` survive save → load, version-2 files
migrate, and bad branch fields are refused in one line."""

from __future__ import annotations

import json

import jsonschema
import pytest

from o3viz.errors import TraceError
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import small_trace
from o3viz.trace import SCHEMA_VERSION, load_trace
from o3viz.trace.branching import BranchLink, BranchParent

SCHEMA = json.loads((REPO_ROOT / "docs" / "trace.schema.json").read_text())


def _branched():
    t = small_trace()
    t.parent = BranchParent(
        "ab12cd34ef56ab12", "0:1", "edit", edited="So 5.", original="So 6.", prefix_chars=9
    )
    t.branches = [BranchLink("0123456789abcdef", "0:0", "resample", "3 rollouts", answer="5", verdict="pass")]
    return t


def test_parent_and_branches_round_trip_and_match_the_schema(tmp_path):
    t = _branched()
    back = load_trace(t.save(tmp_path / "b.o3trace.json.gz"))
    assert back == t and back.parent.step == "0:1" and back.branches[0].answer == "5"
    jsonschema.validate(t.to_dict(), SCHEMA)


def test_a_version_2_file_migrates_to_the_current_version_without_branches(tmp_path):
    d = small_trace().to_dict()
    d["schema_version"] = 2
    t = load_trace(json.dumps(d).encode())
    assert t.schema_version == SCHEMA_VERSION and t.parent is None and t.branches == []
    assert json.loads(t.save(tmp_path / "m.o3trace.json").read_text())["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("parent", {"key": "ab", "step": "0:1", "kind": "fork"}, "parent.kind: must be one of"),
        ("parent", {"key": "ab", "kind": "edit"}, "parent: step"),
        ("branches", [{"key": "ab", "step": 3, "kind": "edit"}], "branches[0]: step: must be a string"),
    ],
)
def test_bad_branch_fields_are_refused_naming_the_field(field, value, says):
    d = small_trace().to_dict()
    d[field] = value
    with pytest.raises(TraceError) as err:
        load_trace(json.dumps(d).encode())
    assert says.split(":")[0] in str(err.value) and "\n" not in str(err.value)
