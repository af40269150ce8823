"""Issue 53's Dataset view on the Dataset page, through ``AppTest``: the section "When did it
know?" draws its four figures from the index (one bar per dataset · model, with n), a click on a
bar lists exactly the traces that bar counts, and traces indexed before the running-answer
columns existed are counted in a caption that names the command that fills them."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from benchmarks.library import chart_click
from o3viz.analysis.answer_measures import MEASURES
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.paths import REPO_ROOT
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.store import Store

pytestmark: list = []  # light: AppTest in this process, a few imported traces

SOURCES = {"r1": "topology_math500_deepseek_r1", "qwen7b": "topology_pilot_math500_qwen7b"}


def _import(shared_data) -> Store:
    """The two files' 40 traces, imported as the Library imports a dataset, into the test's own
    O3VIZ_HOME (conftest)."""
    store = Store()
    for dataset, name in SOURCES.items():
        path = shared_data / "traces" / f"{name}.jsonl"
        report = import_dataset(path, store, ImportOptions(dataset, claims=False), workers=0)
        assert report.traces == 20 and not report.errors, report
    return store


def _rows(store: Store, dataset: str) -> list:
    return store.rows(Query(dataset=[dataset], limit=1000))


def _page(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path / "no_samples"))
    (tmp_path / "no_samples").mkdir(exist_ok=True)
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/dataset.py")
    at.run()
    at.multiselect(key="ds_datasets").set_value(["r1", "qwen7b"]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at) -> dict[str, dict]:
    """The page's Plotly charts by their key, as the figures they send."""
    return {c.proto.id.rsplit("-", 1)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


@pytest.fixture
def page(tmp_path, monkeypatch, shared_data):
    store = _import(shared_data)
    yield _page(tmp_path, monkeypatch), store
    store.close()


def test_the_section_draws_four_figures_with_a_bar_per_dataset_and_model(page):
    at, store = page
    assert any(h.value == "When did it know?" for h in at.subheader)
    # the section sits below six figures: the first screen links to it
    assert any("[When did it know?](#when-did-it-know)" in c.value for c in at.caption)
    assert {h.proto.anchor for h in at.subheader} >= {"when-did-it-know", "outliers"}
    charts = _charts(at)
    # n from the index itself: graded traces (shares), traces with an answer, traces right somewhere
    n = {
        d: {
            "early_correct": sum(r["answer_flips"] is not None for r in _rows(store, d)),
            "flip_rate": sum(r["answer_flips"] is not None for r in _rows(store, d)),
            "convergence": sum(r["convergence_frac"] is not None for r in _rows(store, d)),
            "tokens_saved": sum(r["first_correct_frac"] is not None for r in _rows(store, d)),
        }
        for d in SOURCES
    }
    assert n["r1"]["tokens_saved"] == 19  # one R1 trace is never right
    for m in MEASURES:
        bars = charts[f"ds_answer_{m}"]["data"][0]
        sels = [json.loads(s) for s in bars["customdata"]]
        assert sorted(s["dataset"] for s in sels) == sorted(SOURCES) and {s["measure"] for s in sels} == {m}
        assert bars["text"] == [f"n = {n[s['dataset']][m]}" for s in sels], m
    caption = next(c.value for c in at.caption if c.value.startswith("The running answer"))
    assert "reindex" not in caption  # every trace here has its figures


def test_a_bar_click_lists_the_traces_it_counts(page):
    at, store = page
    sel = next(
        s
        for s in _charts(at)["ds_answer_flip_rate"]["data"][0]["customdata"]
        if json.loads(s)["dataset"] == "r1"
    )
    chart_click(at, "ds_answer_flip_rate", sel)
    assert not at.exception, [e.value for e in at.exception]
    want = {r["name"] for r in _rows(store, "r1") if (r["answer_losses"] or 0) > 0}
    head = next(h.value for h in at.subheader if "behind that bar" in h.value)
    listed = next(d for d in at.dataframe if "right → wrong" in d.value.columns).value
    assert (
        head == f"{len(want)} trace{'s' if len(want) != 1 else ''} behind that bar"
        and set(listed["name"]) == want
        and want
    )
    assert (listed["right → wrong"] > 0).all()


def test_traces_indexed_before_the_columns_are_counted_with_the_command(tmp_path, monkeypatch, shared_data):
    store = _import(shared_data)
    with store.conn:  # as rows an older o3viz indexed: the columns there, empty
        store.conn.execute(
            "UPDATE traces SET first_correct_frac = NULL, convergence_frac = NULL, answer_flips = NULL, "
            "answer_losses = NULL WHERE dataset = 'qwen7b'"
        )
    store.close()
    at = _page(tmp_path, monkeypatch)
    caption = next(c.value for c in at.caption if c.value.startswith("The running answer"))
    assert "20 traces have no running-answer figures" in caption
    assert "o3viz library reindex --full" in caption
    assert all(b == "n = 20" for b in _charts(at)["ds_answer_early_correct"]["data"][0]["text"])
    at.multiselect(key="ds_datasets").set_value(["qwen7b"]).run()  # only those: nothing to draw
    assert not any(k.startswith("ds_answer_") for k in _charts(at))
    assert any("reindex --full" in i.value for i in at.info)
    reindex(Store(), full=True)  # what the page says to run: the same page, rerun, has them
    at.run()
    assert sorted(_charts(at)["ds_answer_early_correct"]["data"][0]["text"]) == ["n = 20"]
    assert not any("reindex" in c.value for c in [*at.caption, *at.info])
