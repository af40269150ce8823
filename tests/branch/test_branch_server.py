"""A branch through a real OpenAI-compatible server: ``transformers serve`` on 127.0.0.1 with the
embedded model (offline), ``o3viz branch --edit`` and ``--resample`` with ``--base-url``; the
branches load, name their fork and the endpoint that continued them, and are in the store."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.trace import load_trace

pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
pytest.importorskip("openai", reason="transformers serve needs openai (requirements-dev.txt)")

pytestmark = [
    pytest.mark.server,
    pytest.mark.timeout(1800),  # server start + a few requests on a loaded machine
]
SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"


@pytest.fixture(scope="module")
def server(transformers_server):
    return transformers_server  # the embedded model served for this module (tests/conftest.py)


@pytest.mark.parametrize("how", [["--edit", "This is 24 + 18 = 42 muffins in all."], ["--resample", "2"]])
def test_a_branch_through_transformers_serve_lands_in_the_store(server, how, tmp_path, monkeypatch, capsys):
    base_url, model_path = server
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "b.o3trace.json.gz"
    args = ["branch", str(SAMPLE), "--step", "0:2", *how, "--max-new-tokens", "8"]
    rc = main([*args, "--base-url", base_url, "--model", model_path, "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    b = load_trace(out)
    assert b.parent.step == "0:2" and b.parent.info["continued_by"] == f"openai:{base_url}:{model_path}"
    assert any(r.text.strip() for r in b.rounds)  # real text came back from the server
    assert Store().row(b.parent.key) is not None and b.parent.info["proxy"] is False
