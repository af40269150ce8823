"""The whole-text claim checks are plug-ins (``CHECKS``, issue 52): ``check_text`` runs every
registered one after the pieces, ``skip`` (``check-claims --skip``) leaves one out by name, and a
registered check runs without an edit to ``check.py``."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.errors import UsageError
from o3viz.verify.claims.check import check_text
from o3viz.verify.claims.round_checks import CHECKS
from o3viz.verify.claims.types import Claim

pytestmark = [pytest.mark.light]

TEXT = "So 2 + 3 = 5 apples.\nThe answer is 7."


def _rules(report) -> list[str]:
    return [c.rule for c in report.claims]


def test_every_check_runs_and_skip_leaves_one_out_by_name():
    assert "final_answer_mismatch" in _rules(check_text(TEXT))
    assert "final_answer_mismatch" not in _rules(check_text(TEXT, skip=("final_answer_mismatch",)))
    with pytest.raises(UsageError, match="no check named 'final'; the checks are inconsistent_quantity"):
        check_text(TEXT, skip=("final",))


def test_a_registered_check_runs_after_the_others():
    def seven_is_seven():
        def check(ctx):
            at = ctx.text.rfind("7")
            return [Claim(at, at + 1, 1, "7", "7", "7", "correct", "arith_eq")]

        return check

    CHECKS.register("sevens", seven_is_seven, "a test check")
    try:
        with_it, without = check_text(TEXT), check_text(TEXT, skip=("sevens",))
        assert len(with_it.claims) == len(without.claims) + 1
        assert [c for c in with_it.claims if c not in without.claims][0].expression == "7"
    finally:
        CHECKS.unregister("sevens")


def test_the_cli_skips_and_lists_checks(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_text(TEXT)
    assert main(["check-claims", str(path), "--skip", "final_answer_mismatch", "--jsonl"]) == 0
    assert "final answer" not in capsys.readouterr().out
    assert main(["check-claims", str(path), "--skip", "nope"]) == 2
    assert "no check named 'nope'" in capsys.readouterr().err
