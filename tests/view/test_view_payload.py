"""The view names each verifier once (issue 52): a step's details refer to the view's table of
verifiers by index instead of repeating each name. With 32 verifiers of 200-character names over
10,000 steps the standalone page was about 165 MiB here (220 MiB in the issue's trace), nearly all
of it the names, once per step and verifier; now the data and the page stay far below 30 MiB.
Sizes, not timings: the data is built and its JSON measured."""

from __future__ import annotations

import json

import pytest

from o3viz.app import inspect_view_data
from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.verdicts import VerdictRecord
from o3viz.view import page_html, trace_view_data, verifier_rows

STEPS, VERIFIERS, NAME_CHARS = 10_000, 32, 200
LIMIT = 30 * 2**20  # bytes


@pytest.fixture(scope="module")
def trace() -> Trace:
    """``STEPS`` short steps, each judged by ``VERIFIERS`` verifiers with long names (ok, wrong,
    unsure or not judged, and a score)."""
    texts = [f"Then {i} * 3 = {3 * i}." for i in range(STEPS)]
    steps, at = [], 0
    for i, t in enumerate(texts):
        steps.append(Step(i, t, at, at + len(t)))
        at += len(t) + 1
    rnd = Round(text=" ".join(texts), steps=steps, answer="3")
    words = ["ok", "wrong", "unsure", None]
    for v in range(VERIFIERS):
        name = f"v{v:02d}-".ljust(NAME_CHARS, "x")
        verdicts = [words[(i + v) % 4] for i in range(STEPS)]
        scores = [((i * 7 + v) % 100) / 99 for i in range(STEPS)]
        rnd.verdicts.append(VerdictRecord(name, verdicts, scores, info={"kind": "prm"}))
    return Trace(Task("What is 3 times each number?"), [rnd])


def test_many_long_verifier_names_over_many_steps_make_a_bounded_page(trace):
    data = trace_view_data(trace)
    payload = json.dumps(data)
    page = page_html(data)
    assert len(payload) < LIMIT and len(page.encode("utf-8")) < LIMIT, (len(payload), len(page))
    names = [rec.verifier for rec in trace.final.verdicts]
    assert [v["verifier"] for v in data["verifiers"]] == names
    assert all(payload.count(name) == 1 for name in names)  # each name once, in the table
    # every step still lists every verifier's verdict, as the page's script shows it
    rows = verifier_rows(data, "step:0:9999")
    assert [r["verifier"] for r in rows] == names
    assert [r["verdict"] for r in rows[:4]] == ["not judged", "ok", "wrong", "unsure"]
    assert rows[2]["message"] == f"score {(9999 * 7 + 2) % 100 / 99:.2f}"
    assert rows[0]["name"] == names[0] + " · prm"


def test_inspects_view_data_of_the_same_trace_is_bounded_too(trace):
    for verifier in (None, trace.final.verdicts[0].verifier):  # the checks, or one verifier's lane
        payload = json.dumps(inspect_view_data(trace, verifier=verifier))
        assert len(payload) < LIMIT, (verifier, len(payload))
