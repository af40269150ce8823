"""The three-layer loop of the seed article: base (generate with capture) → verification (tests
for code, claims and the final answer for math) → optimization (a revision prompt built from the
feedback), until the checks pass, the model is confident enough, or ``max_rounds`` is reached.

Confidence is the mean probability of the answer's tokens: the tokens of the final number for
math, of the code block for code, of the whole text otherwise. The verdict → action map is the
transition matrix in ``o3viz.verify.policy``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from o3viz.run.assemble import answer_confidence
from o3viz.tasks.spec import TaskSpec, load_task, prompt_task
from o3viz.text.answers import round_answer
from o3viz.trace import Check, Round, Trace
from o3viz.verify.policy import (
    STOP_ACTIONS,
    answer_check,
    choose_action,
    code_verdict_to_checks,
    feedback_for,
    numbers_equal,
    round_verdict,
)
from o3viz.verify.trace_checks import claim_checks

PREVIOUS_ATTEMPT_CHARS = 1500  # a small model loses the task if the revision prompt is too long


@dataclass
class SolveConfig:
    """Settings of the verify/optimize loop."""

    max_rounds: int = 3  # the article's "maximum number of steps"
    confidence_threshold: float = 0.9  # stop when nothing failed and confidence reaches this
    max_new_tokens: int = 256
    timeout_s: float = 10.0  # per sandboxed test run


def extract_code(text: str, entry_point: str | None) -> tuple[str, tuple[int, int]]:
    """The code a reply contains and its char span: a fenced block (the one defining
    ``entry_point`` if several), an unterminated block, or everything from the first ``def``."""
    blocks = list(re.finditer(r"```[a-zA-Z]*[ \t]*\n(.*?)(?:```|$)", text, re.S))
    if blocks:
        pick = next(
            (b for b in blocks if entry_point and f"def {entry_point}" in b.group(1)),
            max(blocks, key=lambda b: len(b.group(1))),
        )
        return pick.group(1), pick.span(1)
    m = re.search(r"^(?:from |import |def )", text, re.M)
    start = m.start() if m else 0
    return text[start:], (start, len(text))


def candidate_program(spec: TaskSpec, text: str) -> tuple[str, tuple[int, int]]:
    code, span = extract_code(text, spec.entry_point)
    if spec.entry_point and re.search(rf"def\s+{re.escape(spec.entry_point)}\s*\(", code):
        return f"{spec.header}\n{code}" if spec.header else code, span
    return spec.task.question + code, span  # a bare completion of the given signature


def verify_round(spec: TaskSpec, rnd: Round, timeout_s: float) -> None:
    """The verification layer: fills ``rnd.checks``, ``answer``, ``confidence`` and ``verdict``."""
    checks: list[Check] = []
    if spec.task.kind == "code" and spec.tests is not None:
        from o3viz.verify.code import verify_code

        program, span = candidate_program(spec, rnd.text)
        verdict = verify_code(
            program, spec.tests, entry_point=spec.entry_point, timeout_s=timeout_s, context=spec.test_context
        )
        checks += code_verdict_to_checks(verdict)
        rnd.answer = program  # a code round's answer is the program the tests ran
        rnd.confidence = answer_confidence(rnd.tokens, span)
        rnd.info["isolation"] = verdict.isolation
    else:
        # capture already checked this text's claims; reuse them (one checker, one result)
        claims = [c for c in rnd.checks if c.kind == "claim"] or claim_checks(rnd)[0]
        checks += claims
        # capture stored this round's answer and confidence (``round_answer``); solve keeps them
        # and only finds the same span again to place the answer check on its step
        found = round_answer(rnd.text, spec.task.kind)
        if spec.task.kind == "math" and spec.task.reference is not None:
            step = next((s.index for s in rnd.steps if found and s.start <= found.start < s.end), None)
            checks.append(answer_check(found, spec.task.reference, step))
    rnd.checks = checks
    rnd.verdict = round_verdict(checks)


def judge_branches(spec: TaskSpec, rnd: Round, timeout_s: float) -> None:
    """Give each explored branch its own verdict, where the task has a reference or tests."""
    for b in rnd.branches:
        text = (
            rnd.text[: rnd.tokens[b.token_index].start] + b.text
            if b.token_index < len(rnd.tokens)
            else b.text
        )
        if spec.task.kind == "math" and spec.task.reference is not None:
            found = round_answer(text, "math")
            b.answer = found.text if found else None
            b.verdict = "correct" if numbers_equal(b.answer, spec.task.reference) else "wrong"
        elif spec.task.kind == "code" and spec.tests is not None:
            from o3viz.verify.code import verify_code

            program, _ = candidate_program(spec, text)
            b.verdict = (
                "pass"
                if verify_code(
                    program,
                    spec.tests,
                    entry_point=spec.entry_point,
                    timeout_s=timeout_s,
                    context=spec.test_context,
                ).passed
                else "fail"
            )


def revision_prompt(spec: TaskSpec, previous: str, feedback: str) -> str:
    prev = previous.strip()
    if len(prev) > PREVIOUS_ATTEMPT_CHARS:
        prev = prev[:PREVIOUS_ATTEMPT_CHARS] + " …"
    what = "function" if spec.task.kind == "code" else "solution"
    return f"{spec.prompt}\n\nYour previous attempt:\n{prev}\n\n{feedback}\nWrite a corrected {what}."


def solve(
    model: Any,
    tokenizer: Any,
    task: str | TaskSpec,
    *,
    max_rounds: int = 3,
    confidence_threshold: float = 0.9,
    max_new_tokens: int = 256,
    timeout_s: float = 10.0,
    on_round: Callable[[Round], None] | None = None,
    **capture_kwargs: Any,
) -> Trace:
    """Run the base → verify → optimize loop; every round, check and revision goes in the trace.

    ``task`` is a task id (``gsm8k:12``, ``humaneval:HumanEval/0``, ``mbppplus:Mbpp/2``), a
    ``TaskSpec``, or any other string, taken as a free prompt verified by its claims only.
    Extra keyword arguments go to ``o3viz.run.capture.capture`` (capture/DAA configs, explore, ...).
    """
    from o3viz.run.capture import capture

    spec = (
        task
        if isinstance(task, TaskSpec)
        else (load_task(task) if re.match(r"^(gsm8k|humaneval|mbppplus):", task, re.I) else prompt_task(task))
    )
    config = SolveConfig(max_rounds, confidence_threshold, max_new_tokens, timeout_s)
    rounds: list[Round] = []
    prompt, trace = spec.prompt, None
    for r in range(max_rounds):
        trace = capture(
            model, tokenizer, prompt, max_new_tokens=max_new_tokens, task=spec.task, **capture_kwargs
        )
        rnd = trace.final
        rnd.index, rnd.prompt = r, prompt
        verify_round(spec, rnd, timeout_s)
        judge_branches(spec, rnd, timeout_s)
        rnd.action = choose_action(rnd.checks, rnd.confidence, confidence_threshold, r == max_rounds - 1)
        rnd.feedback = feedback_for(rnd.action, rnd.checks, rnd.answer) or None
        rounds.append(rnd)
        if on_round is not None:
            on_round(rnd)
        if rnd.action in STOP_ACTIONS:
            break
        prompt = revision_prompt(spec, rnd.text, rnd.feedback or "")
    assert trace is not None
    trace.rounds = rounds
    trace.task = spec.task
    trace.provenance.settings["solve"] = asdict(config)
    return trace
