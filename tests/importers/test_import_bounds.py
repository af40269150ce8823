"""Imports of huge or pathological texts: linear work, bounded memory, an early one-line refusal
when the trace could not be loaded back, and never a written file that ``info`` refuses."""

from __future__ import annotations

import resource

import pytest

from o3viz.errors import TraceError
from o3viz.importers import import_trace
from o3viz.trace import load_trace
from o3viz.trace.core import MAX_STEPS


def test_50k_tiny_steps_import_and_load_back(tmp_path):
    out = import_trace("\n".join("1+1=2" for _ in range(50_000))).save(tmp_path / "tiny.o3trace.json.gz")
    trace = load_trace(out)
    assert len(trace.final.steps) == 50_000
    assert "not checked" in trace.final.info["claim_checker"]  # the checker's own bound says so
    claims = [c for c in trace.final.checks if c.kind == "claim"]
    assert claims and all(c.verdict == "correct" for c in claims)


def test_more_steps_than_a_trace_holds_is_refused_early_and_says_which_limit():
    with pytest.raises(TraceError, match=f"over the limit of {MAX_STEPS} steps"):
        import_trace("\n".join("1+1=2" for _ in range(MAX_STEPS + 10)))


def test_a_20mb_text_of_tiny_lines_is_refused_in_bounded_memory():
    text = "\n".join("1+1=2" for _ in range(3_300_000))  # 19.8 MB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TraceError, match=f"more than {MAX_STEPS} steps"):
        import_trace(text)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500, grown_mb  # was 1.4 GB (every step built before the refusal)
