"""DAA's modes and what each does during a capture: the one table (``DAA_MODE_TABLE``) that the
settings (``DAAConfig``), the capture, the CLI's ``--daa`` and the Run page read.

A mode is a row of behaviour, not a string compared in many places: ``capture`` looks its mode up
here and starts the relevance track (``o3viz.run.daa.relevance``) or the steering track
(``o3viz.run.daa.steer``) that the row names.

>>> DAA_MODES
('off', 'observe', 'allocate', 'steer')
>>> [m for m, spec in DAA_MODE_TABLE.items() if spec.biases]
['allocate', 'steer']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

DAAMode = Literal["off", "observe", "allocate", "steer"]


@dataclass(frozen=True)
class DAAModeSpec:
    """What one DAA mode does to a run."""

    does: str  # one line, for the CLI's help and the docs
    relevance: bool  # scores every context token's task relevance (DAATrack) and writes a DAARecord
    biases: (
        bool  # sets a bias on the recorder: the o3viz attention function runs even when nothing is recorded
    )
    steers: (
        bool  # scales attention outside the marked prompt spans (PASTA, SteerTrack) and writes a SteerRecord
    )


DAA_MODE_TABLE: dict[DAAMode, DAAModeSpec] = {
    "off": DAAModeSpec("no DAA", relevance=False, biases=False, steers=False),
    "observe": DAAModeSpec(
        "record relevance, attention unchanged", relevance=True, biases=False, steers=False
    ),
    "allocate": DAAModeSpec(
        "bias attention logits by relevance (strength λ)", relevance=True, biases=True, steers=False
    ),
    "steer": DAAModeSpec(
        "steer attention to the marked prompt spans (PASTA)", relevance=False, biases=True, steers=True
    ),
}
DAA_MODES: tuple[DAAMode, ...] = tuple(DAA_MODE_TABLE)

# The Literal is the type checker's copy of the table's keys; they may never differ.
assert DAA_MODES == get_args(DAAMode), "DAAMode and DAA_MODE_TABLE list different modes"

__all__ = ["DAA_MODES", "DAA_MODE_TABLE", "DAAMode", "DAAModeSpec"]
