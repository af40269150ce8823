"""The paired commands against a red team, end to end: ``o3viz compare`` on two models' files
imported into one dataset in different orders pairs them by question, not by line; ``o3viz run
--tasks`` refuses NaN and infinity in any number before a model loads, and a rerun with other
shared settings into the same datasets."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.builders import save_tiny_llama
from o3viz.testing.paired import expected, system_files

N = 30
A, B = "6b_finetuning", "6b_verification"


def _exit_code(argv: list[str]) -> int:
    """``main``'s exit code; argparse's own errors (an int option given "nan") exit 2 by raising."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_error_line(capsys, *words: str) -> None:
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if "o3viz: error:" in line]
    assert len(errors) == 1 and all(w in errors[0] for w in words), err
    assert "Traceback" not in err


@pytest.fixture
def gsm8k(shared_data):
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not src.exists():
        pytest.skip(f"{src} not found")
    return src


def test_two_models_files_in_one_dataset_pair_by_question_not_by_line(gsm8k, tmp_path, capsys):
    """Red team: within one dataset the sides paired by line number whenever every row had one, so
    two files in different orders paired line 1 with line 1."""
    path_a, path_b = system_files(gsm8k, (A, B), tmp_path, limit=N)
    lines = path_b.read_text(encoding="utf-8").splitlines()
    path_b.write_text("\n".join(lines[::-1]) + "\n", encoding="utf-8")  # B's file in another order
    for path in (path_a, path_b):
        assert main(["import", str(path), "--all", "--dataset", "both", "--workers", "0"]) == 0
    want = expected(gsm8k, A, B, limit=N)
    out = tmp_path / "r.json"
    argv = ["compare", "--dataset", "both", "--model", A, "--dataset", "both", "--model", B]
    assert main([*argv, "--grade", "source", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["key_by"] == "question" and doc["pairs"] == N
    assert doc["table"] == {k: want[k] for k in ("both", "a_only", "b_only", "neither")}
    capsys.readouterr()
    assert main([*argv, "--key", "record"]) == 2
    _one_error_line(capsys, "--key record", "not the same records")


def test_one_files_systems_still_pair_by_record(gsm8k, tmp_path):
    src = tmp_path / "gsm8k_head.jsonl"
    src.write_text("".join(gsm8k.open(encoding="utf-8").readlines()[:N]), encoding="utf-8")
    assert main(["import", str(src), "--all", "--dataset", "g", "--workers", "0"]) == 0
    out = tmp_path / "r.json"
    argv = ["compare", "--dataset", "g", "--model", A, "--dataset", "g", "--model", B, "--grade", "source"]
    assert main([*argv, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    want = expected(gsm8k, A, B, limit=N)
    assert doc["key_by"] == "record" and doc["pairs"] == N
    assert doc["table"] == {k: want[k] for k in ("both", "a_only", "b_only", "neither")}


@pytest.fixture
def no_model(monkeypatch):
    import o3viz.model

    def load_model(*a, **k):
        raise AssertionError("a model was loaded before the options were checked")

    monkeypatch.setattr(o3viz.model, "load_model", load_model)


PAIRED = ["run", "--tasks", "gsm8k", "--limit", "1"]


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--pair-b", "daa=allocate,strength=nan"], ("--pair-b", "DAA strength")),
        (["--pair-b", "daa=allocate,strength=1e999"], ("--pair-b", "DAA strength")),
        (["--pair-b", "daa=allocate,strength=inf"], ("--pair-b", "finite")),
        (["--pair-a", "daa=allocate,strength=-1e400", "--pair-b", "daa=off"], ("--pair-a", "finite")),
        (["--pair-b", "steer=question,alpha=nan"], ("--pair-b", "alpha")),
        (["--pair-b", "daa=allocate", "--temperature", "nan"], ("temperature",)),
        (["--pair-b", "daa=allocate", "--temperature", "inf"], ("temperature",)),
        (["--pair-b", "daa=allocate", "--timeout", "inf"], ("timeout",)),
        (["--pair-b", "daa=allocate", "--max-new-tokens", "1e999"], ("--max-new-tokens",)),
        (["--pair-b", "daa=allocate", "--limit", "nan"], ("--limit",)),
    ],
)
def test_non_finite_numbers_exit_2_before_any_model(capsys, no_model, extra, words):
    assert _exit_code([*PAIRED, *extra]) == 2
    _one_error_line(capsys, *words)
    assert Store().count() == 0


def test_a_single_run_refuses_a_non_finite_daa_strength(capsys, no_model, tmp_path):
    out = str(tmp_path / "x.o3trace.json")
    assert main(["run", "--prompt", "hi", "--daa", "allocate", "--daa-strength", "nan", "--out", out]) == 2
    _one_error_line(capsys, "DAA strength")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny"), num_layers=2, max_positions=512)


@pytest.mark.model
def test_a_rerun_with_other_settings_exits_2_and_adds_nothing(tiny_dir, capsys, shared_data):
    argv = [*PAIRED, "--model", str(tiny_dir), "--rounds", "1", "--pair-b", "daa=allocate", "--dataset", "t"]
    assert main([*argv, "--max-new-tokens", "2"]) == 0
    capsys.readouterr()
    assert main([*argv, "--max-new-tokens", "3", "--limit", "2"]) == 2
    _one_error_line(capsys, "'t · A: daa=off' already holds", "max_new_tokens 2 (now 3)", "--dataset")
    assert len(Store().select(Query(), ("key",))) == 2
