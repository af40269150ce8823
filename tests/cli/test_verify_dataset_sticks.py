"""Verdicts and importance stick to a dataset's traces: ``o3viz verify --dataset`` changes each
stored trace once (a second run judges nothing), a step label follows the trace through
``verify --dataset`` and ``importance --dataset``, and ``o3viz verify KEY`` takes what
``o3viz info KEY`` takes: a store key, changed in place."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.trace.io import parse_trace_bytes

N = 3


@pytest.fixture
def store(tmp_path, monkeypatch, capsys) -> Store:
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    src = write_reasoning_jsonl(tmp_path / "toy.jsonl", N)
    assert main(["import", str(src), "--all", "--dataset", "toy", "--workers", "0"]) == 0
    capsys.readouterr()
    return Store()


def _by_record(store: Store) -> dict[int, str]:
    return {r["record"]: r["key"] for r in store.rows(Query(dataset=["toy"], limit=100))}


def _stored(store: Store, key: str):
    """The trace as its file holds it (never the process's parsed copy)."""
    return parse_trace_bytes(store.read_file(key))


def test_verify_dataset_changes_each_stored_trace_once(store, capsys):
    before = _by_record(store)
    assert main(["verify", "--dataset", "toy", "--verifier", "claims"]) == 0
    assert f"{N} trace(s) of 'toy' judged, 0 already judged by claims" in capsys.readouterr().out
    after = _by_record(store)
    assert sorted(after) == sorted(before) == list(range(1, N + 1)), "one trace per record, as before"
    for record, key in after.items():
        assert key != before[record] and store.row(before[record]) is None
        assert [v.verifier for v in _stored(store, key).final.verdicts] == ["claims"]
    assert main(["verify", "--dataset", "toy", "--verifier", "claims"]) == 0
    out = capsys.readouterr().out
    assert f"0 trace(s) of 'toy' judged, {N} already judged by claims; nothing to save" in out
    assert _by_record(store) == after


def test_a_label_follows_its_trace_through_verify_dataset(store, capsys):
    key = _by_record(store)[1]
    add_labels(store, [Label(key, 0, 1, "ann", "wrong", first_error=True, time=1.0)])
    assert main(["verify", "--dataset", "toy", "--verifier", "claims"]) == 0
    new = _by_record(store)[1]
    assert new != key and _stored(store, new).final.verdicts
    assert [(x.step, x.verdict, x.first_error) for x in all_labels(store, [new])] == [(1, "wrong", True)]


def test_a_label_follows_its_trace_through_importance_dataset(store, monkeypatch, capsys):
    from o3viz.analysis.importance import dataset_job, resample
    from o3viz.cli import importance
    from o3viz.trace.importance import ImportanceRecord

    def score(trace, *args, round_index=-1, **kwargs):  # the scoring, without a server or a model
        n = len(trace.rounds[round_index].steps)
        return ImportanceRecord("resample", "resample", scores=[0.5] * n, info={"complete": True})

    monkeypatch.setattr(dataset_job, "prefetch_rollouts", lambda *a, **k: dataset_job.PrefetchReport())
    monkeypatch.setattr(resample, "resample_importance", score)
    monkeypatch.setattr(importance, "_load", lambda name: None)
    key = _by_record(store)[2]
    add_labels(store, [Label(key, 0, 0, "ann", "correct", time=1.0)])
    argv = ["importance", "--dataset", "toy", "--method", "resample", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--model", "m", "--k", "1"]) == 0
    assert f"{N}/{N} traces of 'toy' complete" in capsys.readouterr().out
    new = _by_record(store)[2]
    assert new != key and [r.method for r in _stored(store, new).final.importance] == ["resample"]
    assert store.row(new)["importance"], "the index row has the scores"
    assert [(x.step, x.verdict) for x in all_labels(store, [new])] == [(0, "correct")]


def test_verify_takes_the_store_key_that_info_takes(store, capsys):
    key = _by_record(store)[3]
    assert main(["info", key[:8]]) == 0
    capsys.readouterr()
    assert main(["verify", key[:8], "--verifier", "claims"]) == 0
    out = capsys.readouterr().out
    new = _by_record(store)[3]
    assert new != key and f"saved in the store as {new}" in out
    assert [v.verifier for v in _stored(store, new).final.verdicts] == ["claims"]
    assert main(["verify", new, "--verifier", "claims"]) == 0
    assert "0 round(s) judged" in capsys.readouterr().out and _by_record(store)[3] == new


def test_verify_a_store_key_to_out_leaves_the_store_alone(store, tmp_path, capsys):
    key = _by_record(store)[1]
    out = tmp_path / "judged.o3trace.json"
    assert main(["verify", key, "--verifier", "claims", "--out", str(out)]) == 0
    assert _by_record(store)[1] == key and not _stored(store, key).final.verdicts
    assert parse_trace_bytes(out.read_bytes()).final.verdicts


def test_a_verified_copy_of_a_stored_import_can_be_added_beside_it(store, tmp_path, capsys):
    key = _by_record(store)[1]
    out = tmp_path / "verified.o3trace.json.gz"
    assert main(["verify", key, "--verifier", "claims", "--out", str(out)]) == 0
    capsys.readouterr()
    added = store.add_file(out)
    assert added != key and store.row(added) is not None  # its own trace, not "already in the library"
    assert _stored(store, added).final.verdicts and not _stored(store, key).final.verdicts
