"""Routing and lens analysis on small hand-checkable records: load, CV, Switch balance, entropy,
co-activation, step types, the A/B difference and the first layer that predicts each token."""

from __future__ import annotations

import numpy as np

from o3viz.analysis.routing_lens import (
    answer_token_indices,
    coactivation,
    expert_load,
    first_top1_layer,
    routing_by_step_type,
    routing_diff,
    routing_entropy,
)
from o3viz.testing.routing_lens_trace import trace_with_internals
from o3viz.trace.layer_records import RoutingRecord


def _record(chosen: list[list[int]], experts: int = 4) -> RoutingRecord:
    c = np.array(chosen, np.int32)[:, None, :]  # (G, 1, k)
    probs = np.full((c.shape[0], 1, experts), 1 / experts, np.float16)
    return RoutingRecord([0], experts, c.shape[-1], "softmax", c, np.ones(c.shape, np.float16), probs=probs)


def test_even_routing_has_zero_cv_and_switch_balance_one():
    load = expert_load(_record([[0], [1], [2], [3]]))
    assert load.cv[0] == 0 and np.isclose(load.switch_balance[0], 1.0)


def test_collapsed_routing_has_high_cv_and_switch_balance_n_with_peaked_probs():
    rec = _record([[2], [2], [2], [2]])
    rec.probs[:] = np.array([0, 0, 1, 0], np.float16)
    load = expert_load(rec)
    assert np.isclose(load.cv[0], np.sqrt(3)) and np.isclose(load.switch_balance[0], 4.0)


def test_entropy_is_log_e_for_uniform_rows_and_none_for_topk_only():
    rec = _record([[0], [1]])
    assert np.allclose(routing_entropy(rec), np.log(4), atol=1e-3)
    rec.probs = None
    assert routing_entropy(rec) is None


def test_coactivation_counts_pairs_chosen_for_the_same_token():
    m = coactivation(_record([[0, 1], [0, 1], [2, 3], [0, 2]]), 0)
    assert m[0, 1] == m[1, 0] == 0.5 and m[2, 3] == 0.25 and m[1, 3] == 0 and m[0, 0] == 0.75


def test_routing_by_step_type_groups_tokens_by_their_step():
    t = trace_with_internals()
    sr = routing_by_step_type(t.final.internals.routing, t.final)
    assert sum(sr.tokens) == len(t.final.tokens)
    assert np.allclose(sr.usage.sum(-1), 1) and (sr.distance >= 0).all()


def test_routing_diff_is_zero_for_the_same_run_and_names_unequal_expert_counts():
    rec = trace_with_internals().final.internals.routing
    same = routing_diff(rec, rec)
    assert np.all(same.diff == 0) and same.note == ""
    other = _record([[0], [1]], experts=4)
    d = routing_diff(rec, other)
    assert d.layers == [0] and d.diff.shape == (1, 4) and "experts" in d.note


def test_first_top1_layer_and_answer_tokens():
    t = trace_with_internals()
    lens = t.final.internals.lens
    assert first_top1_layer(lens).tolist() == [3] * len(t.final.tokens)
    lens.rank[:] = 0
    assert first_top1_layer(lens).tolist() == [1] * len(t.final.tokens)
    lens.rank[:] = 4
    assert (first_top1_layer(lens) == -1).all()
    assert answer_token_indices(t.final) == [4]  # the last "391."
