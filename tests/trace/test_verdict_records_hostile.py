"""Verdict records from an untrusted file (red-team finding 10): the view copies a record's
``verifier`` and ``info.kind`` into every step's details, so a 128 KiB name on a 1,001-step trace
made a 17 KB file into a 380 MiB page. Both are cut to ``MAX_NAME_CHARS`` on read; memory is
measured from outside, in a child (``o3viz.testing.peak_rss``)."""

from __future__ import annotations

import gzip
import json

import pytest

from o3viz.errors import TraceError
from o3viz.testing.builders import small_trace
from o3viz.testing.peak_rss import measure_peak
from o3viz.trace import Round, Step, Task, Trace, load_trace
from o3viz.trace.verdicts import MAX_NAME_CHARS, VerdictRecord

MiB = 1 << 20
LONG = "n" * (128 * 1024)


def _with_record(record: dict) -> bytes:
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = [record]
    return json.dumps(d).encode()


def test_a_long_verifier_name_and_kind_are_cut_with_a_mark_on_read():
    t = load_trace(_with_record({"verifier": LONG, "verdicts": ["ok", "wrong"], "info": {"kind": LONG}}))
    rec = t.final.verdicts[0]
    assert len(rec.verifier) == MAX_NAME_CHARS and rec.verifier.endswith("…")
    assert len(rec.info["kind"]) == MAX_NAME_CHARS and rec.info["kind"].endswith("…")
    assert load_trace(json.dumps(t.to_dict()).encode()) == t  # what was read saves and reads back the same


def test_a_name_of_exactly_the_cap_is_kept_whole():
    name = "v" * MAX_NAME_CHARS
    t = load_trace(_with_record({"verifier": name, "verdicts": ["ok", "ok"], "info": {"kind": "prm"}}))
    assert t.final.verdicts[0].verifier == name and t.final.verdicts[0].info["kind"] == "prm"


def test_control_characters_in_a_name_become_spaces():
    rec = {"verifier": "prm\x1b[2J\r\nevil", "verdicts": ["ok", "ok"], "info": {"kind": "a\tb\x07"}}
    t = load_trace(_with_record(rec))
    assert t.final.verdicts[0].verifier == "prm [2J  evil" and t.final.verdicts[0].info["kind"] == "a b "


@pytest.mark.parametrize("kind", [["x"] * 1000, {"a": 1}, 7])
def test_a_kind_that_is_not_a_string_is_refused_in_one_line(kind):
    with pytest.raises(TraceError, match=r"verdicts\[0\]\.info\.kind: must be a string") as e:
        load_trace(_with_record({"verifier": "x", "verdicts": ["ok", "ok"], "info": {"kind": kind}}))
    assert "\n" not in str(e.value)


def test_two_long_names_that_cut_to_the_same_text_are_refused_as_one_name_twice():
    recs = [{"verifier": LONG + s, "verdicts": ["ok", "ok"]} for s in ("a", "b")]
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = recs
    with pytest.raises(TraceError, match="names a verifier twice"):
        load_trace(json.dumps(d).encode())


def _long_name_trace(path) -> None:
    """1,001 steps judged by one verifier whose name and kind are 128 KiB each (gzip: ~15 KB)."""
    n = 1001
    steps, pos = [], 0
    for i in range(n):
        steps.append(Step(index=i, text=f"s{i}.", start=pos, end=pos + len(f"s{i}.")))
        pos += len(f"s{i}.") + 1
    text = " ".join(s.text for s in steps)
    rec = VerdictRecord("x", ["ok"] * n, info={"kind": "k"})
    d = Trace(Task("q", kind="math"), [Round(index=0, text=text, steps=steps, verdicts=[rec])]).to_dict()
    d["rounds"][0]["verdicts"][0].update(verifier=LONG)
    d["rounds"][0]["verdicts"][0]["info"]["kind"] = LONG
    path.write_bytes(gzip.compress(json.dumps(d).encode()))


@pytest.mark.subprocess
def test_the_view_of_a_trace_with_a_long_verifier_name_stays_small(tmp_path):
    path, page = tmp_path / "long.o3trace.json.gz", tmp_path / "view.html"
    _long_name_trace(path)
    assert path.stat().st_size < 64 * 1024
    # the baseline holds every import and one small view, so growth is what the long trace adds
    setup = (
        "import os\nfrom o3viz.notebook import save_view, show\nfrom o3viz.trace import load_trace\n"
        "from o3viz.testing.builders import small_trace\n"
        f"save_view(show(small_trace(), widget=False), {str(tmp_path / 'warm.html')!r})"
    )
    code = f"save_view(show(load_trace({str(path)!r}), widget=False), {str(page)!r})"
    run = measure_peak(code, setup=setup, timeout=300)
    # before: a 380 MiB page and about 1.4 GiB more memory
    assert run.returncode == 0, run.stderr[-500:]
    assert page.stat().st_size < 16 * MiB, page.stat().st_size >> 20
    assert run.growth < 128 * MiB, run.growth >> 20
    print(f"page {page.stat().st_size >> 10} KiB, growth {run.growth >> 20} MiB, {run.seconds:.1f} s")
