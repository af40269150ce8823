"""Counterfactual resampling (Thought Anchors, black-box): how the answer distribution changes
when step i is resampled instead of kept.

Prefix ``P_i`` is the prompt plus the text before step i; ``P_{i+1}`` includes step i. K rollouts
to a final answer are sampled from each of the S + 1 prefixes (so step i's "kept" rollouts are
step i+1's "resampled" ones, as in the paper). For step i:

- ``resampling_accuracy`` = acc(P_{i+1}) − acc(P_i), where the reference answer is known;
- ``resampling_kl`` = KL(answers of P_{i+1} ‖ answers of P_i), add-one smoothed over the answers seen;
- ``counterfactual_*``: the same, keeping only the rollouts of P_i whose new first sentence differs
  in meaning from step i: cosine similarity under ``threshold`` between sentence embeddings.
  With no sentence-embedding model offline, the embedding is the reader model's mean-pooled final
  hidden states (the embedded model by default), a weaker semantic measure than the paper's
  sentence transformer.

Dependencies (the paper's sentence-to-sentence counterfactual importance): ``matrix[j, i]`` is how
much more often step j's meaning reappears in the rollouts that kept step i (from ``P_{i+1}``) than
in those whose new step i differs (from ``P_i``); a step "reappears" when some sentence of a
rollout (its first ``MAX_ROLLOUT_SENTENCES``) has cosine similarity ≥ ``threshold`` with it. The
strongest positive entries become ``depends_on`` edges (``dependencies_from_matrix``).

``scores`` is ``counterfactual_accuracy`` when the trace has a reference answer, else
``counterfactual_kl``; where no rollout of any prefix differs from its step (the embedder calls
every resampled sentence the same), the resampling measure instead (``params["score"]`` says
which). Each score carries its interval and its per-step noise floor, and each step without a
score, or with a zero-width interval, a note saying why (``o3viz.analysis.importance.trust``). Rollouts
come from a backend (``o3viz.clients``) and are cached on disk, so an interrupted run resumes; ``max_rollouts`` caps the new rollouts of a run
(prefixes past the cap are left unscored and the record says ``complete: false``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from o3viz.analysis.importance.reading import check_steps
from o3viz.analysis.importance.stats import LEVEL
from o3viz.analysis.importance.trust import (  # noqa: F401 (_kl, _acc, trust_series: re-exported)
    FLOOR,
    INTERVALS,
    _acc,
    _diff,
    _kl,
    step_notes,
    trust_series,
)
from o3viz.clients import Backend, RolloutCache, Sampling
from o3viz.run.prompt import refuse_control_tokens, rollout_prompt
from o3viz.text.answers import extract_answer, normalize_answer
from o3viz.trace import Trace
from o3viz.trace.importance import ImportanceRecord

DEFAULT_THRESHOLD = 0.8  # cosine similarity under which a resampled step "differs" (the paper's)
MAX_ROLLOUT_SENTENCES = 64  # sentences of each rollout compared with the later steps (bounds the embedding)


@dataclass
class ResampleCost:
    """What a resampling run will cost, before it starts."""

    prefixes: int
    rollouts: int  # (S + 1) × K
    cached: int  # already on disk
    new: int  # to generate, after the cap
    max_new_tokens: int  # upper bound: new × max_tokens

    def line(self) -> str:
        return (
            f"{self.prefixes} prefixes × K = {self.rollouts} rollouts ({self.cached} cached); "
            f"{self.new} to generate, at most {self.max_new_tokens:,} new tokens"
        )


def prefixes(trace: Trace, round_index: int = -1) -> list[str]:
    """S + 1 reasoning prefixes: before each step, then through the last step."""
    rnd = trace.rounds[round_index]
    check_steps(rnd, "resampling")
    return [rnd.text[: s.start] for s in rnd.steps] + [rnd.text[: rnd.steps[-1].end]]


def estimate(
    trace: Trace,
    backend: Backend,
    prompt: str,
    k: int,
    sampling: Sampling,
    cache: RolloutCache,
    max_rollouts: int | None = None,
    round_index: int = -1,
) -> ResampleCost:
    pre = prefixes(trace, round_index)
    cached = sum(min(k, len(cache.get(cache.key(backend.name, prompt + p, sampling)))) for p in pre)
    new = len(pre) * k - cached
    new = new if max_rollouts is None else min(new, max_rollouts)
    return ResampleCost(len(pre), len(pre) * k, cached, new, new * sampling.max_tokens)


def rollout_answer(prefix: str, rollout: str) -> str | None:
    found = extract_answer(prefix + rollout)
    return None if found is None else normalize_answer(found.text)


def first_sentence(text: str) -> str:
    from o3viz.text.spans import split_spans

    spans = split_spans(text)
    return text[spans[0][0] : spans[0][1]] if spans else text.strip()


def embed(model: Any, tokenizer: Any, texts: list[str], batch: int = 16) -> np.ndarray:
    """(N, d) unit vectors: the reader's final hidden states, mean-pooled over each text's tokens."""
    import torch

    out = []
    device = next(model.parameters()).device
    for s in range(0, len(texts), batch):
        enc = tokenizer(
            [t or " " for t in texts[s : s + batch]],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=256,
            add_special_tokens=False,
        ).to(device)
        with torch.inference_mode():
            h = model.get_decoder()(
                input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]
            ).last_hidden_state
        m = enc["attention_mask"][..., None].float()
        v = (h.float() * m).sum(1) / m.sum(1).clamp(min=1)
        out.append(torch.nn.functional.normalize(v, dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 1), np.float32)


def collect_rollouts(
    backend: Backend,
    prompt: str,
    pre: list[str],
    k: int,
    sampling: Sampling,
    cache: RolloutCache,
    *,
    max_rollouts: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[list[str] | None]:
    """K rollouts per prefix (None where the cap or a stop left it undone), cached as they come."""
    total, done, budget = len(pre) * k, 0, max_rollouts
    out: list[list[str] | None] = []
    for p in pre:
        key = cache.key(backend.name, prompt + p, sampling)
        have = cache.get(key)[:k]
        need = k - len(have)
        if need and ((budget is not None and budget < need) or (should_stop is not None and should_stop())):
            out.append(None)
            continue
        while len(have) < k:  # one sample at a time into the cache: a kill loses at most one batch
            step = min(k - len(have), getattr(backend, "batch", 1))
            got = backend.complete(prompt + p, step, sampling, first=len(have))
            cache.add(key, got)
            have += got
            done += len(got)
            if on_progress is not None:
                on_progress(min(total, done + sum(len(x) for x in out if x)), total)
        if budget is not None:
            budget -= need
        out.append(have)
    return out


def resample_importance(
    trace: Trace,
    backend: Backend,
    reader: tuple[Any, Any],
    *,
    k: int = 8,
    sampling: Sampling | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    cache: RolloutCache | None = None,
    max_rollouts: int | None = None,
    prompt: str | None = None,
    round_index: int = -1,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    level: float = LEVEL,
    rollouts: list[list[str] | None] | None = None,
) -> ImportanceRecord:
    """The resampling record of one round. ``reader`` = (model, tokenizer) for the embeddings;
    ``level``: the coverage of the bootstrap intervals; ``rollouts``: already collected (e.g. by
    ``adaptive.collect_adaptive``), one list per prefix or None, instead of K from each prefix."""
    sampling = sampling or Sampling()
    cache = cache or RolloutCache()
    rnd = trace.rounds[round_index]
    pre = prefixes(trace, round_index)
    # the prefixes are a file's text, and a backend tokenizes them with control tokens parsed:
    # a step spelling ``<|im_end|>`` would end the turn there (issue 38, finding 7)
    refuse_control_tokens(pre[-1] if pre else "", "the trace's steps")
    prompt = (
        prompt
        if prompt is not None
        else rollout_prompt(trace, getattr(backend, "tokenizer", None), round_index)
    )
    rolls = (
        rollouts
        if rollouts is not None
        else collect_rollouts(
            backend,
            prompt,
            pre,
            k,
            sampling,
            cache,
            max_rollouts=max_rollouts,
            on_progress=on_progress,
            should_stop=should_stop,
        )
    )
    answers = [
        None if r is None else [rollout_answer(p, x) for x in r] for p, r in zip(pre, rolls, strict=True)
    ]
    step_vecs = embed(reader[0], reader[1], [st.text for st in rnd.steps])  # once, for both uses
    different = _different(reader, rnd, rolls, threshold, step_vecs)
    ref = normalize_answer(trace.task.reference) if trace.task.reference else None
    series = _series(answers, different, ref)
    score = _score_name(series, ref)
    kept_all = [None if d is None else [True] * len(d) for d in different]  # resampling: every rollout
    trust_with = different if score.startswith("counterfactual") else kept_all
    series.update(trust_series(answers, trust_with, ref, level, sampling.seed))
    scores = series[score]
    notes = step_notes(
        answers,
        trust_with,
        scores,
        series,
        counterfactual=score.startswith("counterfactual"),
        threshold=threshold,
    )
    from o3viz.analysis.importance.dependencies import dependencies_from_matrix

    matrix = reappearance_matrix(reader, rnd, rolls, different, threshold, step_vecs)
    return ImportanceRecord(
        method="resample",
        source="resample",
        scores=scores,
        depends_on=dependencies_from_matrix(matrix),
        matrix=matrix,
        series=series,
        params={
            "k": k,
            "threshold": threshold,
            **sampling.key(),
            "max_rollouts": max_rollouts,
            "score": score,
            "level": level,
            "interval": INTERVALS["kl" if ref is None else "accuracy"],
            "noise_floor": FLOOR,
            "matrix": "P(step j reappears | step i kept) - P(step j reappears | step i resampled, different)",
        },
        model={"model_id": backend.name, "embedding": _model_id(reader[0]) + " (mean-pooled hidden states)"},
        info={
            "rollouts": sum(len(r) for r in rolls if r),
            "complete": all(r is not None for r in rolls),
            "prompt_chars": len(prompt),
            "answers": answers,  # per prefix P_0 .. P_S: each rollout's answer (None: none found)
            "compared": trust_with,  # per step i: which rollouts of P_i the score compared
            "step_notes": notes,
        },
    )


def _score_name(series: dict, ref: str | None) -> str:
    """The counterfactual measure, unless no rollout anywhere differed from its step (a weak
    embedder calls every resampled sentence "the same"), then the resampling measure, which keeps
    every rollout: the record says which in ``params["score"]``."""
    cf, rs = (
        ("counterfactual_accuracy", "resampling_accuracy")
        if ref is not None
        else ("counterfactual_kl", "resampling_kl")
    )
    has = {k: any(v is not None for v in series[k]) for k in (cf, rs)}
    return rs if has[rs] and not has[cf] else cf


def _model_id(model: Any) -> str:
    info = getattr(model, "o3viz_info", None)
    return getattr(info, "model_id", None) or str(getattr(model.config, "_name_or_path", ""))


def _different(reader, rnd, rolls, threshold: float, step_vecs: np.ndarray) -> list[list[bool] | None]:
    """For each step i: which rollouts of P_i open with a sentence unlike step i (``step_vecs``:
    the steps' embeddings)."""
    model, tok = reader
    out: list[list[bool] | None] = []
    for i in range(len(rnd.steps)):
        r = rolls[i]
        if r is None:
            out.append(None)
            continue
        vecs = embed(model, tok, [first_sentence(x) for x in r])
        out.append([bool(v @ step_vecs[i] < threshold) for v in vecs])
    return out


def _series(answers, different, ref) -> dict[str, list[float | None]]:
    n = len(answers) - 1
    s: dict[str, list[float | None]] = {
        k: [None] * n
        for k in (
            "accuracy",
            "resampling_accuracy",
            "resampling_kl",
            "counterfactual_accuracy",
            "counterfactual_kl",
            "different_fraction",
        )
    }
    for i in range(n):
        here, kept = answers[i], answers[i + 1]
        s["accuracy"][i] = _acc(here, ref)
        if here is None or kept is None:
            continue
        diff = [a for a, d in zip(here, different[i], strict=True) if d]
        s["different_fraction"][i] = len(diff) / len(here)
        s["resampling_accuracy"][i] = _diff(_acc(kept, ref), _acc(here, ref))
        s["resampling_kl"][i] = _kl(kept, here)
        s["counterfactual_accuracy"][i] = _diff(_acc(kept, ref), _acc(diff, ref))
        s["counterfactual_kl"][i] = _kl(kept, diff)
    return s


def reappearance_matrix(
    reader, rnd, rolls, different, threshold: float, step_vecs: np.ndarray | None = None
) -> np.ndarray:
    """(S, S) float32: ``[j, i]`` = how much more often step j's meaning reappears in the rollouts
    that kept step i than in the rollouts whose new step i differs (0 where either set is empty).
    ``step_vecs``: the steps' embeddings, when the caller already has them."""
    from o3viz.text.spans import split_spans

    model, tok = reader
    n = len(rnd.steps)
    mat = np.zeros((n, n), np.float32)
    steps = step_vecs if step_vecs is not None else embed(model, tok, [st.text for st in rnd.steps])

    def present(texts: list[str]) -> np.ndarray | None:
        """(R, S) bool: rollout r contains a sentence like step j."""
        if not texts:
            return None
        sents, owner = [], []
        for r, text in enumerate(texts):
            for a, b in split_spans(text)[:MAX_ROLLOUT_SENTENCES]:
                sents.append(text[a:b])
                owner.append(r)
        out = np.zeros((len(texts), n), bool)
        if sents:
            sim = embed(model, tok, sents) @ steps.T >= threshold  # (N_sentences, S)
            np.logical_or.at(out, np.asarray(owner), sim)
        return out

    seen = [None if r is None else present(r) for r in rolls]  # rollouts of P_0 .. P_S
    for i in range(n - 1):
        kept, here, diff = seen[i + 1], seen[i], different[i]
        if kept is None or here is None or diff is None or not any(diff):
            continue
        resampled = here[np.asarray(diff, bool)]
        mat[i + 1 :, i] = kept[:, i + 1 :].mean(0) - resampled[:, i + 1 :].mean(0)
    return mat
