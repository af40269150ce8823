"""The one rule for a reply that was cut short: a round stopped at its token limit, or stopped by
hand, holds an unfinished answer, so it is not graded, and says why. Every path applies it: a run
and a local branch (``o3viz.run.solve``), a text continuation or an import that knows its stop
reason (``apply_cut_short``), and every reader of a saved trace (``graded_verdict``, the gradings
of ``o3viz.analysis.provenance``), so a trace saved before the rule reads the same.

>>> from o3viz.trace import Round
>>> cut_short(Round(index=0, info={"stop_reason": "max_new_tokens", "generated_tokens": 64}))
'stopped at the limit (64 tokens)'
>>> cut_short(Round(index=0, info={"stop_reason": "stopped"}))
'stopped by hand'
>>> cut_short(Round(index=0, info={"stop_reason": "eos"})) is None
True
"""

from __future__ import annotations

from o3viz.trace import Round

LIMIT_REASONS = ("max_new_tokens", "length", "max_tokens")  # the loop's, OpenAI's, Inspect's words
HAND_REASONS = ("stopped",)  # the loop's ``should_stop`` answered yes
CUT_OFF = "cut_off"  # an import's text shows it was cut (``cut_off_reason``), though no stop reason says so
_ENDS_A_SENTENCE = tuple(".!?。)]}$*\"'`>")  # a text ending in one of these may have finished
UNGRADED = "unverifiable"  # the round verdict of a reply that was not graded


def limit_line(tokens: int) -> str:
    return f"stopped at the limit ({tokens} tokens)"


def limit_tokens(rnd: Round) -> int | None:
    """The token limit a round stopped at (its generated tokens), else None."""
    if rnd.info.get("stop_reason") not in LIMIT_REASONS:
        return None
    n = rnd.info.get("generated_tokens")
    return n if isinstance(n, int) and not isinstance(n, bool) else len(rnd.tokens)


def cut_short(rnd: Round) -> str | None:
    """Why the round's reply was cut short, in words; None where it ended on its own."""
    n = limit_tokens(rnd)
    if n is not None:
        return limit_line(n)
    if rnd.info.get("stop_reason") in HAND_REASONS:
        return "stopped by hand"
    if rnd.info.get("stop_reason") == CUT_OFF:
        return str(rnd.info.get("cut_off") or "the reply was cut off")
    return None


def cut_off_reason(text: str, marked_answer: bool, generated_tokens: object = None) -> str | None:
    """Why an imported reply with no stated stop reason looks cut off, else None. A reply that marks
    its answer (``\\boxed{}``, ``####``, "The answer is") finished; one that does not is cut off
    when its source counts a power-of-two number of tokens of at least 1,024 (a generation cap:
    32,768) or when its text stops mid-sentence.

    >>> cut_off_reason("So, 121.\\n\\nAlternatively, group 2 * ((3 * 4) * 5", False)
    'the reply was cut off: it ends mid-sentence with no marked answer'
    >>> cut_off_reason("thinking...", False, 32768)
    'the reply was cut off: it stops at 32768 tokens, a generation cap, with no marked answer'
    >>> cut_off_reason("so the answer is \\boxed{4", True) is None
    True
    """
    if marked_answer:
        return None
    n = generated_tokens
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1024 and n & (n - 1) == 0:
        return f"the reply was cut off: it stops at {n} tokens, a generation cap, with no marked answer"
    tail = text.rstrip()
    last = tail[tail.rfind("\n") + 1 :][-2000:]  # the last line, bounded
    open_bracket = last.count("(") > last.count(")") or last.count("[") > last.count("]")
    if tail and (open_bracket or not (tail.endswith(_ENDS_A_SENTENCE) or tail[-1].isdigit())):
        return "the reply was cut off: it ends mid-sentence with no marked answer"
    return None


def graded_verdict(rnd: Round) -> str | None:
    """The round's verdict under the rule: ``unverifiable`` for a cut-short reply."""
    return UNGRADED if rnd.verdict is not None and cut_short(rnd) else rnd.verdict


def apply_cut_short(rnd: Round) -> str | None:
    """Apply the rule to a judged round: its answer check becomes ``unverifiable`` with the reason,
    its verdict ``unverifiable`` and ``info["not_graded"]`` the reason. Returns the reason (None:
    the reply ended on its own and nothing changed)."""
    why = cut_short(rnd)
    if why is None:
        return None
    for c in rnd.checks:
        if c.kind == "answer" and c.verdict in ("correct", "wrong"):
            c.verdict, c.message = UNGRADED, f"not graded: {why}"
    if rnd.verdict is not None:
        rnd.verdict = UNGRADED
    rnd.info["not_graded"] = why
    return why
