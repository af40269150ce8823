"""Regenerate ``sample_traces/`` with the CLI and the embedded default model (``make samples``).

Every sample is made by ``python -m o3viz run`` / ``import`` with greedy decoding and fixed seeds,
and ``SOURCE_DATE_EPOCH`` pins the timestamps, so a rerun on the same machine gives the same
files. Usage: ``python scripts/make_samples.py [--only NAME ...] [--out DIR] [--list]`` (``--out``
defaults to ``$O3VIZ_SAMPLES`` or ``sample_traces/``; point it at a temporary folder and compare
bytes to check that a rerun reproduces the saved samples).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from o3viz.paths import data_dir, samples_dir

ROOT = Path(__file__).resolve().parents[1]
DATA = data_dir()

GSM8K_STYLE = (
    "A baker makes 24 muffins in the morning and 18 in the afternoon. She sells 30 muffins at "
    "$2 each and gives the rest to a shelter. How much money does she make, and how many muffins "
    "go to the shelter? Think step by step and finish with 'The answer is N'."
)
HUMANEVAL_STYLE = (
    "Complete this Python function. Reply with the whole function in one ```python code block.\n\n"
    "def running_max(numbers: list[int]) -> list[int]:\n"
    '    """Return the list of running maxima.\n'
    "    >>> running_max([1, 3, 2, 5, 4])\n"
    "    [1, 3, 3, 5, 5]\n"
    '    """\n'
)


ROPES = (
    "You have two ropes, each of which takes exactly 60 minutes to burn completely. However, the ropes "
    "burn unevenly. You have no other timing device. How can you measure exactly 20 minutes using these "
    "two ropes and matches to light them?"
)


def _gsm8k_questions(n: int) -> list[str]:
    lines = (DATA / "gsm8k" / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines[:n]]


def long_prompt() -> str:
    """About 2,500 tokens: 24 GSM8K problems (MIT) as context, then one question about one of them."""
    qs = _gsm8k_questions(24)
    body = "\n\n".join(f"Problem {i + 1}. {q}" for i, q in enumerate(qs))
    return f"Here are some word problems.\n\n{body}\n\nQuestion: In Problem 1, how many eggs do Janet's ducks lay per day?"


def redundant_prompt() -> str:
    """A long prompt that repeats itself (a log with a needle), for --compress."""
    block = "\n".join(f"[worker {i % 4}] heartbeat ok; queue depth 0; retries 0" for i in range(12))
    parts = [block] * 10
    parts.insert(6, "[scheduler] NOTE: the maintenance window is moved to Thursday 14:00.")
    return "System log follows.\n" + "\n".join(parts) + "\n\nQuestion: when is the maintenance window?"


def samples() -> dict[str, list[str]]:
    run = [sys.executable, "-m", "o3viz", "run"]
    imp = [sys.executable, "-m", "o3viz", "import"]
    topo = str(DATA / "traces" / "topology_math500_deepseek_r1.jsonl")
    rope = str(DATA / "traces" / "thinking_texts" / "o3-mini.txt")
    return {
        "gsm8k_word_problem": run
        + ["--prompt", GSM8K_STYLE, "--max-new-tokens", "160", "--daa", "observe", "--explore", "2"],
        "gsm8k_word_problem_daa_allocate": run
        + ["--prompt", GSM8K_STYLE, "--max-new-tokens", "160", "--daa", "allocate", "--daa-strength", "1.0"],
        "humaneval_function": run
        + ["--prompt", HUMANEVAL_STYLE, "--max-new-tokens", "128", "--daa", "observe", "--explore", "1"],
        # MoEfied routing of the embedded model's learned weights (not a trained MoE) + the logit lens
        "moefied_gsm8k_lens": run
        + ["--prompt", GSM8K_STYLE, "--max-new-tokens", "96", "--daa", "observe"]
        + ["--moefy", "16,12", "--logit-lens", "0,10,20,29"],
        "long_prompt_2k": run + ["--prompt", long_prompt(), "--max-new-tokens", "48", "--daa", "observe"],
        "long_redundant_compress": run
        + ["--prompt", redundant_prompt(), "--max-new-tokens", "48", "--compress"],
        "solve_code_humaneval": run
        + ["--task", "humaneval:HumanEval/0", "--rounds", "3", "--max-new-tokens", "200", "--daa", "observe"],
        "solve_math_gsm8k": run
        + ["--task", "gsm8k:0", "--rounds", "3", "--max-new-tokens", "200", "--daa", "observe"],
        "import_r1_math500_3": imp + [topo, "--record", "4", "--enrich", "--layers", "15"],
        "import_thinking_o3mini_ropes": imp + [rope, "--question", ROPES, "--enrich"],
        # gsm8k_word_problem with the two white-box Thought Anchors measures (the Importance view's
        # sample). Resampling is left out: K = 4 rollouts of 64 tokens per step took 30 minutes on
        # the 2-core development machine, too long for `make samples`.
        "gsm8k_word_problem_importance": [
            imp_of("gsm8k_word_problem", "receiver"),
            imp_of(PREVIOUS, "suppression"),
        ],
    }


PREVIOUS = "{previous}"  # the output of the step before, in a sample made in several steps


def imp_of(sample: str, method: str) -> list[str]:
    """``o3viz importance`` on another sample's file (or the previous step's output)."""
    return [sys.executable, "-m", "o3viz", "importance", sample, "--method", method]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="sample names to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="list the samples and exit")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder to write (default: the samples folder)"
    )
    args = parser.parse_args(argv)
    table = samples()
    if args.list:
        print("\n".join(table))
        return 0
    out_dir = args.out or samples_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1796083200", HF_HUB_OFFLINE="1", PYTHONHASHSEED="0")
    for name in args.only or table:
        out = out_dir / f"{name}.o3trace.json.gz"
        t0 = time.time()
        steps = table[name] if isinstance(table[name][0], list) else [table[name]]
        with tempfile.TemporaryDirectory() as tmp:
            previous = None
            for i, step in enumerate(steps):
                target = out if i == len(steps) - 1 else Path(tmp) / f"step{i}.o3trace.json.gz"
                cmd = [_fill(a, out_dir, previous) for a in step] + ["--out", str(target), "--overwrite"]
                proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
                if proc.returncode != 0:
                    print(
                        f"{name}: FAILED ({proc.stderr.strip().splitlines()[-1:] or ['?']})", file=sys.stderr
                    )
                    return 1
                previous = target
        print(f"{name}: {out.stat().st_size / 1e6:.2f} MB in {time.time() - t0:.0f} s")
    return 0


def _fill(arg: str, out_dir: Path, previous: Path | None) -> str:
    """A step's argument: the previous step's output, or another sample's file."""
    if arg == PREVIOUS:
        return str(previous)
    if arg in _SAMPLE_NAMES:
        return str(out_dir / f"{arg}.o3trace.json.gz")
    return arg


_SAMPLE_NAMES = ("gsm8k_word_problem",)  # samples other samples are made from


if __name__ == "__main__":
    raise SystemExit(main())
