"""The marked spans of DAA's ``steer`` mode, found in the prompt: a text (with its occurrence) or
a named segment (``instruction``, ``question``, ``sentence N``) becomes a ``Segment`` of the
rendered prompt with its key-token range. One line for a span that is missing or ambiguous."""

from __future__ import annotations

import re
from collections.abc import Sequence

from o3viz.errors import UsageError
from o3viz.run.config import SteerSpan
from o3viz.run.prompt import PromptLayout
from o3viz.text.spans import split_spans, token_ranges
from o3viz.trace.parts import Segment

# A sentence is an instruction when it is not a question and tells the model how to answer.
_INSTRUCTION = re.compile(
    r"\b(answer|respond|reply|write|output|return|format|json|use|only|must|do not|don't|never|always)\b",
    re.I,
)


def prompt_sentences(prompt: str) -> list[str]:
    """The prompt's sentences, as ``sentence N`` numbers them (the Run page's list).

    >>> prompt_sentences("Answer with one word. What is 2+3?")
    ['Answer with one word.', 'What is 2+3?']
    """
    return [prompt[s:e] for s, e in split_spans(prompt)]


def _occurrences(text: str, needle: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), text)]


def _text_span(question: str, span: SteerSpan) -> tuple[int, int]:
    found = _occurrences(question, span.text)
    short = span.text if len(span.text) <= 40 else span.text[:40] + "…"
    if not found:
        raise UsageError(f"the steering span {short!r} does not occur in the prompt")
    if span.occurrence is None and len(found) > 1:
        raise UsageError(
            f"the steering span {short!r} occurs {len(found)} times in the prompt; "
            f"pick one with --steer-occurrence N (1..{len(found)})"
        )
    k = (span.occurrence or 1) - 1
    if k >= len(found):
        raise UsageError(f"the steering span {short!r} occurs {len(found)} times, not {span.occurrence}")
    return found[k], found[k] + len(span.text)


def _segment_spans(question: str, name: str) -> list[tuple[int, int]]:
    sentences = split_spans(question) or [(0, len(question))]
    texts = [question[s:e].strip() for s, e in sentences]
    if name == "question":
        asks = [i for i, t in enumerate(texts) if t.endswith("?")]
        return [sentences[asks[-1] if asks else -1]]
    if name == "instruction":
        found = [sentences[i] for i, t in enumerate(texts) if not t.endswith("?") and _INSTRUCTION.search(t)]
        if not found:
            raise UsageError("no sentence of the prompt reads as an instruction; mark it by its text")
        return found
    m = re.fullmatch(r"sentence[ :]?(\d+)", name)
    if m is None:
        raise UsageError(f"segment must be instruction, question or sentence N, not {name!r}")
    if int(m.group(1)) >= len(sentences):
        raise UsageError(f"the prompt has sentences 0..{len(sentences) - 1}, not {m.group(1)}")
    return [sentences[int(m.group(1))]]


def resolve_spans(layout: PromptLayout, spans: Sequence[SteerSpan]) -> list[Segment]:
    """The marked spans as ``Segment``s of the rendered prompt: chars and key-token ranges. Texts
    are found in the user's prompt only (never in the chat template); one line for a span that
    is missing or ambiguous."""
    qs, qe = layout.question_chars
    question = layout.rendered[qs:qe]
    out: list[Segment] = []
    for span in spans:
        if span.text is not None:
            chars, label = [_text_span(question, span)], f"text: {span.text}"
        else:
            chars, label = _segment_spans(question, span.segment), f"segment: {span.segment}"
        for s, e in chars:
            ts, te = token_ranges([(qs + s, qs + e)], layout.offsets)[0]
            out.append(Segment(len(out), qs + s, qs + e, ts, te, label))
    return out


def check_spans(prompt: str, spans: Sequence[SteerSpan]) -> None:
    """One-line ``UsageError`` for a span ``prompt`` does not hold once (or at its occurrence),
    before any model is loaded (the CLI, the Run page)."""
    for span in spans:
        span.validate()
        if span.text is not None:
            _text_span(prompt, span)
        else:
            _segment_spans(prompt, span.segment)


def pin_occurrences(prompt: str, spans: Sequence[SteerSpan]) -> list[SteerSpan]:
    """``spans`` with each text's occurrence fixed to the one it names in ``prompt``: the verify
    loop's revision prompts start with the task's prompt and may repeat a span in the previous
    attempt, so later rounds must steer the same place as the first."""
    out = []
    for span in spans:
        if span.text is not None and span.occurrence is None:
            _text_span(prompt, span)  # one line now if it is missing or ambiguous
            span = SteerSpan(span.text, 1)
        out.append(span)
    return out
