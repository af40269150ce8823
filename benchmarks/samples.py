"""samples: sample sets and their tree, with the load they ran at.

- ``batched_vs_independent_ratio``: N = ``--n`` samples of ``--tokens`` new tokens drawn as one
  batch from a shared prefill (``o3viz.samples.draw.draw_local``) against N independent runs (the
  same path, one sample per prefill and generate), same run, embedded model (goal ≤ 0.6).
- ``tree_and_figure_64x4k_s``: the tree, its view data and its figure for 64 synthetic samples of
  about 4k tokens (200 steps each), and for the twenty real thinking texts (goal ≤ 1 s).
- ``merge_f1_heldout3`` (the headline): the step equivalence against a held-out hand-aligned GSM8K
  set labelled without seeing the rule and scored once after it was frozen (goal ≥ 0.9);
  ``merge_f1_heldout``, ``merge_f1_heldout2`` and ``merge_f1_dev``: the sets the rule was revised
  on (development figures).
- ``fork_recall``: for local samples, a branching node is a real fork when ``--k`` resamples from
  the prefix through its best and its worst child's first step differ in reference share (the
  Newcombe interval excludes 0); recall is the share of real forks the tree calls forks (goal ≥
  0.8), pooled over the ``--fork-n`` sample trees of the prompts in ``RECALL_PROMPTS`` (chosen by
  the model's accuracy alone; see there). The line also counts the forks called that are not real.
- ``fork_recall_firmed``: the same real forks, called by the tree after ``firm_up`` (the Samples
  page's "Firm up undecided splits", ``o3viz sample --firm-up K``) drew ``--firm-k`` continuations after
  each side of every split the drawn tree could not decide, with other seeds than the check's; the
  line says how many samples that added.
  ``--quick`` runs every part at a small scale.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks._samples_recall import (  # noqa: F401 (the recall's names, as tests import them)
    RECALL_PROMPTS,
    ForkCounts,
    firmed_line,
    measure_recall,
    pooled,
    recall_line,
)
from o3viz.paths import REPO_ROOT, data_dir

GOLD = REPO_ROOT / "tests" / "samples" / "data" / "gsm8k_step_alignment.json"
GOLD_HELDOUT = REPO_ROOT / "tests" / "samples" / "data" / "gsm8k_step_alignment_heldout.json"
GOLD_HELDOUT2 = REPO_ROOT / "tests" / "samples" / "data" / "gsm8k_step_alignment_heldout2.json"
GOLD_HELDOUT3 = REPO_ROOT / "tests" / "samples" / "data" / "gsm8k_step_alignment_heldout3.json"
PROMPT = "Tom has 7 apples and buys 5 more, then gives away 3. How many apples does he have? End with 'The answer is N'."
REFERENCE = "9"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=16, help="samples in the batching comparison (16)")
    p.add_argument("--tokens", type=int, default=256, help="new tokens per sample (256)")
    p.add_argument("--k", type=int, default=8, help="resamples a side for fork recall (8)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="recall: the draws' seed (0); the check and the firm-up move to other streams with it, "
        "so another seed is an independent replicate",
    )
    p.add_argument(
        "--firm-k", type=int, default=8, help="continuations a side the firm-up draws (8; 1 to 32)"
    )
    p.add_argument(
        "--fork-n", type=int, default=16, help="samples a prompt whose tree is checked for recall (16)"
    )
    p.add_argument(
        "--fork-temperature",
        type=float,
        default=0.6,
        help="sampling temperature of the recall set and its resamples (0.6: at 1.0 the small model's "
        "samples part at their first step, leaving no branching node with two sides to check)",
    )
    p.add_argument(
        "--fork-tokens",
        type=int,
        default=192,
        help="new tokens per recall sample (192: the recall prompts' replies are short; a reply cut at "
        "the budget is ungraded)",
    )
    p.add_argument("--part", choices=("batch", "tree", "merge", "recall", "all"), default="all")
    p.add_argument(
        "--quick",
        action="store_true",
        help="small scale: n 4, 32 tokens, k 4, fork-n 8, 2 recall prompts, 64 fork tokens",
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared machine)")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _batch(model, tok, n: int, tokens: int) -> None:
    from o3viz.samples.draw import draw_local
    from o3viz.samples.request import SampleRequest

    def req(count: int, batch: int, seed: int = 0) -> SampleRequest:
        return SampleRequest(
            prompt=PROMPT, n=count, max_new_tokens=tokens, temperature=1.0, batch=batch, seed=seed
        )

    t0 = time.perf_counter()
    batched = draw_local(model, tok, req(n, n)).traces  # one prefill, one batch of n
    t1 = time.perf_counter()
    single = []  # n one-sample runs: at batch 1 every sample has its own prefill and generate
    for i in range(n // 2):
        single += draw_local(model, tok, req(2, 1, seed=i)).traces
    t2 = time.perf_counter()
    assert len(batched) == n and len(single) == 2 * (n // 2)
    assert all(x.entropy is not None for t in batched for x in t.final.tokens)
    got_b, got_s = (sum(len(t.final.tokens) for t in ts) for ts in (batched, single))
    print(f"batched_n{n}_{tokens}_s: {t1 - t0:.2f} ({got_b} tokens)")
    print(f"independent_n{n}_{tokens}_s: {t2 - t1:.2f} ({got_s} tokens in {len(single)} one-sample runs)")
    print(f"batched_vs_independent_ratio: {(t1 - t0) / (t2 - t1):.2f} (goal <= 0.6)")


def _tree(quick: bool) -> None:
    from o3viz.figures._style import warm_figures
    from o3viz.figures.sample_tree import sample_tree_figure
    from o3viz.importers import import_trace
    from o3viz.samples.tree import build_tree
    from o3viz.samples.view_data import tree_view_data
    from o3viz.testing.sample_sets import long_texts, text_sample

    n, steps = (16, 50) if quick else (64, 200)
    traces = [text_sample(t, reference="1") for t in long_texts(n, steps)]
    chars = sum(len(t.final.text) for t in traces)
    warm_figures()  # plotly's first-use cost, paid once at the app's start, stays out
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        tree = build_tree(traces)
        data = tree_view_data(tree)
        fig = sample_tree_figure(tree).to_json()
        times.append(time.perf_counter() - t0)
    dt = statistics.median(times)
    assert len(data["nodes"]) > n and len(fig) > 1000 and tree.nodes[0].samples == n
    print(
        f"tree_and_figure_{n}x{chars // n // 4}tok_s: {dt:.3f} (goal <= 1; median of 3; {len(tree.nodes)} nodes)"
    )
    texts = sorted((data_dir() / "traces" / "thinking_texts").glob("*.txt"))
    real = [
        import_trace(p, question="Two ropes burn 60 minutes each; measure 20 minutes.", claims=False)
        for p in texts
    ]
    t0 = time.perf_counter()
    fig = sample_tree_figure(build_tree(real)).to_json()
    print(f"tree_and_figure_thinking_texts_s: {time.perf_counter() - t0:.3f} ({len(real)} real texts)")


def _merge() -> None:
    from o3viz.testing.sample_sets import merge_scores

    solutions = str(data_dir() / "gsm8k" / "gsm8k_example_model_solutions.jsonl")
    for name, gold, note in (
        ("merge_f1_heldout3", GOLD_HELDOUT3, "held out: labelled without seeing the rule, scored once"),
        ("merge_f1_heldout", GOLD_HELDOUT, "development: first held out, the rule was revised on it"),
        ("merge_f1_heldout2", GOLD_HELDOUT2, "development: second held out, the rule was revised on it"),
        ("merge_f1_dev", GOLD, "development set: the rule was designed on it"),
    ):
        got = merge_scores(json.loads(gold.read_text()), solutions)
        assert got["pairs"] >= 60
        print(f"{name}: {got['f1']:.3f} (goal >= 0.9; {note}; precision {got['precision']:.3f}, "
              f"recall {got['recall']:.3f}, {got['pairs']} hand-aligned pairs)")  # fmt: skip


def notes(printed: str) -> list[str]:
    """The result file's notes: the recall part's line for each prompt (what each checked node's
    resamples and tree sides gave).

    >>> notes("fork_recall: 1.00\\n  'What is 2 + 3?' (reference 5): 3/4 right\\n")
    ["'What is 2 + 3?' (reference 5): 3/4 right"]
    """
    return [line.strip() for line in printed.splitlines() if line.startswith("  '")]


def run(args: argparse.Namespace) -> int:
    import torch

    prompts = RECALL_PROMPTS
    if args.quick:
        args.n, args.tokens, args.k, args.fork_n, args.fork_tokens, args.firm_k = 4, 32, 4, 8, 64, 4
        prompts = RECALL_PROMPTS[:2]
    torch.set_num_threads(args.threads)
    print(f"load_before: {_load()}")
    parts = ("batch", "tree", "merge", "recall") if args.part == "all" else (args.part,)
    model = tok = None
    if {"batch", "recall"} & set(parts):
        from o3viz.model import load_model

        model, tok = load_model(None)
    if "merge" in parts:
        _merge()
    if "tree" in parts:
        _tree(args.quick)
    if "batch" in parts:
        _batch(model, tok, args.n, args.tokens)
    if "recall" in parts:
        measure_recall(
            model, tok, prompts, args.fork_n, args.fork_tokens, args.k, args.fork_temperature, args.firm_k,
            args.seed,
        )  # fmt: skip
    print(f"load_after: {_load()}")
    return 0
