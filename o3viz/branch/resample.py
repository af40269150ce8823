"""What else could come here: K continuations from the reply before a step (``resample_from``),
and resampling until the step's content no longer reappears or the answer changes, with a cap on
tries (``resample_until``: Thought Branches' resilience, the number of tries it took).

Rollouts come from a generation client of ``o3viz.clients`` and go through its rollout cache
(``collect_rollouts``), so a resumed or repeated branch costs nothing new. Each rollout is one
round of the branch trace. Rollouts are grouped by final answer and by the meaning of their first
sentence (greedy clusters under the reader's embeddings, as resampling importance measures them).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Literal

import numpy as np

from o3viz.analysis.importance.resample import DEFAULT_THRESHOLD, collect_rollouts, embed, first_sentence
from o3viz.branch.continuation import Continuer, base_prompt, is_proxy, text_round
from o3viz.branch.fork import Fork, find_fork
from o3viz.clients import LocalBackend, RolloutCache, Sampling
from o3viz.errors import UsageError
from o3viz.run.provenance import library_versions
from o3viz.run.speed import SpeedLog
from o3viz.text.spans import split_spans
from o3viz.trace import Provenance, Round, Task, Trace
from o3viz.trace.branching import BranchParent
from o3viz.trace.core import timestamp

MAX_K = 64  # a trace holds at most 64 rounds
Until = Literal["step", "answer"]
Progress = Callable[[int, int], None]


def _trace(fork: Fork, rounds: list[Round], continuer: Continuer, sampling: Sampling, info: dict) -> Trace:
    t = fork.trace.task
    prov = Provenance(
        model_id=continuer.name,
        library_versions=library_versions(),
        settings={"resample": sampling.key()},
        seed=sampling.seed,
        created_at=timestamp(),
    )
    trace = Trace(Task(t.question, t.kind, t.source, t.id, t.reference), rounds, prov)
    trace.parent = BranchParent(
        "", fork.step_id, "resample", original=fork.step.text, prefix_chars=len(fork.before),
        info={"continued_by": continuer.name, "proxy": is_proxy(fork.trace, continuer),
              "prefix_steps": fork.prefix_steps(), **info},
    )  # fmt: skip
    return trace


def answer_counts(rounds: list[Round]) -> dict[str, int]:
    """How many rollouts reached each final answer ("—": none found), most frequent first."""
    c = Counter(r.answer if r.answer else "—" for r in rounds)
    return dict(c.most_common())


def group_first_sentences(texts: list[str], reader=None, threshold: float = DEFAULT_THRESHOLD) -> list[int]:
    """A group per rollout: greedy clusters of the first sentences, joined at cosine ≥ ``threshold``
    under the reader's embeddings (without a reader: the same words, case and spacing aside)."""
    firsts = [first_sentence(t) for t in texts]
    if reader is None:
        keys: dict[str, int] = {}
        return [keys.setdefault(" ".join(f.lower().split()), len(keys)) for f in firsts]
    vecs = embed(*reader, firsts) if firsts else np.zeros((0, 1), np.float32)
    heads: list[int] = []
    out = []
    for i, v in enumerate(vecs):
        g = next((j for j, h in enumerate(heads) if float(vecs[h] @ v) >= threshold), None)
        if g is None:
            heads.append(i)
            g = len(heads) - 1
        out.append(g)
    return out


