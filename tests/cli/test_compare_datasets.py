"""``o3viz compare --dataset A --dataset B``: two GSM8K systems imported as two datasets, compared
question by question; the printed table and the JSON match a count straight from the file, the
paired rows come back from Parquet, and bad requests are one line with exit code 2."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from o3viz.cli.main import main
from o3viz.testing.paired import expected, system_files

N = 40
A, B = "6b_finetuning", "6b_verification"


@pytest.fixture
def two_systems(shared_data, tmp_path):
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not src.exists():
        pytest.skip(f"{src} not found (../shared/data is absent)")
    for path, name in zip(system_files(src, (A, B), tmp_path, limit=N), ("ft", "ver"), strict=True):
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0
    return src


def test_compare_two_datasets_matches_the_file(two_systems, tmp_path, capsys):
    want = expected(two_systems, A, B, limit=N)
    out_json, out_pq = tmp_path / "r.json", tmp_path / "r.parquet"
    capsys.readouterr()
    rc = main(["compare", "--dataset", "ft", "--dataset", "ver", "--grade", "source"]
              + ["--json", str(out_json), "--parquet", str(out_pq)])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert f"A right{want['both']:>17,}{want['a_only']:>10,}" in text
    doc = json.loads(out_json.read_text())
    assert doc["pairs"] == N and doc["graded"] == N and doc["key_by"] == "question"
    assert doc["table"] == {k: want[k] for k in ("both", "a_only", "b_only", "neither")}
    assert doc["accuracy_a"] == pytest.approx(want["accuracy_a"])
    assert doc["accuracy_b"] == pytest.approx(want["accuracy_b"])
    assert doc["unpaired"]["a"] == doc["unpaired"]["b"] == 0
    rows = pd.read_parquet(out_pq)
    assert len(rows) == N
    flipped = rows[rows["flip"] == "B only"]
    assert len(flipped) == want["b_only"]
    assert {"steps_a", "steps_b", "d_steps", "key_a", "key_b"} <= set(rows.columns)
    # an existing output is refused without --overwrite
    assert main(["compare", "--dataset", "ft", "--dataset", "ver", "--json", str(out_json)]) == 2


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--dataset", "ft"], "give it twice"),
        (["--dataset", "ft", "--dataset", "ft"], "same traces"),
        (["--dataset", "ft", "--dataset", "ver", "--model", "x"], "--model"),
        (["--dataset", "ft", "--dataset", "nope"], "no traces in 'nope' (datasets in the store: ft, ver)"),
        # a misspelled model names that dataset's models, not the datasets
        (["--dataset", "ft", "--dataset", "ft", "--model", A, "--model", "6b_ft"], "(models in 'ft': "),
    ],
)
def test_bad_requests_are_one_line(two_systems, capsys, argv, words):
    capsys.readouterr()
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
