"""Which tools ``python -m benchmarks peers`` compares, and where each one runs.

A tool runs in an environment: ``o3viz`` is our own interpreter (``sys.executable``); a peer runs
in ``.venv-peers/<env>`` (made by ``make bench-peers``). Every tool's time is divided by plain
sdpa ``generate`` run in the same process. A peer environment that is missing, or whose
install failed, makes its tools unavailable with the reason, never silently absent.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PEERS_DIR = REPO / ".venv-peers"


@dataclass(frozen=True)
class Tool:
    """One measured tool: a runner script and the workload variant it runs."""

    name: str  # figure prefix, e.g. "inseq_attention"
    env: str  # "o3viz" (our interpreter) or a .venv-peers/<env> folder
    runner: str  # script in benchmarks/peers/
    variant: str
    label: str  # what the README table calls it
    forced_memory: bool = False  # memory runs may prefill a forced sequence (same peak, no decoding)


TOOLS: tuple[Tool, ...] = (
    Tool("o3viz_capture", "o3viz", "run_o3viz.py", "capture", "o3viz capture (default)"),
    Tool("o3viz_all", "o3viz", "run_o3viz.py", "capture_all", "o3viz capture, all heads of all layers"),
    Tool("o3viz_allocate", "o3viz", "run_o3viz.py", "allocate", "o3viz capture + DAA allocate"),
    Tool(
        "hf_output_attentions",
        "o3viz",
        "run_hf.py",
        "output_attentions",
        "HF generate(output_attentions=True)",
    ),
    Tool("inseq_attention", "inseq", "run_inseq.py", "attention", "inseq attention", forced_memory=True),
    Tool(
        "tl_run_with_cache",
        "transformer_lens",
        "run_transformer_lens.py",
        "run_with_cache",
        "TransformerLens run_with_cache",
        forced_memory=True,
    ),
)


def by_name(names: str) -> list[Tool]:
    """Tools named in a comma-separated list ("all" for every tool); unknown names raise ValueError."""
    if names.strip() == "all":
        return list(TOOLS)
    known = {t.name: t for t in TOOLS}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    bad = [n for n in wanted if n not in known]
    if bad or not wanted:
        raise ValueError(f"unknown tool {', '.join(bad) or '(none)'}; choose from {', '.join(known)} or all")
    return [known[n] for n in wanted]


def python_for(env: str, peers_dir: Path = PEERS_DIR) -> tuple[str | None, str]:
    """(interpreter path, "") when the environment is ready, else (None, the reason)."""
    if env == "o3viz":
        return sys.executable, ""
    venv = peers_dir / env
    failed = venv / ".install-failed"
    if failed.is_file():
        reason = failed.read_text(errors="replace").strip().splitlines()
        return (
            None,
            f"install failed: {reason[0] if reason else 'no reason recorded'} (see {venv}/install.log)",
        )
    if not (venv / ".stamp").is_file() or not (venv / "bin" / "python").is_file():
        return None, f"{venv} is not set up; run `make bench-peers` (it creates the peer venvs)"
    return str(venv / "bin" / "python"), ""
