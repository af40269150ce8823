"""Inspect's Importance view through AppTest: with records it shows scores, the step matrix and
the receiver heads, and says when the reader is a proxy; without, it offers the local analysis.
No model is loaded here."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.testing.synthetic import make_trace
from o3viz.trace.importance import ImportanceRecord

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def samples(tmp_path, monkeypatch):
    t = make_trace(10, seed=1)
    n = len(t.final.steps)
    t.final.importance = [
        ImportanceRecord(
            "suppression",
            "suppression",
            [float(i) for i in range(n)],
            [(2, 1, 1.0)],
            matrix=np.tril(np.ones((n, n), np.float32), -1),
            model={"model_id": "tiny"},
        ),
        ImportanceRecord(
            "receiver",
            "receiver",
            [0.1] * n,
            head_kurtosis=np.ones((2, 3), np.float32),
            receiver_heads=[(1, 2)],
            model={"model_id": "SmolLM2", "writer": "deepseek-r1", "proxy": True},
        ),
    ]
    t.save(tmp_path / "a_with_importance.o3trace.json")
    r = make_trace(10, seed=3)
    n = len(r.final.steps)
    trust = {
        "ci_low": [i / 10 - 0.05 for i in range(n)],
        "ci_high": [i / 10 + 0.05 for i in range(n)],
        "noise_floor": [0.25] * n,
        "clears_floor": [1.0 if i / 10 > 0.25 else 0.0 for i in range(n)],
    }
    r.final.importance = [
        ImportanceRecord("resample", "resample", [i / 10 for i in range(n)], series=trust),
        ImportanceRecord("receiver", "receiver", [float(n - i) for i in range(n)]),
    ]
    r.save(tmp_path / "c_resampled.o3trace.json")
    make_trace(8, seed=2).save(tmp_path / "b_without.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return tmp_path


def _importance_view(at: AppTest, name: str) -> AppTest:
    at.switch_page("pages/inspect.py")
    at.run()
    lib = at.session_state["library"]
    at.session_state["inspect_key"] = next(k for k, e in lib.items() if e.name.startswith(name))
    at.session_state["inspect_view"] = "Importance"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_importance_view_shows_scores_matrix_heads_and_the_proxy_note(samples):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = _importance_view(at, "a_with_importance")
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(titles) == 3
    assert any("Which steps mattered?" in s for s in titles) and any("Kurtosis" in s for s in titles)
    assert any(
        "not by the model that wrote this trace" in c.value and "deepseek" in c.value for c in at.caption
    )
    assert any(b.label == "Analyse again with the local model" for b in at.button)


def test_a_trace_without_importance_offers_the_local_analysis(samples):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = _importance_view(at, "b_without")
    assert not at.get("plotly_chart")
    assert any("No importance scores yet" in i.value for i in at.info)
    assert any(b.label == "Analyse with the local model" for b in at.button)


def test_resampling_from_the_app_shows_its_cost_before_it_starts(samples):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = _importance_view(at, "b_without")
    n = len(at.session_state["library"][at.session_state["inspect_key"]].trace.final.steps) + 1
    cost = next(c.value for c in at.caption if "Before it starts" in c.value)
    assert f"{n} prefixes × K = {4 * n} rollouts" in cost and f"{4 * n * 128:,} new tokens" in cost
    next(x for x in at.number_input if x.label == "Rollouts per step (K)").set_value(2).run()
    cost = next(c.value for c in at.caption if "Before it starts" in c.value)
    assert f"K = {2 * n} rollouts" in cost
    assert any(b.label == "Resample with the local model" for b in at.button)


def test_the_map_has_a_threshold_slider_for_its_dependency_arcs(samples):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = _importance_view(at, "a_with_importance")
    at.session_state["inspect_view"] = "Reasoning map"
    at.run()
    slider = next(s for s in at.slider if s.label.startswith("Dependency arcs"))
    assert "depends on" in _trace_names(at)
    slider.set_value(1.0).run()  # only arcs into the top-ranked step remain: step 2's is gone
    assert "depends on" not in _trace_names(at)
    at = _importance_view(at, "b_without")
    at.session_state["inspect_view"] = "Reasoning map"
    at.run()
    assert not [s for s in at.slider if s.label.startswith("Dependency arcs")]


def _trace_names(at: AppTest) -> set[str]:
    """The names of the map's traces (issue 39: the map is drawn by Inspect's view component, from
    the view data its args name)."""
    import json

    from pages.common.trace_view import published

    args = json.loads(at.get("bidi_component")[0].proto.json)
    return {d.get("name") for d in published(args["url"])["map"]["data"]}


@pytest.mark.model
def test_analysing_with_the_local_model_stores_one_analysed_copy_and_opens_it(samples):
    """The embedded model reads the trace in the background (the page's one job runner); the
    analysed copy enters the store once, under the name the page reports, and opens here."""
    import time

    from o3viz.figures import escape_markdown
    from o3viz.store.query import Query
    from o3viz.store.store import Store

    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at = _importance_view(at, "b_without")
    before = {r["key"] for r in Store().rows(Query(), ("key",))}
    entry = at.session_state["library"][at.session_state["inspect_key"]]
    base, source = entry.name, entry.source
    next(b for b in at.button if b.label == "Analyse with the local model").click().run()
    deadline = time.time() + 600
    while time.time() < deadline and at.session_state["importance_job"] is not None:
        time.sleep(1)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    new = [r for r in Store().rows(Query(), ("key", "name", "source")) if r["key"] not in before]
    # the copy keeps its trace's name and source (not "run"), and says what was added
    added = f"{base} + importance: receiver heads, suppression"
    assert new == [{"key": at.session_state["inspect_key"], "name": added, "source": source}]
    assert any(escape_markdown(new[0]["name"]) in s.value for s in at.success)
    assert len(at.get("plotly_chart")) >= 1  # the analysed copy shows its scores


def test_resampled_steps_show_their_intervals_floor_and_the_methods_agreement(samples):
    import json

    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = _importance_view(at, "c_resampled")
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    ci = next(s for s in specs if "stand out from the noise" in s["layout"]["title"]["text"])
    assert {d["name"] for d in ci["data"]} == {"noise floor", "score, 90% interval"}
    scores = next(s for s in specs if "Which steps mattered?" in s["layout"]["title"]["text"])
    under = next(d for d in scores["data"] if d.get("name") == "under its noise floor")
    assert under["x"] == [0, 1, 2]  # scores 0.0, 0.1, 0.2 are under the 0.25 floor
    heat = scores["data"][0]["z"][0]
    assert heat[:3] == [0.0, 0.0, 0.0] and heat[-1] == 1.0  # never drawn as important
    line = next(c.value for c in at.caption if "Kendall" in c.value).replace("\\", "")
    assert "Kendall's W 0.00" in line and "-1.00" in line  # receiver ranks them in reverse
