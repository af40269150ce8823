"""Drawing N samples of one prompt as N traces.

**Local** (``draw_local``): the prompt is prefilled once and the N continuations decode as one
batch from the shared cache (``o3viz.clients.local.decode_shared_prefix``; at most ``batch`` rows
at a time). A logits processor (``TokenStatsRecorder``) reads the model's own logits (before the
temperature and top-p warpers) at every step, so each token carries its logprob, the entropy of the
next-token distribution and its top-5, through the one computation (``o3viz.run.loop.token_stats_rows``).
Each row becomes a round the way a capture builds one (``o3viz.run.capture.build_round``: tokens,
typed steps, answer, claim checks) plus the answer check against the task's reference.

**Endpoint** (``draw_endpoint``): N requests to an OpenAI-compatible endpoint, at most
``concurrency`` in flight, each with its own seed; each text becomes a round through the
importers' one text → trace path (``o3viz.branch.continuation.text_round``).

A stop (``should_stop()``, the CLI's Ctrl-C) keeps the samples already finished (EOS or the token
budget reached) and drops the ones cut mid-way: ``Drawn.stopped`` says so. A request that fails
after its retries ends an endpoint job the same way: no new request is sent, the ones in flight
finish, every finished sample is kept, and ``Drawn.error`` says what failed.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from o3viz.branch.continuation import text_round
from o3viz.clients import OpenAIBackend, RolloutError, Sampling, api_key_from_env
from o3viz.clients.local import decode_shared_prefix
from o3viz.run.capture import build_round
from o3viz.run.config import CaptureConfig
from o3viz.run.loop import Generated, eos_ids, token_stats_rows
from o3viz.run.prompt import PAPER_PROMPT, layout_prompt
from o3viz.run.provenance import library_versions, run_provenance
from o3viz.run.request import RunRequest
from o3viz.samples.request import SampleRequest
from o3viz.tasks.kind import detect_task_type
from o3viz.text.answers import round_answer
from o3viz.trace import Provenance, Round, Task, Trace
from o3viz.trace.core import timestamp
from o3viz.verify.policy import answer_check

__all__ = [
    "Drawn",
    "Progress",
    "TokenStatsRecorder",
    "draw_endpoint",
    "draw_local",
    "draw_settings",
    "task_of",
]

Progress = Callable[[int, int, int], None]  # (samples finished, tokens decoded in this batch, N)


@dataclass
class Drawn:
    """The finished samples of one job (``traces``, in order) and whether a stop or an error cut
    it short."""

    traces: list[Trace] = field(default_factory=list)
    requested: int = 0
    stopped: bool = False  # a stop or an error ended the job: ``len(traces) < requested``
    error: str | None = None  # the failed request that ended it (None: no request failed)


def draw_settings(req: SampleRequest, drawn: Drawn) -> dict:
    """What a drawn set says of itself (each trace's ``info["sample_set"]``): the request's
    settings, the model, how many were asked for and whether a stop cut the draw short."""
    model = drawn.traces[0].provenance.model_id if drawn.traces else ""
    return {
        "prompt": req.prompt, "task_id": req.task_id, "reference": req.reference, "temperature": req.temperature, "top_p": req.top_p,
        "max_new_tokens": req.max_new_tokens, "seed": req.seed, "model": model,
        "base_url": req.base_url, "requested": req.n, "stopped": drawn.stopped,
        "drawn": "endpoint" if req.base_url else "local batch",
        **({"error": drawn.error} if drawn.error else {}),
    }  # fmt: skip


def task_of(req: SampleRequest) -> tuple[str, Task]:
    """The prompt the model is asked and its task (a built-in task carries its reference; a free
    prompt the request's, if any)."""
    if req.task_id:
        from o3viz.tasks.spec import load_task

        spec = load_task(req.task_id)
        return spec.prompt, spec.task
    prompt = req.prompt or ""
    reference = req.reference.strip() if req.reference else None
    return prompt, Task(prompt, detect_task_type(prompt), reference=reference)


class TokenStatsRecorder:
    """A logits processor that records each step's token statistics for every row: it keeps the
    step's logits (k, V) until the next call shows the chosen tokens (``input_ids[:, -1]``), then
    ``token_stats_rows`` gives logprob (k,), entropy (k,) and top-5 (k, 5). ``finish`` closes the
    last step with the final tokens."""

    def __init__(self) -> None:
        self._prev = None  # (k, V) float32 logits of the step whose token is not yet known
        self.rows: list = []  # one TokenStats per step, on the CPU

    def __call__(self, input_ids, scores):
        if self._prev is not None:
            self._add(input_ids[:, -1])
        self._prev = scores.detach().float().clone()
        return scores

    def _add(self, chosen) -> None:
        st = token_stats_rows(self._prev, chosen)
        self.rows.append(tuple(x.cpu() for x in (st.logprob, st.entropy, st.top_p, st.top_ids)))

    def finish(self, new_ids) -> None:
        """``new_ids`` (k, G): the generated ids, whose last column closes the last step."""
        if self._prev is not None and len(self.rows) < new_ids.shape[1]:
            self._add(new_ids[:, len(self.rows)])
        self._prev = None


class _StopCheck:
    """A stopping criterion that ends the whole batch when ``should_stop()`` says so, and reports
    progress once per decoded token: ``on_step(ended)``, the rows of the batch that have decoded
    an end token (``stop``) so far, which are finished samples."""

    def __init__(self, should_stop, on_step, stop: set[int]) -> None:
        self.should_stop, self.on_step, self.fired = should_stop, on_step, False
        self.stop, self.ended = sorted(stop), None  # ended: (k,) bool, once the first token is seen

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        last = torch.isin(input_ids[:, -1], torch.tensor(self.stop, device=input_ids.device))
        self.ended = last if self.ended is None else self.ended | last
        self.on_step(int(self.ended.sum()))
        self.fired = bool(self.should_stop is not None and self.should_stop())
        return torch.full((input_ids.shape[0],), self.fired, dtype=torch.bool, device=input_ids.device)


def _generated(row: list[int], rec: TokenStatsRecorder, r: int, stop: set[int], budget: int) -> Generated:
    """Row ``r`` of a batch as the loop's ``Generated``: its ids through the first EOS (kept, as the
    loop keeps it) and each token's statistics."""
    end = next((i + 1 for i, t in enumerate(row) if t in stop), None)
    ids = row[:end] if end is not None else row
    g = Generated(ids=list(ids))
    for lp, ent, top_p, top_ids in rec.rows[: len(ids)]:
        g.logprobs.append(float(lp[r]))
        g.entropies.append(float(ent[r]))
        g.tops.append(list(zip(top_ids[r].tolist(), top_p[r].tolist(), strict=True)))
    g.reason = "eos" if end is not None else ("max_new_tokens" if len(ids) >= budget else "stopped")
    return g


def _graded(rnd: Round, task: Task) -> Round:
    """The answer check against the task's reference, as ``solve`` adds it."""
    found = round_answer(rnd.text, task.kind)
    final = next((s.index for s in rnd.steps if s.kind == "final"), None)
    check = answer_check(found, task.reference, final)
    rnd.checks.append(check)
    rnd.verdict = {"correct": "pass", "wrong": "fail"}.get(check.verdict, "unverifiable")
    return rnd


def draw_local(
    model,
    tokenizer,
    req: SampleRequest,
    *,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Drawn:
    """``req.n`` samples of the prompt on the local model, decoded in batches of ``req.batch`` from
    one shared prefill each (see the module docstring)."""
    import torch

    req.validate()
    prompt, task = task_of(req)
    layout = layout_prompt(tokenizer, prompt)
    ids = torch.tensor([layout.ids])
    stop, out = eos_ids(model, tokenizer), Drawn(requested=req.n)
    run_req = RunRequest(
        prompt=prompt, task_id=req.task_id, max_new_tokens=req.max_new_tokens, seed=req.seed,
        do_sample=True, temperature=req.temperature,
    )  # fmt: skip
    sampling = Sampling(req.max_new_tokens, float(req.temperature), req.top_p, req.seed)
    created = timestamp()
    while len(out.traces) < req.n and not out.stopped:
        k, first = min(req.batch, req.n - len(out.traces)), len(out.traces)
        rec, tokens = TokenStatsRecorder(), [0]

        def step(ended: int, tokens=tokens, first=first):
            tokens[0] += 1
            if on_progress is not None:
                on_progress(first + ended, tokens[0], req.n)

        check = _StopCheck(should_stop, step, stop)
        new = decode_shared_prefix(
            model, tokenizer, ids, k, sampling, first, logits_processor=[rec], stopping_criteria=[check]
        )
        rec.finish(new)
        out.stopped = check.fired
        for r, row in enumerate(new.tolist()):
            gen = _generated(row, rec, r, stop, req.max_new_tokens)
            if gen.reason == "stopped":
                continue  # cut mid-way by the stop: not a finished sample
            rnd = _graded(build_round(tokenizer, layout, gen, task, CaptureConfig(enabled=False)), task)
            trace = Trace(task, [rnd], run_provenance(model, run_req, False, created))
            trace.info["sample"] = {"index": first + r, "drawn": "local batch", "batch": k}
            out.traces.append(trace)
    return out


def draw_endpoint(
    backend: OpenAIBackend,
    req: SampleRequest,
    *,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Drawn:
    """``req.n`` samples from an OpenAI-compatible endpoint: one request per sample (each with its
    own seed, ``first=i``), at most ``req.concurrency`` in flight. The prompt is sent as
    resampling sends it (``PAPER_PROMPT``: the question, then an opened ``<think>``)."""
    req.validate()
    _, task = task_of(req)
    rendered = PAPER_PROMPT.format(question=task.question)
    sampling = Sampling(req.max_new_tokens, float(req.temperature), req.top_p, req.seed)
    out = Drawn(requested=req.n)
    texts = _requests(backend, rendered, sampling, req, out, on_progress, should_stop)
    prov = Provenance(
        model_id=backend.name, library_versions=library_versions(), settings={"sample": sampling.key()},
        seed=req.seed, created_at=timestamp(),
    )  # fmt: skip
    for i in sorted(texts):
        rnd = text_round(Trace(task, []), texts[i], rendered, "", 0)
        trace = Trace(Task(task.question, task.kind, task.source, task.id, task.reference), [rnd], prov)
        trace.info["sample"] = {"index": i, "drawn": "endpoint", "concurrency": req.concurrency}
        out.traces.append(trace)
    out.stopped = out.stopped and len(out.traces) < req.n
    return out


def _requests(backend, rendered, sampling, req, out: Drawn, on_progress, should_stop) -> dict[int, str]:
    """The text of each finished request by sample index, at most ``req.concurrency`` in flight. A
    stop or a request failed after its retries sends no new request and lets those in flight
    finish (a stop cancels the ones not yet started); ``out`` records which ended the job."""
    texts: dict[int, str] = {}
    pending = list(range(req.n))
    with ThreadPoolExecutor(max_workers=req.concurrency) as pool:
        running: dict = {}
        while pending or running:
            while pending and len(running) < req.concurrency and not out.stopped:
                i = pending.pop(0)
                running[pool.submit(backend.complete, rendered, 1, sampling, i)] = i
            if not running:
                break
            done, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                i = running.pop(f)
                try:
                    texts[i] = f.result()[0]
                except RolloutError as exc:
                    out.error, out.stopped = out.error or str(exc), True
                    pending.clear()
                    continue
                if on_progress is not None:
                    on_progress(len(texts), 0, req.n)
            if should_stop is not None and should_stop() and not out.stopped:
                out.stopped = True
                pending.clear()
                for f in running:
                    f.cancel()
    return texts


def endpoint_backend(req: SampleRequest) -> OpenAIBackend:
    """The request's endpoint as a generation client (the API key from the environment)."""
    return OpenAIBackend(
        req.base_url or "", req.model or "", api_key_from_env(), retries=1, timeout=req.request_timeout
    )
