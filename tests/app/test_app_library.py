"""The Library's first screen says what to do, and links with markdown in them stay text
(issues 22.11 and 23.17), through ``AppTest``."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.figures import escape_markdown
from o3viz.importers import import_trace
from o3viz.paths import REPO_ROOT
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")
HOSTILE = ("[x](//ev.il)", "![](/x.png)")


@pytest.fixture
def samples(tmp_path, monkeypatch):
    make_trace(12, seed=1, rounds=2).save(tmp_path / "a_short_multi_round.o3trace.json")
    make_trace(40, seed=2, daa_mode="off", compression=False).save(tmp_path / "b_longer.o3trace.json.gz")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return tmp_path


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame(at: AppTest):
    return at.dataframe[0].value


@pytest.mark.parametrize("page", ["pages/inspect.py", "pages/compare.py"])
@pytest.mark.parametrize("hostile", HOSTILE)
def test_markdown_in_a_linked_key_is_shown_as_text_not_a_link_or_an_image(samples, page, hostile):
    at = _app()
    at.switch_page(page)
    at.query_params["trace"] = hostile
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (warning,) = [w.value for w in at.warning if "not in this session's library" in w.value]
    assert hostile not in warning  # every markdown character is escaped
    assert escape_markdown(hostile) in warning


def test_the_first_screen_says_what_to_do_and_names_have_no_extension(samples):
    at = _app()
    assert any("Select one row to inspect it, two to compare them." in c.value for c in at.caption)
    names = sorted(_frame(at)["name"])
    assert names == ["a_short_multi_round", "b_longer"]
    helps = {b.label: b.help for b in at.button}
    assert helps["Inspect"] == "select exactly one row to inspect it"
    assert helps["Compare"] == "select exactly two rows to compare them"


def test_marks_are_green_and_red_in_the_palette_and_missing_tokens_read_as_a_dash(samples):
    from o3viz.figures import VERDICT_COLORS

    Store().add(import_trace(b"<think>2 + 3 = 5.</think>The answer is 5."), name="r1.txt", source="import")
    at = _app()
    frame = _frame(at)
    assert list(frame.loc[frame["name"] == "r1.txt", "tokens"]) == ["—"]
    assert "None" not in frame.astype(str).to_string()
    css = str(at.dataframe[0].proto.arrow_data.styler.styles)
    shown = set(frame["correct"])
    assert shown & {"✓", "✗"}, shown
    for mark, verdict in (("✓", "correct"), ("✗", "wrong")):
        if mark in shown:
            assert f"color: {VERDICT_COLORS[verdict]}".lower() in css.lower()


def test_a_search_shows_the_words_around_each_match(tmp_path):
    store = Store(tmp_path / "s")
    text = b"<think>We start. Then the rhinoceros walks 3 km. So 3.</think>The answer is 3."
    key = store.add(import_trace(text), name="r1.txt", source="import")
    snip = store.snippets("rhinoceros", [key])[key]
    assert "«rhinoceros»" in snip and "walks" in snip


def test_the_library_search_shows_a_match_column_with_the_words_around_it(samples):
    text = b"<think>We start. Then the rhinoceros walks 3 km. So 3.</think>The answer is 3."
    Store().add(import_trace(text), name="r1.txt", source="import")
    at = _app()
    at.text_input(key="lib_search").set_value("rhinoceros").run()
    frame = _frame(at)
    assert list(frame["name"]) == ["r1.txt"] and "«rhinoceros»" in frame["match"][0]


def test_the_library_filters_on_the_gradings_disagreeing(samples, shared_data):
    """R1 pilot record 5: the source graded it wrong, o3viz's check right; the Library's "Only where
    the gradings disagree" toggle (under More) keeps it and drops the samples."""
    pilot = import_trace(shared_data / "traces/topology_pilot_math500_r1.jsonl", record=4)
    key = Store().add(pilot, source="import", dataset="pilot", record=5, name="pilot record 5")
    at = _app()
    everything = len(_frame(at))
    at.toggle(key="lib_disagree").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = _frame(at)
    assert 1 <= len(shown) < everything
    assert "pilot record 5" in list(shown["name"])  # the one trace whose gradings disagree
    assert [r["key"] for r in Store().rows(Query(disagree=True), ("key",))] == [key]
