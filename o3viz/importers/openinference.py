"""A trace as OpenInference spans, in OTLP/JSON (what Phoenix and Langfuse ingest, and what an
OpenTelemetry collector's file exporter writes): one ``CHAIN`` span for the trace, one ``LLM``
span per round (its prompt, text, answer and token count) and one ``CHAIN`` span per step under
its round; every check is an evaluation (``evaluations.N.evaluation.*``, annotator ``CODE``) on
the step it judged, or on its round, and the source's own grade of an import is one on the trace.

Attribute names are OpenInference's semantic conventions (``openinference.span.kind``,
``input.value``, ``output.value``, ``metadata`` as a JSON string, ``llm.model_name``, ...),
flattened with indexed prefixes as the conventions say. Span times: a trace records no wall clock
per step, so a span's start and end are its token positions, 1 ms per token from the trace's
``created_at`` (said in each span's ``metadata``: ``"time": "token positions"``). Ids are derived
from the trace's bytes, so one trace always exports the same spans.

>>> from o3viz.testing.synthetic import make_trace
>>> doc = export_openinference(make_trace(3, seed=0))
>>> [s["name"] for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]][:3]
['o3viz trace', 'round 0', 'step 0 · active computation']
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from o3viz.trace import Check, Round, Step, Trace
from o3viz.trace.ids import make_id
from o3viz.trace.io import trace_bytes

SCOPE = "o3viz"
MS = 1_000_000  # ns per token position
GOOD = ("pass", "correct")
BAD = ("fail", "wrong", "error", "timeout")
INTERNAL = 1  # OTLP SpanKind
OK, ERROR = 1, 2  # OTLP StatusCode


def _value(v: Any) -> dict:
    """One OTLP AnyValue: ints as decimal strings (OTLP/JSON's int64), floats, bools, strings."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": str(v)}


def _attrs(d: dict) -> list[dict]:
    return [{"key": k, "value": _value(v)} for k, v in d.items() if v is not None]


def _base_ns(trace: Trace) -> int:
    try:
        when = dt.datetime.fromisoformat(trace.provenance.created_at or "")
    except ValueError:
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp()) * 1_000_000_000


def _id(seed: str, *parts: Any, n: int = 16) -> str:
    return hashlib.sha256("/".join(map(str, (seed, *parts))).encode()).hexdigest()[:n]


def evaluations(checks: list[Check], prefix: str = "evaluations") -> dict:
    """Checks as flattened OpenInference evaluations: name, label (the verdict), score (1 pass,
    0 fail, none otherwise), explanation and annotator kind ``CODE`` (o3viz's checks are code)."""
    out: dict[str, Any] = {}
    for i, c in enumerate(checks):
        p = f"{prefix}.{i}.evaluation"
        out[f"{p}.name"] = f"{c.kind}: {c.name}"
        out[f"{p}.label"] = c.verdict
        out[f"{p}.score"] = 1.0 if c.verdict in GOOD else 0.0 if c.verdict in BAD else None
        out[f"{p}.explanation"] = c.message or None
        out[f"{p}.annotator_kind"] = "CODE"
    return out


def _span(ids: tuple[str, str, str | None], name: str, t0: int, t1: int, attrs: dict, bad: bool) -> dict:
    trace_id, span_id, parent = ids
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": INTERNAL,
        "startTimeUnixNano": str(t0),
        "endTimeUnixNano": str(max(t1, t0)),
        "attributes": _attrs(attrs),
        "status": {"code": ERROR if bad else OK},
    }
    if parent is not None:
        span["parentSpanId"] = parent
    return span


def _meta(**kw) -> str:
    return json.dumps({"time": "token positions", **{k: v for k, v in kw.items() if v is not None}})


def _step_span(tid: str, seed: str, rnd: Round, step: Step, base: int, parent: str) -> dict:
    checks = [c for c in rnd.checks if c.step == step.index]
    kind = (step.type or "untyped").replace("_", " ")
    attrs = {
        "openinference.span.kind": "CHAIN",
        "output.value": step.text,
        "output.mime_type": "text/plain",
        "graph.node.id": make_id("step", rnd.index, step.index),
        "graph.node.parent_id": make_id("round", rnd.index),
        "graph.node.name": f"step {step.index}",
        "metadata": _meta(
            type=step.type, kind=step.kind, parent=step.parent, tokens=[step.token_start, step.token_end]
        ),
        **evaluations(checks),
    }
    t0, t1 = base + step.token_start * MS, base + step.token_end * MS
    bad = any(c.verdict in BAD for c in checks)
    return _span(
        (tid, _id(seed, rnd.index, step.index), parent), f"step {step.index} · {kind}", t0, t1, attrs, bad
    )


def _round_spans(tid: str, seed: str, trace: Trace, rnd: Round, base: int, root: str) -> list[dict]:
    rid = _id(seed, rnd.index)
    n = max(len(rnd.tokens), max((s.token_end for s in rnd.steps), default=0))
    loose = [c for c in rnd.checks if c.step is None]
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.model_name": trace.provenance.model_id or None,
        "input.value": rnd.prompt or trace.task.question,
        "input.mime_type": "text/plain",
        "output.value": rnd.text,
        "output.mime_type": "text/plain",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": rnd.text,
        "llm.token_count.completion": len(rnd.tokens) or None,
        "graph.node.id": make_id("round", rnd.index),
        "graph.node.name": f"round {rnd.index}",
        "metadata": _meta(answer=rnd.answer, verdict=rnd.verdict, action=rnd.action, feedback=rnd.feedback),
        **evaluations(loose),
    }
    bad = rnd.verdict in BAD
    spans = [_span((tid, rid, root), f"round {rnd.index}", base, base + n * MS, attrs, bad)]
    return spans + [_step_span(tid, seed, rnd, s, base, rid) for s in rnd.steps]


def export_openinference(trace: Trace) -> dict:
    """The OTLP/JSON document (``resourceSpans`` → ``scopeSpans`` → ``spans``) for ``trace``."""
    seed = hashlib.sha256(trace_bytes(trace)).hexdigest()
    tid, root = seed[:32], _id(seed, "root")
    t = _base_ns(trace)
    spans, end = [], t
    for rnd in trace.rounds:  # rounds follow each other in time
        made = _round_spans(tid, seed, trace, rnd, end, root)
        spans += made
        end = max(end, *(int(s["endTimeUnixNano"]) for s in made)) + MS
    src, final = trace.provenance.source, trace.final
    attrs = {
        "openinference.span.kind": "CHAIN",
        "input.value": trace.task.question,
        "input.mime_type": "text/plain",
        "output.value": final.answer,
        "output.mime_type": "text/plain",
        "llm.model_name": trace.provenance.model_id or None,
        "metadata": _meta(task_id=trace.task.id, reference=trace.task.reference, source=src or None),
    }
    if "file_is_correct" in trace.info:  # the source's own grade (an import's scorer), not o3viz's
        attrs["evaluations.0.evaluation.name"] = "source's grade"
        attrs["evaluations.0.evaluation.label"] = "correct" if trace.info["file_is_correct"] else "wrong"
        attrs["evaluations.0.evaluation.score"] = 1.0 if trace.info["file_is_correct"] else 0.0
    spans.insert(0, _span((tid, root, None), "o3viz trace", t, end, attrs, final.verdict in BAD))
    resource = {"attributes": _attrs({"service.name": "o3viz", "openinference.project.name": "o3viz"})}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}]}]
    }
