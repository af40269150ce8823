"""Issue 38, findings 3 and 11: a PRM800K stepwise file whose one path is long costs memory linear
in the file (measured from outside, in a child), and a hostile record after a good first one is
read without a traceback: a field of the wrong type counts as absent, a record of the wrong shape
is one line."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.importers.process_labels import labelled_records
from o3viz.testing.peak_rss import measure_peak

MiB = 1 << 20


@pytest.mark.subprocess
def test_a_long_prm800k_path_costs_memory_linear_in_the_file(tmp_path):
    path = tmp_path / "long.json"
    rows = [
        {"instruction": "Q", "responses": [f"s{i}" for i in range(6000)], "next_response": "end", "rating": 1}
    ]
    path.write_text(json.dumps(rows))
    code = f"print(sum(len(r.labels) for r in labelled_records({str(path)!r})))"
    run = measure_peak(code, setup="from o3viz.importers.process_labels import labelled_records")
    assert run.returncode == 0 and run.stdout.strip() == "1", run.stderr[-300:]
    # before: every prefix of the path as a tuple, +280 MB for this 53 KB file
    assert run.growth < 16 * MiB + 64 * path.stat().st_size, run.growth >> 20


GOOD_RAW = {"question": {"problem": "1+1?"}, "label": {"steps": [{"completions": [{"text": "2.", "rating": 1}], "chosen_completion": 0}]}}  # fmt: skip
GOOD_MR = {
    "question": "1+1?",
    "model_output_steps": ["1+1 = 2."],
    "model_output_answer_correctness": "correct",
}


@pytest.mark.parametrize(
    ("later", "says"),
    [
        ([GOOD_RAW, 7], "not a PRM800K record"),  # before: AttributeError
        ([GOOD_RAW, {"label": {"steps": [{"completions": [{"text": "x"}], "chosen_completion": 5}]}}], None),
        (
            [
                GOOD_RAW,
                {
                    "label": {
                        "steps": [{"completions": [{"text": "x", "rating": [1]}], "chosen_completion": 0}]
                    }
                },
            ],
            None,
        ),
        ([GOOD_MR, {**GOOD_MR, "model_output_answer_correctness": ["correct"]}], None),  # before: TypeError
        ([GOOD_MR, {**GOOD_MR, "model_output_solution_first_error_step": [1]}], None),
    ],
)
def test_a_hostile_later_record_is_no_traceback(tmp_path, capsys, later, says):
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(later))
    code = main(["import", str(path), "--labels"])
    err = capsys.readouterr().err
    if says is None:
        assert code == 0, err
    else:
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_a_list_rating_in_a_stepwise_row_is_unrated():
    rows = [{"instruction": "Q", "responses": [], "next_response": "a", "rating": [1]}]
    (rec,) = labelled_records(rows)
    assert rec.labels == []  # before: TypeError (unhashable list)
