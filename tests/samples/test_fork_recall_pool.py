"""The fork-recall benchmark's pooling over prompts: counts add up, and a pool with no real fork
says n/a rather than a recall."""

from __future__ import annotations

import pytest

from benchmarks.samples import RECALL_PROMPTS, ForkCounts, pooled, recall_line

pytestmark = [pytest.mark.light]


def test_pooled_sums_every_count_and_the_prompts():
    a = ForkCounts(nodes=3, real=2, found=1, called=2, at_answer=1)
    b = ForkCounts(nodes=2, real=1, found=1, called=1)
    c = pooled([a, b, ForkCounts()])
    assert (c.nodes, c.real, c.found, c.called, c.at_answer, c.prompts) == (5, 3, 2, 3, 1, 3)
    assert c.recall == pytest.approx(2 / 3)


def test_recall_is_pooled_not_averaged_over_prompts():
    # 1 of 1 and 0 of 3: the mean of the per-prompt recalls would be 0.5, the pooled recall is 1/4
    c = pooled([ForkCounts(real=1, found=1), ForkCounts(real=3)])
    assert c.recall == 0.25


def test_no_real_fork_reads_n_a_and_keeps_the_called_forks():
    c = pooled([ForkCounts(nodes=2, called=1), ForkCounts(nodes=1)])
    line = recall_line(c, "n 16, k 8")
    assert c.recall is None
    assert line.startswith("fork_recall: n/a (goal >= 0.8; 0 of 0 real forks, 3 branching nodes, 2 prompts")
    assert "1 forks called, 1 of them not real" in line and line.endswith("; n 16, k 8)")


def test_empty_pool_is_all_zero():
    c = pooled([])
    assert (c.prompts, c.real, c.recall) == (0, 0, None)


def test_recall_prompts_have_numeric_references_and_no_repeats():
    questions = [q for q, _ in RECALL_PROMPTS]
    assert 6 <= len(RECALL_PROMPTS) <= 10 and len(set(questions)) == len(questions)
    assert all(ref.isdigit() for _, ref in RECALL_PROMPTS)
