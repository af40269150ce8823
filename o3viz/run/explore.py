"""``--explore K``: real alternative continuations. From each of the K strongest decision points
(smallest top-2 margin, then highest entropy) the best alternative token is forced and the
continuation generated greedily for a bounded number of tokens, with the same DAA settings as
the main run and without recording attention."""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext

import numpy as np

from o3viz.hooks.recorder import Recorder
from o3viz.run.assemble import extract_answer
from o3viz.run.daa.relevance import DAATrack
from o3viz.run.loop import run_loop
from o3viz.run.request import RunRequest
from o3viz.trace.parts import Branch, DecisionPoint


def strongest(points: list[DecisionPoint], k: int) -> list[DecisionPoint]:
    """The k decision points where the model hesitated most, in token order."""
    ranked = sorted((p for p in points if p.alternatives), key=lambda p: (p.margin, -p.entropy))[:k]
    return sorted(ranked, key=lambda p: p.token_index)


def explore_branches(
    model,
    tokenizer,
    prompt_ids: list[int],
    gen_ids: list[int],
    points: list[DecisionPoint],
    req: RunRequest,
    *,
    stop_ids: set[int],
    kind: str,
    recorder: Recorder | None,
    track: DAATrack | None,
) -> list[Branch]:
    """Generate one branch per chosen decision point (``req.explore`` of them, greedy, at most
    ``req.capture.branch_tokens`` tokens each); sets each point's ``branch_ids``."""
    branches: list[Branch] = []
    greedy = dataclasses.replace(
        req, max_new_tokens=req.capture.branch_tokens, min_new_tokens=0, do_sample=False
    )
    for point in strongest(points, req.explore):
        alt = point.alternatives[0]
        prefix = gen_ids[: point.token_index]
        hook = track.branch_hook(len(prompt_ids) + len(prefix)) if track is not None else None
        if recorder is not None:
            recorder.pause(True)  # branches are not recorded
        try:
            with hook if hook is not None else nullcontext():
                res = run_loop(
                    model,
                    prompt_ids + prefix,
                    greedy,
                    stop_ids=stop_ids,
                    hooks=[hook] if hook is not None else [],
                    forced_first=alt.id,
                )
        finally:
            if recorder is not None:
                recorder.pause(False)
        head = tokenizer.decode(prefix, skip_special_tokens=True)
        full = tokenizer.decode(prefix + res.ids, skip_special_tokens=True)
        branch = Branch(
            len(branches),
            point.token_index,
            alt,
            full[len(head) :],
            float(np.mean(res.logprobs)) if res.logprobs else None,
            answer=extract_answer(full, kind),
        )
        point.branch_ids.append(branch.id)
        branches.append(branch)
    return branches
