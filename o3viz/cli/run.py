"""``o3viz run``: one run (a capture or the verify/optimize loop, either optionally on a compressed
context) saved as a trace file. The options become one ``o3viz.run.request.RunRequest``
(``request_from_args``), the same settings object the app's Run page builds, validated by its one
``validate``, and ``o3viz.run.dispatch.execute`` runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from o3viz.cli._internals import add_internals_arguments, internals_settings
from o3viz.compress.context import CompressionConfig
from o3viz.errors import UsageError, parse_option
from o3viz.hooks.steer import STEER_ALPHA, parse_steer_heads
from o3viz.run.config import (
    CaptureConfig,
    DAAConfig,
    SteerSpan,
    parse_layers,
    parse_top_k,
    resolve_layers,
)
from o3viz.run.daa.modes import DAA_MODE_TABLE, DAA_MODES
from o3viz.run.daa.steer_spans import check_spans
from o3viz.run.layer_recorders import check_internals_for
from o3viz.run.request import RunRequest


def add_capture_arguments(p: argparse.ArgumentParser, *, task_list: bool = False) -> None:
    """The run's settings; ``task_list`` adds ``--tasks`` (a paired run, ``o3viz.cli._paired_run``)
    as a fourth source besides ``--prompt``, ``--prompt-file`` and ``--task``."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="the prompt text")
    src.add_argument("--prompt-file", type=Path, help="read the prompt from this file (UTF-8)")
    src.add_argument(
        "--task", help="a built-in task verified by the loop: gsm8k:N, humaneval:HumanEval/N, mbppplus:Mbpp/N"
    )
    if task_list:
        from o3viz.cli._paired_run import add_paired_arguments

        add_paired_arguments(p, src)
    p.add_argument(
        "--tasks-file",
        type=Path,
        help="read the GSM8K or MBPP+ list of --task/--tasks from this JSONL file (default: $O3VIZ_DATA's "
        "full list where it is, else the sample that ships with o3viz: gsm8k:0..49, the first 20 MBPP+)",
    )
    p.add_argument(
        "--model",
        default=None,
        help="hub id, model directory or .gguf file (default: embedded SmolLM2-135M-Instruct)",
    )
    p.add_argument("--max-new-tokens", type=int, default=256, help="most tokens to generate (default 256)")
    p.add_argument("--seed", type=int, default=0, help="random seed (sampling; default 0)")
    p.add_argument("--sample", action="store_true", help="sample instead of greedy decoding")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    p.add_argument(
        "--daa",
        choices=DAA_MODES,
        default="off",
        help="Dynamic Attention Allocation mode (default off): "
        + "; ".join(f"{mode}: {spec.does}" for mode, spec in DAA_MODE_TABLE.items()),
    )
    p.add_argument(
        "--daa-strength", type=float, default=1.0, help="DAA strength λ for allocate (default 1.0)"
    )
    p.add_argument(
        "--layers",
        default="auto",
        help="layers whose per-head rows are kept: auto (first, middle, "
        "last), all, none, or indices like 0,5,29 (default auto)",
    )
    p.add_argument(
        "--top-k", default="64", help="keep the k largest keys per head row, or 'all' (default 64)"
    )
    p.add_argument(
        "--explore", type=int, default=0, help="branch at the K strongest decision points (default 0)"
    )
    add_steer_arguments(p)
    add_internals_arguments(p)


def add_steer_arguments(p: argparse.ArgumentParser) -> None:
    """DAA's steer mode (PASTA): any ``--steer``/``--steer-segment`` turns it on."""
    s = p.add_argument_group(
        "steering (attention to unmarked prompt keys scaled by alpha in the chosen heads)"
    )
    s.add_argument(
        "--steer",
        action="append",
        default=[],
        metavar="TEXT",
        help="a prompt span to steer towards (repeatable)",
    )
    s.add_argument(
        "--steer-segment",
        action="append",
        default=[],
        metavar="NAME",
        help="a prompt segment to steer towards: instruction, question or 'sentence N' (repeatable)",
    )
    s.add_argument(
        "--steer-occurrence",
        type=int,
        action="append",
        default=[],
        metavar="N",
        help="which occurrence of a --steer text (1-based; the i-th goes with the i-th --steer)",
    )
    s.add_argument(
        "--steer-alpha", type=float, default=STEER_ALPHA, help="scale of unmarked keys (default 0.01)"
    )
    s.add_argument(
        "--steer-heads",
        default="all",
        help="heads to steer: all, auto (profiled) or layer.head pairs like 3.1,5.0",
    )


