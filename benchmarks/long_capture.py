"""Capture at long lengths: peak memory above the model, time against ``generate``, trace size.

For a long prompt plus a short generation at 1k, 4k, 8k and 16k tokens (32k with
``--with-32k``).

Each length runs in a fresh process (``--child``; ``benchmarks/_long_capture_child.py``): it
loads the default model, warms up with a short capture, then samples its resident memory (psutil,
every 20 ms) through one capture of a prompt of that length; the figure is the peak above the RSS
after the warm-up. The same process then times ``--pairs`` interleaved (plain sdpa ``generate``,
capture) pairs on the same prompt ids (EOS suppressed, so both generate exactly ``--new-tokens``)
up to ``--time-max`` tokens; the ratio printed is the median of the per-pair ratios. The trace's gzip size gives bytes per token, and the
storage plan's sentence says what was kept differently at that length. Printed last: the growth of
the peak from 4k to 16k and the load average.

``--gen-tokens N`` measures one long generation instead: a short prompt (``GEN_PROMPT`` tokens)
and N generated tokens, EOS suppressed, in a fresh process: its peak memory above the model, its
time and its trace's size (figures ``*_gen_N``; not timed against ``generate``).

``--receiver N`` times the receiver-head analysis's forward (``o3viz.analysis.importance.receiver
.step_attention``: blockwise, each block reduced to step × step sums) against the enrichment
of the same N tokens (``o3viz.importers.enrich``'s own path on those ids: one window forwarded in
chunks of query rows with a KV cache, each chunk reduced to the mean rows or their top-k pairs,
prompt shares, step allocation and token statistics), in ``--pairs`` interleaved pairs on a text
cut into steps of ``RECEIVER_STEP`` tokens, with the peak memory above the model of each.

``--peers`` finds the longest capture each peer finishes on this machine under the same 16 GiB cap,
with the peers benchmark's own runners (``benchmarks/peers``: each tool in its own environment
under ``.venv-peers/``, made by ``make bench-peers``; a missing one is said, never skipped
silently): HF ``generate(output_attentions=True)``, inseq and TransformerLens climb
``PEER_LADDER`` (inseq and TransformerLens by one forward over the whole sequence, bisected once
between the last length that fit and the first that did not), each child stopped 1 GiB before
the cap or after ``--peer-time-limit`` seconds. Figures ``peer_longest_<tool>`` (tokens) and
``peer_peak_mb_<tool>_<n>``; o3viz's own longest is the 32,768-token run above.

``--views`` times building Inspect's attention and tokens figures (token heatmap of the mean and of
one layer's top-k pairs, step view, layer × head grid, relevance, tokens HTML) on capture-shaped
synthetic traces (``o3viz.testing.long_capture``) of 16k and 32k prompt tokens against the same at
1k: the median of ``VIEW_REPEATS`` builds each, in one process (no model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks._long_capture_child import capture_child, receiver_child, timed

LENGTHS = (1024, 4096, 8192, 16384)
PEER_LADDER = (1024, 2048, 4096)  # --peers: lengths climbed (every peer stops by 4k on 16 GiB here)
PEER_TOOLS = "hf_output_attentions,inseq_attention,tl_run_with_cache"
GEN_PROMPT = 256  # prompt tokens of the long-generation run
VIEW_REPEATS = 5
BASELINES = {
    **{
        f"peak_above_model_mb_{n}": "RSS after loading the model and a warm-up capture"
        for n in (*LENGTHS, 32768)
    },
    "peak_growth_4k_to_16k": "peak_above_model_mb_4096",
    "peak_above_model_mb_gen_8192": "RSS after loading the model and a warm-up capture",
    **{f"receiver_vs_enrichment_{n}": f"enrichment_forward_s_{n}" for n in (2048, 4096, 8192, 16384)},
    **{f"views_build_{n}_vs_1024": "views_build_s_1024" for n in (16384, 32768)},
}
GOALS = {
    "peak_above_model_mb_16384": "<= 2048 (issue 40)",
    "peak_growth_4k_to_16k": "<= 4.5x (issue 40)",
    "capture_vs_generate_1024": "<= 1.05 (issue 40)",
    "capture_vs_generate_8192": "<= 1.10 (issue 40)",
    "receiver_vs_enrichment_16384": "<= 1.2 (issue 40)",
    "receiver_vs_enrichment_8192": "<= 1.2 at 16k (issue 40; measured at 8k)",
    "views_build_16384_vs_1024": "about 1 (issue 40: open as fast as at 1k)",
    "views_build_32768_vs_1024": "about 1 (issue 40: open as fast as at 1k)",
    **{
        f"peer_longest_{t}": "o3viz: 32,768 tokens within the same cap (issue 40)"
        for t in PEER_TOOLS.split(",")
    },
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="prompt lengths in tokens")
    p.add_argument("--with-32k", action="store_true", help="also run 32,768 tokens")
    p.add_argument("--new-tokens", type=int, default=16, help="tokens generated per run (default 16)")
    p.add_argument("--pairs", type=int, default=2, help="interleaved generate/capture pairs per length")
    p.add_argument("--time-max", type=int, default=8192, help="time pairs only up to this length")
    p.add_argument(
        "--gen-tokens", type=int, default=0, help="instead: one long generation of this many tokens"
    )
    p.add_argument(
        "--receiver", type=int, default=0, help="instead: receiver-head analysis vs enrichment at N tokens"
    )
    p.add_argument("--views", action="store_true", help="instead: figure builds at 16k/32k against 1k")
    p.add_argument(
        "--peers", action="store_true", help="instead: the longest capture each peer finishes under 16 GiB"
    )
    p.add_argument(
        "--peer-time-limit", type=float, default=900.0, help="--peers: seconds before a child is stopped"
    )
    p.add_argument(
        "--threads", type=int, default=0, help="torch threads in the measuring process (0: torch's default)"
    )
    p.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)


def _view_seconds(n: int) -> float:
    """Median seconds to build the Attention and Tokens tabs' figures for an n-token capture."""
    from o3viz.figures import (
        layer_head_heatmap,
        relevance_figure,
        step_attention_heatmap,
        token_heatmap,
        tokens_html,
    )
    from o3viz.testing.long_capture import long_capture_trace

    rnd = long_capture_trace(n).final
    layer = rnd.attention.layers[0]

    def build():
        step_attention_heatmap(rnd).to_json()
        token_heatmap(rnd, 0, 64).to_json()
        token_heatmap(rnd, 0, 64, layer=layer).to_json()
        layer_head_heatmap(rnd, 0, 8).to_json()
        relevance_figure(rnd, 0, 64).to_json()
        tokens_html(rnd)

    build()  # warm-up (imports, plotly validators)
    return statistics.median(timed(build) for _ in range(VIEW_REPEATS))


