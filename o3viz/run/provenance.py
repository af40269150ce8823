"""A run's ``Provenance``: the model, its revision, dtype, attention implementation and device, the
library versions, and the run's settings (the ``RunRequest`` as plain JSON data)."""

from __future__ import annotations

import dataclasses
import importlib.metadata

from o3viz.run.request import RunRequest
from o3viz.trace.core import Provenance, timestamp

# in the round (the prompt; a branch's reply prefix ends its rendered prompt) and in ``model_id``
LEFT_OUT = ("prompt", "prefix", "model")


def library_versions() -> dict[str, str]:
    out = {}
    for name in ("torch", "transformers", "o3viz"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _plain(value):
    """JSON data: tuples, ranges and arrays become lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple | list | range):
        return [_plain(v) for v in value]
    return value


def settings_of(req: RunRequest) -> dict:
    """The request's settings as JSON data (``capture``, ``daa`` and ``compression`` nested).

    >>> s = settings_of(RunRequest(prompt="hi", max_new_tokens=5))
    >>> s["max_new_tokens"], s["capture"]["top_k"], s["compression"], "prompt" in s
    (5, 64, None, False)
    """
    d = dataclasses.asdict(req)
    for name in LEFT_OUT:
        d.pop(name)
    d["max_rounds"] = req.max_rounds
    return _plain(d)


def run_provenance(model, req: RunRequest, instrumented: bool, created: str) -> Provenance:
    """The provenance of a run of ``req`` on ``model`` that started at ``created``."""
    from o3viz.hooks.instrument import ATTN_NAME  # torch: here, where a model ran, not for the CLI's flags

    info = getattr(model, "o3viz_info", None)
    impl = model.config._attn_implementation
    return Provenance(
        model_id=getattr(info, "model_id", None) or str(getattr(model, "name_or_path", "") or ""),
        revision=getattr(info, "revision", None),
        dtype=str(model.dtype).replace("torch.", ""),
        attn_implementation=f"{ATTN_NAME} (fp32 rows at decode, sdpa output at prefill)"
        if instrumented
        else impl,
        device=str(model.device),
        library_versions=library_versions(),
        settings=settings_of(req),
        seed=req.seed,
        created_at=created,
        finished_at=timestamp(),
    )
