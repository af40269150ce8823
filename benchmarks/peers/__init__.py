"""Peers: o3viz capture side by side with HF ``output_attentions``, inseq and TransformerLens, in
one run, on the same model files and prompt, each tool in its own virtual environment
(``make bench-peers`` creates ``.venv-peers/``). Prints one ``name: value`` line per figure and
writes them to a CSV. Time figures are ratios over plain sdpa ``generate`` in the same
environment, alternating processes; memory figures are RSS above the loaded model, with every
child killed before it reaches the memory cap.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from benchmarks.peers.tools import REPO, TOOLS

DEFAULT_OUT = REPO / "benchmarks" / "results" / "peers.csv"


def _lengths(text: str) -> list[int]:
    """'64,256,1024' -> [64, 256, 1024]; '' or '0' -> [] (skip the phase)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected comma-separated token counts like 64,256,1024"
            )
        if int(part):
            out.append(int(part))
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    names = ", ".join(t.name for t in TOOLS)
    p.add_argument("--tools", default="all", help=f"comma-separated tools (default all): {names}")
    p.add_argument(
        "--tokens",
        type=_lengths,
        default=[64, 256, 1024],
        help="time phase: new tokens (default 64,256,1024; 0 skips)",
    )
    p.add_argument(
        "--memory-tokens",
        type=_lengths,
        default=[1024, 4096, 8192],
        help="memory phase: lengths climbed until a tool is stopped (default 1024,4096,8192; 0 skips)",
    )
    p.add_argument(
        "--size-tokens",
        type=int,
        default=512,
        help="size phase: new tokens of the saved run (default 512; 0 skips)",
    )
    p.add_argument("--pairs", type=int, default=3, help="time phase: tool/plain pairs per length (default 3)")
    p.add_argument("--threads", type=int, default=2, help="torch threads in every child (default 2)")
    p.add_argument("--cap-gib", type=float, default=16.0, help="memory cap per child in GiB (default 16)")
    p.add_argument(
        "--time-limit", type=float, default=1800.0, help="seconds before a child is stopped (default 1800)"
    )
    p.add_argument(
        "--bisect", type=int, default=2, help="extra forced lengths to narrow a tool's longest (default 2)"
    )
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"CSV path (default {DEFAULT_OUT.relative_to(REPO)})"
    )
    p.add_argument(
        "--table",
        type=Path,
        nargs="+",
        metavar="CSV",
        help="print the README's markdown table from saved CSVs (later files win) and exit; runs nothing",
    )
    p.add_argument(
        "--peers-dir", type=Path, default=None, help="where the peer venvs are (default .venv-peers)"
    )


def run(args: argparse.Namespace) -> int:
    if args.table:
        return _print_table(args.table)
    from transformers import AutoTokenizer

    from benchmarks.capture import PROMPT
    from benchmarks.peers.driver import Driver, Settings
    from benchmarks.peers.tools import by_name
    from o3viz.errors import UsageError
    from o3viz.model import resolve_model
    from o3viz.run.prompt import layout_prompt

    try:
        tools = by_name(args.tools)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.pairs < 1 or args.threads < 0 or args.cap_gib <= 0:
        raise UsageError("--pairs must be >= 1, --threads >= 0 and --cap-gib > 0")
    model_dir = resolve_model(None)[0]  # the embedded model's safetensors cache: every tool loads it
    tok = AutoTokenizer.from_pretrained(model_dir)
    s = Settings(
        model=model_dir,
        ids=list(layout_prompt(tok, PROMPT).ids),
        prompt=PROMPT,
        tools=tools,
        tokens=args.tokens,
        memory_tokens=args.memory_tokens,
        size_tokens=args.size_tokens,
        pairs=args.pairs,
        threads=args.threads,
        cap_gib=args.cap_gib,
        time_limit_s=args.time_limit,
        bisect=args.bisect,
        peers_dir=args.peers_dir,
        out=args.out,
    )
    print(f"threads: {s.threads}")
    print(f"cpus: {os.cpu_count()}")
    print(f"prompt_tokens: {len(s.ids)}")
    print(f"csv: {args.out}")
    # SIGTERM (make, a timeout) unwinds like Ctrl-C, so the running child is killed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    Driver(s).run()
    return 0


def _print_table(paths: list[Path]) -> int:
    from benchmarks.peers.driver import read_csv
    from benchmarks.peers.table import markdown_table
    from o3viz.errors import UsageError

    figures = []
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such CSV file (write one with `python -m benchmarks peers --out`)")
        try:
            figures += read_csv(path)
        except (KeyError, ValueError) as exc:
            raise UsageError(f"{path}: not a peers CSV ({exc})") from None
    print(markdown_table(figures))
    return 0
