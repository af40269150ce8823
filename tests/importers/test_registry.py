"""The import formats' one table: a registered format is listed, detected before the fallbacks,
and parsed like a built-in one; names are unique."""

from __future__ import annotations

import pytest

import o3viz.importers as importers
from o3viz.errors import UsageError
from o3viz.importers import detect_format, import_trace, list_formats, register_format, unregister_format
from o3viz.importers.formats import Imported

NOTES = "REASONING: 2 + 3 = 5, so the sum is 5.\nANSWER: 5"


def _parse_notes(raw, options):
    thinking, _, answer = raw.text.partition("\nANSWER:")
    return Imported("notes", thinking.removeprefix("REASONING:").strip(), answer.strip())


@pytest.fixture
def notes_format():
    register_format("notes", lambda raw: raw.data.startswith("REASONING:"), _parse_notes, reads="text")
    yield "notes"
    unregister_format("notes")


def test_a_registered_format_is_listed_and_detected_before_plain_text(notes_format):
    assert list_formats()[-1] == "notes" and "notes" in importers.FORMATS
    assert detect_format(NOTES) == "notes"
    t = import_trace(NOTES, reference="5")
    assert t.provenance.source["format"] == "notes"
    assert t.final.answer == "5" and t.final.checks[-1].verdict == "correct"
    assert detect_format("REASONING is not how this starts") == "plain_text"


def test_a_registered_format_can_be_forced_and_leaves_the_table_when_unregistered(notes_format):
    assert import_trace(NOTES, format="notes").provenance.source["format"] == "notes"
    unregister_format("notes")
    assert "notes" not in list_formats() and detect_format(NOTES) == "plain_text"
    with pytest.raises(UsageError, match="no format named 'notes'"):
        import_trace(NOTES, format="notes")


def test_a_registered_json_format_is_tried_and_named_in_the_unknown_format_error():
    register_format("tally", lambda raw: isinstance(raw.data, dict) and "tally" in raw.data, _parse_notes)
    try:
        assert detect_format({"tally": 1}) == "tally"
        with pytest.raises(importers.UnknownFormatError, match="tally"):
            detect_format({"other": 1})
    finally:
        unregister_format("tally")


def test_names_are_unique_and_checked():
    with pytest.raises(UsageError, match="already registered"):
        register_format("plain_text", lambda raw: True, _parse_notes, reads="text")
    with pytest.raises(UsageError, match="letters, digits"):
        register_format("no spaces", lambda raw: True, _parse_notes)
    with pytest.raises(UsageError, match="reads must be"):
        register_format("yaml", lambda raw: True, _parse_notes, reads="yaml")  # type: ignore[arg-type]
    assert list_formats()[:5] == (
        "deepseek_chat",
        "openai_chat",
        "openai_responses",
        "anthropic_messages",
        "chat_messages",
    )
