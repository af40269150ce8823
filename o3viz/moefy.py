"""MoEfication: a real, honest mixture-of-experts made from the dense embedded model (Zhang et al.
2022, "MoEfication: Transformer Feed-forward Layers are Mixtures of Experts").

Each decoder layer's MLP ``down(act(gate(x)) * up(x))`` has I intermediate neurons. They are split
into E equal experts by balanced spherical k-means on their co-activation patterns over real text
(which tokens fire each neuron). A token is routed to the k experts with the largest activation
mass (sum of |activation| over the expert's neurons); the others' neurons are zeroed before
``down``. With k = E nothing is zeroed and the output equals the dense model's exactly.

What this is: the dense model's *learned* weights, split into experts after training; the routing
is by the token's actual activations (an oracle router), not a router trained jointly with experts.
It shows which groups of the model's own neurons a token uses, not how a trained MoE routes.

The swap wraps each MLP module (``MoefiedMLP``), never forks modeling code. Wrappers are installed
for the duration of ``moefied(...)`` (ref-counted, the app shares one model); per-run k lives in a
``ContextVar`` and a wrapper outside a run behaves exactly like the dense MLP. Clusterings are
cached as ``.npz`` under ``o3viz.paths.cache_dir()/moefy`` (loaded with ``allow_pickle=False``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from o3viz import paths
from o3viz.errors import UsageError
from o3viz.hooks.hookset import decoder_layers

_ACTIVE: ContextVar[MoefySetting | None] = ContextVar("o3viz_moefy", default=None)
_LOCK = threading.Lock()
_SWAPS: dict[int, list] = {}  # id(model) -> [users, experts, originals]
KMEANS_ITERS = 12
CALIBRATION_TOKENS = 1536  # tokens of real text the co-activation is measured on


@dataclass(frozen=True)
class MoefySetting:
    experts: int  # E
    top_k: int  # k


def parse_moefy(text: str) -> MoefySetting:
    """``"16,4"`` -> 16 experts, 4 chosen per token."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise UsageError(f"--moefy expects E,k (experts, experts per token), e.g. 16,4, not {text[:30]!r}")
    return MoefySetting(int(parts[0]), int(parts[1]))


class MoefiedRouter(torch.nn.Module):
    """Routes by activation mass: (N, I) activations -> (mass share (N, E) rows summing to 1,
    weights (N, k) all 1: chosen experts are summed unscaled, index (N, k))."""

    def __init__(self, assign: torch.Tensor, num_experts: int):
        super().__init__()
        self.num_experts = num_experts
        self.register_buffer("assign", assign, persistent=False)  # (I, E) one-hot, act dtype

    @property
    def top_k(self) -> int:
        """k of the run in this context (E outside a run)."""
        setting = _ACTIVE.get()
        return setting.top_k if setting is not None else self.num_experts

    def forward(self, act: torch.Tensor):
        mass = act.abs() @ self.assign  # (N, E)
        share = mass / mass.sum(-1, keepdim=True).clamp_min(torch.finfo(mass.dtype).tiny)
        index = share.topk(self.top_k, dim=-1).indices
        return share, torch.ones(index.shape, dtype=share.dtype, device=share.device), index


