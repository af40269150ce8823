"""The fork-recall part of ``python -m benchmarks samples`` (see that module's docstring): the
recall prompts, the resampling check of each branching node, the firm-up, and the counts' lines."""

from __future__ import annotations

from dataclasses import dataclass, fields

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
    """The tree's right/graded on the two checked sides, drawn and after firming up."""

    def counts(t, side) -> str:
        n = node_at(t, side.members[0], side.depth)
        return f"{n.correct}/{n.graded}"

    return f"{counts(tree, a)} vs {counts(tree, b)} -> {counts(after, a)} vs {counts(after, b)}"


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


def measure_recall(
    model, tok, prompts, n: int, tokens: int, k: int, temperature: float, firm_k: int, seed: int = 0
) -> None:
    counts = [
        _prompt_forks(model, tok, q, ref, n, tokens, k, temperature, firm_k, seed) for q, ref in prompts
    ]
    print(
        recall_line(pooled(counts), f"n {n}, k {k}, temperature {temperature}, {tokens} tokens, seed {seed}")
    )
    print(firmed_line(pooled(counts), firm_k))
