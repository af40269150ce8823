"""Episodes of real DeepSeek-R1 MATH-500 traces (``../shared/data/traces``): where they split,
what each one holds, and that the overview stays small however long the trace."""

from __future__ import annotations

import pytest

from o3viz.analysis.episodes import (
    MAX_EPISODES,
    episode_of,
    episode_outline,
    find_episodes,
    turn_of,
)
from o3viz.analysis.outline import build_outline
from o3viz.analysis.wrong_step import first_wrong_step


def _r1(shared_data, record: int):
    from o3viz.importers import import_trace

    return build_outline(
        import_trace(shared_data / "traces" / "topology_math500_deepseek_r1.jsonl", record=record)
    )


def test_episodes_cover_every_step_once_in_order_on_a_675_step_r1_trace(shared_data):
    outline = _r1(shared_data, 18)
    eps = find_episodes(outline)
    steps = outline.rounds[0].steps
    assert len(steps) > 600 and 10 <= len(eps) <= MAX_EPISODES + 1
    assert eps[0].lo == 0 and eps[-1].hi == len(steps)
    assert all(a.hi == b.lo for a, b in zip(eps, eps[1:], strict=False))
    assert [e.index for e in eps] == list(range(len(eps)))


def test_every_episode_after_the_first_opens_at_a_turn_of_the_classifier(shared_data):
    outline = _r1(shared_data, 18)
    steps = outline.rounds[0].steps
    for ep in find_episodes(outline)[1:]:
        assert turn_of(steps[ep.lo], steps[ep.lo - 1]) == ep.opens_with
        assert ep.opens_with in ("backtrack", "self_check", "doubt")
    assert any(
        steps[e.lo].text.lstrip().startswith(("Actually", "Alternatively", "Wait", "But wait"))
        for e in find_episodes(outline)
    )


def test_episodes_count_their_backtracks_self_checks_types_and_the_answer_they_reach(shared_data):
    outline = _r1(shared_data, 9)  # 417 steps, correct (answer 4)
    eps = find_episodes(outline)
    steps = outline.rounds[0].steps
    for ep in eps:
        mine = steps[ep.lo : ep.hi]
        assert ep.backtracks == sum(s.kind == "backtrack" for s in mine)
        assert sum(n for _, n in ep.types) == ep.length == len(mine)
        assert ep.dominant == max(ep.types, key=lambda t: t[1])[0]
    assert eps[-1].final and eps[-1].answer == "4"
    assert sum(e.has_backtrack for e in eps) > len(eps) // 2


def test_a_short_trace_splits_at_wait_and_a_check_and_finds_its_wrong_step():
    texts = [
        "We need x.",
        "x = 2 + 3 = 6.",
        "So x = 6.",
        "Next we add one.",
        "x plus one is 7.",
        "Wait, is that right?",
        "Hmm.",
        "Let me check: 2 + 3 = 5.",
        "So x = 5.",
        "It checks out.",
        "The answer is \\boxed{5}.",
    ]
    from o3viz.importers import import_trace

    trace = import_trace("<think>\n" + "\n".join(texts) + "\n</think>", claims=False)
    from o3viz.trace import Check

    trace.final.checks.append(Check("claim", "2+3 = 6", "wrong", step=1))
    outline = build_outline(trace)
    eps = find_episodes(outline, 3)
    assert [(e.start, e.end) for e in eps] == [(0, 4), (5, 10)]
    assert eps[0].has_wrong and eps[0].first_wrong == 1 and not eps[1].has_wrong
    assert eps[1].has_backtrack and eps[1].has_self_check and eps[1].answer == "5"
    assert first_wrong_step(trace).node == "step:0:1"  # the one rule, on the same trace
    assert episode_of(eps, 0, 7) is eps[1] and episode_of(eps, 0, 99) is None
    sub = episode_outline(outline, eps[0])
    assert [s.index for s in sub.steps] == [0, 1, 2, 3, 4] and sub.rounds[0].answer is None
    assert episode_outline(outline, eps[1]).rounds[0].answer == outline.rounds[0].answer


@pytest.mark.parametrize("n", [2000, 5000])
def test_long_r1_imports_split_into_at_most_about_fifty_episodes(shared_data, n):
    from o3viz.testing.long_r1 import long_r1_trace

    outline = build_outline(long_r1_trace(n))
    eps = find_episodes(outline)
    assert len(outline.steps) > 0.9 * n
    assert 20 <= len(eps) <= MAX_EPISODES + 1
    assert max(e.length for e in eps) < 6 * len(outline.steps) / len(eps)  # no episode swallows the trace