def _daa(args: argparse.Namespace) -> DAAConfig:
    texts, occ = getattr(args, "steer", []), getattr(args, "steer_occurrence", [])
    if len(occ) > len(texts):
        raise UsageError("--steer-occurrence: give at most one per --steer")
    spans = [SteerSpan(t, occ[i] if i < len(occ) else None) for i, t in enumerate(texts)]
    spans += [SteerSpan(segment=name) for name in getattr(args, "steer_segment", [])]
    mode = args.daa
    if spans and mode == "off":
        mode = "steer"
    elif spans and mode != "steer":
        raise UsageError(f"--steer is DAA's steer mode; it does not combine with --daa {mode}")
    if not spans:
        return DAAConfig(mode=mode, strength=args.daa_strength)
    heads = parse_option(parse_steer_heads, "--steer-heads", args.steer_heads)
    return DAAConfig(
        mode=mode, strength=args.daa_strength, spans=spans, steer_alpha=args.steer_alpha, steer_heads=heads
    )


def _read_prompt(args: argparse.Namespace) -> str:
    if getattr(args, "task", None) is not None:
        from o3viz.tasks.spec import load_task

        return load_task(args.task).prompt  # validates the id before the model loads
    if args.prompt is not None:
        prompt = args.prompt
    else:
        from o3viz.trace.files import read_bounded
        from o3viz.trace.io import MAX_FILE_BYTES

        try:
            prompt = read_bounded(args.prompt_file, MAX_FILE_BYTES).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"--prompt-file: {args.prompt_file} is not UTF-8 text (byte {exc.start})"
            ) from None
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="generate with attention capture and save a trace",
        description="Run the model on a prompt with instrumented attention (and optional DAA "
        "and branch exploration) and save the trace file. With --tasks, run a task list under two "
        "settings (--pair-a, --pair-b) into two paired datasets of the library instead.",
        epilog="paired run: o3viz run --tasks gsm8k --limit 20 --pair-a daa=off --pair-b daa=allocate "
        "--dataset gsm8k-daa runs the first 20 GSM8K problems under both settings (interleaved, task "
        "by task; Ctrl-C stops after the current generation and keeps the finished pairs, a rerun with "
        "the same settings resumes; other settings are refused), stores them as "
        "'gsm8k-daa · A: daa=off' and 'gsm8k-daa · B: daa=allocate', and "
        "prints the paired table of o3viz compare --dataset. A setting is key=value items separated "
        "by commas: daa=off|observe|allocate|steer, strength=F (allocate's λ), model=PATH, "
        "steer=question|instruction|'sentence N' (steering, with alpha=F and heads=all|auto|L.H,...). "
        "The other options (--model, --max-new-tokens, --layers, ...) apply to both sides; each side "
        "runs one round (its first reply), so --rounds above 1 is refused.",
    )
    add_capture_arguments(p, task_list=True)
    add_loop_arguments(p)
    p.add_argument(
        "--out",
        type=Path,
        help="output file, .o3trace.json or .o3trace.json.gz (required, except with --tasks)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=run)


def check_out(path: Path, overwrite: bool) -> None:
    """Refuse a bad ``--out`` before any slow work (the write itself is checked again, atomically)."""
    from o3viz.trace.files import check_output

    if not path.name.endswith((".o3trace.json", ".o3trace.json.gz")):
        raise UsageError(f"--out: {path.name} must end in .o3trace.json or .o3trace.json.gz")
    check_output(path, overwrite)


class Progress:
    """tqdm bar on stderr; the tail of the generated text streams in the bar's postfix."""

    def __init__(self, total: int):
        from tqdm import tqdm

        self.text = ""
        self.bar = tqdm(total=total, unit="tok", file=sys.stderr, leave=False, dynamic_ncols=True)

    def __call__(self, index: int, piece: str, total: int) -> None:
        self.text += piece
        self.bar.set_postfix_str(self.text[-40:].replace("\n", " "), refresh=False)
        self.bar.update(1)

    def restart(self, message: str) -> None:
        """A new round of the loop: report the last one and start the bar again."""
        self.bar.write(message, file=sys.stderr)
        self.text = ""
        self.bar.reset()

    def close(self) -> None:
        self.bar.close()
        sys.stderr.write(self.text + "\n")


def add_loop_arguments(p: argparse.ArgumentParser) -> None:
    """Verification (``--rounds``) and compression (``--compress``) on top of a capture."""
    v = p.add_argument_group("verification (the base → verify → optimize loop)")
    v.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="max rounds of the loop (default 3 with --task, else 1 = no revision)",
    )
    v.add_argument(
        "--confidence-threshold",
        type=float,
        default=0.9,
        help="stop when nothing failed and the answer's mean token probability reaches this (default 0.9)",
    )
    v.add_argument("--timeout", type=float, default=10.0, help="seconds per sandboxed test run (default 10)")
    c = p.add_argument_group("compression (pointers before the model, KV release during generation)")
    c.add_argument(
        "--compress",
        action="store_true",
        help="run on the compressed context and record the events (combines with every other option)",
    )
    c.add_argument(
        "--compress-threshold", type=float, default=0.7, help="compress at score >= this (default 0.7)"
    )
    c.add_argument(
        "--expand-threshold", type=float, default=0.3, help="expand at score <= this (default 0.3)"
    )


