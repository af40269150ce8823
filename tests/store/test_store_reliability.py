"""The store under real processes: two writers (as two app sessions) and a CLI import at the same
time lose nothing; a ``kill -9`` in the middle of an import leaves a consistent store that
``reindex`` completes, and a second import finishes the job without duplicates."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.trace import load_trace

pytestmark = [pytest.mark.subprocess]

WRITER = """
import sys
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace
store, first, n = Store(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(first, first + n):
    store.add(make_trace(5 + i % 7, seed=i), source="upload", name=f"writer {i}")
"""


def _env(home) -> dict:
    return {**os.environ, "O3VIZ_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}


def _consistent(store: Store) -> set[str]:
    """Every row has a readable file, the database is intact; returns the keys."""
    with sqlite3.connect(store.db_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n_fts = db.execute("SELECT count(*) FROM steps_fts").fetchone()[0]
    keys = {r[0] for r in store.select(Query(), ("key",))}
    assert n_fts == len(keys)
    for k in keys:
        assert load_trace(store.path(k)) is not None
    return keys


def test_two_writers_and_a_cli_import_at_once_lose_nothing(tmp_path):
    home = tmp_path / "home"
    data = write_reasoning_jsonl(tmp_path / "d.jsonl", 60)
    cmd = [sys.executable, "-m", "o3viz", "import", str(data), "--all", "--dataset", "d", "--workers", "2"]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), "0", "25"], env=_env(home)),
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), "100", "25"], env=_env(home)),
        subprocess.Popen(cmd, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE),
    ]
    for p in procs:
        assert p.wait(300) == 0, p.stderr.read().decode() if p.stderr else p.args
    store = Store(home)
    keys = _consistent(store)
    assert len(keys) == 110
    assert store.count(Query(dataset=["d"])) == 60 and store.count(Query(source=["upload"])) == 50
    rep = reindex(store)
    assert (rep.added, rep.removed) == (0, 0)


def test_kill_9_during_an_import_leaves_a_store_that_reindex_and_a_rerun_complete(tmp_path):
    home = tmp_path / "home"
    data = write_reasoning_jsonl(tmp_path / "d.jsonl", 600)
    cmd = [sys.executable, "-m", "o3viz", "import", str(data), "--all", "--dataset", "d", "--workers", "2"]
    proc = subprocess.Popen(cmd, env=_env(home), start_new_session=True, stderr=subprocess.DEVNULL)
    store = Store(home)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if store.db_path.exists() and store.count() >= 60:
            break
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its workers, mid-import
    proc.wait(30)
    store = Store(home)
    indexed = _consistent(store)
    assert 60 <= len(indexed) < 600
    on_disk = store.stored_keys()
    assert indexed <= on_disk  # a row never exists without its file
    rep = reindex(store)
    assert rep.removed == 0 and rep.added == len(on_disk - indexed)
    assert _consistent(store) == on_disk
    rerun = subprocess.run(cmd, env=_env(home), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert len(_consistent(store)) == 600
