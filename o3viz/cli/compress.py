"""``python -m o3viz compress FILE|- [--json]``: compress a text with pointers and print its
segments, scores, ratio and timing (no model needed)."""

from __future__ import annotations

import argparse
import json

from o3viz.compress.context import CompressionConfig, compress_context


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compress",
        help="compress a text with lossless pointers and print segments, scores and ratio",
        description="Split a text into segments, score each (redundancy and relevance to --question), "
        "replace compressible repeats by pointers like ⟦=§12⟧, and print the segments, scores, "
        "compression ratio and timing. The expansion is checked to equal the input byte for byte.",
    )
    p.add_argument("file", help="a text file, or - for standard input")
    p.add_argument(
        "--json", action="store_true", help="print one JSON object (segments, pointers, text, timing)"
    )
    p.add_argument("--compress-threshold", type=float, default=0.7, help="compress when score >= this (0.7)")
    p.add_argument("--expand-threshold", type=float, default=0.3, help="expand when score <= this (0.3)")
    p.add_argument("--question", default=None, help="the question; segments relevant to it score lower")
    p.add_argument(
        "--tokenizer",
        default=None,
        help="count model tokens: 'default' or a model path (default: a word/punctuation regex)",
    )
    p.add_argument("--limit", type=int, default=40, help="segments listed in text output (default 40)")
    p.add_argument("--show-text", action="store_true", help="also print the compressed text")
    p.set_defaults(func=run)


def _read(file: str) -> str:
    from o3viz.trace.files import read_bounded
    from o3viz.trace.io import MAX_FILE_BYTES

    return read_bounded(file, MAX_FILE_BYTES).decode("utf-8", errors="surrogateescape")


def _tokenizer(name: str | None):
    if name is None:
        return None
    from transformers import AutoTokenizer

    from o3viz.model import resolve_model

    target, _, _ = resolve_model(None if name == "default" else name)
    return AutoTokenizer.from_pretrained(target)


def run(args: argparse.Namespace) -> int:
    text = _read(args.file)
    config = CompressionConfig(
        compress_threshold=args.compress_threshold, expand_threshold=args.expand_threshold
    )
    ctx = compress_context(text, tokenizer=_tokenizer(args.tokenizer), config=config, question=args.question)
    lossless = ctx.expand() == text
    if args.json:
        print(json.dumps({**ctx.to_dict(), "lossless": lossless}, ensure_ascii=False))
        return 0 if lossless else 1
    print(f"segments: {len(ctx.segments)}  compressed: {sum(s.state == 'compressed' for s in ctx.segments)}")
    print(
        f"tokens: {ctx.original_tokens} -> {ctx.compressed_tokens} ({ctx.tokenizer})  ratio: {ctx.ratio:.3f}"
    )
    print(f"pointers: {len(ctx.pointers)}  lossless: {lossless}")
    print("timing: " + "  ".join(f"{k}={v * 1000:.1f}ms" for k, v in ctx.timing.items()))
    print(f"{'seg':>5} {'tok':>5} {'redund':>6} {'demand':>6} {'score':>6}  {'state':<10} {'ptr':>5}  text")
    for s in ctx.segments[: args.limit]:
        ptr = f"§{s.source}" if s.state == "compressed" else ""
        snippet = text[s.start : s.end][:60].replace("\t", " ")
        print(
            f"{s.index:>5} {s.token_end - s.token_start:>5} {s.redundancy:>6.2f} {s.demand:>6.2f} "
            f"{s.score:>6.2f}  {s.state:<10} {ptr:>5}  {snippet}"
        )
    if len(ctx.segments) > args.limit:
        print(f"... {len(ctx.segments) - args.limit} more segments (--limit)")
    if args.show_text:
        print("--- compressed text ---")
        print(ctx.text)
    return 0 if lossless else 1
