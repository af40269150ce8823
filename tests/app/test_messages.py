"""Load errors in the user's language, with the technical detail kept for an expander."""

from __future__ import annotations

import pytest

from o3viz.app.library import load_files
from o3viz.app.messages import NOT_A_TRACE, explain_load_error
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes


def _error(name: str, data: bytes) -> str:
    errors = load_files([(name, data)]).errors
    assert len(errors) == 1
    return errors[0]


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("t.o3trace.json", b'{"rounds": [', NOT_A_TRACE),
        ("t.o3trace.json.gz", b"xx", NOT_A_TRACE),
        ("r.json", b'{"a": 1}', NOT_A_TRACE),
        ("r.txt", b"\xff\xfe\x00\x01binary", "not JSON: binary data, not UTF-8 JSON, JSONL or text"),
        ("r.exe", b"MZ", "unknown file type"),
        ("t.o3trace.json", b'{"schema_version": 99}', "another o3viz version"),
    ],
)
def test_each_load_error_reads_as_one_line_a_user_understands(name, data, says):
    raw = _error(name, data)
    msg = explain_load_error(raw)
    assert msg.line.startswith(f"{name}: ") and says in msg.line
    assert "\n" not in msg.line and "Expecting" not in msg.line and "(char" not in msg.line
    assert msg.detail  # the technical message is kept


def test_an_empty_file_says_empty_file():
    for name in ("t.o3trace.json", "r.txt"):
        assert explain_load_error(_error(name, b""), empty=True).line == f"{name}: empty file"


def test_an_unknown_detail_still_names_the_file_and_keeps_the_detail():
    msg = explain_load_error("x.json: something odd happened (deep detail)")
    assert msg.line == "x.json: could not be opened (something odd happened)"
    assert msg.detail == "something odd happened (deep detail)"


def test_a_good_file_has_no_error():
    assert load_files([("ok.o3trace.json", trace_bytes(make_trace(4, seed=1)))]).errors == []
