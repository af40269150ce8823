"""``o3viz label``, ``o3viz labels export|agreement|import`` and ``o3viz import --labels``: two
labellers label from the CLI, the export holds both, agreement prints κ, bad input is one line."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from o3viz.cli.main import main
from o3viz.store.store import Store

MR = [
    {
        "uuid": f"item-{n}",
        "question": f"Tom has {n + 2} apples and buys 3 more. How many?",
        "ground_truth_answer": n + 5,
        "model_output_steps": [
            f"Step 1: Tom starts with {n + 2} apples.",
            f"Step 2: He buys 3, so {n + 2} + 3 = <<{n + 2}+3={n + 6}>>{n + 6}.",
            f"Step 3: #### {n + 6}",
        ],
        "model_output_answer_correctness": "wrong",
        "model_output_solution_first_error_step": 2,
    }
    for n in range(6)
]


@pytest.fixture
def keys(tmp_path, capsys) -> list[str]:
    path = tmp_path / "mr.json"
    path.write_text(json.dumps(MR))
    assert main(["import", str(path), "--labels", "--dataset", "mr"]) == 0
    assert "imported 6 traces and 12 step labels by 'MR-GSM8K annotators'" in capsys.readouterr().out
    return [r[0] for r in Store().conn.execute("SELECT key FROM traces ORDER BY record")]


def test_two_labellers_label_from_the_cli_and_the_export_holds_both(keys, tmp_path, capsys):
    for who, verdict in (("ann", "wrong"), ("bob", "wrong")):
        for key in keys:
            argv = ["label", key, "--step", "0:1", "--verdict", verdict, "--by", who]
            assert main([*argv, "--first-error", "--note", "2+3 is 5"]) == 0
    assert main(["label", keys[0], "--step", "0:0", "--verdict", "correct", "--by", "ann"]) == 0
    assert main(["label", keys[0], "--step", "0:0", "--verdict", "wrong", "--by", "bob"]) == 0
    capsys.readouterr()
    out = tmp_path / "gold.jsonl"
    assert main(["labels", "export", "--dataset", "mr", "--format", "jsonl", "--out", str(out)]) == 0
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 6 and all(r["question"].startswith("Tom has") for r in recs)
    step = next(s for s in next(r for r in recs if r["key"] == keys[0])["steps"] if s["step"] == "0:1")
    assert {lab["labeller"] for lab in step["labels"]} == {"ann", "bob", "MR-GSM8K annotators"}
    assert "+ 3 =" in step["text"]
    agreed = tmp_path / "agreed.parquet"
    assert main(["labels", "export", "--format", "parquet", "--agreed", "--out", str(agreed)]) == 0
    table = pq.read_table(agreed).to_pylist()
    assert {r["step_id"] for r in table} == {"0:1"}  # step 0:0 of keys[0]: ann and bob disagree
    assert {r["labeller"] for r in table} == {"ann", "bob", "MR-GSM8K annotators"}


def test_agreement_prints_kappa_for_the_people_and_the_automatic_labellers(keys, capsys):
    for i, key in enumerate(keys):
        for who in ("ann", "bob"):
            verdict = "wrong" if who == "ann" or i % 2 else "correct"
            assert main(["label", key, "--step", "0:1", "--verdict", verdict, "--by", who]) == 0
    capsys.readouterr()
    assert main(["labels", "agreement", "--dataset", "mr"]) == 0
    out = capsys.readouterr().out
    assert "ann · bob" in out and "κ [95% CI]" in out
    assert "auto: check verdicts · MR-GSM8K annotators" in out
    assert "Krippendorff's α over 3 labellers" in out
    # the checker finds every 2+3 = 6 (a wrong claim on step 1): precision and recall are 1
    line = next(x for x in out.splitlines() if x.startswith("auto: check verdicts · MR-GSM8K"))
    assert line.split()[-10:] == ["12", "1.00", "[1.00,", "1.00]", *["1.00", "[0.61,", "1.00]"] * 2]
    assert "disagree:" in out and "step 0:1" in out


def test_a_golden_set_imports_back_under_a_new_name(keys, tmp_path, capsys):
    out = tmp_path / "gold.jsonl"
    assert main(["labels", "export", "--out", str(out)]) == 0
    assert main(["labels", "import", str(out), "--by", "copy"]) == 0
    assert "added 12 labels" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--step", "0:1", "--verdict", "maybe", "--by", "ann"],
            "verdict 'maybe': one of correct, wrong, unsure",
        ),
        (["--step", "0:99", "--verdict", "wrong", "--by", "ann"], "has no step 0:99"),
        (["--step", "one", "--verdict", "wrong", "--by", "ann"], "give it as R:I"),
        (["--step", "0:1", "--verdict", "wrong", "--by", "a" * 101], "at most 100"),
        (["--step", "0:1", "--verdict", "wrong", "--by", "ann", "--type", "mood"], "step type 'mood'"),
    ],
)
def test_bad_labels_get_one_line(keys, capsys, argv, says):
    assert main(["label", keys[0], *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_an_unknown_key_gets_one_line(keys, capsys):
    assert main(["label", "0123456789abcdef", "--step", "0:0", "--verdict", "wrong", "--by", "ann"]) == 2
    err = capsys.readouterr().err
    assert "no trace '0123456789abcdef'" in err and err.count("\n") == 1


def test_an_unknown_dataset_and_a_file_without_labels_get_one_line(keys, tmp_path, capsys):
    assert main(["labels", "agreement", "--dataset", "nope"]) == 2
    assert "no dataset 'nope' in the store (datasets: mr)" in capsys.readouterr().err
    other = tmp_path / "x.json"
    other.write_text(json.dumps([{"question": "q"}]))
    assert main(["import", str(other), "--labels"]) == 2
    assert "--labels reads MR-GSM8K" in capsys.readouterr().err


def test_importing_the_labels_twice_adds_none(keys, tmp_path, capsys):
    path = tmp_path / "mr.json"
    assert main(["import", str(path), "--labels", "--dataset", "mr"]) == 0
    assert "6 traces and 0 step labels" in capsys.readouterr().out