def _views() -> int:
    base = _view_seconds(1024)
    print(f"views_build_s_1024: {base:.3f}")
    for n in (16384, 32768):
        t = _view_seconds(n)
        print(f"views_build_{n}_vs_1024: {t / base:.2f} ({t:.3f} s)")
    print(f"loadavg: {Path('/proc/loadavg').read_text().strip()}")
    return 0


def _run_child(n: int, args: argparse.Namespace) -> dict:
    """One measurement in a fresh process; ``n`` prompt tokens."""
    root = Path(__file__).resolve().parents[1]  # the checkout: benchmarks/ is not installed
    cmd = [sys.executable, "-m", "benchmarks", "long_capture", "--child", str(n)]
    cmd += [
        "--receiver",
        str(args.receiver),
        "--gen-tokens",
        str(args.gen_tokens),
        "--new-tokens",
        str(args.new_tokens),
        "--pairs",
        str(args.pairs),
        "--time-max",
        str(args.time_max),
        "--threads",
        str(args.threads),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"length": n, "error": tail}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _report(r: dict) -> None:
    n = r["length"]
    if "error" in r:
        print(f"long_capture_{n}_error: {r['error']}")
        return
    print(f"peak_above_model_mb_{n}: {r['peak_above_model_mb']:.0f}")
    print(f"capture_s_{n}: {r['capture_s']:.1f} (prompt {r['prompt_tokens']} + {r['generated']} tokens)")
    if r["ratios"]:
        print(f"capture_vs_generate_{n}: {statistics.median(r['ratios']):.3f} (pairs: {_fmt(r['ratios'])})")
    print(f"trace_bytes_{n}: {r['trace_bytes']} ({r['bytes_per_token']:.0f} bytes per token)")
    print(f"kept_{n}: {r['kept'] or 'everything asked for'}")


