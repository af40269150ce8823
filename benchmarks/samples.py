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
from dataclasses import dataclass, fields

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


# The recall set: short sums and products on which the embedded model is right about half the time,
# so that one step can change the answer (on the apples PROMPT it is almost never right, and no
# fork is real). Chosen by the model's accuracy alone, before any recall was computed: 16 candidate
# questions, each with RECALL_SUFFIX, drawn once (8 samples, temperature 0.6, 192 new tokens, seed
# 100, a seed the recall draw does not use); kept: those with 2 to 6 of 8 right, the first 8 in
# candidate order (8 keep the part near 15 minutes at one thread). Left out for accuracy: 6 + 7,
# "A farmer has 2 cows and buys 2 more", 5 times 2 and the apples PROMPT (1/8 each), 10 - 3 (0/8);
# passing but past the first 8: 10 + 10 (6/8), "Sam has 3 pens and gets 2 more" (3/8), 9 + 1 (4/8).
RECALL_SUFFIX = " Work it out in short steps, then write: The answer is (the number)."
RECALL_PROMPTS = (  # (question, reference); the selection draw's right answers of 8 after each
    ("What is 2 + 3?", "5"),  # 5
    ("What is 4 + 4?", "8"),  # 2
    ("What is 3 times 4?", "12"),  # 4
    ("What is 2 times 5?", "10"),  # 3
    ("What is 7 + 8?", "15"),  # 4
    ("What is 5 + 5?", "10"),  # 3
    ("What is 3 + 4?", "7"),  # 2
    ("What is 2 times 6?", "12"),  # 3
)
RESAMPLE_TOKENS = 128  # a resample's budget: the longest selection sample had 192 tokens in all


@dataclass
class ForkCounts:
    """What the recall check found at the branching nodes of one prompt's tree, or of several.

    >>> c = pooled([ForkCounts(nodes=3, real=2, found=1, called=1), ForkCounts(nodes=1, called=1)])
    >>> c.prompts, c.recall, c.called, c.called - c.found
    (2, 0.5, 2, 1)
    """

    nodes: int = 0  # branching nodes with two children of MIN_SIDE samples (the ones checked)
    real: int = 0  # of those, real forks: the resamples' reference shares differ
    found: int = 0  # real forks the tree calls forks
    called: int = 0  # checked nodes the tree calls forks
    at_answer: int = 0  # real forks where a side's first step already states its answer
    prompts: int = 1
    found_firmed: int = 0  # real forks the tree calls forks after firming up its undecided splits
    called_firmed: int = 0  # checked nodes called forks after firming up
    drawn: int = 0  # samples in the drawn trees
    added: int = 0  # samples the firm-up added

    @property
    def recall(self) -> float | None:
        return self.found / self.real if self.real else None

    @property
    def recall_firmed(self) -> float | None:
        return self.found_firmed / self.real if self.real else None

    def __add__(self, other: ForkCounts) -> ForkCounts:
        return ForkCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def pooled(counts: list[ForkCounts]) -> ForkCounts:
    """The counts of several prompts summed (no prompt: all zero)."""
    return sum(counts, ForkCounts(prompts=0))


def recall_line(c: ForkCounts, settings: str = "") -> str:
    """The figure line of pooled counts: recall, or n/a where no fork was real.

    >>> recall_line(ForkCounts(nodes=4, real=2, found=1, called=3)).split(" (")[0]
    'fork_recall: 0.50'
    """
    recall = f"{c.recall:.2f}" if c.recall is not None else "n/a"
    return (
        f"fork_recall: {recall} (goal >= 0.8; {c.found} of {c.real} real forks, {c.nodes} branching "
        f"nodes, {c.prompts} prompts; {c.called} forks called, {c.called - c.found} of them not real; "
        f"{c.at_answer} real forks at a step that states the answer{'; ' + settings if settings else ''})"
    )


def firmed_line(c: ForkCounts, k: int) -> str:
    """The figure line of the recall after firming up, with what it cost.

    >>> firmed_line(ForkCounts(real=4, found_firmed=3, called_firmed=5, drawn=32, added=16), 8)[:48]
    'fork_recall_firmed: 0.75 (goal >= 0.8; 3 of 4 re'
    """
    recall = f"{c.recall_firmed:.2f}" if c.recall_firmed is not None else "n/a"
    return (
        f"fork_recall_firmed: {recall} (goal >= 0.8; {c.found_firmed} of {c.real} real forks; "
        f"{c.called_firmed} forks called, {c.called_firmed - c.found_firmed} of them not real; firm-up "
        f"drew {k} continuations after each side of the undecided splits: {c.added} samples added to "
        f"the {c.drawn} drawn)"
    )


def node_at(tree, sample: int, step: int):
    """The node of ``tree`` that holds step ``step`` of sample ``sample``."""
    return next(n for n in tree.nodes if sample in n.members and n.depth <= step < n.depth + max(n.steps, 1))


def _real_fork(
    model, tok, trace_a, trace_b, depth: int, k: int, temperature: float, seed: int = 0
) -> tuple[int, int, bool]:
    """Right answers among K resamples after each side's step ``depth``, and whether the two
    shares differ (the Newcombe interval excludes 0). Resamples use the set's temperature: the
    question is whether the sides differ for the distribution the tree was drawn from."""
    from o3viz.analysis.importance.stats import wilson_difference
    from o3viz.clients import LocalBackend, Sampling
    from o3viz.text.answers import answers_equivalent, round_answer

    backend, shares = LocalBackend(model, tok, batch=k), []
    for t in (trace_a, trace_b):
        rnd = t.final
        prefix = rnd.text[: rnd.steps[depth].end]
        sampling = Sampling(max_tokens=RESAMPLE_TOKENS, temperature=temperature, seed=depth + 1000 * seed)
        outs = backend.complete(rnd.rendered_prompt + prefix, k, sampling)
        found = [round_answer(prefix + o, "math") for o in outs]
        shares.append(sum(bool(f and answers_equivalent(f.text, t.task.reference)) for f in found))
    lo, hi = wilson_difference(shares[0], k, shares[1], k, 0.95)
    return shares[0], shares[1], lo > 0 or hi < 0


