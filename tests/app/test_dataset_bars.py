"""A click on a Dataset bar, through ``AppTest`` (the chart's selection sent as the browser sends
it): the list under the figure holds exactly the traces the bar stands for, and the click reruns
the page without building its six figures again (they are kept per scope and store state)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import o3viz.figures
from benchmarks.library import chart_click
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.text.classify import TYPES


@pytest.fixture
def dataset_page(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path / "no_samples"))
    (tmp_path / "no_samples").mkdir()
    import_dataset(write_reasoning_jsonl(tmp_path / "d.jsonl", 40), Store(), ImportOptions("toy"), workers=0)
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/dataset.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _expected(sel: dict) -> set[str]:
    """The bar's traces from the index itself (not through the page's frame)."""
    rows = Store().select(o3viz.Query(dataset=["toy"], limit=1000), ("name", "correct", f"t_{sel['type']}"))
    group = {"correct": 1, "wrong": 0}[sel["group"]]
    return {r[0] for r in rows if r[1] == group and (r[2] or 0) > 0}


@pytest.mark.parametrize("group", ["wrong", "correct"])
def test_a_bar_lists_exactly_its_traces(dataset_page, group):
    sel = {"group": group, "type": TYPES[3]}  # active computation: most traces have some
    chart_click(dataset_page, "ds_types", json.dumps(sel, sort_keys=True))
    at = dataset_page
    assert not at.exception, [e.value for e in at.exception]
    want = _expected(sel)
    head = next(h.value for h in at.subheader if "behind that bar" in h.value)
    listed = next(d for d in at.dataframe if "self-checks" in d.value.columns).value
    assert head == f"{len(want)} traces behind that bar" and set(listed["name"]) == want and want
    assert set(listed["correct"]) == {group}


def test_a_bar_click_does_not_build_the_figures_again(dataset_page, monkeypatch):
    built = []
    real = o3viz.figures.type_mix_figure
    monkeypatch.setattr(o3viz.figures, "type_mix_figure", lambda *a, **k: built.append(1) or real(*a, **k))
    chart_click(dataset_page, "ds_types", json.dumps({"group": "wrong", "type": TYPES[3]}, sort_keys=True))
    assert any("behind that bar" in h.value for h in dataset_page.subheader)
    assert built == []  # the page drew the same figures, kept from the first render
