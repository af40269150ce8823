"""Branching a trace at a step: edit the step and continue (``edit_and_continue``), resample what
could come there (``resample_from``), resample until the step's content stops reappearing or the
answer changes (``resample_until``), the cost before it starts (``BranchCost``) and branches in
the store (``add_branch``, ``branches_of``). It sits above the run (a local continuation is one
``execute``), the resampling of ``o3viz.analysis.importance`` and the generation clients and
rollout cache of ``o3viz.clients``."""

from __future__ import annotations

from o3viz.branch.continuation import Continuer
from o3viz.branch.edit import edit_and_continue
from o3viz.branch.fork import MAX_EDIT_CHARS, BranchCost, Fork, check_edit, find_fork, request_from_trace
from o3viz.branch.links import add_branch, branches_of, label_of
from o3viz.branch.resample import (
    answer_counts,
    group_first_sentences,
    resample_from,
    resample_until,
    rollout_branch,
)

__all__ = [
    "MAX_EDIT_CHARS",
    "BranchCost",
    "Continuer",
    "Fork",
    "add_branch",
    "answer_counts",
    "branches_of",
    "check_edit",
    "edit_and_continue",
    "find_fork",
    "group_first_sentences",
    "label_of",
    "request_from_trace",
    "resample_from",
    "resample_until",
    "rollout_branch",
]
