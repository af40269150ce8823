"""Labelling in the app (AppTest): the name is asked once, the verdict buttons file labels under
it, Next moves on, and the Labels page shows the queue's progress and the agreement table."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def samples(tmp_path, monkeypatch):
    make_trace(12, seed=1).save(tmp_path / "a_short.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return tmp_path


def _inspect_step(node: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_node"] = node
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_name_is_asked_once_and_the_buttons_label_the_step(samples):
    at = _inspect_step("step:0:2")
    assert not [b for b in at.button if b.label.startswith("Wrong")]  # no name yet: no buttons
    at.text_input(key="labeller_input").set_value("ann")
    at.button(key="FormSubmitter:labeller_form-Start labelling").click().run()
    assert at.session_state["labeller"] == "ann"
    key = at.session_state["inspect_key"]
    at.button(key=f"lab_w_{key}_0_2").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (lab,) = all_labels(Store())
    assert (lab.key, lab.step_id, lab.labeller, lab.verdict) == (key, "0:2", "ann", "wrong")
    assert any("labelling as ann" in c.value and "wrong" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
    at.button(key=f"lab_n_{key}_0_2").click().run()
    assert at.session_state["inspect_node"] == "step:0:3"
    at.button(key=f"lab_c_{key}_0_3").click().run()
    assert [x.verdict for x in all_labels(Store())] == ["wrong", "correct"]


def test_the_labels_page_shows_progress_and_agreement(samples):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    key = next(iter(at.session_state["library"]))
    add_labels(Store(), [Label(key, 0, i, who, "wrong" if (i + (who == "bob")) % 3 == 0 else "correct")
                         for i in range(10) for who in ("ann", "bob")])  # fmt: skip
    at.session_state["labeller"] = "ann"
    at.switch_page("pages/labels.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert "ann · bob" in set(table["labellers"]) and "κ [95% CI]" in table.columns
    assert any("auto: check verdicts" in v for v in table["labellers"])
    assert len(at.dataframe) == 2  # and where they disagree, with links to Inspect
    assert "/inspect?trace=" in at.dataframe[1].value["open"].iloc[0]
