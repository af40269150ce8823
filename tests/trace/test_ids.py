"""Node ids: ``make_id`` and ``parse_id`` are inverse for every kind, and nothing else parses."""

from __future__ import annotations

import pytest

from o3viz.trace.ids import KINDS, NodeId, make_id, parse_id


@pytest.mark.parametrize(
    ("node", "parts"),
    [
        ("task", NodeId("task")),
        ("round:2", NodeId("round", 2)),
        ("answer:1", NodeId("answer", 1)),
        ("comp:4", NodeId("comp", None, 4)),
        ("step:0:3", NodeId("step", 0, 3)),
        ("check:1:0", NodeId("check", 1, 0)),
        ("dp:0:17", NodeId("dp", 0, 17)),
        ("seg:0:2", NodeId("seg", 0, 2)),
        ("branch:0:5", NodeId("branch", 0, 5)),
        ("alt:0:17:1", NodeId("alt", 0, 17, 1)),
    ],
)
def test_every_kind_parses_and_builds_back(node, parts):
    assert parse_id(node) == parts
    assert make_id(parts.kind, parts.round, parts.index, parts.alt) == node


def test_the_table_covers_every_kind():
    assert set(KINDS) == {"task", "round", "answer", "comp", "step", "check", "dp", "seg", "branch", "alt"}


@pytest.mark.parametrize(
    "node",
    [
        "",
        "step",
        "step:1",
        "step:1:2:3",
        "step:-1:2",
        "step:１:2",
        "round",
        "task:0",
        "node:1:2",
        "x" * 65,
        7,
    ],
)
def test_anything_else_is_not_an_id(node):
    assert parse_id(node) is None


def test_make_id_refuses_an_unknown_kind_or_a_missing_number():
    with pytest.raises(ValueError, match="unknown node kind"):
        make_id("node", 0, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        make_id("step", 0)
