"""Dataset-wide counterfactual resampling against a real OpenAI-compatible server (``transformers
serve`` with the embedded model, on 127.0.0.1): ``o3viz importance --dataset NAME --method resample
--concurrency 4`` caps its requests, resumes from the rollout cache without asking again, and saves
every scored trace back in the store in place of its original."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
pytest.importorskip("openai", reason="transformers serve needs openai (requirements-dev.txt)")

pytestmark = [
    pytest.mark.server,
    pytest.mark.subprocess,
    pytest.mark.timeout(1800),  # server start + ~40 requests on a loaded machine
]


@pytest.fixture(scope="module")
def server(transformers_server):
    return transformers_server  # the embedded model served for this module (tests/conftest.py)


def _fetched(err: str) -> tuple[int, int, int]:
    m = re.search(r"(\d+) rollouts cached, (\d+) fetched .* (\d+) left", err)
    assert m, err
    return int(m[1]), int(m[2]), int(m[3])


def test_dataset_resampling_at_concurrency_4_caps_resumes_and_saves(server, tmp_path, monkeypatch, capsys):
    import json

    from o3viz.cli.main import main
    from o3viz.store.query import Query
    from o3viz.store.store import Store
    from o3viz.testing.datasets import write_reasoning_jsonl
    from o3viz.testing.serve import SAMPLING_BODY

    url, model = server
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    src = write_reasoning_jsonl(tmp_path / "toy.jsonl", 2)
    assert main(["import", str(src), "--all", "--dataset", "toy", "--workers", "0"]) == 0
    store = Store()
    before = {r["key"] for r in store.rows(Query(dataset=["toy"], limit=100))}
    prefixes = sum(len(store.trace(k).final.steps) + 1 for k in before)
    argv = ["importance", "--dataset", "toy", "--method", "resample", "--base-url", url, "--model", model]
    argv += ["--k", "2", "--max-new-tokens", "4", "--concurrency", "4", "--cache-dir", str(tmp_path / "c")]
    argv += ["--extra-body", json.dumps(SAMPLING_BODY), "--request-timeout", "300"]
    capsys.readouterr()
    assert main([*argv, "--max-rollouts", "5"]) == 0
    cached, fetched, left = _fetched(capsys.readouterr().err)
    assert (cached, fetched, left) == (0, 5, 2 * prefixes - 5), "the cap stops new requests, nothing is lost"
    assert main(argv) == 0
    out = capsys.readouterr()
    cached, fetched, left = _fetched(out.err)
    assert (cached, fetched, left) == (5, 2 * prefixes - 5, 0), "the second run resumes from the cache"
    assert f"{len(before)}/{len(before)} traces of 'toy' complete" in out.out
    after = store.rows(Query(dataset=["toy"], limit=100))
    assert len(after) == len(before) and not before & {r["key"] for r in after}, "scored copies replace them"
    for row in after:
        rnd = store.trace(row["key"]).final
        recs = [rec for rec in rnd.importance if rec.method == "resample"]
        assert (
            len(recs) == 1
            and recs[0].info["complete"]
            and recs[0].info["rollouts"] == 2 * (len(rnd.steps) + 1)
        )
