"""A paired run changes only its setting: both sides run one round whatever the loop's default or
a side's confidence; a reply cut at its token limit is never accepted as confident, so it cannot end
the verify loop as a success; a run whose pairs went ungraded says why and about what n it needs."""

from __future__ import annotations

import math

import pytest

from o3viz.app.paired_run import StoreSink
from o3viz.errors import UsageError
from o3viz.run.paired_run import (
    PairedRunRequest,
    SideOutcome,
    grading_note,
    pairs_needed,
    parse_setting,
    run_pairs,
    task_ids,
)
from o3viz.run.request import RunRequest
from o3viz.run.solve import solve
from o3viz.store.store import Store
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import Check
from o3viz.verify.policy import choose_action

LIMIT = "stopped at the limit (160 tokens)"


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama()


def _request(n: int = 3, **run) -> PairedRunRequest:
    shared = RunRequest(**{"max_new_tokens": 4, **run})
    return PairedRunRequest(
        shared, task_ids("gsm8k", n), parse_setting("daa=off"), parse_setting("daa=allocate"), "fair"
    )


def test_both_sides_run_one_round_whatever_the_loops_default(tiny, tmp_path, shared_data):
    """The finding: side A ran 2-3 rounds (a task's default is 3) and side B 1 (accepted as
    confident), so B − A in generated tokens measured rounds, not DAA."""
    req = _request(n=2)  # no --rounds: a task's loop would default to 3
    assert [req.request(s, "gsm8k:0").max_rounds for s in "AB"] == [1, 1]
    store = Store(tmp_path / "s")
    res = run_pairs(req, lambda name: tiny, StoreSink(store))
    assert res.pairs == 2
    for key in res.keys_a + res.keys_b:
        trace = store.trace(key)
        assert len(trace.rounds) == 1 and trace.info["paired_run"]["settings"]["rounds"] == 1
    with pytest.raises(UsageError, match="first reply: --rounds 3") as exc:
        _request(rounds=3).validate()
    assert "\n" not in str(exc.value)
    _request(rounds=1).validate()


@pytest.mark.parametrize(
    "checks, confidence",
    [
        ([], 0.987),  # the finding: a cut reply accepted as confident
        ([Check("claim", "c", "unverifiable")], 1.0),
        ([Check("test", "t", "pass")], 0.1),  # a cut program's passing tests prove nothing either
        ([Check("answer", "a", "correct")], 0.99),
    ],
)
def test_a_cut_reply_is_never_accepted(checks, confidence):
    assert choose_action(checks, confidence, 0.9, False) in ("accept", "accept_confident")
    assert choose_action(checks, confidence, 0.9, False, cut_short=LIMIT) == "revise_cut_short"
    assert choose_action(checks, confidence, 0.9, True, cut_short=LIMIT) == "stop_max_rounds"


def test_the_loop_does_not_end_on_a_cut_reply_as_a_success(tiny):
    """Threshold 0 accepts any reply that is not cut; a reply cut at 4 tokens must go on."""
    trace = solve(*tiny, "What is 17 * 23? Think step by step.", max_new_tokens=4, rounds=2,
                  confidence_threshold=0.0)  # fmt: skip
    first, second = trace.rounds
    assert first.info["stop_reason"] == "max_new_tokens" and first.info["not_graded"]
    assert first.action == "revise_cut_short" and first.verdict in (None, "unverifiable")
    assert "cut off" in first.feedback and first.feedback in second.prompt
    assert second.action == "stop_max_rounds"


def test_a_run_that_graded_nothing_says_why_and_what_n_it_needs(tiny, tmp_path, shared_data):
    res = run_pairs(_request(n=3), lambda name: tiny, StoreSink(Store(tmp_path / "s")))
    assert res.pairs == 3 and len(res.outcomes) == 3
    note = res.grading_note()
    assert note is not None and "\n" not in note
    assert note.startswith(
        "0 of 3 pairs run now are graded on both sides: 3 replies on side A and 3 on side B"
    )
    assert "cut at 4 tokens" in note and "--max-new-tokens to 8 or more" in note
    assert "about 155 graded pairs, if about 20% of pairs flip" in note


def test_the_note_uses_the_observed_flips_and_is_silent_when_n_suffices():
    right, wrong = SideOutcome(90, False, 1), SideOutcome(80, False, 0)
    pairs = [(right, right)] * 14 + [(wrong, wrong)] * 2 + [(right, wrong)] * 4  # 4 of 20 flip
    note = grading_note(pairs, 512)
    assert note.startswith("20 of 20 pairs run now are graded on both sides.")
    assert "about 155 graded pairs, with 4 of 20 graded pairs flipping, as here" in note
    assert "cut" not in note
    enough = [(right, right)] * 124 + [(right, wrong)] * 31  # 20% flip: 155 pairs needed, 155 here
    assert grading_note(enough, 512) is None
    same = grading_note([(right, right)] * 12, 512)  # no flip in 12: the share is assumed, and said so
    assert "if about 20% of pairs flip (none of 12 graded pairs flipped)" in same
    blank = SideOutcome(30, False, None)  # ended on its own, but gave no gradable answer
    assert "1 replies gave no answer the check could grade" in grading_note([(blank, right)], 512)


def _mcnemar_power(n: int, flips: float, diff: float, alpha: float = 0.05) -> float:
    """The exact power of McNemar's exact two-sided test with n pairs: the discordant count D is
    Binomial(n, flips); given D, B's share of them is Binomial(D, (flips + diff) / (2 flips))."""
    p_b, power = (flips + diff) / (2 * flips), 0.0
    for d in range(n + 1):
        p_d = math.comb(n, d) * flips**d * (1 - flips) ** (n - d)
        if p_d < 1e-12:
            continue
        tail = [math.comb(d, k) / 2**d for k in range(d + 1)]
        reject = [min(1.0, 2 * min(sum(tail[: k + 1]), sum(tail[k:]))) <= alpha for k in range(d + 1)]
        power += p_d * sum(math.comb(d, k) * p_b**k * (1 - p_b) ** (d - k) for k in range(d + 1) if reject[k])
    return power


def test_pairs_needed_gives_the_power_it_says():
    """Contract: at ``pairs_needed`` pairs the exact test has about 80% power; at 0.8 times as many
    (a scale error), clearly less."""
    n = pairs_needed(0.10, 0.20)
    assert n == 155 and pairs_needed(0.05, 0.20) == 626
    assert 0.74 <= _mcnemar_power(n, 0.20, 0.10) <= 0.84
    assert _mcnemar_power(int(0.8 * n), 0.20, 0.10) < 0.72
    assert pairs_needed(0.10, 0.05) == pairs_needed(0.10, 0.10)  # flips below the difference: impossible
