"""Issue 62, breaks 1 and 2: ``o3viz answers --dataset D --probe endpoint`` against a stub server
on 127.0.0.1. A probe that failed stores nothing that counts as done, the run says how many traces
failed and exits 1, and a rerun redoes exactly those; a rerun with other settings (another
endpoint, another token budget, another --every) redoes the traces; and a rerun with the same
settings asks the server nothing, the first trace included (its suffix is known before a request)."""

from __future__ import annotations

import pytest

from o3viz.answers.run import AnswersRequest, answers_due
from o3viz.cli.main import main
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.store.query import Query
from o3viz.store.store import Store
from tests.answers.stub_server import completion

pytestmark = [pytest.mark.server]

QUESTIONS = (
    ("Janet has 3 apples and buys 4 more. How many apples does she have?", "3 + 4 = 7", "7"),
    ("Tom reads 5 pages a day. How many pages does he read in 2 days?", "5 * 2 = 10", "10"),
    ("A box holds 6 eggs. How many eggs are in 3 boxes?", "6 * 3 = 18", "18"),
)


def _dataset() -> Store:
    store = Store()
    for q, work, ref in QUESTIONS:
        text = f"Let me think.\n\n{work}.\n\nSo the answer is {ref}."
        store.add(
            build_trace(Imported("test", text, question=q), reference=ref), source="import", dataset="d"
        )
    return store


def _forced(store: Store) -> dict[str, list]:
    """Question -> the forced records of its stored trace (one trace per question)."""
    out = {}
    for row in store.rows(Query(dataset=["d"], limit=10)):
        t = store.trace(row["key"])
        out[t.task.question] = [r for r in t.final.answers if r.kind == "forced"]
    return out


def _answers(url: str, *extra: str) -> list[str]:
    return ["answers", "--dataset", "d", "--probe", "endpoint", "--base-url", url, "--model", "m",
            "-V", "retries=0", "-V", "logprobs=false", *extra]  # fmt: skip


def _up(path, body):
    return completion("7}")


def test_an_outage_stores_nothing_fails_the_run_and_a_rerun_redoes_every_trace(serve, capsys):
    store = _dataset()
    keys = sorted(r["key"] for r in store.rows(Query(dataset=["d"], limit=10)))
    stub = serve(lambda path, body: (503, b"down"))
    assert main(_answers(stub.url)) == 1
    err = capsys.readouterr().err
    assert "0 trace(s) of 'd' given their running answer, 0 already had it, 3 failed" in err
    assert err.count("failed after 1 tries: HTTP 503") == 3  # each trace says why, in one line
    assert len(stub.bodies) == 3  # one request per trace: a down server is not asked every boundary
    store = Store()
    assert sorted(r["key"] for r in store.rows(Query(dataset=["d"], limit=10))) == keys  # untouched
    assert all(recs == [] for recs in _forced(store).values())
    stub.reply = _up  # the server is back
    assert main(_answers(stub.url)) == 0
    assert (
        "3 trace(s) of 'd' given their running answer, 0 already had it, 0 failed" in capsys.readouterr().err
    )
    assert all(len(recs) == 1 and recs[0].answers[-1] == "7" for recs in _forced(Store()).values())
    asked = len(stub.bodies)
    assert main(_answers(stub.url)) == 0  # the same settings: nothing to ask, the first trace included
    assert "0 trace(s) of 'd' given their running answer, 3 already had it" in capsys.readouterr().err
    assert len(stub.bodies) == asked


def test_a_rerun_redoes_exactly_the_traces_that_failed(serve, capsys):
    _dataset()
    tom = QUESTIONS[1][0]
    stub = serve(lambda path, body: (503, b"down") if tom in body["prompt"] else _up(path, body))
    assert main(_answers(stub.url)) == 1
    assert (
        "2 trace(s) of 'd' given their running answer, 0 already had it, 1 failed" in capsys.readouterr().err
    )
    stub.reply, stub.bodies = _up, []
    assert main(_answers(stub.url)) == 0
    assert (
        "1 trace(s) of 'd' given their running answer, 2 already had it, 0 failed" in capsys.readouterr().err
    )
    assert stub.bodies and all(tom in b["prompt"] for _, b in stub.bodies)  # only the failed trace was asked


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (["-V", "max_new_tokens=8"], "max_new_tokens was 16, now 8"),
        (["--every", "2"], "every was 1, now 2"),
        (["--suffix", "\nAnswer: "], "suffix was"),
        ("other endpoint", "endpoint was 'http://127.0.0.1:"),
    ],
)
def test_a_rerun_with_other_settings_redoes_the_traces_and_says_why(serve, capsys, change, says):
    _dataset()
    stub = serve(_up)
    assert main(_answers(stub.url)) == 0
    capsys.readouterr()
    if change == "other endpoint":  # another server serving the same model name
        other = serve(_up)
        argv = _answers(other.url)
    else:
        argv = _answers(stub.url, *change)
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "3 trace(s) of 'd' given their running answer, 0 already had it" in err
    assert f"redone: {says}" in err
    store = Store()
    for recs in _forced(store).values():
        (rec,) = recs
        assert rec.info["settings"]["probe"] == "endpoint" and rec.info["settings"]["model"] == "m"
        assert set(rec.info["settings"]) >= {"endpoint", "suffix", "max_new_tokens", "every"}


def test_a_record_without_settings_is_redone(serve):
    """A record written before settings were kept (an outage's all-null record among them)."""
    store = _dataset()
    stub = serve(_up)
    probe = AnswersRequest("endpoint", base_url=stub.url, model="m", options={"retries": "0"}).make_probe()
    key = store.rows(Query(dataset=["d"], limit=1))[0]["key"]
    t = store.trace(key)
    from o3viz.answers.run import add_answers

    add_answers(t, probe)
    assert answers_due(t, probe, 1) is None
    del t.final.answers[-1].info["settings"]
    assert answers_due(t, probe, 1) == "its record names no settings"
