"""The app worker: slow work runs in another process with a budget, so this process stays free."""

from __future__ import annotations

import threading
import time

import pytest

from o3viz.app.uploads import take_upload_in_worker
from o3viz.app.worker import WorkerJob, run_in_worker
from o3viz.store.store import Store, content_key
from o3viz.testing.processes import stray_children
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes

pytestmark = [pytest.mark.subprocess]


def test_an_upload_is_stored_by_the_worker_and_only_its_key_comes_back(tmp_path):
    store = Store(tmp_path / "store")
    data = trace_bytes(make_trace(6, seed=1), gzipped=True)
    up = take_upload_in_worker(store, "a.o3trace.json.gz", data, budget_s=60)
    assert up.error == "" and up.added and up.key == content_key(data)
    assert store.trace(up.key).to_dict() == make_trace(6, seed=1).to_dict()
    assert store.row(up.key)["name"] == "a.o3trace.json.gz" and store.row(up.key)["source"] == "upload"


def test_an_import_runs_in_the_worker_and_reports_its_stages(tmp_path):
    store = Store(tmp_path / "store")
    stages = []
    up = take_upload_in_worker(
        store,
        "r1.txt",
        b"<think>2 + 3 = 5. So 5.</think>The answer is 5.",
        on_progress=lambda e, b, s: stages.append(s),
    )
    assert up.error == "" and up.source == "import"
    assert store.trace(up.key).final.answer == "5"


def test_a_bad_upload_is_one_line_naming_the_file(tmp_path):
    up = take_upload_in_worker(Store(tmp_path / "store"), "t.o3trace.json", b'{"schema_version": 99}')
    assert up.key is None and up.error.startswith("t.o3trace.json: ") and "\n" not in up.error


def test_work_past_its_budget_is_stopped_with_a_clear_message_and_no_process_left():
    start = time.monotonic()
    res = run_in_worker("sleep", 60, budget_s=2.0, label="reading this file", hint="try a smaller file")
    assert time.monotonic() - start < 6
    assert res.status == "timeout"
    assert res.error.startswith("reading this file took longer than its 2 s budget and was stopped")
    assert res.error.endswith("try a smaller file")
    assert stray_children() == []


def test_this_process_keeps_running_python_while_the_worker_holds_its_own_interpreter():
    # A thread here counts loop iterations while the worker spins; with the work in-process
    # (holding the GIL) the counter would starve.
    job = WorkerJob("sleep", 3, budget_s=20)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    while job.wait(0.1) is None:
        pass
    stop.set()
    t.join()
    assert job.result.status == "done" and job.result.value >= 3
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) < 0.5, max(gaps)


def test_cancel_kills_the_worker_at_once():
    with WorkerJob("sleep", 60, budget_s=60) as job:
        time.sleep(0.5)
        res = job.cancel()
    assert res.status == "cancelled"
    assert stray_children() == []
