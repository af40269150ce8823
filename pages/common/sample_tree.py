"""The Samples page's panels beside the tree (``pages/samples.py``): the top forks, each with both
sides' step and a link that opens one sample of each side in Compare at the fork; the selected
node's samples with Inspect links and "Resample from here"; and the form that samples a new set.
Thin: the tree, its forks and the jobs come from ``o3viz.app.sampling``."""

from __future__ import annotations

import streamlit as st

from o3viz.app import MAX_SAMPLES, SampleRequest
from o3viz.figures import clip_label, counted, escape_markdown, readable

NO_REFERENCE = (
    "No reference answer, so nothing is graded and no fork can be tested: the tree shows where the "
    "samples split and the answers each branch reaches."
)
SOURCES = {"task": "A GSM8K task", "prompt": "A prompt"}
NO_FORK = (
    "No fork: no two branches of at least 2 graded samples differ in reaching the reference beyond "
    "chance (95%). The smallest split that can show is 2 right against 2 wrong below one node; a "
    "partial split (60% against 30%) needs about 30 samples a side."
)


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def interval(iv) -> str:
    return "" if not iv else f"95% {iv[0]:.0%}–{iv[1]:.0%}"


def share_md(node) -> str:
    """A node's reference share for people: green when most reach it, red when few, with n."""
    if node.reference_share is None:
        return ":gray[ungraded]"
    colour = "green" if node.reference_share >= 0.5 else "red"
    return f":{colour}[**{pct(node.reference_share)}** of {node.graded}] ({interval(node.interval)})"


def quote(text: str, n: int = 110) -> str:
    return "“" + escape_markdown(clip_label(readable(text), n)) + "”"


def fork_where(tree, f) -> str:
    if f.parent is None:
        return "at the first step"
    return f"after step {f.depth + f.steps - 1} {quote(f.last, 70)}"


def compare_params(s, tree, f) -> dict:
    """Compare's query for fork ``f``: a sample from its best side as A, one from its worst as B, at
    the first step after the fork (the same index in both: their steps before it are equivalent)."""
    best, worst = (tree.nodes[c] for c in f.sides)
    return {"trace": s.keys[best.members[0]], "b": s.keys[worst.members[0]], "at": str(best.depth)}


def forks_panel(s, tree, top: int, select) -> None:
    """The top forks, largest difference first: where, both sides' step and share, Compare."""
    if not tree.forks:
        st.caption(NO_FORK if tree.nodes[0].graded else NO_REFERENCE)
    for rank, fid in enumerate(tree.forks[:top], 1):
        f = tree.nodes[fid]
        lo, hi = f.gap_interval
        ent = f" · entropy {f.entropy:.2f} nats" if f.entropy is not None else ""
        st.markdown(
            f"**Fork {rank}** {fork_where(tree, f)}, {f.samples} samples: reaching the reference "
            f"differs by **{pct(f.gap)}** (95% {lo:.0%} to {hi:.0%}){ent}"
        )
        for mark, cid in zip(("▲", "▼"), f.sides, strict=True):
            c = tree.nodes[cid]
            st.markdown(f"{mark} {share_md(c)} {quote(c.text)}")
        c1, c2 = st.columns(2)
        c1.page_link(
            "pages/compare.py",
            label="Compare the two sides",
            icon=":material/compare_arrows:",
            query_params=compare_params(s, tree, f),
        )
        c2.button("Select this fork", key=f"smp_pick_fork_{fid}", on_click=select, args=(fid,))


def sample_rows(s, tree, node) -> list[dict]:
    rows = []
    for i in node.members:
        smp, t = tree.samples[i], s.traces[i]
        ok = {True: "✓ right", False: "✗ wrong", None: "—"}[smp.correct]
        rows.append({
            "sample": f"{smp.name} · {clip_label(t.provenance.model_id or '', 28)}",
            "answer": clip_label(smp.answer or "—", 24), "correct": ok, "steps": len(smp.steps),
            "inspect": f"/inspect?trace={s.keys[i]}",
        })  # fmt: skip
    return rows