def resample_from(
    trace: Trace,
    step: str,
    k: int,
    continuer: Continuer,
    sampling: Sampling,
    cache: RolloutCache,
    *,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """``k`` rollouts from the reply before step ``step``: one trace, one round per rollout, grouped
    by answer (``parent.info["answers"]``) and first sentence (``round.info["group"]``)."""
    if not 1 <= k <= MAX_K:
        raise UsageError(f"--resample {k}: give 1 to {MAX_K} continuations (a trace holds {MAX_K} rounds)")
    fork = find_fork(trace, step)
    rendered, got = continue_reply(
        trace, fork.before, k, continuer, sampling, cache,
        round_index=fork.round, on_progress=on_progress, should_stop=should_stop,
    )  # fmt: skip
    rounds = [text_round(trace, t, rendered, fork.before, i) for i, t in enumerate(got)]
    groups = group_first_sentences(got, continuer.reader())
    for r, g in zip(rounds, groups, strict=True):
        r.info["group"] = g
    info = {
        "k": k,
        "answers": answer_counts(rounds),
        "parent_answer": fork.rnd.answer,
        "groups": max(groups, default=-1) + 1,
    }
    return _trace(fork, rounds, continuer, sampling, info)


def continue_reply(
    trace: Trace,
    before: str,
    k: int,
    continuer: Continuer,
    sampling: Sampling,
    cache: RolloutCache,
    *,
    round_index: int = -1,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[str, list[str]]:
    """``k`` continuations of round ``round_index``'s reply cut to ``before`` (the round's own reply
    prefix, then its text up to the cut): the prompt they were sent after (without ``before``) and
    their texts, fewer where a stop came first. A repeated seed gives back the cache's rollouts."""
    backend = _backend(continuer)
    rendered = base_prompt(Fork(trace, round_index % len(trace.rounds), 0), continuer.tokenizer)
    had = min(k, len(cache.get(cache.key(backend.name, rendered + before, sampling))))
    t0 = time.perf_counter()
    got = (
        collect_rollouts(
            backend, rendered, [before], k, sampling, cache, on_progress=on_progress, should_stop=should_stop
        )[0]
        or []
    )
    if continuer.backend is None and len(got) > had:  # this machine's speed, as the cost line counts
        SpeedLog().record(
            backend.name, "resample", (len(got) - had) * sampling.max_tokens, time.perf_counter() - t0
        )
    return rendered, got


def _backend(continuer: Continuer):
    if continuer.backend is not None:
        return continuer.backend
    if continuer.model is None:
        raise UsageError("nothing to continue with: load a local model or give --base-url and --model")
    return LocalBackend(continuer.model, continuer.tokenizer)


def _words(text: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if len(w) > 2}


def reappears(text: str, rollout: str, reader=None, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Whether ``text`` (the step's content) reappears in some sentence of ``rollout``: cosine ≥
    ``threshold`` under the reader, or without one, most of its words in one sentence.

    >>> reappears("24 + 18 = 42 muffins", "First. Then 24 + 18 = 42 muffins in all.")
    True
    >>> reappears("24 + 18 = 42 muffins", "She sells 30 of them.")
    False
    """
    sentences = [rollout[s:e] for s, e in split_spans(rollout)][:64] or [rollout]
    if reader is not None:
        vecs = embed(*reader, [text, *sentences])
        return bool((vecs[1:] @ vecs[0] >= threshold).any())
    want = _words(text)
    return bool(want) and any(len(want & _words(s)) >= 0.7 * len(want) for s in sentences)


def resample_until(
    trace: Trace,
    step: str,
    continuer: Continuer,
    sampling: Sampling,
    cache: RolloutCache,
    *,
    until: Until = "step",
    says: str | None = None,
    max_tries: int = 16,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """Resample at ``step`` until the rollout no longer says ``says`` (default: the step's text)
    anywhere, or (``until="answer"``) reaches another answer than the parent; at most
    ``max_tries``. ``parent.info``: ``tries`` (the resilience), ``found``, ``until``."""
    if not 1 <= max_tries <= MAX_K:
        raise UsageError(f"--max-tries {max_tries}: give 1 to {MAX_K}")
    fork, backend = find_fork(trace, step), _backend(continuer)
    target = says if says is not None else fork.step.text
    rendered, rounds, found = base_prompt(fork, continuer.tokenizer), [], False
    key = cache.key(backend.name, rendered + fork.before, sampling)
    for i in range(max_tries):
        if should_stop is not None and should_stop():
            break
        have = cache.get(key)
        text = (
            have[i] if i < len(have) else _one_more(backend, cache, key, rendered + fork.before, sampling, i)
        )
        rnd = text_round(trace, text, rendered, fork.before, i)
        rounds.append(rnd)
        if on_progress is not None:
            on_progress(i + 1, max_tries)
        if until == "answer":
            found = rnd.answer is not None and rnd.answer != fork.rnd.answer
        else:
            found = not reappears(target, text, continuer.reader())
        if found:
            break
    info = {"until": until, "says": target, "tries": len(rounds), "found": found, "max_tries": max_tries,
            "answers": answer_counts(rounds), "parent_answer": fork.rnd.answer}  # fmt: skip
    return _trace(fork, rounds, continuer, sampling, info)


def _one_more(backend, cache: RolloutCache, key: str, prompt: str, sampling: Sampling, first: int) -> str:
    got = backend.complete(prompt, 1, sampling, first=first)
    cache.add(key, got)
    return got[0]


def rollout_branch(resampled: Trace, i: int) -> Trace:
    """Rollout ``i`` of a resample branch as its own one-round branch (same parent and fork)."""
    if resampled.parent is None or not 0 <= i < len(resampled.rounds):
        raise UsageError(f"rollout {i}: the branch has {len(resampled.rounds)} rollouts")
    d = resampled.to_dict()
    one = Trace.from_dict({**d, "rounds": [{**d["rounds"][i], "index": 0}]})
    one.parent.info = {**one.parent.info, "rollout": i, "of": len(resampled.rounds)}
    return one
