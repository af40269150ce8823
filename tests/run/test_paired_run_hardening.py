"""Paired runs against a red team: a rerun with other shared settings is refused before any model
loads instead of mixing into the same two datasets; a side that cannot be stored takes its partner
back out; NaN, infinity and out-of-range numbers in a side's settings are refused at parse time."""

from __future__ import annotations

import dataclasses
import math

import pytest

from o3viz.app.paired_run import StoreSink
from o3viz.compress.context import CompressionConfig as Comp
from o3viz.errors import UsageError
from o3viz.run.config import DAAConfig
from o3viz.run.paired_run import PairedRunRequest, parse_setting, run_pairs, task_ids
from o3viz.run.paired_settings import check_resume, recorded_settings, side_settings
from o3viz.run.request import RunRequest
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace.core import Provenance, Task, Trace


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama()


def _request(n: int = 1, name: str = "tiny", **run) -> PairedRunRequest:
    shared = RunRequest(**{"max_new_tokens": 4, "rounds": 1, **run})
    return PairedRunRequest(
        shared, task_ids("gsm8k", n), parse_setting("daa=off"), parse_setting("daa=allocate"), name
    )


def _want(req: PairedRunRequest, side: str) -> dict:
    return side_settings(req.request(side, req.tasks[0]))


def _keys(store: Store) -> list:
    return store.select(Query(), ("key",))


def test_a_rerun_with_other_shared_settings_is_refused_before_any_model(tiny, tmp_path, shared_data):
    """Red team: a rerun with another --max-new-tokens (the docs advised it) landed in the same two
    datasets, skipped the tasks there and tabled the mixture as one run."""
    store = Store(tmp_path / "s")
    first = run_pairs(_request(), lambda name: tiny, StoreSink(store))
    assert first.pairs == 1
    trace = store.trace(first.keys_b[0])
    assert trace.info["paired_run"]["settings"] == _want(_request(), "B")
    loads = []

    def load(name):
        loads.append(name)
        return tiny

    for other, said in [
        (_request(n=2, max_new_tokens=8), "max_new_tokens 4 (now 8)"),
        (_request(n=2, min_new_tokens=2), "min_new_tokens 0 (now 2)"),
        (_request(n=2, model="another/model"), "model None (now 'another/model')"),
        (_request(n=2, seed=3), "seed 0 (now 3)"),
    ]:
        with pytest.raises(UsageError, match="other settings") as exc:
            run_pairs(other, load, StoreSink(store))
        msg = str(exc.value)
        assert said in msg and "new --dataset NAME" in msg and "\n" not in msg, msg
    assert loads == [] and len(_keys(store)) == 2
    # the same settings resume; a new name makes new datasets
    assert run_pairs(_request(n=2), load, StoreSink(store)).resumed == 1
    assert run_pairs(_request(n=1, name="t2", max_new_tokens=8), load, StoreSink(store)).ran == 1


def test_recorded_settings_older_traces_and_what_the_resume_check_compares():
    settings = {"task_id": "gsm8k:0", "max_new_tokens": 4, "seed": 0}
    old = Trace(Task("q"), provenance=Provenance(settings=settings))
    assert recorded_settings(old) == {"max_new_tokens": 4, "seed": 0}
    assert recorded_settings(Trace(Task("q"))) is None
    req = _request()
    ds, want = req.dataset("A"), _want(req, "A")
    with pytest.raises(UsageError, match="not recorded"):
        check_resume(ds, want, None)
    with pytest.raises(UsageError, match="max_new_tokens 256 \\(now 4\\)"):
        check_resume(ds, want, {"max_new_tokens": 256})
    check_resume(ds, want, {"max_new_tokens": 4, "a_setting_of_the_future": 1})  # only shared keys count
    compressed = _want(dataclasses.replace(req, run=dataclasses.replace(req.run, compression=Comp())), "A")
    with pytest.raises(UsageError, match="compression None \\(now \\{"):
        check_resume(ds, compressed, {"compression": None})
    with pytest.raises(UsageError, match="capture.top_k 8 \\(now 64\\)"):
        check_resume(ds, want, {"capture": {"top_k": 8}})


class FailingB(StoreSink):
    """The store refuses side B (a full disk, a broken value)."""

    def add(self, trace, **meta):
        if " · B: " in meta["dataset"]:
            raise OSError("no space left on device")
        return super().add(trace, **meta)


def test_a_side_the_store_refuses_takes_its_partner_back_out(tiny, tmp_path, shared_data):
    """Red team: storing side B failed after side A was stored, leaving A without its pair."""
    store = Store(tmp_path / "s")
    with pytest.raises(OSError, match="no space"):
        run_pairs(_request(), lambda name: tiny, FailingB(store))
    assert _keys(store) == []


def test_a_trace_that_cannot_be_encoded_fails_its_task_and_stores_neither_side(
    tiny, tmp_path, monkeypatch, shared_data
):
    import o3viz.run.dispatch as dispatch

    real = dispatch.execute

    def execute(model, tok, req, **kw):
        trace = real(model, tok, req, **kw)
        if req.task_id == "gsm8k:0" and req.daa.mode == "allocate":
            trace.info["broken"] = math.nan  # what strength=nan once left in side B's trace
        return trace

    monkeypatch.setattr(dispatch, "execute", execute)
    store = Store(tmp_path / "s")
    res = run_pairs(_request(n=2), lambda name: tiny, StoreSink(store))
    assert len(res.failed) == 1 and res.failed[0].startswith("gsm8k:0: side B cannot be stored")
    assert res.pairs == 1
    sink = StoreSink(store)
    assert list(sink.tasks_in(res.datasets[0])) == list(sink.tasks_in(res.datasets[1])) == ["gsm8k:1"]


@pytest.mark.parametrize(
    "text",
    [
        "daa=allocate,strength=nan",
        "daa=allocate,strength=inf",
        "daa=allocate,strength=1e999",
        "daa=allocate,strength=-inf",
        "daa=allocate,strength=1000",
        "daa=observe,strength=nan",
        "steer=question,alpha=nan",
        "steer=question,alpha=inf",
    ],
)
def test_non_finite_or_out_of_range_numbers_in_a_side_are_refused(text):
    with pytest.raises(UsageError) as exc:
        parse_setting(text)
    assert "\n" not in str(exc.value)


def test_every_path_to_a_daa_strength_is_checked():
    for bad in (math.nan, math.inf, [1.0, math.nan], [[1.0], [math.inf]], "2", True, 101.0):
        with pytest.raises(UsageError, match="DAA strength"):
            DAAConfig(mode="allocate", strength=bad).validate()
        with pytest.raises(UsageError, match="DAA strength"):
            RunRequest(prompt="hi", daa=DAAConfig(mode="allocate", strength=bad)).validate()
    DAAConfig(mode="allocate", strength=[0.5, -2.0]).validate()
    for field, bad in (("temperature", math.nan), ("temperature", math.inf), ("timeout_s", math.inf)):
        with pytest.raises(UsageError, match="finite"):
            RunRequest(prompt="hi", **{field: bad}).validate()
