"""The pages' background jobs (``o3viz.app.jobs``): progress arrives as ``Progress`` objects in
the order the work reported them, Stop takes effect between units of work, errors are one line,
and a finished trace is stored exactly once, under the name the page shows."""

from __future__ import annotations

import threading
import time

from o3viz.app.jobs import Job, Progress, RunJob, TraceJob
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace


def _rows(store: Store) -> list[dict]:
    return store.rows(Query(), ("key", "name", "source"))


def test_progress_objects_arrive_in_the_order_they_were_reported():
    gate = threading.Event()

    def work(report, should_stop):
        for i in range(1, 201):
            report(Progress(i, 200, f"step {i}/200"))
            time.sleep(0.0005)
        gate.wait(10)
        return "done"

    job = Job(work, start=Progress(0, 200, "starting"))
    seen = [job.progress]
    while job.progress.done < 200:
        seen.append(job.progress)
        time.sleep(0.0002)
    gate.set()
    assert job.wait(10) and job.result == "done" and job.error is None
    seen.append(job.progress)
    assert all(isinstance(p, Progress) for p in seen)
    dones = [p.done for p in seen]
    assert dones == sorted(dones) and dones[-1] == 200  # never backwards
    assert len(set(dones)) > 2  # the poller saw the work move, not only its start and end
    assert all(p.label == (f"step {p.done}/200" if p.done else "starting") for p in seen)
    assert job.progress == Progress(200, 200, "step 200/200") and job.progress.fraction == 1.0
    assert Progress(3, 0).fraction == 0.0 and Progress(5, 4).fraction == 1.0


def test_a_finished_run_is_stored_once_under_the_name_the_page_shows(tmp_path):
    store = Store(tmp_path / "store")
    trace = make_trace(6, seed=4)

    def run(*, on_token, should_stop):
        for i in range(5):
            on_token(i, f" t{i}", 16)
        return trace

    job = RunJob(run, 16, name=lambda t, stopped: f"run 3 · {t.task.question[:10]}", store=store)
    assert job.wait(30) and job.error is None
    (row,) = _rows(store)
    assert row == {"key": job.key, "name": job.name, "source": "run"}
    assert job.name == f"run 3 · {trace.task.question[:10]}"  # what the page reports, and the library lists
    assert job.text == " t0 t1 t2 t3 t4" and job.progress == Progress(5, 16, "5 tokens (of at most 16)")


def test_a_run_named_by_default_has_no_number_placeholder(tmp_path):
    store = Store(tmp_path / "store")
    job = RunJob(lambda **kw: make_trace(4, seed=1), 8, store=store)
    assert job.wait(30) and job.error is None
    (row,) = _rows(store)
    assert row["name"].startswith("run · ") and "run 0" not in row["name"]


def test_a_trace_job_names_a_stopped_trace_and_stores_nothing_its_keep_refuses(tmp_path):
    store = Store(tmp_path / "store")
    started = threading.Event()

    def work(report, should_stop):
        n = 0
        started.set()
        while not should_stop():
            n += 1
            report(Progress(n, 0, f"{n} steps"))
            time.sleep(0.001)
        return make_trace(5, seed=2)

    def name(t, stopped):
        return "analysed" + (" (stopped early)" if stopped else "")

    job = TraceJob(work, name=name, store=store)
    started.wait(10)
    job.stop()
    assert job.wait(30) and job.stopped and job.error is None
    assert [r["name"] for r in _rows(store)] == ["analysed (stopped early)"] == [job.name]
    refused = TraceJob(
        lambda report, should_stop: make_trace(5, seed=3), name=name, store=store, keep=lambda t: False
    )
    assert refused.wait(30) and refused.key is None and refused.trace is not None
    assert len(_rows(store)) == 1


def test_run_job_streams_tokens_and_stops_between_them():
    def fake_run(*, on_token, should_stop):
        n = 0
        while not should_stop() and n < 10_000:
            on_token(n, f" t{n}", 10_000)
            n += 1
            time.sleep(0.001)
        return make_trace(3, seed=n % 7)

    job = RunJob(fake_run, 10_000)
    while len(job.pieces) < 5:
        time.sleep(0.01)
    job.stop()
    job.wait(10)
    assert not job.running and job.trace is not None and 5 <= len(job.pieces) < 10_000


def test_run_job_reports_errors_as_one_line():
    def failing(**_):
        raise ValueError("bad\nsettings")

    job = RunJob(failing, 1)
    job.wait(10)
    assert job.trace is None and job.error == "ValueError: bad settings"


def test_a_run_job_says_each_phase_before_its_first_token_and_stops_during_the_load(tmp_path):
    """From the click on there is a status: loading the model, then reading the prompt until the
    first token, then the tokens; at the limit it says so. A Stop during the load stores nothing."""
    store = Store(tmp_path / "store")
    loading, go = threading.Event(), threading.Event()
    seen: list[str] = []

    def load():
        loading.set()
        go.wait(10)
        return "model"

    def run(model, *, on_token, should_stop):
        seen.append(job.progress.label)  # what the page shows between the load and the first token
        for i in range(4):
            on_token(i, f" t{i}", 4)
        seen.append(job.progress.label)
        return make_trace(4, seed=5)

    job = RunJob(run, 4, load=load, store=store)
    loading.wait(10)
    assert job.progress.label == "loading the model…"
    go.set()
    assert job.wait(30) and job.error is None and job.key is not None
    assert seen[0].startswith("reading the prompt") and "first token" in seen[0]
    assert "stopped at the limit (4 tokens)" in seen[1]

    loading.clear()
    go.clear()
    stopped = RunJob(run, 4, load=load, store=store)
    loading.wait(10)
    stopped.stop()
    go.set()
    assert stopped.wait(30) and stopped.result is None and stopped.key is None and stopped.error is None
    assert len(_rows(store)) == 1