def node_panel(s, tree, node, clear, resample) -> None:
    """The selected node: its step(s), samples and answers, for a fork the link to Compare, then
    ``resample()`` (the page's "Resample from here") and its samples listed."""
    head = "the question" if node.parent is None else f"step {node.depth}"
    if node.steps > 1:
        head = f"{node.steps} shared steps ({node.depth}–{node.depth + node.steps - 1})"
    c1, c2 = st.columns([3, 1], vertical_alignment="center")
    c1.markdown(f"**Node {node.id}** · {head}")
    c2.button("Forks", key="smp_clear_node", on_click=clear, icon=":material/arrow_back:")
    if node.parent is not None:
        st.markdown(quote(node.text, 160) + (f" … {quote(node.last, 100)}" if node.steps > 1 else ""))
    answers = ", ".join(
        f"{escape_markdown(clip_label(a, 20))} × {c}" for a, c in list(node.answers.items())[:6]
    )
    st.markdown(
        f"{counted(node.samples, 'sample')} · reach the reference {share_md(node)} · answers {answers}"
    )
    if node.fork:
        st.page_link(
            "pages/compare.py",
            label="A fork: compare one sample of each side",
            icon=":material/compare_arrows:",
            query_params=compare_params(s, tree, node),
        )
    resample()
    st.dataframe(
        sample_rows(s, tree, node),
        hide_index=True,
        height=min(240, 38 + 35 * node.samples),
        column_config={
            "sample": st.column_config.TextColumn(width=150),
            "answer": st.column_config.TextColumn(width=60),
            "correct": st.column_config.TextColumn(width=70),
            "steps": st.column_config.NumberColumn(width=45),
            "inspect": st.column_config.LinkColumn("open", display_text="Inspect", width=65),
        },
        width="stretch",
    )


def sample_request(key: str = "smp") -> tuple[SampleRequest, str | None]:
    """The new-set form: a GSM8K task (graded by its reference) or a free prompt, N, temperature,
    new tokens and an optional name; returns the request and a problem with it (or None)."""
    c1, c2, c3, c4 = st.columns([1.3, 1, 1, 1])
    src = c1.segmented_control(
        "Ask", list(SOURCES), format_func=SOURCES.get, default="task", key=f"{key}_src"
    )
    d = SampleRequest()  # the command line's defaults too: one request, one set of defaults
    n = c2.number_input("Samples N", 2, MAX_SAMPLES, d.n, key=f"{key}_n")
    temp = c3.number_input("Temperature", 0.05, 2.0, d.temperature, 0.05, key=f"{key}_temp")
    new = c4.number_input("New tokens each", 8, 2048, d.max_new_tokens, 8, key=f"{key}_new")
    d1, d2 = st.columns([3, 1.3])
    reference = None
    if src == "prompt":
        p1, p2 = d1.columns([3, 1])
        prompt = p1.text_input("Prompt", "What is 17 * 23? Think step by step.", key=f"{key}_prompt")
        reference = (
            p2.text_input(
                "Reference answer",
                "391",
                key=f"{key}_ref",
                help="Grades the samples: without it the tree can't say which way leads to the right answer.",
            ).strip()
            or None
        )
        task = None
    else:
        task, prompt = (
            f"gsm8k:{int(d1.number_input('GSM8K task number', 0, 1318, 3, key=f'{key}_task'))}",
            None,
        )
    name = d2.text_input("Set name (optional)", "", key=f"{key}_name").strip() or None
    req = SampleRequest(
        prompt=prompt, task_id=task, reference=reference, n=int(n), temperature=float(temp),
        max_new_tokens=int(new), set_name=name,
    )  # fmt: skip
    try:
        req.validate()
    except Exception as exc:  # a UsageError: one line, next to the disabled button
        return req, str(exc)
    return req, None


def cli_line(req: SampleRequest) -> str:
    what = f"--task {req.task_id}" if req.task_id else f'--prompt "{req.prompt}"'
    if req.reference:
        what += f' --reference "{req.reference}"'
    name = f" --set {req.set_name}" if req.set_name else ""
    return (
        f"o3viz sample {what} --n {req.n} --temperature {req.temperature:g} "
        f"--max-new-tokens {req.max_new_tokens}{name}"
    )
