"""Runner: o3viz ``capture`` (runs in our own .venv). Variants: ``capture`` (default settings:
per-head top-64 rows of the first, middle and last layer, head-averaged prefill), ``capture_all``
(full rows of all heads of all layers: the data ``output_attentions`` returns, kept as fp16) and
``allocate`` (default capture with DAA allocate). Saving writes a ``.o3trace.json.gz``."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _child  # noqa: E402


def _config(variant: str):
    from o3viz.run.capture import CaptureConfig, DAAConfig

    if variant == "capture":
        return CaptureConfig(), DAAConfig()
    if variant == "capture_all":
        return CaptureConfig(layers="all", heads=None, top_k=None), DAAConfig()
    if variant == "allocate":
        return CaptureConfig(), DAAConfig(mode="allocate")
    raise ValueError(f"unknown o3viz variant {variant!r}")


def _save(trace, folder: str) -> str:
    return str(trace.save(os.path.join(folder, "o3viz.o3trace.json.gz"), overwrite=True))


def _load(path: str):
    from o3viz.trace.core import Trace

    return Trace.load(path)


def build(job: _child.Job) -> _child.Workload:
    from o3viz.model import load_model
    from o3viz.run.capture import RunRequest, capture
    from o3viz.run.prompt import layout_prompt

    model, tok = load_model(job.model)
    ids = layout_prompt(tok, job.prompt).ids
    if list(ids) != list(job.ids):
        raise ValueError("o3viz laid the prompt out to other ids than the driver sent")
    cfg, daa = _config(job.variant)

    def run(n: int):
        req = RunRequest(prompt=job.prompt, max_new_tokens=n, min_new_tokens=n, capture=cfg, daa=daa)
        return capture(model, tok, req)

    return _child.Workload(
        run=run,
        count=lambda trace: (len(ids), len(trace.tokens)),
        save=_save,
        load=_load,
        versions=_child.base_versions("o3viz"),
    )


if __name__ == "__main__":
    sys.exit(_child.main(build))
