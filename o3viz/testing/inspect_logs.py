"""Real Inspect AI logs for tests: ``python -m o3viz.testing.inspect_logs OUT`` runs a two-sample
task on inspect_ai's built-in ``mockllm/model`` (no network: custom outputs with reasoning content
blocks, token usage given so no tokenizer is downloaded) and writes it twice, as ``run.eval`` and
``run.json``. Run in a subprocess: inspect_ai sets up logging and event loops of its own."""

from __future__ import annotations

import sys
from pathlib import Path

SAMPLES = [  # (question, target, reasoning blocks, answer): the second one is graded wrong
    (
        "What is 17*23?",
        "391",
        ["17*23 = 17*20 + 17*3.", "17*20 = 340 and 17*3 = 51, so 340 + 51 = 391."],
        "391",
    ),
    ("What is 12*12?", "144", ["12*12 = 124.", "Wait, 12*12 = 144? I will say 124."], "124"),
]


def write_logs(out: Path) -> list[Path]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import (
        ChatMessageAssistant,
        ContentReasoning,
        ContentText,
        ModelOutput,
        ModelUsage,
        get_model,
    )
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    outputs = []
    for _, _, blocks, answer in SAMPLES:
        content = [ContentReasoning(reasoning=b) for b in blocks] + [ContentText(text=answer)]
        o = ModelOutput.from_message(ChatMessageAssistant(content=content, model="mockllm/model"))
        o.usage = ModelUsage(input_tokens=10, output_tokens=20, total_tokens=30)
        outputs.append(o)
    task = Task(
        name="arith",
        dataset=[Sample(input=q, target=t, id=i + 1) for i, (q, t, _, _) in enumerate(SAMPLES)],
        solver=generate(),
        scorer=match(),
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = eval(task, model=model, log_dir=str(out / "logs"), display="none", max_samples=1)
    if log.status != "success":
        raise SystemExit(f"inspect eval failed: {log.error}")
    full = read_eval_log(log.location)
    write_eval_log(full, str(out / "run.eval"), format="eval")
    write_eval_log(full, str(out / "run.json"), format="json")
    return [out / "run.eval", out / "run.json"]


if __name__ == "__main__":
    for p in write_logs(Path(sys.argv[1])):
        print(p)