def _fmt(xs: list[float]) -> str:
    return ", ".join(f"{x:.3f}" for x in xs)


def run(args: argparse.Namespace) -> int:
    if args.child:
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        return receiver_child(args.child, args) if args.receiver else capture_child(args.child, args)
    if args.views:
        return _views()
    if args.peers:
        return _peers(args)
    if args.receiver:
        r = _run_child(args.receiver, args)
        n = args.receiver
        if "error" in r:
            print(f"receiver_{n}_error: {r['error']}")
        else:
            print(f"receiver_vs_enrichment_{n}: {statistics.median(r['ratios']):.3f} (pairs: {_fmt(r['ratios'])}; "
                  f"{r['tokens']} tokens, {r['steps']} steps)")  # fmt: skip
            print(f"enrichment_forward_s_{n}: {r['enrich_s']:.1f}")
            print(f"receiver_forward_s_{n}: {r['receiver_s']:.1f}")
            print(f"enrichment_peak_above_model_mb_{n}: {r['enrich_peak_mb']:.0f}")
            print(f"receiver_peak_above_model_mb_{n}: {r['receiver_peak_mb']:.0f}")
        print(f"loadavg: {Path('/proc/loadavg').read_text().strip()}")
        return 0
    if args.gen_tokens:
        r = _run_child(GEN_PROMPT, args)
        r["length"] = f"gen_{args.gen_tokens}"
        _report(r)
        print(f"loadavg: {Path('/proc/loadavg').read_text().strip()}")
        return 0
    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    if args.with_32k and 32768 not in lengths:
        lengths.append(32768)
    results = {}
    for n in lengths:
        results[n] = _run_child(n, args)
        _report(results[n])
        sys.stdout.flush()
    a, b = results.get(4096, {}), results.get(16384, {})
    if "peak_above_model_mb" in a and "peak_above_model_mb" in b:
        print(f"peak_growth_4k_to_16k: {b['peak_above_model_mb'] / max(a['peak_above_model_mb'], 1):.2f}x")
    print(f"loadavg: {Path('/proc/loadavg').read_text().strip()}")
    return 0


def _peers(args: argparse.Namespace) -> int:
    """The peers' longest capture within the cap, by the peers benchmark's driver (memory phase only)."""
    import tempfile

    from transformers import AutoTokenizer

    from benchmarks.capture import PROMPT
    from benchmarks.peers.driver import Driver, Settings
    from benchmarks.peers.tools import by_name
    from o3viz.model import resolve_model
    from o3viz.run.prompt import layout_prompt

    model_dir = resolve_model(None)[0]
    tok = AutoTokenizer.from_pretrained(model_dir)

    def emit(fig) -> None:
        name = fig.figure.replace("longest_within_cap_", "longest_").replace("peak_mb_", "peak_mb_")
        print(f"peer_{name}: {fig.value}" + (f" ({fig.detail})" if fig.detail else ""), flush=True)

    with tempfile.TemporaryDirectory() as out:
        s = Settings(
            model=model_dir,
            ids=list(layout_prompt(tok, PROMPT).ids),
            prompt=PROMPT,
            tools=by_name(PEER_TOOLS),
            tokens=[],
            memory_tokens=list(PEER_LADDER),
            size_tokens=0,
            threads=args.threads or 2,
            time_limit_s=args.peer_time_limit,
            bisect=1,
            out=Path(out) / "peers.csv",
        )
        Driver(s, emit=emit).run()
    print(f"loadavg: {Path('/proc/loadavg').read_text().strip()}")
    return 0
