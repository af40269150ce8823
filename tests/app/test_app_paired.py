"""Compare's dataset mode through ``AppTest``: two GSM8K systems (20 questions) imported as two
datasets show the paired numbers of a direct count from the file and the "too small" sentence; the
same dataset on both sides is one line; switching back to two traces leaves the dataset mode."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.cli.main import main
from o3viz.paths import REPO_ROOT
from o3viz.testing.paired import expected, system_files

APP = str(REPO_ROOT / "app.py")
N, A, B = 20, "175b_finetuning", "175b_verification"


@pytest.fixture
def two_datasets(shared_data, tmp_path, monkeypatch):
    samples = tmp_path / "samples"
    samples.mkdir()
    monkeypatch.setenv("O3VIZ_SAMPLES", str(samples))
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    for path, name in zip(system_files(src, (A, B), tmp_path, limit=N), ("ft", "ver"), strict=True):
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0
    return expected(src, A, B, limit=N)


def _dataset_mode() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/compare.py")
    at.session_state["compare_mode"] = "datasets"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_dataset_mode_shows_the_paired_numbers(two_datasets):
    want = two_datasets
    at = _dataset_mode()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[f"Accuracy A (n = {N})"] == f"{want['accuracy_a']:.1%}"
    assert metrics[f"Accuracy B (n = {N})"] == f"{want['accuracy_b']:.1%}"
    text = " ".join(m.value for m in at.markdown)
    assert f"| **A right** | {want['both']} | {want['a_only']} |" in text
    assert f"Questions that flipped ({want['a_only'] + want['b_only']})" in text
    assert any("fewer than 30" in i.value for i in at.info)  # n = 20: the plain sentence
    assert len(at.get("plotly_chart")) == 2


def test_same_dataset_twice_is_one_line_and_the_trace_mode_comes_back(two_datasets):
    at = _dataset_mode()
    at.selectbox(key="pc_db").set_value("ft").run()
    assert not at.exception
    assert len(at.error) == 1 and "same traces" in at.error[0].value
    at.session_state["compare_mode"] = "traces"
    at.run()
    assert not at.exception
    assert any(m.value.startswith("**What changed**") for m in at.markdown)
