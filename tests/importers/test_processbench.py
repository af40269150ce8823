"""ProcessBench imports as labelled data: ``--labels`` reads it, each source step is one o3viz
step (so ``label`` names the step it names in the source), a step o3viz does split is said so
and its label still lands on it, ``--grade-field`` names the source's grade (and the Dataset
figures count the traces as graded), and bad or oversized input is one line."""

from __future__ import annotations

import json

import pytest

from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame
from o3viz.cli.main import main
from o3viz.errors import TraceError
from o3viz.importers import import_trace
from o3viz.importers.process_labels import labelled_records
from o3viz.store.query import Query
from o3viz.store.store import Store

# Steps of two sentences each, and a step of two lines: o3viz's own splitter would cut every one
# of them, so a label counted in source steps would land on the wrong step.
PB = [
    {
        "id": f"gsm8k-{n}",
        "generator": "Qwen2.5-7B-Instruct",
        "problem": f"Tom has {n + 2} apples and buys 3 more. How many does he have?",
        "steps": [
            f"Tom starts with {n + 2} apples. He buys 3 more.",
            f"So he has {n + 2} + 3 = {n + 6} apples. That is the total.",
            f"- apples before: {n + 2}\n- apples after: {n + 6}",
            f"The answer is \\boxed{{{n + 6}}}.",
        ],
        "final_answer_correct": False,
        "label": 1 if n % 2 == 0 else -1,
        "verdict": "incorrect" if n % 2 == 0 else "correct",
    }
    for n in range(4)
]


