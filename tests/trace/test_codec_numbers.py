"""Numbers in an untrusted trace file (red-team finding 14): every float field and every number in
a free-form ``info`` must be one a 64-bit float can hold. A 400-digit integer score raised
``OverflowError`` from ``math.isfinite`` through every reader; now each reader says one line."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.errors import TraceError
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace
from o3viz.trace.codec import check_json_value, number
from o3viz.trace.safejson import MAX_INT_DIGITS, loads


def _score_file(tmp_path, literal: str):
    """A trace whose first verdict score is written as the JSON text ``literal``."""
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = [{"verifier": "x", "verdicts": ["ok", "ok"], "scores": [12345, 0.5]}]
    path = tmp_path / "t.o3trace.json"
    path.write_text(json.dumps(d).replace("12345", literal, 1))
    return path


@pytest.mark.parametrize(
    "literal, message",
    [
        ("9" * 400, "is out of range"),
        ("-" + "9" * 400, "is out of range"),
        ("1" + "0" * 309, "is out of range"),  # 1e309 written as an integer
        ("1e999", "must be finite"),  # json reads it as inf
        ("-1e999", "must be finite"),
        ("9" * 5000, f"more than the limit of {MAX_INT_DIGITS}"),  # CPython refuses past 4,300
    ],
    ids=["400-digits", "minus-400-digits", "1e309-as-int", "1e999", "minus-1e999", "5000-digits"],
)
def test_a_score_no_float_can_hold_is_one_line_from_o3viz_info(tmp_path, capsys, literal, message):
    path = _score_file(tmp_path, literal)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err[-300:]
    with pytest.raises(TraceError, match=message):
        load_trace(path)


def test_a_large_integer_score_within_float_range_reads_as_a_float(tmp_path):
    t = load_trace(_score_file(tmp_path, "1" + "0" * 300))
    assert t.final.verdicts[0].scores[0] == 1e300
    assert load_trace(json.dumps(t.to_dict()).encode()) == t


def test_the_error_names_the_score_not_a_made_up_field(tmp_path):
    with pytest.raises(TraceError, match=r"verdicts\[0\]\.scores\[0\]: is out of range"):
        load_trace(_score_file(tmp_path, "9" * 400))


@pytest.mark.parametrize(
    "value", [10**400, -(10**400), float("inf"), float("nan")], ids=["1e400", "-1e400", "inf", "nan"]
)
def test_every_float_check_refuses_what_a_float_cannot_hold(value):
    with pytest.raises(TraceError, match=r"^x: (is out of range|must be finite)"):
        number(value, "x")
    with pytest.raises(TraceError, match=r"^x\.a\[0\]: "):
        check_json_value({"a": [value]}, "x")


def test_a_huge_integer_in_a_free_form_info_is_refused_in_one_line(tmp_path):
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = [{"verifier": "x", "verdicts": ["ok", "ok"], "info": {"threshold": 1}}]
    path = tmp_path / "t.o3trace.json"
    path.write_text(json.dumps(d).replace('"threshold": 1', '"threshold": ' + "7" * 400))
    with pytest.raises(TraceError, match=r"info\.threshold: is out of range"):
        load_trace(path)


def test_integers_stay_integers_in_a_free_form_value():
    assert check_json_value({"n": 3, "big": 2**80}, "x") == {"n": 3, "big": 2**80}
    assert isinstance(check_json_value(3, "x"), int)


@pytest.mark.parametrize("digits", [MAX_INT_DIGITS + 1, 4301, 50_000])
def test_safejson_refuses_a_long_integer_in_one_line_at_any_length(digits):
    with pytest.raises(TraceError, match=f"a number with {digits} digits") as e:
        loads(b'{"a": -' + b"1" * digits + b"}", "(file)")
    assert "\n" not in str(e.value)


def test_an_overflow_no_check_foresaw_is_still_one_trace_error():
    from o3viz.trace.jsonfile import parse_bytes

    def build(obj):
        return float(10**400)  # OverflowError: what a future field's unchecked float() would raise

    with pytest.raises(TraceError, match=r"malformed trace \(OverflowError"):
        parse_bytes(b'{"a": 1}', build)
