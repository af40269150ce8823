"""``make gpu-check`` (scripts/gpu_check.py) skips with one line on a machine without CUDA, so CI and
CPU users can run it; on CUDA it captures, compares with the CPU and prints peak memory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from o3viz.paths import REPO_ROOT

pytestmark = [pytest.mark.model, pytest.mark.subprocess]


def test_gpu_check_skips_with_one_line_without_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: run `make gpu-check` itself")
    out = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "gpu_check.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1 and out.stdout.startswith("gpu-check: skipped, no CUDA device")


def test_gpu_check_builds_prompts_of_the_length_it_names():

    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    try:
        import gpu_check
    finally:
        sys.path.pop(0)
    from o3viz.model import load_model

    try:
        _, tok = load_model()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"default model unavailable: {exc}")
    n = len(tok(gpu_check.long_prompt(tok, 1024))["input_ids"])
    assert 1000 <= n <= 1100