def _write(tmp_path, records, name="pb.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


def test_processbench_imports_with_labels_one_step_per_source_step(tmp_path, capsys):
    path = _write(tmp_path, PB)
    assert main(["import", str(path), "--labels", "--dataset", "pb"]) == 0
    out = capsys.readouterr().out
    # labelled up to the first error: 2 labels where label = 1, all 4 steps where label = -1
    assert "imported 4 traces and 12 step labels by 'ProcessBench annotators'" in out
    assert "16 source steps kept one to one" in out
    store = Store()
    rows = store.conn.execute("SELECT key, record FROM traces ORDER BY record").fetchall()
    assert len(rows) == 4
    labels = store.conn.execute("SELECT key, step, verdict, first_error FROM labels").fetchall()
    for key, record in rows:
        src, trace = PB[record - 1], store.trace(key)
        assert [s.text for s in trace.final.steps] == src["steps"]  # the source's steps, whole
        assert trace.info["source_steps"] == {"count": 4}
        first = [step for k, step, verdict, fe in labels if k == key and fe]
        assert first == ([src["label"]] if src["label"] >= 0 else [])
        if first:
            assert trace.final.steps[first[0]].text == src["steps"][src["label"]]


def test_a_list_of_steps_keeps_the_sources_count_in_a_plain_import(tmp_path, capsys):
    path = _write(tmp_path, PB)
    trace = import_trace(path, record=0)
    assert len(trace.final.steps) == len(PB[0]["steps"])
    assert main(["import", str(path), "--all", "--workers", "0", "--dataset", "plain"]) == 0
    assert "16 source steps kept one to one" in capsys.readouterr().out
    assert main(["import", str(path), "--record", "2"]) == 0
    assert "4 steps (the source's 4 steps, one to one)" in capsys.readouterr().out


def test_a_source_step_o3viz_splits_is_said_and_its_label_lands_on_its_first_part(tmp_path, capsys):
    from o3viz.importers.source_steps import MAX_SOURCE_STEP_CHARS, source_step_map

    long = " ".join(f"Line {i} adds {i} to the sum." for i in range(MAX_SOURCE_STEP_CHARS // 20))
    rec = {**PB[0], "steps": ["Start.", long, "Wrong: 2 + 2 = 5.", "The answer is 5."], "label": 2}
    (got,) = labelled_records([rec])
    steps = source_step_map(got.trace.info["source_steps"])
    assert len(steps) == 4 and len(steps[1]) > 1  # the long step became several
    (first,) = [s for s, _, fe in got.labels if fe]
    assert first == steps[2][0] and got.trace.final.steps[first].text == "Wrong: 2 + 2 = 5."
    assert main(["import", str(_write(tmp_path, [rec])), "--labels"]) == 0
    assert f"split by o3viz (over {MAX_SOURCE_STEP_CHARS:,} characters)" in capsys.readouterr().out


@pytest.mark.parametrize("labels", [False, True])
def test_a_named_grade_field_grades_the_traces_and_the_dataset_counts_them(tmp_path, capsys, labels):
    path = _write(tmp_path, PB)
    argv = ["import", str(path), "--dataset", "pb", "--grade-field", "verdict"]
    assert main([*argv, "--labels"] if labels else [*argv, "--all", "--workers", "0"]) == 0
    capsys.readouterr()
    store = Store()
    df = frame(store.select(Query(dataset=["pb"], limit=100), COLUMNS))
    summary = dataset_summary(df)
    # the named field ("correct"/"incorrect"), not final_answer_correct (false everywhere)
    assert (summary.n, summary.graded, summary.correct) == (4, 4, 2)


def test_a_grade_field_value_that_is_no_grade_is_one_line(tmp_path, capsys):
    bad = [{**PB[0], "verdict": "maybe"}]
    with pytest.raises(TraceError, match=r"grade_field='verdict': 'maybe' is not a grade") as err:
        import_trace(bad[0], grade_field="verdict")
    assert "\n" not in str(err.value)
    with pytest.raises(TraceError, match="no such field"):
        import_trace(bad[0], grade_field="graded")
    path = _write(tmp_path, bad)
    assert main(["import", str(path), "--labels", "--grade-field", "verdict"]) == 2
    err = capsys.readouterr().err.strip()
    assert "record 0: grade_field='verdict': 'maybe' is not a grade" in err and "\n" not in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"label": 9}, r"label 9 is not -1 or a step index \(0 to 3\)"),
        ({"label": "2"}, "label '2' is not -1 or a step index"),
        ({"steps": [1, 2]}, "no steps list"),
        ({"steps": "one text"}, "this file is none of them"),
    ],
)
def test_a_bad_processbench_record_is_one_line(change, message):
    with pytest.raises(TraceError, match=message):
        list(labelled_records([{**PB[0], **change}]))


def test_existing_caps_bound_a_processbench_import(tmp_path, monkeypatch):
    import o3viz.importers.build as build
    import o3viz.importers.formats as formats

    monkeypatch.setattr(build, "MAX_STEPS", 3)
    with pytest.raises(TraceError, match="4 steps, over the limit of 3 steps"):
        list(labelled_records(PB[:1]))
    monkeypatch.undo()
    path = _write(tmp_path, PB)
    monkeypatch.setattr(formats, "MAX_IMPORT_BYTES", 100)
    with pytest.raises(TraceError, match="exceeds the import limit of 100 bytes"):
        list(labelled_records(path))


def test_the_real_processbench_split_keeps_its_steps_and_labels(shared_data):
    from o3viz.importers.process_labels import LabelOptions

    path = shared_data / "process_labels" / "processbench_gsm8k.json"
    source = json.loads(path.read_text())[:60]
    opts = LabelOptions()
    recs = list(labelled_records(source, options=opts))
    assert opts.steps.source == opts.steps.steps == sum(len(x["steps"]) for x in source)
    for rec, x in zip(recs, source, strict=True):
        assert [s.text for s in rec.trace.final.steps] == [s.strip() for s in x["steps"]]
        assert rec.trace.info["file_is_correct"] is x["final_answer_correct"]
        first = [s for s, _, fe in rec.labels if fe]
        assert first == ([x["label"]] if x["label"] >= 0 else [])
