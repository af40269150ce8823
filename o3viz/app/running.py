"""What the pages use to run a model: runs, branches, step importance and steering.

Kept apart from ``o3viz.app`` because these modules import torch; the Library, Dataset and Labels
pages never import this module. The model itself loads only through ``pages/common/ui.get_model``.
"""

from __future__ import annotations

from o3viz.analysis.importance import LocalResample, RolloutCache, Sampling, agreement, analyse_locally
from o3viz.analysis.importance.align import aligned_importance, importance_source
from o3viz.app.paired_run import PairedRunJob
from o3viz.branch import (
    MAX_EDIT_CHARS,
    BranchCost,
    Continuer,
    add_branch,
    branches_of,
    edit_and_continue,
    find_fork,
    resample_from,
    rollout_branch,
)
from o3viz.branch.fork import measured_cost
from o3viz.hooks.steer import parse_steer_heads
from o3viz.run.config import CaptureConfig, DAAConfig, SteerSpan, parse_layers
from o3viz.run.daa.modes import DAA_MODE_TABLE, DAA_MODES
from o3viz.run.daa.steer_spans import check_spans, prompt_sentences
from o3viz.run.dispatch import execute
from o3viz.run.paired_run import PairedRunRequest, parse_setting, task_ids
from o3viz.run.request import RunRequest

__all__ = [
    "BranchCost",
    "CaptureConfig",
    "Continuer",
    "DAA_MODES",
    "DAA_MODE_TABLE",
    "DAAConfig",
    "LocalResample",
    "PairedRunJob",
    "PairedRunRequest",
    "MAX_EDIT_CHARS",
    "RolloutCache",
    "RunRequest",
    "Sampling",
    "SteerSpan",
    "add_branch",
    "find_fork",
    "measured_cost",
    "agreement",
    "aligned_importance",
    "analyse_locally",
    "branches_of",
    "check_spans",
    "edit_and_continue",
    "execute",
    "importance_source",
    "parse_layers",
    "parse_setting",
    "parse_steer_heads",
    "prompt_sentences",
    "resample_from",
    "rollout_branch",
    "task_ids",
]
