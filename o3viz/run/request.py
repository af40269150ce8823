"""The settings of a run: ``RunRequest``, the one place a run setting is declared, defaulted and
checked (``validate``). The CLI (``o3viz.cli.run.request_from_args``), the app's Run page,
notebooks and tests build it; ``execute`` (``o3viz.run.dispatch``), ``capture``, ``solve`` and the
generation loop read it. Adding a setting means one field here (and its check in ``validate``),
then the code that uses it.

>>> RunRequest(prompt="What is 2+3?", max_new_tokens=8).max_rounds
1
>>> build_request("What is 2+3?", max_new_tokens=8, daa="observe").daa.mode
'observe'
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from o3viz.compress.context import CompressionConfig
from o3viz.errors import UsageError
from o3viz.run.config import CaptureConfig, DAAConfig


@dataclass
class RunRequest:
    """Everything one run needs besides the loaded model."""

    prompt: str | None = None  # a free prompt, or
    prefix: str = ""  # the reply's forced opening (a branch: the steps before the fork, the edited step)
    task_id: str | None = None  # a built-in task: gsm8k:N, humaneval:HumanEval/N, mbppplus:Mbpp/N
    model: str | None = None  # hub id, model directory or .gguf for ``load_model`` (None: the embedded one)
    max_new_tokens: int = 256
    min_new_tokens: int = 0  # EOS is suppressed that long (benchmarks: equal-length runs)
    capture: CaptureConfig = field(default_factory=CaptureConfig)  # what attention is kept
    daa: DAAConfig = field(default_factory=DAAConfig)  # Dynamic Attention Allocation
    compression: CompressionConfig | None = None  # pointers before the model + KV release (None: off)
    explore: int = 0  # branch at the K strongest decision points
    seed: int = 0
    do_sample: bool = False  # greedy unless set
    temperature: float = 1.0
    rounds: int | None = None  # max rounds of the verify loop (None: 3 for a task, else 1)
    confidence_threshold: float = 0.9  # the loop stops when nothing failed and confidence reaches this
    timeout_s: float = 10.0  # per sandboxed test run

    @property
    def max_rounds(self) -> int:
        return self.rounds if self.rounds is not None else (3 if self.task_id else 1)

    @property
    def loops(self) -> bool:
        """Whether the run is the verify/optimize loop (a task, or more than one round)."""
        return bool(self.task_id) or self.max_rounds > 1

    def validate(self) -> None:
        """Raise ``UsageError`` (one line) for settings that cannot run: the one validator of a run's
        settings (the CLI, the Run page, ``capture`` and ``solve`` all come through here). Rules
        that need the model (a layer it lacks) are checked once it is loaded."""
        if not (self.task_id or (isinstance(self.prompt, str) and self.prompt.strip())):
            raise UsageError("the prompt is empty; give a prompt or a task")
        if self.max_new_tokens < 1:
            raise UsageError(f"max new tokens must be at least 1, not {self.max_new_tokens}")
        if self.min_new_tokens < 0:
            raise UsageError(f"min new tokens must be 0 or more, not {self.min_new_tokens}")
        if self.explore < 0:
            raise UsageError(f"explore must be 0 or more, not {self.explore}")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):  # NaN fails both
            raise UsageError(f"the temperature must be a positive finite number, not {self.temperature}")
        if self.max_rounds < 1:
            raise UsageError(f"rounds must be at least 1, not {self.max_rounds}")
        if not 0 <= self.confidence_threshold <= 1:
            raise UsageError(f"the confidence threshold must be in [0, 1], not {self.confidence_threshold}")
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise UsageError(f"the test timeout must be positive and finite, not {self.timeout_s}")
        self.capture.validate()
        self.daa.validate()
        if self.compression is not None:
            self.compression.validate()


def build_request(request: RunRequest | str | None = None, /, **settings: Any) -> RunRequest:
    """The ``RunRequest`` that ``capture``, ``solve`` and ``execute`` run: ``request`` (a
    ``RunRequest``, or a prompt) with keyword settings laid over it, so a notebook can write
    ``capture(model, tok, "What is 17*23?", max_new_tokens=8)``. ``daa`` takes a ``DAAConfig`` or
    a mode name (``o3viz.run.daa.modes.DAA_MODES``); ``capture`` a ``CaptureConfig``. An unknown setting is one
    ``UsageError`` line naming the ones there are."""
    names = {f.name for f in dataclasses.fields(RunRequest)}
    unknown = sorted(set(settings) - names)
    if unknown:
        raise UsageError(
            f"unknown run setting {', '.join(unknown)}; the settings are: {', '.join(sorted(names))}"
        )
    if isinstance(settings.get("daa"), str):
        settings["daa"] = DAAConfig(mode=settings["daa"])
    if isinstance(request, RunRequest):
        return dataclasses.replace(request, **settings) if settings else request
    if request is not None and not isinstance(request, str):
        raise UsageError(f"a run takes a prompt or a RunRequest, not {type(request).__name__}")
    if request is not None:
        settings.setdefault("prompt", request)
    return RunRequest(**settings)
