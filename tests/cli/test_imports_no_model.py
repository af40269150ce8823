"""A command that runs no model imports neither torch nor transformers (nor streamlit): each one's
start would otherwise cost seconds and hundreds of MB before it reads a flag (issue 62). Every
command's ``--help`` and the everyday no-model commands run, one after another, in one fresh
interpreter; after each, the test looks at ``sys.modules``. A finder on ``sys.meta_path`` keeps the
import chain that first reached a banned module, so a failure names the line to make lazy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from o3viz.cli.main import build_parser, main
from o3viz.samples.sets import save_set
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.testing.sample_sets import split_set

from ..conftest import SAMPLES

pytestmark = [pytest.mark.subprocess]

BANNED = ("torch", "transformers", "streamlit")

# Runs each command of argv[1] (a JSON list of argument lists) through o3viz's own ``main`` (or,
# for ``["!import", MODULE]``, imports MODULE: the self-check), then writes, as JSON to argv[2], each
# command's exit code and any banned module it brought in.
WRAPPER = textwrap.dedent(
    """
    import json, sys, traceback
    BANNED = {banned!r}
    chains = {{}}

    class Watch:
        def find_spec(self, name, path=None, target=None):
            if name in BANNED and name not in chains:
                frames = [f for f in traceback.extract_stack() if "/o3viz/" in f.filename]
                chains[name] = " <- ".join(f"{{f.filename.rsplit('/o3viz/', 1)[1]}}:{{f.lineno}}" for f in frames[::-1][:6])
            return None

    sys.meta_path.insert(0, Watch())
    from o3viz.cli.main import main
    out = []
    for argv in json.loads(sys.argv[1]):
        try:
            code = __import__(argv[1]) and 0 if argv[0] == "!import" else main(argv)
        except SystemExit as exc:
            code = exc.code
        found = sorted(m for m in BANNED if m in sys.modules)
        out.append({{"argv": argv, "code": code, "imported": {{m: chains.get(m, "?") for m in found}}}})
        if found:
            break
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)
    """
).format(banned=BANNED)


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)


def _run(argvs: list[list[str]], tmp_path) -> list[dict]:
    result = tmp_path / "imports.json"
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, json.dumps(argvs), str(result)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(result.read_text())


def _report(done: list[dict]) -> str:
    last = done[-1]
    return "\n".join(
        f"o3viz {' '.join(last['argv'])} imported {m} via {c}" for m, c in last["imported"].items()
    )


def test_no_model_commands_import_neither_torch_nor_transformers(tmp_path, capsys):
    jsonl = write_reasoning_jsonl(tmp_path / "toy.jsonl", 3)
    other = write_reasoning_jsonl(tmp_path / "other.jsonl", 2, seed=1)
    save_set(Store(), "muffins", split_set(2, 2))
    trace = str(tmp_path / "gsm8k_word_problem.o3trace.json.gz")  # a copy: `verify` writes its verdicts
    shutil.copyfile(SAMPLES / "gsm8k_word_problem.o3trace.json.gz", trace)
    helps = [["--help"]] + [[c, "--help"] for c in _commands()]
    work = [
        ["import", str(jsonl), "--all", "--dataset", "toy", "--workers", "0"],
        ["import", str(other), "--all", "--dataset", "other", "--workers", "0"],
        ["import", str(jsonl), "--preview"],
        ["library", "list", "--limit", "1"],
        ["library", "search", "reconsider"],
        ["info", trace],
        ["verify", trace],
        ["export", trace, "--out", str(tmp_path / "spans.json")],
        ["tree", "muffins"],
        ["compare", "--dataset", "toy", "--dataset", "other"],
        ["import", "--list"],
        ["verify", "--list"],
        ["answers", "--list"],
        ["sample", "--list"],
    ]
    done = _run(helps + work, tmp_path)
    assert not done[-1]["imported"], _report(done)
    assert len(done) == len(helps + work)  # every command ran, none stopped the loop early
    failed = [(d["argv"], d["code"]) for d in done if d["code"] not in (0, None)]
    assert not failed, f"these commands did not succeed, so they measured nothing: {failed}"
    # and the store the commands read really held the imported dataset
    assert main(["library", "list", "--dataset", "toy", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_the_watch_names_the_line_that_imports_torch(tmp_path):
    """The check can fail, and says where: a module that imports torch at its top is named."""
    done = _run([["library", "list"], ["!import", "o3viz.hooks.instrument"]], tmp_path)
    assert done[0]["imported"] == {}
    assert done[-1]["imported"]["torch"].startswith("hooks/instrument.py:"), done
