"""Compare's dataset mode on the user's real data, through ``AppTest``: it opens on the two datasets
that share questions (DeepSeek-R1 and the Qwen-7B distill on 20 MATH-500 questions), not on the
larger unrelated GSM8K dataset; it warns on the first screen that o3viz's check reverses the
direction; a flip of two equal answers carries its reason; two sides with nothing in common are one
line, never a page of zeros."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from o3viz.cli.main import main
from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.testing.paired import system_files

APP = str(REPO_ROOT / "app.py")
R1, QWEN = "topology_math500_deepseek_r1", "topology_pilot_math500_qwen7b"


def _import(shared_data, tmp_path, monkeypatch, names):
    samples = tmp_path / "samples"
    samples.mkdir()
    monkeypatch.setenv("O3VIZ_SAMPLES", str(samples))
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    (gsm,) = system_files(src, ("6b_finetuning",), tmp_path, limit=40)
    # the unrelated dataset has the most traces, so a "first two datasets" default would pick it
    assert main(["import", str(gsm), "--all", "--dataset", "gsm8k-ft", "--workers", "0"]) == 0
    for name in names:
        path = shared_data / "traces" / f"{name}.jsonl"
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0


def _dataset_mode() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/compare.py")
    at.session_state["compare_mode"] = "datasets"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _flip_table(at):
    return next(d.value for d in at.dataframe if "right in" in d.value.columns)


def test_opens_on_the_shared_pair_graded_by_the_check_with_both_grades_shown(
    shared_data, tmp_path, monkeypatch
):
    """The source's grade and o3viz's check disagree on 23% of these answers (the source took ``13``
    from ``3\\sqrt{13}``): by default the check is used, both grades' figures are shown, and the
    source's grade, which reverses the direction, is said (issue 63, finding 4)."""
    _import(shared_data, tmp_path, monkeypatch, (R1, QWEN))
    at = _dataset_mode()
    sets = at.session_state.compare_sets
    assert (sets["da"], sets["ma"], sets["db"], sets["mb"]) == (R1, "", QWEN, "")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Accuracy A (n = 20)": "95.0%", "Accuracy B (n = 20)": "85.0%"}
    (grades,) = [w.value for w in at.warning]  # one box: both grades, which is used, what reverses
    assert grades.startswith(
        escape_markdown(
            "o3viz's check (else the source's grade): A 95.0%, B 85.0% (n = 20) (used); the source's grade: "
            "A 65.0%, B 70.0% (n = 20); o3viz's check: A 94.7%, B 89.5% (n = 19)"
        )
    )
    assert escape_markdown("disagree on 9 of 39 answers graded by both (23%, over 2%)") in grades
    want = escape_markdown("Under the source's grade the difference reverses: A 65.0% vs B 70.0% (n = 20)")
    assert grades.count(want) == 1, grades


def test_the_source_grade_when_chosen_warns_that_the_check_reverses(shared_data, tmp_path, monkeypatch):
    _import(shared_data, tmp_path, monkeypatch, (R1, QWEN))
    at = _dataset_mode()
    at.selectbox(key="pc_grade").set_value("either").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Accuracy A (n = 20)": "65.0%", "Accuracy B (n = 20)": "70.0%"}
    (warning,) = [w.value for w in at.warning]  # the grades still split: both figures are shown
    assert (
        escape_markdown("the source's grade (else o3viz's check): A 65.0%, B 70.0% (n = 20) (used)")
        in warning
    )
    assert (
        escape_markdown("Under o3viz's check the difference reverses: A 94.7% vs B 89.5% (n = 19)") in warning
    )
    text = " ".join(m.value for m in at.markdown)
    assert "o3viz's check: A 94.7%, B 89.5% (n = 19) :orange[**reverses**]" in text
    assert "2 with the same answer on both sides (the source graded them differently; listed last)" in text
    flips = _flip_table(at)
    assert list(flips["note"]) == ["", "same answer", "same answer"]
    assert list(flips["A answer"][1:]) == list(flips["B answer"][1:]) == ["Evelyn", "3√13"]
    assert flips["B answer"][0] == "—"  # no answer is "—", never "nan"
    measures = next(d.value for d in at.dataframe if "measure" in d.value.columns)
    assert {"n", "events", "note"} <= set(measures.columns)


def test_two_sides_without_a_common_question_are_one_line(shared_data, tmp_path, monkeypatch):
    _import(shared_data, tmp_path, monkeypatch, (R1, QWEN))
    at = _dataset_mode()
    at.selectbox(key="pc_db").set_value("gsm8k-ft").run()
    assert not at.exception
    (info,) = [i.value for i in at.info]
    assert "share no question" in info and escape_markdown(f"such as {R1} and {QWEN}") in info
    assert not at.metric and not at.get("plotly_chart") and not at.warning


def test_a_library_without_a_shared_pair_says_so_in_one_line(shared_data, tmp_path, monkeypatch):
    _import(shared_data, tmp_path, monkeypatch, (R1,))
    at = _dataset_mode()
    (info,) = [i.value for i in at.info]
    assert info.startswith("No two datasets in the library share a question")
    assert not at.metric and not at.get("plotly_chart") and not at.error
