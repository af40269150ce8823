"""The Run page's "Compare two settings" mode (``pages/common/paired_run.py``) on a tiny random
llama: two GSM8K tasks under DAA off and allocate run as one background job with progress and
Stop, land as two datasets that pair fully, and the page links to Compare's dataset mode on them."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.app.paired_run import StoreSink
from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.testing.builders import save_tiny_llama

pytestmark = [pytest.mark.model]

APP = str(REPO_ROOT / "app.py")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return str(save_tiny_llama(tmp_path_factory.mktemp("tiny"), num_layers=2, max_positions=1024))


def _paired_mode(tmp_path, monkeypatch, tiny_dir, n: int = 2) -> AppTest:
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))  # no samples
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/run.py").run()
    at.button_group(key="run_mode").set_value("pair").run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="pr_model").set_value(tiny_dir)
    at.number_input(key="pr_n").set_value(n)
    at.slider(key="pr_max_new").set_value(16)
    at.text_input(key="pr_name").set_value("page")
    return at.run()


def _start(at: AppTest) -> None:
    next(b for b in at.button if b.label == "Start both runs").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _wait(at: AppTest) -> None:
    deadline = time.time() + 300
    while time.time() < deadline and at.session_state.paired_job is not None:
        time.sleep(0.5)
        at.run()
    assert at.session_state.paired_job is None and not at.exception


def test_two_settings_run_as_one_job_and_open_in_compare(tmp_path, monkeypatch, tiny_dir, shared_data):
    at = _paired_mode(tmp_path, monkeypatch, tiny_dir)
    a, b = escape_markdown("page · A: daa=off"), escape_markdown("page · B: daa=allocate")
    assert any(a in c.value and b in c.value for c in at.caption), [c.value for c in at.caption]
    _start(at)
    job = at.session_state.paired_job
    assert job is None or any(b.label == "Stop" for b in at.button)  # followed with Stop and a bar
    _wait(at)
    done = [s.value for s in at.success]
    assert len(done) == 1 and "2 of 2 tasks paired" in done[0], done
    notes = [w.value for w in at.warning]  # 16 tokens: the tiny model's replies are cut, so ungraded
    assert any("of 2 pairs run now are graded on both sides" in w for w in notes), notes
    (link,) = [p for p in at.get("page_link") if "Compare the two datasets" in p.proto.label]
    assert "mode=datasets" in link.proto.page or link.proto.query_string, link.proto
    query = link.proto.query_string
    assert "da=page" in query and "db=page" in query and "mode=datasets" in query
    sink = StoreSink(Store())
    assert list(sink.tasks_in("page · A: daa=off")) == list(sink.tasks_in("page · B: daa=allocate"))
    assert list(sink.tasks_in("page · A: daa=off")) == ["gsm8k:0", "gsm8k:1"]
    # the Compare page opens on the two datasets, paired by question
    at.switch_page("pages/compare.py")
    at.query_params.update({"mode": "datasets", "da": "page · A: daa=off", "db": "page · B: daa=allocate"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state.compare_mode == "datasets"
    assert at.session_state.compare_sets["da"] == "page · A: daa=off"


def test_stop_keeps_both_sides_on_the_same_questions(tmp_path, monkeypatch, tiny_dir, shared_data):
    at = _paired_mode(tmp_path, monkeypatch, tiny_dir, n=3)
    _start(at)
    stop = [b for b in at.button if b.label == "Stop"]
    if stop:  # (a very fast machine may have finished already)
        stop[0].click()
        at.run()
    _wait(at)
    sink = StoreSink(Store())
    a, b = sink.tasks_in("page · A: daa=off"), sink.tasks_in("page · B: daa=allocate")
    assert list(a) == list(b)
    said = [s.value for s in [*at.success, *at.info]]
    assert len(said) == 1, said
    if not a:  # stopped before the first task: said, and never as a success
        assert not at.success and "nothing was added" in said[0]
    else:
        assert "stopped early" in said[0] or len(a) == 3, said


def test_the_same_setting_on_both_sides_is_said_and_blocks_start(
    tmp_path, monkeypatch, tiny_dir, shared_data
):
    at = _paired_mode(tmp_path, monkeypatch, tiny_dir)
    at.selectbox(key="pr_b_daa").set_value("off").run()
    assert any("same settings" in e.value for e in at.error)
    assert next(b for b in at.button if b.label == "Start both runs").disabled


def test_the_default_token_limit_leaves_room_for_a_graded_answer(tmp_path, monkeypatch):
    """At the first default (128 new tokens) 9 of 10 GSM8K replies of the embedded model were cut
    off and so not graded: the comparison the mode exists for had nothing to compare."""
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/run.py").run()
    at.button_group(key="run_mode").set_value("pair").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.slider(key="pr_max_new").value >= 384
