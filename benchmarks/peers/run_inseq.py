"""Runner: inseq ``attention`` attribution (runs in .venv-peers/inseq). ``model.attribute`` on the
chat-templated prompt text generates greedily (``min_new_tokens`` forces the length) and then
reads the attention weights of every head of every layer from one forward pass over the whole
sequence (inseq loads the model with eager attention). A forced memory job passes prompt + N
forced tokens as ``generated_texts``: inseq skips generation and runs the same final forward pass
(the peak), over a sequence of (about: the text is re-encoded) the same length. Saving uses inseq's own
``FeatureAttributionOutput.save(compress=True)`` (gzipped JSON) and ``load(decompress=True)``."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _child  # noqa: E402


def _save(out, folder: str) -> str:
    path = os.path.join(folder, "inseq_attention.json.gz")
    out.save(path, overwrite=True, compress=True)
    return path


def _load(path: str):
    import inseq

    return inseq.FeatureAttributionOutput.load(path, decompress=True)


def build(job: _child.Job) -> _child.Workload:
    import inseq
    import torch

    if job.variant != "attention":
        raise ValueError(f"unknown inseq variant {job.variant!r}")
    iq = inseq.load_model(job.model, "attention", model_kwargs={"dtype": torch.float32})
    text = iq.tokenizer.decode(job.ids, skip_special_tokens=False)
    encoded = iq.tokenizer(text, add_special_tokens=True)["input_ids"]
    note = "" if list(encoded) == list(job.ids) else f"inseq encodes the prompt to {len(encoded)} ids"

    def run(n: int):
        if job.forced and n != _child.WARMUP_TOKENS:
            forced = iq.tokenizer.decode(_child.forced_ids(job.ids, n), skip_special_tokens=False)
            return iq.attribute(text, generated_texts=forced, show_progress=False)
        args = {"max_new_tokens": n, "min_new_tokens": n, "do_sample": False}
        return iq.attribute(text, generation_args=args, show_progress=False)

    def count(out) -> tuple[int, int]:
        attr = out.sequence_attributions[0]
        return len(attr.source), len(attr.target) - len(attr.source)

    return _child.Workload(
        run=run,
        count=count,
        save=_save,
        load=_load,
        versions=_child.base_versions("inseq", "captum"),
        note="; ".join(
            x for x in (note, "forced: generated_texts = prompt + N forced tokens" if job.forced else "") if x
        ),
    )


if __name__ == "__main__":
    sys.exit(_child.main(build))
