"""Issue 53: ``o3viz answers`` on a trace file, a store key and a stored dataset: stated answers
saved through ``replace_trace`` (labels survive), resumable, JSON Lines with the issue's fields,
one-line errors; the forced-answer probes where ``o3viz.answers.probes`` is present."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.importers import import_trace
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.trace import load_trace

pytestmark = [pytest.mark.light]

FIELDS = {"key", "steps", "first_correct_step", "convergence_step", "flips", "tokens_after_first_correct"}
STEP_FIELDS = {"step", "stated", "forced", "p_reference", "correct"}


def _dataset(shared_data, tmp_path, capsys) -> Store:
    lines = (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()[:3]
    src = tmp_path / "g3.jsonl"
    src.write_text("\n".join(lines) + "\n")
    assert main(["import", str(src), "--all", "--workers", "0", "--dataset", "g3"]) == 0
    capsys.readouterr()
    return Store()


def test_a_dataset_gets_its_running_answer_resumably_and_keeps_labels(shared_data, tmp_path, capsys):
    store = _dataset(shared_data, tmp_path, capsys)
    first = store.rows(Query(dataset=["g3"], limit=1, descending=False))[0]["key"]
    add_labels(store, [Label(first, 0, 0, "ann", "correct")])
    assert main(["answers", "--dataset", "g3", "--json"]) == 0
    out, err = capsys.readouterr()
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == 12 and "[12/12]" in err and "12 trace(s) of 'g3'" in err
    for o in objs:
        assert FIELDS <= set(o) and all(STEP_FIELDS <= set(s) for s in o["steps"])
        assert o["steps"][-1]["stated"] is not None  # the "A: N" line
    store = Store()
    keys = [r["key"] for r in store.rows(Query(dataset=["g3"], limit=20))]
    assert first not in keys and len(keys) == 12  # replaced: the copy holds the answers
    assert all(store.trace(k).final.answers[0].probe == "stated" for k in keys)
    assert [x.verdict for x in all_labels(store, keys)] == ["correct"]  # the label followed its trace
    assert store.rows(Query(dataset=["g3"], limit=20))[0]["answer_flips"] is not None
    assert main(["answers", "--dataset", "g3"]) == 0  # a second run skips every trace
    assert "0 trace(s) of 'g3' given their running answer, 12 already had it" in capsys.readouterr().err


def test_a_trace_file_is_answered_in_place_and_ungraded_without_a_reference(shared_data, tmp_path, capsys):
    t = import_trace(shared_data / "traces" / "topology_math500_deepseek_r1.jsonl", record=14, claims=False)
    t.task.reference = None
    path = t.save(tmp_path / "r1.o3trace.json")
    assert main(["answers", str(path), "--json"]) == 0
    o = json.loads(capsys.readouterr().out)
    assert o["first_correct_step"] is None and o["final_correct"] is None
    assert any(s["stated"] for s in o["steps"]) and all(s["correct"] is None for s in o["steps"])
    assert load_trace(path).final.answers[0].correct[-1] is None


def test_a_store_key_is_answered_in_place(shared_data, capsys):
    t = import_trace(shared_data / "traces" / "topology_math500_deepseek_r1.jsonl", record=14, claims=False)
    key = Store().add(t, source="import", dataset="r1")
    assert main(["answers", key[:8]]) == 0
    out, err = capsys.readouterr()
    assert "first correct step:0:" in out and "saved in the store" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["answers"], "give a TRACE file or key, or --dataset NAME"),
        (["answers", "--dataset", "nothing"], "no traces in dataset 'nothing'"),
        (["answers", "--dataset", "x", "--every", "0"], "--every must be 1 to"),
        (["answers", "--dataset", "x", "--probe", "endpoint"], "needs --base-url"),
        (["answers", "--dataset", "x", "-V", "novalue"], "-V takes key=value"),
    ],
)
def test_bad_arguments_give_one_line(argv, says, capsys):
    assert main(argv) != 0
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_an_unknown_probe_option_is_named(capsys):
    pytest.importorskip("o3viz.answers.probes")
    assert main(["answers", "--dataset", "x", "--probe", "local", "-V", "colour=red"]) != 0
    assert "no option 'colour'" in capsys.readouterr().err
