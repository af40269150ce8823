"""The Library's dataset upload shows how the first records read and lets the user say which field
is what (text, question, reference, id, model); GSM8K's own shape (question, answer) imports every
record; an upload that would import nothing says so in red, before and after the import; a file
the app cannot read is refused in words on the page. The Labels page exports the labels and does
not ask again for the name given on Inspect (AppTest)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.store.labels import Label, add_labels
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace

pytestmark = [pytest.mark.subprocess]

APP = str(REPO_ROOT / "app.py")
GSM8K_LIKE = [
    {
        "question": f"Tom has {i} apples and buys 2 more. How many?",
        "answer": f"{i} + 2 = {i + 2}.\n#### {i + 2}",
    }
    for i in range(4)
]


@pytest.fixture
def samples(tmp_path, monkeypatch):
    folder = tmp_path / "samples"
    folder.mkdir()
    make_trace(6, seed=1).save(folder / "s.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(folder))
    return folder


def _upload(records: list[dict], name: str = "qa.jsonl") -> tuple[AppTest, str]:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    at.get("file_uploader")[0].set_value([(name, data, "application/jsonl")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, next(iter((Store().root / "incoming").iterdir())).name


def _errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # as read, not as escaped markdown


def test_a_question_answer_dataset_previews_its_fields_and_imports_every_record(samples):
    at, staged = _upload(GSM8K_LIKE)
    preview = at.dataframe[0].value
    assert "text: answer" in preview["fields"].iloc[0] and preview["grade"].iloc[0] == "pass"
    assert not _errors(at)
    at.button(key=f"ds_all_{staged}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("4 traces from 4 records" in s.value for s in at.success), [s.value for s in at.success]


def test_fields_can_be_mapped_by_hand(samples):
    records = [
        {"q": f"What is {i} + 1?", "sol": f"{i} + 1 = {i + 1}", "gold": str(i + 1), "who": "m1"}
        for i in range(3)
    ]
    at, staged = _upload(records)
    assert _errors(at) and "None of the first records would import" in _errors(at)[0]
    at.selectbox(key=f"ds_field_text_{staged}").set_value("sol").run()
    at.selectbox(key=f"ds_field_question_{staged}").set_value("q").run()
    at.selectbox(key=f"ds_field_reference_{staged}").set_value("gold").run()
    at.selectbox(key=f"ds_field_model_{staged}").set_value("who").run()
    assert not _errors(at)
    assert set(at.dataframe[0].value["grade"]) == {"pass"}
    at.button(key=f"ds_all_{staged}").click().run()
    assert any("3 traces from 3 records" in s.value for s in at.success)
    rows = Store().rows(__import__("o3viz.store.query", fromlist=["Query"]).Query(dataset=["qa"], limit=10))
    assert {r["model"] for r in rows} == {"m1"} and {r["verdict"] for r in rows} == {"pass"}


def test_an_import_of_nothing_is_an_error_not_a_success(samples):
    at, staged = _upload([{"a": 1}, {"b": 2}])
    at.button(key=f"ds_all_{staged}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [s.value for s in at.success if "Imported" in s.value]
    assert any(e.startswith("Imported nothing: 2 records read, 2 skipped") for e in _errors(at)), _errors(at)


def test_a_file_the_app_cannot_read_is_refused_in_words(samples):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.get("file_uploader")[0].set_value([("table.csv", b"a,b\n1,2\n", "text/csv")])
    at.run()
    assert any("table.csv: unknown file type" in e and ".parquet" in e for e in _errors(at)), _errors(at)


def test_the_labels_page_exports_and_keeps_the_name_from_inspect(samples):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    key = next(iter(at.session_state["library"]))
    add_labels(Store(), [Label(key, 0, i, "ann", "correct") for i in range(3)])
    at.session_state["labeller"] = "ann"  # given on Inspect
    at.switch_page("pages/labels.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Give your name" in c.value for c in at.caption)
    assert at.text_input(key="labels_name").value == "ann"  # in the "Labelling as ann" popover
    download = at.get("download_button")
    assert download and "3 labels on 1 traces" in download[0].proto.label
