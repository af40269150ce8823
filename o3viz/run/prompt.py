"""The prompt side of a capture: rendering through the chat template, prompt tokens with char
offsets into the rendered prompt, the question's token range, and the prompt segments.

Segments partition the prompt tokens: the user's question split into steps with
``o3viz.text.spans.split_spans`` ("question 0", "question 1", ...), plus the chat-template / system
tokens before the question ("template") and after it ("template (end)", e.g. the assistant
header), then a branch's reply prefix ("reply prefix"). A ``Segment`` is one contiguous range, so
the template text on the two sides of the question makes two segments; either is left out when empty (no chat template).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from o3viz.errors import UsageError
from o3viz.text.spans import split_spans, token_ranges
from o3viz.trace.parts import Segment, Token

if TYPE_CHECKING:
    from o3viz.trace import Trace

# The prompt of the Thought Anchors paper: a rollout of a trace with no rendered prompt and no
# tokenizer continues from it (resampling, branching, the answer probes, sample sets).
PAPER_PROMPT = (
    "Solve this math problem step by step. You MUST put your final answer in \\boxed{{}}. "
    "Problem: {question} Solution: \n<think>\n"
)


@dataclass
class PromptLayout:
    """A rendered prompt, tokenized, with the question located in it."""

    prompt: str
    rendered: str
    ids: list[int]
    offsets: list[tuple[int, int]]  # [start, end) into ``rendered`` per token, monotone
    question_chars: tuple[int, int]  # the user's prompt in ``rendered``
    question_tokens: tuple[int, int]  # [first, last+1) tokens overlapping it
    segments: list[Segment]

    @property
    def tokens(self) -> list[Token]:
        return [Token(i, self.rendered[s:e], s, e) for i, (s, e) in zip(self.ids, self.offsets, strict=True)]

    @property
    def pieces(self) -> list[str]:
        return [self.rendered[s:e] for s, e in self.offsets]


def render_chat(tokenizer, prompt: str) -> tuple[str, bool]:
    """(text the model sees, whether a chat template was applied)."""
    if not getattr(tokenizer, "chat_template", None):
        return prompt, False
    out = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
    )
    if not isinstance(out, str):  # some versions return a BatchEncoding or ids even so
        ids = out["input_ids"] if hasattr(out, "keys") else out
        out = tokenizer.decode(ids)
    return out, True


def tokenize_with_offsets(tokenizer, text: str, add_special: bool) -> tuple[list[int], list[tuple[int, int]]]:
    """Token ids and monotone [start, end) char offsets; falls back to cumulative decoding when the
    tokenizer has no offsets mapping (slow tokenizers)."""
    try:
        enc = tokenizer(text, add_special_tokens=add_special, return_offsets_mapping=True)
        ids, offsets = list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
    except (NotImplementedError, ValueError, TypeError):
        ids = list(tokenizer(text, add_special_tokens=add_special)["input_ids"])
        offsets = cumulative_offsets(tokenizer, ids, text, skip_special=False)
    return ids, monotone(offsets, len(text))


def cumulative_offsets(tokenizer, ids: list[int], text: str, skip_special: bool) -> list[tuple[int, int]]:
    """Offsets from decoding ``ids[:i+1]`` for each i (lengths clipped to ``text``)."""
    out, prev = [], 0
    for i in range(len(ids)):
        n = len(tokenizer.decode(ids[: i + 1], skip_special_tokens=skip_special))
        end = min(max(prev, n), len(text))
        out.append((prev, end))
        prev = end
    return out


def monotone(offsets: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """Clip offsets into [0, n] and make them non-decreasing (special tokens report (0, 0))."""
    out, prev = [], 0
    for s, e in offsets:
        s = min(max(s, prev), n)
        e = min(max(e, s), n)
        out.append((s, e))
        prev = e
    return out


def locate_question(rendered: str, prompt: str) -> tuple[int, int]:
    """Char span of the user's prompt inside the rendered prompt (templates may strip it)."""
    for needle in (prompt, prompt.strip()):
        if needle and (i := rendered.rfind(needle)) >= 0:
            return i, i + len(needle)
    return 0, len(rendered)


def build_segments(
    rendered: str, offsets: list[tuple[int, int]], q_chars: tuple[int, int], q_tokens: tuple[int, int]
) -> list[Segment]:
    """Segments that partition tokens [0, P): template, question parts, template (end)."""
    qs, qe = q_chars
    spans = [(qs + s, qs + e) for s, e in split_spans(rendered[qs:qe])] or [(qs, qe)]
    starts, chars = [], []
    for (s, _), (ts, _) in zip(spans, token_ranges(spans, offsets), strict=True):
        ts = max(ts, q_tokens[0])
        if ts < q_tokens[1] and (not starts or ts > starts[-1]):
            starts.append(ts)
            chars.append(s)
    if starts:
        starts[0], chars[0] = q_tokens[0], qs
    bounds = [(0, q_tokens[0], 0, qs, "template")]
    for i, (ts, cs) in enumerate(zip(starts, chars, strict=True)):
        te = starts[i + 1] if i + 1 < len(starts) else q_tokens[1]
        ce = chars[i + 1] if i + 1 < len(chars) else qe
        bounds.append((ts, te, cs, ce, f"question {i}"))
    bounds.append((q_tokens[1], len(offsets), qe, len(rendered), "template (end)"))
    segs = [b for b in bounds if b[1] > b[0]]
    return [Segment(i, cs, ce, ts, te, label) for i, (ts, te, cs, ce, label) in enumerate(segs)]


