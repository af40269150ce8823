"""``o3viz run --prompt-file`` refuses, in one line and before the model loads, a run whose trace
could not be saved (issue 40: a 16k run worked 12 minutes, then could not save)."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.testing.builders import save_tiny_llama

pytestmark = [pytest.mark.model]


def test_a_run_whose_trace_cannot_fit_is_refused_before_the_model_loads(tmp_path, capsys):
    folder = save_tiny_llama(tmp_path / "tiny", num_layers=2, max_positions=16384)
    for weights in folder.glob("*.safetensors"):
        weights.unlink()  # loading the model would now fail: the refusal must come first
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Count the apples in every crate. " * 100, encoding="utf-8")
    out = tmp_path / "t.o3trace.json.gz"
    capsys.readouterr()  # the tiny model's save progress
    # (8,192 new tokens fit since generated rows keep their top-64 keys above 2k: 131,072 do not)
    argv = ["run", "--model", str(folder), "--prompt-file", str(prompt), "--max-new-tokens", "131072"]
    code = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert len(err.splitlines()) == 1 and "new tokens makes a trace of about" in err, err
