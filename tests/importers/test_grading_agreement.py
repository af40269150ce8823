"""o3viz's grade of imported real data agrees with the source's own ``is_correct``: the GSM8K model
solutions (whose references are whole worked solutions ending "A: N") and the MATH-500 topology
files, each imported from the command line with ``--all`` into the store, as a user would."""

from __future__ import annotations

from pathlib import Path

from o3viz.cli.main import main
from o3viz.importers.survey import explain_disagreement
from o3viz.store.query import Query
from o3viz.store.store import Store

MIN_GSM8K_AGREEMENT = 0.95  # measured 200/200; before the one reference reducer, 134/200
MIN_TOPOLOGY_AGREEMENT = 0.80  # measured 58/70: every disagreement is explained below


def _import_all(path: Path, dataset: str, capsys) -> Store:
    assert main(["import", str(path), "--all", "--workers", "0", "--dataset", dataset]) == 0, (
        capsys.readouterr()
    )
    return Store()


def _graded(store: Store, dataset: str) -> list[dict]:
    rows = store.rows(Query(dataset=[dataset], limit=1000))
    return [r for r in rows if r["source_correct"] is not None]


def test_gsm8k_model_solutions_grade_agrees_with_is_correct(shared_data, tmp_path, capsys):
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    head = tmp_path / "gsm8k_50.jsonl"
    head.write_text("".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:50]), encoding="utf-8")
    store = _import_all(head, "gsm8k50", capsys)
    rows = _graded(store, "gsm8k50")
    agree = sum(r["source_correct"] == r["check_correct"] for r in rows)
    print(f"\nGSM8K model solutions: o3viz agrees with is_correct on {agree}/{len(rows)}")
    assert len(rows) == 200
    assert agree / len(rows) >= MIN_GSM8K_AGREEMENT
    trace = store.trace(rows[0]["key"])
    assert trace.task.reference.isdigit()  # "18", not "Janet sells 16 - 3 - 4 = …"
    assert "A: " in trace.info["reference_text"] and trace.info["reference_method"] == "answer_label"


def test_topology_files_report_agreement_and_explain_each_disagreement(shared_data, capsys):
    files = sorted((shared_data / "traces").glob("topology_*.jsonl"))
    assert files
    for path in files:
        _import_all(path, "topology", capsys)
    store = Store()
    rows = _graded(store, "topology")
    agree = [r for r in rows if r["source_correct"] == r["check_correct"]]
    explained = [
        f"{r['name']}: {explain_disagreement(store.trace(r['key']))}"
        for r in rows
        if r["source_correct"] != r["check_correct"]
    ]
    print(f"\nMATH-500 topology files: o3viz agrees with is_correct on {len(agree)}/{len(rows)}")
    for line in explained:
        print("  ", line)
    assert len(rows) == 70
    assert len(agree) / len(rows) >= MIN_TOPOLOGY_AGREEMENT
    # every disagreement is o3viz calling an answer correct that the file's grader did not (a
    # notation variant of the reference, or the file's grader read another number from the text),
    # or a reply cut off at the generation cap that the file graded on its last number
    for line in explained:
        cut = "o3viz does not grade it, the reply was cut off" in line
        assert cut or ("we say correct" in line and ("grader missed" in line or "grader read" in line)), line
    assert sum("the reply was cut off" in line for line in explained) == 1  # qwen7b #10, cut at 32,768
