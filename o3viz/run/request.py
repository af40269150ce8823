"""One entry point for a run, shared by the CLI (``o3viz run``) and the app's Run page: the run's
settings (``RunRequest``, with its one ``validate``) and ``execute``, which runs a plain capture,
the verify/optimize loop (a task or several rounds), or a compressed-context run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from o3viz.errors import UsageError
from o3viz.run.config import CaptureConfig, DAAConfig
from o3viz.trace import Round, Trace


@dataclass
class RunRequest:
    """Everything one run needs besides the loaded model; built by the CLI (``request_from_args``)
    and the app's Run page, checked by ``validate``."""

    prompt: str | None = None  # a free prompt, or
    task_id: str | None = None  # a built-in task: gsm8k:N, humaneval:HumanEval/N, mbppplus:Mbpp/N
    model: str | None = None  # hub id, model directory or .gguf for ``load_model`` (None: the embedded one)
    max_new_tokens: int = 256
    min_new_tokens: int = 0  # EOS is suppressed that long (benchmarks: equal-length runs)
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    daa: DAAConfig = field(default_factory=DAAConfig)
    explore: int = 0  # branch at the K strongest decision points
    seed: int = 0
    do_sample: bool = False
    temperature: float = 1.0
    rounds: int | None = None  # max rounds of the loop (None: 3 for a task, else 1)
    confidence_threshold: float = 0.9
    timeout_s: float = 10.0  # per sandboxed test run
    compress: bool = False
    compress_threshold: float = 0.7
    expand_threshold: float = 0.3

    @property
    def max_rounds(self) -> int:
        return self.rounds if self.rounds is not None else (3 if self.task_id else 1)

    def validate(self) -> None:
        """Raise ``UsageError`` (one line) for settings that cannot run: the one validator of a run's
        settings (the CLI, the Run page and ``capture`` all come through here)."""
        if not (self.task_id or (isinstance(self.prompt, str) and self.prompt.strip())):
            raise UsageError("the prompt is empty; give a prompt or a task")
        if self.max_new_tokens < 1:
            raise UsageError(f"max new tokens must be at least 1, not {self.max_new_tokens}")
        if self.min_new_tokens < 0:
            raise UsageError(f"min new tokens must be 0 or more, not {self.min_new_tokens}")
        if self.explore < 0:
            raise UsageError(f"explore must be 0 or more, not {self.explore}")
        if self.temperature <= 0:
            raise UsageError(f"the temperature must be positive, not {self.temperature}")
        if self.max_rounds < 1:
            raise UsageError(f"rounds must be at least 1, not {self.max_rounds}")
        if not 0 <= self.confidence_threshold <= 1:
            raise UsageError(f"the confidence threshold must be in [0, 1], not {self.confidence_threshold}")
        if self.timeout_s <= 0:
            raise UsageError(f"the test timeout must be positive, not {self.timeout_s}")
        if not 0 <= self.expand_threshold < self.compress_threshold <= 1:
            raise UsageError("thresholds must satisfy 0 <= expand threshold < compress threshold <= 1")
        self.capture.validate()
        self.daa.validate()
        if self.compress and (self.task_id or self.max_rounds > 1 or self.explore or self.daa.mode != "off"):
            raise UsageError(
                "compression runs its own generation loop; use it with a free prompt only "
                "(no task, rounds, explore or DAA)"
            )


def execute(
    model: Any,
    tokenizer: Any,
    req: RunRequest,
    *,
    on_token: Callable[[int, str, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_round: Callable[[Round], None] | None = None,
) -> Trace:
    """Run ``req`` and return its trace (nothing is saved here)."""
    req.validate()
    kwargs = {
        "capture": req.capture,
        "daa": req.daa,
        "explore": req.explore,
        "seed": req.seed,
        "do_sample": req.do_sample,
        "temperature": req.temperature,
        "min_new_tokens": req.min_new_tokens,
    }
    if req.compress:
        from o3viz.compress.context import CompressionConfig
        from o3viz.run.compressed import run_compressed

        cfg = CompressionConfig(
            compress_threshold=req.compress_threshold, expand_threshold=req.expand_threshold
        )
        return run_compressed(
            model,
            tokenizer,
            req.prompt or "",
            config=cfg,
            max_new_tokens=req.max_new_tokens,
            on_token=on_token,
        )
    if req.task_id or req.max_rounds > 1:
        from o3viz.run.solve import solve
        from o3viz.tasks.spec import load_task, prompt_task

        spec = load_task(req.task_id) if req.task_id else prompt_task(req.prompt or "")
        return solve(
            model,
            tokenizer,
            spec,
            max_rounds=req.max_rounds,
            confidence_threshold=req.confidence_threshold,
            max_new_tokens=req.max_new_tokens,
            timeout_s=req.timeout_s,
            on_round=on_round,
            on_token=on_token,
            should_stop=should_stop,
            **kwargs,
        )
    from o3viz.run.capture import capture

    return capture(
        model,
        tokenizer,
        req.prompt or "",
        max_new_tokens=req.max_new_tokens,
        on_token=on_token,
        should_stop=should_stop,
        **kwargs,
    )
