"""Runs that make pairs (``o3viz.run.paired_run``): a task list run under two settings on a tiny
random model lands as two datasets that pair 100%; a Stop keeps both sides on the same questions;
a rerun resumes instead of running again."""

from __future__ import annotations

import pytest

from o3viz.analysis.paired import PairedCompareRequest, Side
from o3viz.app.paired_run import StoreSink
from o3viz.errors import UsageError
from o3viz.run.paired_run import PairedRunRequest, parse_setting, run_pairs, task_ids
from o3viz.run.request import RunRequest
from o3viz.store.paired import compare_datasets
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama()


def _request(n: int = 3, name: str = "tiny") -> PairedRunRequest:
    run = RunRequest(max_new_tokens=6, rounds=1)
    return PairedRunRequest(
        run, task_ids("gsm8k", n), parse_setting("daa=off"), parse_setting("daa=allocate"), name
    )


def test_two_settings_land_as_two_datasets_that_pair_fully(tiny, tmp_path, shared_data):
    store, loads = Store(tmp_path / "s"), []
    seen = []

    def load(name):
        loads.append(name)
        return tiny

    req = _request()
    res = run_pairs(req, load, StoreSink(store), on_progress=lambda d, t, label: seen.append((d, t)))
    assert loads == [None]  # one model for both sides: loaded once
    assert res.pairs == 3 and res.ran == 3 and not res.failed and not res.stopped
    assert seen[-1] == (6, 6) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    a, b = req.dataset("A"), req.dataset("B")
    assert (a, b) == ("tiny · A: daa=off", "tiny · B: daa=allocate")
    assert (
        list(StoreSink(store).tasks_in(a))
        == list(StoreSink(store).tasks_in(b))
        == ["gsm8k:0", "gsm8k:1", "gsm8k:2"]
    )
    assert {r["daa"] for r in store.rows(Query(dataset=[b]), ("daa",))} == {"allocate"}
    assert {r["daa"] for r in store.rows(Query(dataset=[a]), ("daa",))} == {"off"}
    rows = {r["record"] for r in store.rows(Query(dataset=[a]))}
    assert rows == {1, 2, 3}  # GSM8K's 1-based lines: the task's stable place in its source
    r = compare_datasets(store, PairedCompareRequest(Side(a), Side(b)))
    assert r.n == 3 and r.pairing.n_unpaired_a == r.pairing.n_unpaired_b == 0
    assert sorted(r.rows["key_a"]) == sorted(res.keys_a) and sorted(r.rows["key_b"]) == sorted(res.keys_b)


def test_a_stop_midway_keeps_both_sides_on_the_same_questions_and_a_rerun_resumes(
    tiny, tmp_path, shared_data
):
    store = Store(tmp_path / "s")
    req = _request()
    runs = []

    def on_token(index, piece, total):
        runs.append(index) if index == 0 else None

    # stop during task 2's B side: the 4th generation (A0 B0 A1 B1): task 1 is dropped whole
    stop = lambda: len(runs) >= 4  # noqa: E731
    res = run_pairs(req, lambda name: tiny, StoreSink(store), on_token=on_token, should_stop=stop)
    assert res.stopped and res.pairs == 1
    a, b = StoreSink(store).tasks_in(req.dataset("A")), StoreSink(store).tasks_in(req.dataset("B"))
    assert list(a) == list(b) == ["gsm8k:0"]
    again = run_pairs(req, lambda name: tiny, StoreSink(store))
    assert again.resumed == 1 and again.ran == 2 and again.pairs == 3 and not again.stopped
    assert again.keys_a[0] == res.keys_a[0]  # the finished pair is kept, not run again
    assert len(store.select(Query(), ("key",))) == 6


def test_one_side_missing_runs_only_that_side(tiny, tmp_path, shared_data):
    store = Store(tmp_path / "s")
    req = _request(n=1)
    first = run_pairs(req, lambda name: tiny, StoreSink(store))
    store.delete([first.keys_b[0]])
    again = run_pairs(req, lambda name: tiny, StoreSink(store))
    # only B ran again (its trace may come out byte-identical, so its key is no evidence either way)
    assert again.keys_a == first.keys_a and again.ran == 1 and len(again.keys_b) == 1
    assert list(StoreSink(store).tasks_in(req.dataset("B"))) == ["gsm8k:0"]
    assert len(store.select(Query(), ("key",))) == 2


def test_settings_and_requests_are_checked_before_any_model(shared_data):
    assert parse_setting("daa=allocate,strength=2").daa.strength == 2.0
    s = parse_setting("steer=question,alpha=0.05,heads=0.1,1.0")
    assert s.daa.mode == "steer" and s.daa.steer_heads == [(0, 1), (1, 0)] and s.daa.steer_alpha == 0.05
    assert parse_setting("model=/x/tiny-llama/").label == "model=tiny-llama"
    for bad, said in [
        ("daa=sideways", "daa must be"),
        ("colour=red", "unknown key 'colour'"),
        ("daa=steer", "steer=SEGMENT"),
        ("strength=x", "setting"),
        ("allocate", "key=value"),
    ]:
        with pytest.raises(UsageError, match=said):
            parse_setting(bad)
    same = PairedRunRequest(RunRequest(), ["gsm8k:0"], parse_setting("daa=off"), parse_setting(""), "x")
    with pytest.raises(UsageError, match="same settings"):
        same.validate()
    with pytest.raises(UsageError, match="--limit"):
        task_ids("gsm8k", 0)
    with pytest.raises(UsageError, match="past the end"):
        task_ids("gsm8k", 2, start=100_000)
    with pytest.raises(UsageError, match="task list 'math'"):
        task_ids("math", 2)
    assert _request(n=3, name="").name == "gsm8k:0…2"


def test_a_failing_task_is_listed_and_the_job_goes_on_but_a_model_that_fails_to_load_ends_it(
    tiny, tmp_path, monkeypatch, shared_data
):
    import o3viz.run.dispatch as dispatch

    real = dispatch.execute

    def execute(model, tok, req, **kw):
        if req.task_id == "gsm8k:1" and req.daa.mode == "allocate":
            raise RuntimeError("boom\nsecond line")
        return real(model, tok, req, **kw)

    monkeypatch.setattr(dispatch, "execute", execute)
    store = Store(tmp_path / "s")
    req = _request()
    res = run_pairs(req, lambda name: tiny, StoreSink(store))
    assert res.failed == ["gsm8k:1: RuntimeError: boom"] and res.pairs == 2 and not res.stopped
    sink = StoreSink(store)
    assert (
        list(sink.tasks_in(req.dataset("A")))
        == list(sink.tasks_in(req.dataset("B")))
        == ["gsm8k:0", "gsm8k:2"]
    )

    def no_model(name):
        raise OSError("no such model")

    with pytest.raises(OSError, match="no such model"):
        run_pairs(_request(name="other"), no_model, StoreSink(store))