def _states_answer(trace, depth: int) -> bool:
    """Whether the trace's answer is already written by the end of its step ``depth``."""
    from o3viz.text.answers import round_answer

    rnd = trace.final
    found = round_answer(rnd.text, "math")
    return found is not None and found.end <= rnd.steps[depth].end


def _prompt_forks(
    model, tok, question: str, reference: str, n: int, tokens: int, k: int, temperature: float, firm_k: int,
    seed: int = 0,
):  # fmt: skip
    """One prompt's counts, and its line: N samples, their tree graded against ``reference``, and
    every branching node with two sides of MIN_SIDE samples checked by resampling."""
    from o3viz.samples.draw import draw_local
    from o3viz.samples.request import SampleRequest
    from o3viz.samples.tree import MIN_SIDE, build_tree

    req = SampleRequest(
        prompt=question + RECALL_SUFFIX,
        reference=reference,
        n=n,
        max_new_tokens=tokens,
        temperature=temperature,
        seed=seed,
    )
    traces = draw_local(model, tok, req).traces  # graded against the reference as they are drawn
    tree = build_tree(traces)
    samples = tree.samples
    added = _firm_up(model, tok, traces, tree, tokens, firm_k, temperature, seed)
    after = build_tree(traces + added)
    c, checked = ForkCounts(drawn=len(traces), added=len(added)), []
    for node in tree.nodes:
        sides = [tree.nodes[i] for i in node.children if tree.nodes[i].samples >= MIN_SIDE]
        if len(sides) < 2:
            continue
        # the tree's best and worst side where it could grade two; else the first and the last
        a, b = [tree.nodes[i] for i in node.sides] if node.sides else (sides[0], sides[-1])
        ta, tb = traces[a.members[0]], traces[b.members[0]]
        xa, xb, real = _real_fork(model, tok, ta, tb, a.depth, k, temperature, seed)
        c.nodes, c.real, c.called = c.nodes + 1, c.real + real, c.called + node.fork
        c.found += real and node.fork
        firmed = after.nodes[node_at(after, a.members[0], a.depth).parent].fork
        c.called_firmed, c.found_firmed = c.called_firmed + firmed, c.found_firmed + (real and firmed)
        c.at_answer += real and (_states_answer(ta, a.depth) or _states_answer(tb, b.depth))
        checked.append(
            f"{xa}/{k} vs {xb}/{k}" + (" real" if real else "") + (" called" if node.fork else "")
            + (" called-after-firm-up" if firmed else "") + f" [tree {_side_counts(tree, after, a, b)}]"
        )  # fmt: skip
    right = sum(bool(s.correct) for s in samples)
    print(f"  {question!r} (reference {reference}): {right}/{len(samples)} right; "
          f"{c.nodes} branching nodes, {c.real} real, {c.called} called, {c.found} found, "
          f"{c.found_firmed} after firming up ({c.added} samples added); "
          f"resamples right {', '.join(checked) or '-'}")  # fmt: skip
    return c


def _side_counts(tree, after, a, b) -> str:
    """The tree's right/graded on the two checked sides, drawn and after firming up, and whether
    the firm-up could continue each side (``-``: its samples all end at its first step)."""
    from o3viz.samples.resample import side_point

    def counts(t, side) -> str:
        n = node_at(t, side.members[0], side.depth)
        return f"{n.correct}/{n.graded}"

    grow = "".join("+" if side_point(tree, x.id) else "-" for x in (a, b))
    return f"{counts(tree, a)} vs {counts(tree, b)} -> {counts(after, a)} vs {counts(after, b)} {grow}"


def _firm_up(model, tok, traces, tree, tokens: int, k: int, temperature: float, seed: int = 0) -> list:
    """What ``o3viz sample --firm-up K`` adds to the set: K continuations after each side of every
    undecided split (seeds from 7000 + ``seed``: the check's resamples use the step's depth)."""
    from o3viz.branch.continuation import Continuer
    from o3viz.clients import Sampling
    from o3viz.samples.resample import MAX_FIRM_NODES, firm_up
    from o3viz.samples.sets import SampleSet

    sampling = Sampling(max_tokens=tokens, temperature=temperature, seed=7000 + seed)
    s = SampleSet("recall", traces)
    return firm_up(s, tree, k, Continuer(model=model, tokenizer=tok), sampling, limit=MAX_FIRM_NODES)


def _recall(
    model, tok, prompts, n: int, tokens: int, k: int, temperature: float, firm_k: int, seed: int = 0
) -> None:
    counts = [
        _prompt_forks(model, tok, q, ref, n, tokens, k, temperature, firm_k, seed) for q, ref in prompts
    ]
    print(
        recall_line(pooled(counts), f"n {n}, k {k}, temperature {temperature}, {tokens} tokens, seed {seed}")
    )
    print(firmed_line(pooled(counts), firm_k))


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
        _recall(
            model, tok, prompts, args.fork_n, args.fork_tokens, args.k, args.fork_temperature, args.firm_k,
            args.seed,
        )  # fmt: skip
    print(f"load_after: {_load()}")
    return 0
