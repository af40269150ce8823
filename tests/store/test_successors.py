"""Old keys keep opening: a trace that gains results is stored under a new key, and every place a
key is taken (the CLI's TRACE argument, ``o3viz library show``, ``o3viz.load_trace``) opens the
trace that replaced it, in one step along a chain of replacements, saying so in one line.

Before: "no such file, and no trace has that key", and ``o3viz.load_trace(KEY)`` refused every key.
"""

from __future__ import annotations

import copy

import pytest

import o3viz
from o3viz.cli.main import main
from o3viz.errors import TraceError, UsageError
from o3viz.store.repair import reindex
from o3viz.store.replace import replace_trace
from o3viz.store.store import Store
from o3viz.store.successors import MAX_REPLACED, resolve_key, successor, successor_meta
from o3viz.testing.synthetic import make_trace

META = {"source": "import", "dataset": "toy", "record": 7}


def _scored(trace, n: int = 1):
    new = copy.deepcopy(trace)
    new.provenance.settings = {**(new.provenance.settings or {}), "scored": n}
    return new


@pytest.fixture
def chain(tmp_path, monkeypatch):
    """The user's store with one trace replaced twice: (store, [first, second, third key])."""
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    store = Store()
    trace = make_trace(5, seed=1)
    first = store.add(trace, **META)
    second = replace_trace(store, first, _scored(trace, 1))
    third = replace_trace(store, second, _scored(trace, 2))
    return store, [first, second, third]


def test_every_old_key_of_a_chain_opens_the_newest_copy_in_one_step(chain):
    store, (first, second, third) = chain
    assert store.row(first) is None and store.row(second) is None
    assert store.read_meta(third)["replaces"] == f"{first},{second}", "the whole chain on the copy"
    for old in (first, second, first[:6]):
        found = resolve_key(store, old)
        assert found.key == third
    assert resolve_key(store, first).note == f"key {first} was replaced by {third}; opening {third}"
    assert resolve_key(store, third).note is None
    assert successor(store, second).key == third and successor(store, third) is None


def test_the_record_survives_a_reindex_and_goes_with_its_trace(chain):
    store, (first, _, third) = chain
    store.delete_rows([third])
    reindex(store, full=True)
    assert resolve_key(store, first).key == third, "the files hold the record"
    store.delete([third])
    with pytest.raises(UsageError, match="no trace has that key"):
        resolve_key(store, first)


def test_the_cli_opens_an_old_key_and_says_so_in_one_line(chain, capsys):
    _, (first, second, third) = chain
    assert main(["info", first]) == 0
    err = capsys.readouterr().err
    assert f"key {first} was replaced by {third}; opening {third}\n" in err
    assert main(["library", "show", first[:8]]) == 0
    out = capsys.readouterr()
    assert third in out.out and f"replaced by {third}" in out.err
    assert main(["label", second, "--step", "0:1", "--verdict", "wrong", "--by", "ann"]) == 0
    assert f"labelled step 0:1 of {third} wrong" in capsys.readouterr().out


def test_load_trace_takes_a_store_key_as_every_command_does(chain, capsys):
    store, (first, _, third) = chain
    assert o3viz.load_trace(third).to_dict() == store.trace(third).to_dict()
    assert capsys.readouterr().err == ""
    assert o3viz.load_trace(third[:5]).to_dict() == store.trace(third).to_dict()
    assert o3viz.load_trace(first).to_dict() == store.trace(third).to_dict()
    assert f"key {first} was replaced by {third}" in capsys.readouterr().err
    with pytest.raises(TraceError, match="no such file, and no trace has that key") as err:
        o3viz.load_trace("0123456789abcdef")
    assert "\n" not in str(err.value)


def test_a_chain_is_bounded():
    meta = {"replaces": ",".join(f"{i:016x}" for i in range(MAX_REPLACED))}
    kept = successor_meta(meta, "f" * 16)["replaces"].split(",")
    assert len(kept) == MAX_REPLACED and kept[-1] == "f" * 16 and kept[0] == f"{1:016x}"
