"""``execute``: the one entry point of a run, shared by the CLI (``o3viz run``), the app's Run page
and notebooks. It only dispatches a ``RunRequest``: the verify/optimize loop (``solve``) for a task
or several rounds, else one ``capture``; compression, DAA, explore and the internals are settings
of either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from o3viz.compress.context import CompressionConfig
from o3viz.run.capture import capture
from o3viz.run.loop import OnToken
from o3viz.run.request import RunRequest, build_request
from o3viz.run.solve import solve
from o3viz.trace import Round, Trace


def execute(
    model: Any,
    tokenizer: Any,
    req: RunRequest | str | None = None,
    *,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_round: Callable[[Round], None] | None = None,
    **settings: Any,
) -> Trace:
    """Run ``req`` and return its trace (nothing is saved here). ``req`` may be a prompt, with
    keyword settings (``max_new_tokens=8``, ``rounds=2``, ``daa="allocate"``) laid over it.
    ``on_token(index, piece, total)`` streams the tokens, ``should_stop()`` is polled after each,
    ``on_round(round)`` follows each round of the loop."""
    req = build_request(req, **settings)
    req.validate()
    if req.loops:
        return solve(model, tokenizer, req, on_round=on_round, on_token=on_token, should_stop=should_stop)
    return capture(model, tokenizer, req, on_token=on_token, should_stop=should_stop)


def run_compressed(
    model: Any,
    tokenizer: Any,
    req: RunRequest,
    *,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_round: Callable[[Round], None] | None = None,
) -> Trace:
    """``execute`` with compression on (``req.compression``, default ``CompressionConfig()``)."""
    req = dataclasses.replace(req, compression=req.compression or CompressionConfig())
    return execute(model, tokenizer, req, on_token=on_token, should_stop=should_stop, on_round=on_round)