def request_from_args(args: argparse.Namespace) -> RunRequest:
    """The options as a validated ``RunRequest``; raises ``UsageError`` with one line on bad input.
    Loop and compression options (``add_loop_arguments``) are optional on ``args``."""
    req = RunRequest(
        prompt=_read_prompt(args),
        task_id=getattr(args, "task", None),
        model=args.model,
        max_new_tokens=args.max_new_tokens,
        capture=CaptureConfig(
            layers=parse_option(parse_layers, "--layers", args.layers),
            top_k=parse_option(parse_top_k, "--top-k", str(args.top_k)),
            **internals_settings(args),
        ),
        daa=_daa(args),
        explore=args.explore,
        seed=args.seed,
        do_sample=args.sample,
        temperature=args.temperature,
        rounds=getattr(args, "rounds", None),
        confidence_threshold=getattr(args, "confidence_threshold", 0.9),
        timeout_s=getattr(args, "timeout", 10.0),
        compression=_compression(args),
    )
    req.validate()
    if req.daa.mode == "steer":
        check_spans(req.prompt, req.daa.spans)  # a missing or ambiguous span: one line, before the model
    return req


def _compression(args: argparse.Namespace) -> CompressionConfig | None:
    if not getattr(args, "compress", False):
        return None
    return CompressionConfig(
        compress_threshold=args.compress_threshold, expand_threshold=args.expand_threshold
    )


def use_tasks_file(args: argparse.Namespace) -> None:
    """``--tasks-file`` backs the list that ``--task`` or ``--tasks`` names; checked before any work."""
    if getattr(args, "tasks_file", None) is None:
        return
    from o3viz.tasks.sources import use_tasks_file as use

    named = getattr(args, "tasks", None) or (getattr(args, "task", None) or "").partition(":")[0]
    if not named:
        raise UsageError("--tasks-file goes with --task gsm8k:N / mbppplus:ID or --tasks gsm8k / mbppplus")
    use(named.lower(), args.tasks_file)


def run(args: argparse.Namespace) -> int:
    use_tasks_file(args)
    if getattr(args, "tasks", None) is not None:
        from o3viz.cli._paired_run import run_paired

        return run_paired(args, request_from_args)
    from o3viz.cli._paired_run import check_single

    check_single(args)
    if args.out is None:
        raise UsageError("--out is required (the trace file to write)")
    from o3viz.model import load_model
    from o3viz.run.dispatch import execute
    from o3viz.run.sizing import preflight
    from o3viz.trace.io import save_trace

    req = request_from_args(args)
    check_out(args.out, args.overwrite)
    preflight(req)  # a trace that could not be saved is refused here, before the model loads
    model, tok = load_model(req.model)
    resolve_layers(req.capture.layers, model.config.num_hidden_layers)  # fail before the bar
    check_internals_for(model, req.capture)
    progress = Progress(req.max_new_tokens)
    try:
        trace = execute(
            model,
            tok,
            req,
            on_token=progress,
            on_round=lambda rnd: progress.restart(f"round {rnd.index}: {rnd.verdict} → {rnd.action}"),
        )
    finally:
        progress.close()
    path = save_trace(trace, args.out, overwrite=args.overwrite)
    r = trace.final
    extra = (
        f", {len(trace.rounds)} rounds, final verdict {r.verdict}"
        if len(trace.rounds) > 1 or r.verdict
        else ""
    )
    if trace.compression is not None:
        extra += f", compression ratio {trace.compression.ratio:.2f}, {len(trace.compression.events)} events"
    st = r.attention.steer if r.attention is not None else None
    if st is not None:
        extra += f", steered {len(st.spans)} span(s) in {len(st.heads)} heads ({st.head_choice}, alpha {st.alpha:g})"
    print(
        f"saved {path} ({path.stat().st_size} bytes): {len(r.tokens)} tokens, {len(r.steps)} steps, "
        f"{len(r.decision_points)} decision points, {len(r.branches)} branches, answer {r.answer!r}{extra}"
    )
    return 0
