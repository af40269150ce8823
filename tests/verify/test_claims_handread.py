"""A hand-read list of 26 ProcessBench steps (development half only, see
``benchmarks/claims_processbench.py``): each step whose first reading put a ``wrong`` flag on it,
with whether a person reading it finds a real slip, and the ``wrong`` claims the checker gives the
step now. The test holds the checker to these verdicts, so a reading that changes shows here.

Of the 26, 12 are real slips (all still flagged; one, math-106 step 10, is on a step ProcessBench
labels correct: the formula for C(9, 7) is written wrong while its value is right) and 14 were
misreadings of competition LaTeX (none flagged now)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o3viz.verify.claims.check import check_claims

HANDREAD = json.loads(
    (Path(__file__).parent / "data" / "claims_processbench_handread.json").read_text("utf-8")
)


def test_the_list_is_what_its_docstring_says():
    assert len(HANDREAD) == 26
    assert sum(e["real_slip"] for e in HANDREAD) == 12


@pytest.mark.parametrize("entry", HANDREAD, ids=[f"{e['id']}:{e['step']}" for e in HANDREAD])
def test_the_checker_keeps_its_verdicts_on_hand_read_steps(entry):
    wrong = [c.expression for c in check_claims(entry["text"]) if c.verdict == "wrong"]
    assert wrong == entry["flagged"], entry["why"]
    assert bool(wrong) == entry["real_slip"], f"{entry['id']} step {entry['step']}: {entry['why']}"