def layout_prompt(tokenizer, prompt: str, prefix: str = "") -> PromptLayout:
    """Render, tokenize and segment ``prompt`` for generation; ``prefix`` (a branch's reply so
    far) follows the rendered prompt as the last segment, "reply prefix"."""
    rendered, chat = render_chat(tokenizer, prompt)
    head = len(rendered)
    rendered += prefix
    ids, offsets = tokenize_with_offsets(tokenizer, rendered, add_special=not chat)
    if prefix and parses_control_tokens(tokenizer, prefix):
        ids, offsets = _literal_prefix(tokenizer, rendered, head, add_special=not chat)
    q_chars = locate_question(rendered, prompt)
    first, last = token_ranges([q_chars], offsets)[0]
    q_tokens = (first, max(first + 1, last)) if offsets else (0, 0)
    q_tokens = (min(q_tokens[0], len(ids)), min(q_tokens[1], len(ids)))
    segs = build_segments(rendered, offsets, q_chars, q_tokens)
    if prefix:
        segs = split_off_prefix(segs, offsets, head)
    return PromptLayout(prompt, rendered, ids, offsets, q_chars, q_tokens, segs)


def parses_control_tokens(tokenizer, text: str) -> bool:
    """Whether ``text`` (a branch's reply prefix: steps from an untrusted file, an edit) holds a
    control token's spelling (``<|im_end|>``) that tokenizing would turn into the token itself."""
    plain = tokenizer(text, add_special_tokens=False)["input_ids"]
    try:
        literal = tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    except TypeError:  # a tokenizer without the option: look for the spellings themselves
        return any(t and t in text for t in getattr(tokenizer, "all_special_tokens", []))
    return list(plain) != list(literal)


def _literal_prefix(tokenizer, rendered: str, head: int, add_special: bool):
    """The template (``rendered[:head]``) tokenized as usual, the reply prefix after it with
    special-token parsing off, so its text can never open a turn or end one."""
    ids, offsets = tokenize_with_offsets(tokenizer, rendered[:head], add_special)
    try:
        enc = tokenizer(
            rendered[head:], add_special_tokens=False, split_special_tokens=True, return_offsets_mapping=True
        )
    except TypeError:
        raise UsageError("the steps or the edit hold a chat-template control token; remove it") from None
    ids += list(enc["input_ids"])
    offsets += [(a + head, b + head) for a, b in enc["offset_mapping"]]
    return ids, monotone(offsets, len(rendered))


def split_off_prefix(segs: list[Segment], offsets: list[tuple[int, int]], head: int) -> list[Segment]:
    """The last segment cut where the reply prefix starts (char ``head``; a token that straddles
    the boundary belongs to the prefix): the rest of it, then "reply prefix"."""
    first = next((i for i, (_, e) in enumerate(offsets) if e > head), len(offsets))
    last = segs[-1]
    if first >= last.token_end or first < last.token_start:
        return segs
    keep = segs[:-1]
    if first > last.token_start:
        keep.append(Segment(last.index, last.start, offsets[first][0], last.token_start, first, last.label))
    start = offsets[first][0]
    keep.append(Segment(len(keep), start, last.end, first, last.token_end, "reply prefix"))
    return keep


# chat-template control tokens as endpoints' tokenizers spell them (ChatML, Llama 3, DeepSeek)
_CONTROL = re.compile(r"<\|[A-Za-z0-9_.:-]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?INST\]")


def refuse_control_tokens(prefix: str, where: str = "the steps before the fork or the edit") -> None:
    """An endpoint tokenizes the text it is sent with its own template's tokens parsed, so a step
    or an edit that spells one (``<|im_end|>``) would end the turn there: refused in one line.
    (Locally the prefix is tokenized with special-token parsing off instead.)

    >>> refuse_control_tokens("2 + 2 = 4")
    >>> refuse_control_tokens("done<|im_end|>")
    Traceback (most recent call last):
    ...
    o3viz.errors.UsageError: the steps before the fork or the edit hold '<|im_end|>', a chat-template control token; a model would read it as one
    """
    found = _CONTROL.search(prefix)
    if found:
        raise UsageError(
            f"{where} hold {found.group()[:48]!r}, a chat-template control token; "
            "a model would read it as one"
        )


def rollout_prompt(trace: Trace, tokenizer: Any = None, round_index: int = -1) -> str:
    """The text a rollout continues from, before the reasoning: the round's own rendered prompt
    (a capture), else the question in ``tokenizer``'s chat template, else the paper's prompt."""
    rnd = trace.rounds[round_index]
    if rnd.rendered_prompt:
        return rnd.rendered_prompt
    if tokenizer is not None:
        return layout_prompt(tokenizer, trace.task.question or "").rendered
    return PAPER_PROMPT.format(question=trace.task.question or "")
