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
  0.8). ``--quick`` runs every part at a small scale.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

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
    p.add_argument("--fork-n", type=int, default=16, help="samples whose tree is checked for recall (16)")
    p.add_argument(
        "--fork-temperature",
        type=float,
        default=0.6,
        help="sampling temperature of the recall set (0.6: at 1.0 the small model's samples part at "
        "their first step, leaving no branching node with two sides to check)",
    )
    p.add_argument("--part", choices=("batch", "tree", "merge", "recall", "all"), default="all")
    p.add_argument("--quick", action="store_true", help="small scale: n 4, 32 tokens, k 4, fork-n 8")
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


def _real_fork(model, tok, trace_a, trace_b, depth: int, k: int) -> bool:
    """Whether K resamples after each side's step ``depth`` differ in reference share."""
    from o3viz.analysis.importance.stats import wilson_difference
    from o3viz.clients import LocalBackend, Sampling
    from o3viz.text.answers import answers_equivalent, round_answer

    backend, shares = LocalBackend(model, tok, batch=k), []
    for t in (trace_a, trace_b):
        rnd = t.final
        prefix = rnd.text[: rnd.steps[depth].end]
        outs = backend.complete(
            rnd.rendered_prompt + prefix, k, Sampling(max_tokens=96, temperature=1.0, seed=depth)
        )
        found = [round_answer(prefix + o, "math") for o in outs]
        shares.append(sum(bool(f and answers_equivalent(f.text, REFERENCE)) for f in found))
    lo, hi = wilson_difference(shares[0], k, shares[1], k, 0.95)
    return lo > 0 or hi < 0


def _recall(model, tok, n: int, tokens: int, k: int, temperature: float) -> None:
    from o3viz.samples.draw import draw_local
    from o3viz.samples.request import SampleRequest
    from o3viz.samples.tree import MIN_SIDE, build_tree

    drawn = draw_local(
        model, tok, SampleRequest(prompt=PROMPT, n=n, max_new_tokens=tokens, temperature=temperature)
    )
    for t in drawn.traces:
        t.task.reference = REFERENCE
    tree = build_tree(drawn.traces, reference=REFERENCE)
    assert all(t.final.tokens for t in drawn.traces)
    real = found = candidates = 0
    for node in tree.nodes:
        sides = [tree.nodes[c] for c in node.children if tree.nodes[c].samples >= MIN_SIDE]
        if len(sides) < 2:
            continue
        candidates += 1
        a, b = sides[0], sides[-1]
        if _real_fork(model, tok, drawn.traces[a.members[0]], drawn.traces[b.members[0]], a.depth, k):
            real += 1
            found += node.fork
    recall = f"{found / real:.2f}" if real else "n/a"
    print(f"fork_recall: {recall} (goal >= 0.8; {found} of {real} real forks, {candidates} branching nodes, "
          f"{len(tree.forks)} forks called, n {n}, k {k}, temperature {temperature})")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    import torch

    if args.quick:
        args.n, args.tokens, args.k, args.fork_n = 4, 32, 4, 8
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
        _recall(model, tok, args.fork_n, args.tokens * 2, args.k, args.fork_temperature)
    print(f"load_after: {_load()}")
    return 0
