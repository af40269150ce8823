"""The Library and Dataset pages over the persistent store, through ``AppTest``: a dataset upload
imports every record (or a picked one), filters narrow the table, the Dataset page draws its
figures, and what one session added is there for the next session."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes

pytestmark = [pytest.mark.subprocess]

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def samples(tmp_path, monkeypatch):
    folder = tmp_path / "samples"
    folder.mkdir()
    make_trace(6, seed=1).save(folder / "s.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(folder))
    return folder


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _names(at: AppTest) -> list[str]:
    # the library table (a dataset upload's field preview may be drawn above it)
    return list(next(d for d in at.dataframe if "name" in d.value.columns).value["name"])


def test_an_upload_is_still_there_for_the_next_session(samples):
    at = _app()
    at.get("file_uploader")[0].set_value(
        [("kept.o3trace.json", trace_bytes(make_trace(9, seed=4)), "application/json")]
    )
    at.run()
    assert "kept" in _names(at)  # shown without the extension
    again = _app()  # a reload, or a new browser tab: a new session on the same store
    assert "kept" in _names(again) and "s" in _names(again)


def test_a_dataset_upload_imports_all_its_records_with_progress(samples, tmp_path):
    data = write_reasoning_jsonl(tmp_path / "toy.jsonl", 6).read_bytes()
    at = _app()
    at.get("file_uploader")[0].set_value([("toy.jsonl", data, "application/jsonl")])
    at.run()
    assert any("holds 6 records" in i.value for i in at.info)
    at.button(key="ds_all_" + next(iter((Store().root / "incoming").iterdir())).name).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("6 traces from 6 records into dataset 'toy'" in s.value for s in at.success)
    assert Store().count() == 7


def test_a_single_record_can_be_picked_from_a_dataset_upload(samples, tmp_path):
    data = write_reasoning_jsonl(tmp_path / "toy.jsonl", 6).read_bytes()
    at = _app()
    at.get("file_uploader")[0].set_value([("toy.jsonl", data, "application/jsonl")])
    at.run()
    name = next(iter((Store().root / "incoming").iterdir())).name
    at.number_input(key=f"ds_line_{name}").set_value(4)
    at.button(key=f"ds_one_{name}").click().run()
    assert not at.exception
    assert Store().count() == 2 and any(n.startswith("#4 · Problem 3: Tom has") for n in _names(at))


def test_filters_narrow_the_table_and_the_dataset_page_draws_its_figures(samples, tmp_path):
    import_dataset(write_reasoning_jsonl(tmp_path / "d.jsonl", 30), Store(), ImportOptions("toy"), workers=0)
    at = _app()
    assert len(_names(at)) == 31
    at.multiselect(key="lib_dataset").set_value(["toy"])
    at.selectbox(key="lib_correct").set_value("wrong")
    at.run()
    wrong = Store().count(query := __import__("o3viz").Query(dataset=["toy"], correct="wrong"))
    assert len(_names(at)) == wrong > 0 and query.correct == "wrong"
    at.switch_page("pages/dataset.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # the six dataset figures, then "When did it know?": the running answer's four
    charts = [c.key for c in at.get("plotly_chart")]
    assert at.metric[0].value == "30" and len(charts) == 10, charts
    labels = {b.label for b in at.get("download_button")}
    assert "Download figure (HTML)" in labels
    # the outlier table (and its downloads) lists only traces the stated rule flags
    flagged = "No trace stands out by this rule." not in [i.value for i in at.info]
    assert ({"Table as CSV", "Table as Parquet"} <= labels) == flagged
