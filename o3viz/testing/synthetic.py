"""Synthetic traces for tests and the UI benchmark: realistic shapes (tokens with logprobs and
alternatives, steps, decision points, branches, checks, rounds, attention with DAA, compression),
made from a seed. They never stand in for a real run: provenance says ``synthetic``.

>>> t = make_trace(12, seed=1)
>>> len(t.steps), t.provenance.model_id
(12, 'synthetic')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from o3viz.run.allocation import step_allocation
from o3viz.testing.synthetic_compression import synthetic_compression
from o3viz.trace import (
    Alt,
    AttentionRecord,
    Branch,
    Check,
    DAARecord,
    DecisionPoint,
    Provenance,
    Round,
    Segment,
    Step,
    Task,
    Token,
    Trace,
)

HOSTILE = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "$\\frac{1}{0}$ **bold** [link](javascript:alert(1))",
)
_PIECE = re.compile(r"\s*\S+")
_PROMPT = (
    "A farmer has {a} hens. Each hen lays {b} eggs a day. She sells {c} eggs a day "
    "at $2 each. How much does she earn in a week?"
)


@dataclass
class SyntheticConfig:
    """Shape of a synthetic trace."""

    steps: int = 20  # steps in the final round
    rounds: int = 1
    layers: tuple[int, ...] = (0, 5)  # layers kept per head (only for small traces)
    num_layers: int = 6
    num_heads: int = 4
    daa_mode: str = "allocate"
    compression: bool = True
    hostile: bool = False  # put script/img/markdown injection into tokens, steps and checks
    max_per_head_cells: int = 4_000_000  # skip per-head rows above this many G*C*layers*H cells


def _step_sentence(
    i: int, rng: np.random.Generator, hostile: bool
) -> tuple[str, tuple[int, int, int] | None]:
    """A reasoning sentence; arithmetic ones return (a, b, stated) for the claim check."""
    if hostile and i % 3 == 0:
        return f"Note {HOSTILE[(i // 3) % len(HOSTILE)]} here.", None
    a, b = int(rng.integers(2, 60)), int(rng.integers(2, 12))
    kind = i % 4
    if kind == 3:
        return rng.choice(
            ["Wait, let me check that again.", "So far so good.", "Next, the weekly total."]
        ), None
    stated = a * b if rng.random() > 0.15 else a * b + 1  # some wrong claims, as a small model makes
    return f"Then {a} * {b} = {stated}.", (a, b, stated)


def _tokens(text: str, rng: np.random.Generator, hostile: bool) -> list[Token]:
    toks = []
    for k, m in enumerate(_PIECE.finditer(text)):
        ent = float(rng.gamma(1.2, 0.6))
        p = float(np.clip(math.exp(-ent * 0.6), 0.05, 0.999))
        alt_text = HOSTILE[k % len(HOSTILE)] if hostile and k % 5 == 0 else f" alt{k % 7}"
        top = [Alt(k, m.group(), p), Alt(k + 1, alt_text, (1 - p) * 0.6), Alt(k + 2, " so", (1 - p) * 0.2)]
        toks.append(Token(k, m.group(), m.start(), m.end(), math.log(p), ent, top))
    return toks


def _round_text(cfg: SyntheticConfig, n_steps: int, rng: np.random.Generator, final: bool):
    pieces, claims = [], []
    for i in range(n_steps):
        sent, claim = _step_sentence(i, rng, cfg.hostile)
        if i == n_steps - 1:
            sent, claim = "So the answer is 42.", None
        pieces.append(sent)
        claims.append(claim)
    return pieces, claims


def _make_steps(text: str, pieces: list[str], toks: list[Token]) -> list[Step]:
    steps, pos, t = [], 0, 0
    kinds = {"Wait, let me check that again.": "self_check"}
    for i, sent in enumerate(pieces):
        start = text.index(sent, pos)
        end = start + len(sent)
        t0 = t
        while t < len(toks) and toks[t].start < end:
            t += 1
        kind = "final" if i == len(pieces) - 1 else kinds.get(sent, "step")
        parent = i - 2 if kind == "self_check" and i >= 2 else None
        steps.append(
            Step(
                i,
                sent,
                start,
                end,
                t0,
                t,
                kind,
                "active_computation" if "=" in sent else "plan_generation",
                parent,
            )
        )
        pos = end
    return steps


def _checks(steps: list[Step], claims: list, cfg: SyntheticConfig) -> list[Check]:
    out = []
    for s, claim in zip(steps, claims, strict=True):
        if claim is None:
            continue
        a, b, stated = claim
        expr = f"{a} * {b}"
        ok = stated == a * b
        span_start = s.start + s.text.index(expr)
        span = [span_start, span_start + len(f"{expr} = {stated}")]
        msg = "" if ok else f"{expr} is {a * b}, not {stated}"
        if cfg.hostile and not ok:
            msg += " " + HOSTILE[0]
        out.append(
            Check(
                "claim",
                f"claim {len(out)}",
                "correct" if ok else "wrong",
                msg,
                "arithmetic",
                s.index,
                span,
                expr,
                str(stated),
                str(a * b),
            )
        )
    return out


def _decisions(
    toks: list[Token], rng: np.random.Generator, explore: int
) -> tuple[list[DecisionPoint], list[Branch]]:
    ents = np.array([t.entropy or 0.0 for t in toks])
    idx = np.flatnonzero(ents > np.quantile(ents, 0.93)) if len(toks) else []
    dps, branches = [], []
    for j, ti in enumerate(idx):
        tok = toks[int(ti)]
        alts = tok.top[:3]
        margin = float(alts[0].prob - alts[1].prob)
        dp = DecisionPoint(int(ti), float(tok.entropy), margin, list(alts))
        if j < explore:
            b = Branch(
                len(branches),
                int(ti),
                alts[1],
                f"{alts[1].text} ... a different path.",
                float(rng.normal(-1.2, 0.2)),
                "wrong" if j % 2 else "correct",
                str(40 + j),
            )
            branches.append(b)
            dp.branch_ids.append(b.id)
        dps.append(dp)
    return dps, branches


def _prompt(rng: np.random.Generator, hostile: bool) -> tuple[str, list[Token], list[Segment]]:
    q = _PROMPT.format(a=int(rng.integers(5, 30)), b=int(rng.integers(1, 4)), c=int(rng.integers(3, 20)))
    if hostile:
        q += " " + " ".join(HOSTILE)
    rendered = (
        "<|im_start|>system\nYou are a careful solver.<|im_end|>\n<|im_start|>user\n" + q + "<|im_end|>\n"
    )
    toks = [Token(k, m.group(), m.start(), m.end()) for k, m in enumerate(_PIECE.finditer(rendered))]
    cut = [0, 3, len(toks) // 2, len(toks)]
    segs = [
        Segment(i, toks[a].start, toks[b - 1].end, a, b, ["system", "question", "question end"][i])
        for i, (a, b) in enumerate(zip(cut, cut[1:], strict=False))
    ]
    return rendered, toks, segs


def _attention_rows(P: int, G: int, rng: np.random.Generator, chunk: int = 512) -> np.ndarray:
    """(G, P+G) float16 causal rows: a sink on position 0, a recency bump, and noise; rows sum to 1."""
    C = P + G
    out = np.zeros((G, C), dtype=np.float16)
    cols = np.arange(C, dtype=np.float32)
    for g0 in range(0, G, chunk):
        g = np.arange(g0, min(G, g0 + chunk))
        q = (P + g)[:, None].astype(np.float32)  # query position
        logits = rng.standard_normal((len(g), C), dtype=np.float32) * 0.8
        logits += 2.5 * np.exp(-np.maximum(q - cols, 0.0) / 6.0)  # recent tokens
        logits[:, 0] += 4.0  # attention sink
        logits[:, :P] += 0.7  # the question stays relevant
        logits[cols[None, :] > q] = -np.inf
        w = np.exp(logits - logits.max(axis=1, keepdims=True))
        out[g] = (w / w.sum(axis=1, keepdims=True)).astype(np.float16)
    return out


def _attention(cfg: SyntheticConfig, P: int, rnd: Round, rng: np.random.Generator) -> AttentionRecord:
    G, L, H = len(rnd.tokens), cfg.num_layers, cfg.num_heads
    mean = _attention_rows(P, G, rng)
    C = P + G
    small = G * C * len(cfg.layers) * H <= cfg.max_per_head_cells
    per_head = None
    if small:
        noise = rng.gamma(2.0, 0.5, size=(G, len(cfg.layers), H, C)).astype(np.float32)
        ph = mean[:, None, None, :].astype(np.float32) * noise
        per_head = (ph / np.maximum(ph.sum(axis=-1, keepdims=True), 1e-9)).astype(np.float16)
    prompt_share = mean[:, :P].astype(np.float32).sum(axis=1)  # (G,)
    layer_head = np.clip(prompt_share[:, None, None] * rng.gamma(4.0, 0.25, (1, L, H)), 0, 1).astype(
        np.float16
    )
    alloc, labels = step_allocation(mean, P, rnd.segments, rnd.steps)
    alloc = alloc.astype(np.float16)
    daa = None
    if cfg.daa_mode != "off":
        rel = rng.uniform(0.1, 0.9, C).astype(np.float16)
        before = None
        if cfg.daa_mode == "allocate" and small:
            before = _attention_rows(P, G, np.random.default_rng(int(rng.integers(1 << 30))))
        daa = DAARecord(
            cfg.daa_mode,
            0.6,
            1.0 if cfg.daa_mode == "allocate" else 0.0,
            "math",
            P - 2,
            rel,
            list(range(3, min(P, 12))),
            before,
        )
    return AttentionRecord(
        L,
        H,
        P,
        mean,
        list(cfg.layers) if small else [],
        per_head,
        layer_head,
        None,
        alloc,
        labels,
        daa,
        {"synthetic": True},
    )


def _round(cfg: SyntheticConfig, r: int, n_steps: int, prompt: tuple, rng: np.random.Generator) -> Round:
    rendered, ptoks, segs = prompt
    pieces, claims = _round_text(cfg, n_steps, rng, final=True)
    text = " ".join(pieces)
    toks = _tokens(text, rng, cfg.hostile)
    steps = _make_steps(text, pieces, toks)
    checks = _checks(steps, claims, cfg)
    dps, branches = _decisions(toks, rng, explore=2)
    wrong = any(c.verdict == "wrong" for c in checks)
    last = r == cfg.rounds - 1
    checks.append(
        Check(
            "answer",
            "final answer",
            "correct" if last else "wrong",
            "matches the reference" if last else "differs from the reference",
            "answer_match",
            steps[-1].index,
            None,
            None,
            "42",
            "42",
        )
    )
    rnd = Round(
        r,
        "question" if r == 0 else "Revise: a claim was wrong.",
        rendered,
        ptoks,
        segs,
        text,
        toks,
        steps,
        dps,
        branches,
        None,
        checks,
        "42",
        "pass" if last else "fail",
        float(np.exp(np.mean([t.logprob for t in toks[-3:]]))),
        None if last else "revise",
        None if last else "claim check failed: " + ("a wrong product" if wrong else "the answer differs"),
        {"synthetic": True},
    )
    rnd.attention = _attention(cfg, len(ptoks), rnd, rng)
    return rnd


def make_trace(
    steps: int = 20, *, seed: int = 0, config: SyntheticConfig | None = None, **overrides
) -> Trace:
    """A synthetic trace with ``steps`` steps in its final round (earlier rounds are shorter)."""
    cfg = config or SyntheticConfig(steps=steps)
    cfg.steps = steps
    for k, v in overrides.items():
        setattr(cfg, k, v)
    rng = np.random.default_rng(seed)
    prompt = _prompt(rng, cfg.hostile)
    rounds = [
        _round(cfg, r, max(3, int(steps * (0.7 + 0.3 * (r + 1) / cfg.rounds))), prompt, rng)
        for r in range(cfg.rounds)
    ]
    rounds[-1] = (
        _round(cfg, cfg.rounds - 1, steps, prompt, rng) if len(rounds[-1].steps) != steps else rounds[-1]
    )
    question = rounds[0].rendered_prompt.split("user\n", 1)[1].split("<|im_end|>")[0]
    comp = (
        synthetic_compression(len(rounds[0].prompt_tokens), rounds[0].segments, len(rounds[-1].tokens), rng)
        if cfg.compression
        else None
    )
    prov = Provenance(
        model_id="synthetic",
        revision=f"seed {seed}",
        dtype="float16",
        attn_implementation="synthetic",
        device="cpu",
        settings={"synthetic": True, "steps": steps, "daa": cfg.daa_mode},
        seed=seed,
        created_at="2026-01-01T00:00:00Z",
        source={"format": "synthetic"},
    )
    return Trace(
        Task(question, "math", "gsm8k", f"synthetic-{steps}-{seed}", "42"),
        rounds,
        prov,
        comp,
        {"synthetic": True},
    )
