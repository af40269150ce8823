"""``o3viz compare`` on the user's real data: DeepSeek-R1 and the Qwen-7B distill on the same 20
MATH-500 questions, where the source's grade and o3viz's check point opposite ways and two flips
give the same answer on both sides; and two GSM8K systems, where self-checks rest on one event."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.testing.paired import system_files

from ..conftest import SHARED_DATA

R1, QWEN = "topology_math500_deepseek_r1", "topology_pilot_math500_qwen7b"


@pytest.fixture(scope="module")
def math500_home(tmp_path_factory):
    """One store holding both MATH-500 datasets, imported once for the module: the tests only read it."""
    home = tmp_path_factory.mktemp("math500_home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("O3VIZ_HOME", str(home))
        for name in (R1, QWEN):
            src = SHARED_DATA / "traces" / f"{name}.jsonl"
            if not src.exists():
                pytest.skip(f"{src} is absent")
            assert main(["import", str(src), "--all", "--dataset", name, "--workers", "0"]) == 0
    return home


@pytest.fixture
def math500(math500_home, monkeypatch):
    monkeypatch.setenv("O3VIZ_HOME", str(math500_home))


def test_by_default_the_check_grades_and_both_grades_are_printed(math500, capsys):
    """The two grades disagree on 23% of these answers: the check is used, and the source's grade,
    which reverses the direction, is printed beside it (issue 63, finding 4)."""
    capsys.readouterr()
    assert main(["compare", "--dataset", R1, "--dataset", QWEN]) == 0
    out = capsys.readouterr().out
    assert "accuracy A 95.0%, B 85.0% (n = 20 graded pairs, grade: check_first)" in out
    assert "grades: o3viz's check (else the source's grade): A 95.0%, B 85.0% (n = 20) (used)" in out
    assert "the source's grade: A 65.0%, B 70.0% (n = 20)" in out
    assert "o3viz's check: A 94.7%, B 89.5% (n = 19)" in out
    assert "warning: Under the source's grade the difference reverses: A 65.0% vs B 70.0% (n = 20)" in out
    assert "Under the source's grade (else o3viz's check)" not in out  # the same figures, said once


def test_the_reversal_and_the_same_answer_flips_are_printed(math500, capsys):
    capsys.readouterr()
    assert main(["compare", "--dataset", R1, "--dataset", QWEN, "--grade", "either"]) == 0
    out = capsys.readouterr().out
    assert "accuracy A 65.0%, B 70.0% (n = 20 graded pairs" in out
    assert "warning: Under o3viz's check the difference reverses: A 94.7% vs B 89.5% (n = 19)" in out
    assert "under o3viz's check: A 94.7%, B 89.5% (n = 19; McNemar p = 1)  <- reverses the direction" in out
    assert "2 of 3 flips give the same answer on both sides" in out


def test_thin_measures_are_marked_in_the_table(shared_data, tmp_path, capsys):
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not src.exists():
        pytest.skip(f"{src} is absent")
    for path, name in zip(system_files(src, ("6b_finetuning", "6b_verification"), tmp_path, limit=40),
                          ("ft", "ver"), strict=True):  # fmt: skip
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0
    capsys.readouterr()
    assert main(["compare", "--dataset", "ft", "--dataset", "ver"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.startswith("measure (B − A per question)"))
    assert "n" in head.split() and "events" in head.split()
    steps = next(x for x in lines if x.startswith("steps "))
    assert steps.split()[1] == "40" and "thin" not in steps
    backtracks = next(x for x in lines if x.startswith("backtracks "))
    assert backtracks.rstrip().endswith("(thin: 0 events)")
    assert any(x.startswith("(thin: fewer than 10 pairs") for x in lines)