class MoefiedMLP(torch.nn.Module):
    """A dense gated MLP split into experts; dense (and unrouted) outside a ``moefied`` run."""

    def __init__(self, mlp: torch.nn.Module, clusters: np.ndarray, num_experts: int):
        super().__init__()
        self.mlp = mlp
        w = mlp.down_proj.weight
        assign = torch.nn.functional.one_hot(torch.as_tensor(clusters, dtype=torch.long), num_experts)
        self.router = MoefiedRouter(assign.to(w.dtype).to(w.device), num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        setting = _ACTIVE.get()
        if setting is None:
            return self.mlp(x)
        m = self.mlp
        act = m.act_fn(m.gate_proj(x)) * m.up_proj(x)  # (B, T, I)
        _, _, index = self.router(act.reshape(-1, act.shape[-1]))
        if setting.top_k < setting.experts:
            chosen = torch.zeros(index.shape[0], setting.experts, dtype=act.dtype, device=act.device)
            chosen.scatter_(1, index, 1.0)
            act = act * (chosen @ self.router.assign.T).view_as(act)  # zero the unchosen experts' neurons
        return m.down_proj(act)


def _mlps(model) -> list[torch.nn.Module]:
    layers = decoder_layers(model)
    mlps = [getattr(layer, "mlp", None) for layer in layers]
    if not all(
        m is not None and all(hasattr(m, a) for a in ("gate_proj", "up_proj", "down_proj", "act_fn"))
        for m in mlps
    ):
        raise UsageError(
            f"--moefy needs gated MLPs (gate/up/down projections); {type(model).__name__} has none"
        )
    return mlps


# ---- clustering -------------------------------------------------------------------------------
def balanced_kmeans(features: np.ndarray, k: int, iters: int = KMEANS_ITERS, seed: int = 0) -> np.ndarray:
    """(I, F) row features -> (I,) cluster ids, each cluster exactly I / k rows (spherical k-means
    with a greedy capacity-constrained assignment)."""
    n = features.shape[0]
    if n % k:
        raise UsageError(f"{n} neurons cannot be split into {k} equal experts; pick E dividing {n}")
    x = features / np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    centers = x[rng.choice(n, k, replace=False)]
    labels = np.zeros(n, np.int64)
    for _ in range(iters):
        labels = _assign_balanced(x @ centers.T, n // k)
        for c in range(k):
            v = x[labels == c].sum(0)
            centers[c] = v / max(np.linalg.norm(v), 1e-12)
    return labels


def _assign_balanced(sim: np.ndarray, capacity: int) -> np.ndarray:
    """Capacity-constrained assignment in rounds: every unassigned neuron proposes to its most
    similar cluster with room; each cluster keeps its most similar proposers up to its room."""
    n, k = sim.shape
    labels = np.full(n, -1, np.int64)
    room = np.full(k, capacity)
    while (labels < 0).any():
        free = np.flatnonzero(labels < 0)
        s = np.where(room[None, :] > 0, sim[free], -np.inf)
        choice = s.argmax(1)
        for c in np.unique(choice):
            bidders = free[choice == c]
            best = bidders[np.argsort(-sim[bidders, c], kind="stable")[: room[c]]]
            labels[best], room[c] = c, room[c] - len(best)
    return labels


def calibration_text() -> tuple[str, str]:
    """(text, description): GSM8K problems 0-39 with their worked answers (the full list, or the
    sample the package ships), else the generated text of the bundled sample traces. Both are real
    text."""
    from o3viz.tasks.spec import gsm8k_rows

    rows = gsm8k_rows()[:40]
    if len(rows) == 40:
        return "\n\n".join(
            f"{r['question']}\n{r['answer']}" for r in rows
        ), "GSM8K test problems 0-39 with answers"
    from o3viz.trace import load_trace

    texts = [load_trace(p).text for p in sorted(paths.samples_dir().glob("*.o3trace.json.gz"))[:8]]
    return "\n\n".join(texts), "generated text of the bundled sample traces"


@torch.inference_mode()
def neuron_activations(model, tokenizer, text: str, max_tokens: int = CALIBRATION_TOKENS) -> list[np.ndarray]:
    """Per layer (T, I) float32 intermediate activations (the input of ``down``) over ``text``."""
    ids = tokenizer(text, return_tensors="pt").input_ids[:, :max_tokens].to(model.device)
    acts: list[np.ndarray] = []
    handles = [
        m.down_proj.register_forward_pre_hook(lambda mod, args: acts.append(args[0][0].float().cpu().numpy()))
        for m in _mlps(model)
    ]
    try:
        model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return acts


def cluster_neurons(acts: list[np.ndarray], experts: int) -> np.ndarray:
    """(L, I) expert id of every neuron: co-activation = the neuron fires (|a| above its layer's
    median magnitude) on the same tokens."""
    out = []
    for a in acts:
        fires = (np.abs(a) > np.median(np.abs(a))).astype(np.float32)  # (T, I)
        out.append(balanced_kmeans(fires.T - fires.mean(1)[None, :], experts))
    return np.stack(out).astype(np.int32)


def clustering(model, tokenizer, experts: int) -> tuple[np.ndarray, dict]:
    """The cached (L, I) clustering for ``model`` into ``experts`` experts (computed once)."""
    text, what = calibration_text()
    info = getattr(model, "o3viz_info", None)
    key = hashlib.sha256(
        f"{getattr(info, 'model_id', type(model).__name__)}|{getattr(info, 'revision', '')}|{experts}|{text}".encode()
    ).hexdigest()[:16]
    path = paths.cache_dir() / "moefy" / f"clusters_E{experts}_{key}.npz"
    meta = {"experts": experts, "calibration": what, "method": "balanced spherical k-means on co-activation"}
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            return z["clusters"], meta | {"cache": str(path)}
    clusters = cluster_neurons(neuron_activations(model, tokenizer, text), experts)
    _save_npz(path, clusters)
    return clusters, meta | {"cache": str(path)}


def _save_npz(path: Path, clusters: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, clusters=clusters)
    tmp.replace(path)


# ---- installing -------------------------------------------------------------------------------
def active() -> MoefySetting | None:
    return _ACTIVE.get()


def _swap_in(model, clusters: np.ndarray, experts: int) -> list:
    layers = decoder_layers(model)
    originals = []
    for layer, c in zip(layers, clusters, strict=True):
        originals.append(layer.mlp)
        layer.mlp = MoefiedMLP(layer.mlp, c, experts)
    return originals


@contextmanager
def moefied(model, tokenizer, setting: MoefySetting, clusters: np.ndarray | None = None) -> Iterator[dict]:
    """Run ``model`` as a MoEfied model with ``setting`` in this context; yields provenance info."""
    if not 1 <= setting.top_k <= setting.experts:
        raise UsageError(f"--moefy: k must lie in 1..E, not k={setting.top_k} with E={setting.experts}")
    mlps = _mlps(model)
    info: dict = {"experts": setting.experts, "method": "given clustering"}
    if clusters is None:
        clusters, info = clustering(model, tokenizer, setting.experts)
    if clusters.shape != (len(mlps), mlps[0].down_proj.in_features):
        raise UsageError(f"the clustering's shape {clusters.shape} does not fit this model")
    with _LOCK:
        entry = _SWAPS.get(id(model))
        if entry is None:
            entry = _SWAPS[id(model)] = [0, setting.experts, _swap_in(model, clusters, setting.experts)]
        elif entry[1] != setting.experts:
            raise UsageError(
                f"the model is busy as a {entry[1]}-expert MoEfied model; try again when that run ends"
            )
        entry[0] += 1
    token = _ACTIVE.set(setting)
    try:
        yield info | {"top_k": setting.top_k}
    finally:
        _ACTIVE.reset(token)
        with _LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                for layer, mlp in zip(decoder_layers(model), entry[2], strict=True):
                    layer.mlp = mlp
                del _SWAPS[id(model)]
