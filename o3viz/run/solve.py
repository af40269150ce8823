"""The three-layer loop of the seed article: base (generate with capture) → verification (tests
for code, claims and the final answer for math) → optimization (a revision prompt built from the
feedback), until the checks pass, the model is confident enough, or ``max_rounds`` is reached. A
reply cut short (at its token limit) is neither graded nor accepted, so it never ends the loop as a
success.

Confidence is the mean probability of the answer's tokens: the tokens of the final number for
math, of the code block for code, of the whole text otherwise. The verdict → action map is the
transition matrix in ``o3viz.verify.policy``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from o3viz.run.assemble import answer_confidence
from o3viz.run.capture import capture
from o3viz.run.daa.steer_spans import pin_occurrences
from o3viz.run.loop import OnToken
from o3viz.run.provenance import settings_of
from o3viz.run.request import RunRequest, build_request
from o3viz.tasks.spec import TaskSpec, load_task, prompt_task
from o3viz.text.answers import round_answer
from o3viz.trace import Check, Round, Trace
from o3viz.verify.cut_short import apply_cut_short, cut_short
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
    """The verification layer: fills ``rnd.checks``, ``answer``, ``confidence`` and ``verdict`` (a
    reply cut short is not graded: ``o3viz.verify.cut_short``)."""
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
    apply_cut_short(rnd)  # a reply stopped at its limit or by hand is not graded (one rule)


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
    req: RunRequest | str | None = None,
    *,
    spec: TaskSpec | None = None,
    on_round: Callable[[Round], None] | None = None,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
    **settings: Any,
) -> Trace:
    """Run the base → verify → optimize loop for ``req`` (``req.max_rounds`` rounds at most);
    every round, check and revision goes in the trace.

    The task is ``spec`` if given, else ``req.task_id`` (``gsm8k:12``, ``humaneval:HumanEval/0``,
    ``mbppplus:Mbpp/2``), else ``req.prompt`` as a free prompt verified by its claims only. Each
    round is one ``capture`` with ``req``'s settings (compression, DAA, explore, ...); a branch's
    ``req.prefix`` opens the first round's reply only (revisions start afresh). A
    compressed run's trace keeps the first round's compression record (the task's own prompt);
    every round says in ``info["compression"]`` how its prompt was compressed. A stop request
    ends the loop after the round it interrupts. ``req`` may be a prompt, and keyword settings
    (``task_id="gsm8k:12"``, ``rounds=2``, any ``RunRequest`` field) are laid over it.
    """
    req = build_request(req, **settings)
    req.validate()
    spec = spec or (load_task(req.task_id) if req.task_id else prompt_task(req.prompt or ""))
    if req.daa.mode == "steer":  # later rounds' prompts repeat the task's: steer the same place
        daa = dataclasses.replace(req.daa, spans=pin_occurrences(spec.prompt, req.daa.spans))
        req = dataclasses.replace(req, daa=daa)
    rounds: list[Round] = []
    prompt, first = spec.prompt, None
    for r in range(req.max_rounds):
        trace = capture(
            model,
            tokenizer,
            dataclasses.replace(req, prompt=prompt, task_id=None, prefix=req.prefix if r == 0 else ""),
            task=spec.task,
            on_token=on_token,
            should_stop=should_stop,
        )
        first = first or trace
        rnd = trace.final
        rnd.index, rnd.prompt = r, prompt
        if trace.compression is not None:
            rnd.info["compression"] = {
                "ratio": trace.compression.ratio,
                "events": len(trace.compression.events),
            }
        _judge(spec, rnd, req, last=r == req.max_rounds - 1)
        rounds.append(rnd)
        if on_round is not None:
            on_round(rnd)
        if rnd.action in STOP_ACTIONS or rnd.info.get("stop_reason") == "stopped":
            break
        prompt = revision_prompt(spec, rnd.text, rnd.feedback or "")
    first.rounds, first.task = rounds, spec.task
    first.provenance.finished_at = trace.provenance.finished_at
    first.provenance.settings = settings_of(req)  # the rounds' captures saw the prompt, not the task id
    return first


def _judge(spec: TaskSpec, rnd: Round, req: RunRequest, last: bool) -> None:
    """The verification layer and the policy: checks, branch verdicts, the action and its feedback."""
    verify_round(spec, rnd, req.timeout_s)
    judge_branches(spec, rnd, req.timeout_s)
    why = cut_short(rnd)  # a cut reply is never accepted, however confident (``o3viz.verify.policy``)
    rnd.action = choose_action(rnd.checks, rnd.confidence, req.confidence_threshold, last, cut_short=why)
    rnd.feedback = feedback_for(rnd.action, rnd.checks, rnd.answer) or None
