"""The run graph: node grammar, fixed attributes, edges, JSON round trip and the tree layout."""

from __future__ import annotations

import networkx as nx
import numpy as np

from o3viz.analysis.graph import build_graph
from o3viz.trace import (
    Alt,
    AttentionRecord,
    Branch,
    Check,
    CompressionEvent,
    CompressionRecord,
    DecisionPoint,
    Round,
    Segment,
    Step,
    Task,
    Token,
    Trace,
)
from o3viz.trace.ids import make_id, parse_id

NODE_ATTRS = {"kind", "label", "text", "round", "step", "verdict", "score"}


def two_round_trace() -> Trace:
    text = "3*4 = 13. So 13."
    toks = [Token(i, text[i : i + 4], i, min(i + 4, len(text)), -0.2, 0.4) for i in range(0, 16, 4)]
    att = AttentionRecord(
        2,
        2,
        3,
        np.zeros((4, 7), np.float16),
        step_alloc=np.array([[0.7, 0.3, 0.0], [0.2, 0.2, 0.6]], np.float16),
        alloc_labels=["seg 0", "seg 1", "step 0"],
    )
    r0 = Round(
        0,
        "3*4?",
        "3*4?",
        segments=[Segment(0, 0, 2, 0, 1), Segment(1, 2, 4, 1, 3)],
        text=text,
        tokens=toks,
        steps=[Step(0, "3*4 = 13.", 0, 9, 0, 3), Step(1, "So 13.", 10, 16, 3, 4)],
        decision_points=[DecisionPoint(1, 2.0, 0.05, [Alt(5, "12", 0.4), Alt(6, "13", 0.38)], [0])],
        branches=[Branch(0, 1, Alt(5, "12", 0.4), "12. So 12.", -0.3, "correct")],
        checks=[
            Check("claim", "3*4 = 13", "wrong", step=0, computed="12"),
            Check("answer", "final answer 13", "wrong"),
        ],
        attention=att,
        answer="13",
        verdict="fail",
        action="revise_claims",
        feedback="3*4 = 12",
    )
    r1 = Round(
        1,
        "fix",
        text="3*4 = 12.",
        steps=[Step(0, "3*4 = 12.", 0, 9)],
        checks=[Check("answer", "final answer 12", "correct")],
        answer="12",
        verdict="pass",
        action="accept",
    )
    comp = CompressionRecord(
        events=[CompressionEvent(-1, 1, "compress", 0.8, "repeat")], original_tokens=10, compressed_tokens=6
    )
    return Trace(Task("3*4?", kind="math", reference="12"), [r0, r1], compression=comp)


def test_graph_follows_the_node_grammar_and_fixed_attributes():
    G = build_graph(two_round_trace())
    assert {
        "task",
        "round:0",
        "round:1",
        "step:0:0",
        "step:0:1",
        "step:1:0",
        "seg:0:0",
        "dp:0:1",
        "alt:0:1:0",
        "branch:0:0",
        "check:0:0",
        "check:0:1",
        "answer:0",
        "answer:1",
        "comp:0",
    } <= set(G)
    for n, data in G.nodes(data=True):
        assert NODE_ATTRS <= set(data), n
    assert G.nodes["check:0:0"]["verdict"] == "wrong"
    assert G.nodes["branch:0:0"]["verdict"] == "correct"


def test_graph_edges_link_checks_revisions_branches_and_attention():
    G = build_graph(two_round_trace())
    assert G.edges["step:0:0", "check:0:0"]["kind"] == "checks"
    assert G.edges["round:0", "round:1"] == {"kind": "revision", "label": "3*4 = 12"}
    assert G.edges["alt:0:1:0", "branch:0:0"]["kind"] == "explores"
    assert G.edges["step:0:0", "seg:0:0"]["kind"] == "attends"
    assert abs(G.edges["step:0:0", "seg:0:0"]["weight"] - 0.7) < 1e-2
    assert G.edges["comp:0", "seg:0:1"]["kind"] == "compresses"


def test_every_node_id_is_one_of_trace_ids_and_its_parts_match_the_node():
    """The graph names nodes only through ``o3viz.trace.ids``: every id parses, and its round and
    step agree with the node's attributes."""
    G = build_graph(two_round_trace())
    for n, data in G.nodes(data=True):
        parts = parse_id(n)
        assert parts is not None, n
        assert make_id(parts.kind, parts.round, parts.index, parts.alt) == n
        if parts.kind not in ("task", "comp"):
            assert parts.round == data["round"], n
        if parts.kind == "step":
            assert parts.index == data["step"], n


def test_a_hostile_allocation_label_links_nowhere_instead_of_failing():
    t = two_round_trace()
    t.rounds[0].attention.alloc_labels[0] = "seg x"
    G = build_graph(t)
    assert not G.has_edge("step:0:0", "seg:0:0")


def test_graph_is_a_pure_function_of_the_trace():
    t = two_round_trace()
    a, b = build_graph(t), build_graph(t)
    assert nx.utils.graphs_equal(a, b)
    assert t == two_round_trace()


def test_backtracking_step_hangs_from_the_step_it_reconsiders():
    r = Round(
        text="a. b. Wait, a.",
        steps=[
            Step(0, "a.", 0, 2),
            Step(1, "b.", 3, 5),
            Step(2, "Wait, a.", 6, 14, kind="backtrack", parent=0),
        ],
    )
    G = build_graph(Trace(Task("q"), [r]))
    assert G.edges["step:0:0", "step:0:2"]["kind"] == "backtrack"
    assert not G.has_edge("step:0:1", "step:0:2")
