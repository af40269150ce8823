"""Capture options for what happens inside the layers: MoE routing, MoEfication and the logit lens
(``o3viz run ... --routing --moefy 16,4 --logit-lens 0,10,20,29``). Shared by every command that
takes the capture options."""

from __future__ import annotations

import argparse

from o3viz.errors import UsageError


def add_internals_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "inside the layers",
        "Record which experts each generated token was routed to (mixture-of-experts models) and "
        "what each layer would have predicted (the logit lens). Both are off by default.",
    )
    g.add_argument(
        "--routing",
        action="store_true",
        help="record MoE expert routing per generated token and MoE layer: chosen experts, their "
        "weights and the full router distribution (needs an MoE --model, or --moefy)",
    )
    g.add_argument(
        "--routing-top-n",
        type=int,
        default=None,
        metavar="N",
        help="keep only the N most probable experts of each distribution (default: all, fp16)",
    )
    g.add_argument(
        "--routing-prefill", action="store_true", help="also record the prompt tokens' chosen experts"
    )
    g.add_argument(
        "--moefy",
        metavar="E,k",
        default=None,
        help="run the dense model as a mixture of experts: split every MLP's neurons into E experts "
        "by co-activation on real text (MoEfication, Zhang et al. 2022; cached after the first run) "
        "and route each token to the k experts with the largest activation mass. k = E gives "
        "exactly the dense model; k < E is sparser. Implies --routing. Example: --moefy 16,4",
    )
    g.add_argument(
        "--logit-lens",
        metavar="LAYERS",
        default=None,
        help="layers whose residual stream is read through the final norm and the unembedding at "
        "every generated token, e.g. 0,10,20,29 (negative counts from the end; the last layer "
        "equals the model's output)",
    )
    g.add_argument("--lens-top-k", type=int, default=5, help="tokens kept per layer and token (default 5)")


def internals_settings(args: argparse.Namespace) -> dict:
    """CaptureConfig fields from the options; ``UsageError`` with one line on bad input."""
    from o3viz.moefy import parse_moefy
    from o3viz.run.config import parse_indices

    out: dict = {
        "routing": bool(args.routing or args.moefy),
        "routing_top_n": args.routing_top_n,
        "routing_prefill": args.routing_prefill,
        "lens_top_k": args.lens_top_k,
    }
    if args.routing_top_n is not None and args.routing_top_n < 1:
        raise UsageError(f"--routing-top-n must be at least 1, not {args.routing_top_n}")
    if args.lens_top_k < 1:
        raise UsageError(f"--lens-top-k must be at least 1, not {args.lens_top_k}")
    if args.moefy:
        setting = parse_moefy(args.moefy)
        if not 1 <= setting.top_k <= setting.experts:
            raise UsageError(f"--moefy: k must lie in 1..E, not {args.moefy}")
        out["moefy"] = (setting.experts, setting.top_k)
    if args.logit_lens:
        out["logit_lens"] = parse_indices(
            args.logit_lens, "--logit-lens", allow_empty=False
        )  # checked against the depth at capture
    return out
