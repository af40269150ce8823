"""OpenInference export: the OTLP/JSON document holds one span per round and per step under one
trace span, each check once as an evaluation, and every attribute name, kind and value type is one
the published semantic conventions (the ``openinference-semantic-conventions`` package) define."""

from __future__ import annotations

import json
import re

import pytest

from o3viz.cli.main import main
from o3viz.importers.openinference import export_openinference
from o3viz.testing.synthetic import make_trace
from o3viz.trace import load_trace

semconv = pytest.importorskip("openinference.semconv.trace")
resource = pytest.importorskip("openinference.semconv.resource")
SAMPLE = "sample_traces/solve_math_gsm8k.o3trace.json.gz"  # 3 rounds, checks on steps and rounds
FLAT = re.compile(r"^(?P<prefix>[a-z_.]+?)\.(?P<i>\d+)\.(?P<rest>.+)$")
STRING_KEYS = {
    "input.value",
    "output.value",
    "metadata",
    "llm.model_name",
    "input.mime_type",
    "output.mime_type",
}


def _names(cls) -> set[str]:
    return {v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str)}


SPAN = _names(semconv.SpanAttributes)
NESTED = {  # a flattened list attribute -> the class that names its items' keys
    semconv.SpanAttributes.EVALUATIONS: _names(semconv.EvaluationAttributes),
    semconv.SpanAttributes.LLM_OUTPUT_MESSAGES: _names(semconv.MessageAttributes),
}


def _spans(doc: dict) -> list[dict]:
    (rs,) = doc["resourceSpans"]
    (ss,) = rs["scopeSpans"]
    return ss["spans"]


def _attrs(span: dict) -> dict[str, dict]:
    return {a["key"]: a["value"] for a in span["attributes"]}


def problems(doc: dict) -> list[str]:
    """What in ``doc`` the conventions (and OTLP/JSON's shape) do not allow; empty when valid."""
    out = []
    res = {a["key"] for a in doc["resourceSpans"][0]["resource"]["attributes"]}
    out += [f"resource {k}" for k in res - {"service.name", resource.ResourceAttributes.PROJECT_NAME}]
    ids = {s["spanId"] for s in _spans(doc)}
    for s in _spans(doc):
        if not (re.fullmatch(r"[0-9a-f]{32}", s["traceId"]) and re.fullmatch(r"[0-9a-f]{16}", s["spanId"])):
            out.append(f"{s['name']}: ids")
        if s.get("parentSpanId") is not None and s["parentSpanId"] not in ids:
            out.append(f"{s['name']}: parent not exported")
        if int(s["startTimeUnixNano"]) > int(s["endTimeUnixNano"]):
            out.append(f"{s['name']}: ends before it starts")
        for key, value in _attrs(s).items():
            m = FLAT.match(key)
            if m and m["prefix"] in NESTED:
                if m["rest"] not in NESTED[m["prefix"]]:
                    out.append(f"{s['name']}: {key} (not an item key of {m['prefix']})")
            elif key not in SPAN:
                out.append(f"{s['name']}: {key} (not a span attribute)")
            if key in STRING_KEYS and "stringValue" not in value:
                out.append(f"{s['name']}: {key} must be a string")
            if key.startswith("llm.token_count.") and "intValue" not in value:
                out.append(f"{s['name']}: {key} must be an int")
            if key.endswith("evaluation.score") and "doubleValue" not in value:
                out.append(f"{s['name']}: {key} must be a double")
        a = _attrs(s)
        kinds = {k.value for k in semconv.OpenInferenceSpanKindValues}
        if a.get("openinference.span.kind", {}).get("stringValue") not in kinds:
            out.append(f"{s['name']}: span kind")
        for key, value in a.items():
            if key.endswith("annotator_kind") and value["stringValue"] not in {
                k.value for k in semconv.OpenInferenceAnnotatorKindValues
            }:
                out.append(f"{s['name']}: {key}")
            if key.endswith("mime_type") and value["stringValue"] not in {
                k.value for k in semconv.OpenInferenceMimeTypeValues
            }:
                out.append(f"{s['name']}: {key}")
        if "metadata" in a and not isinstance(json.loads(a["metadata"]["stringValue"]), dict):
            out.append(f"{s['name']}: metadata is not a JSON object")
    return out


def test_export_follows_the_published_conventions():
    doc = export_openinference(load_trace(SAMPLE))
    assert problems(doc) == []


def test_the_validator_catches_a_misnamed_attribute_and_a_bad_kind():
    doc = export_openinference(make_trace(3, seed=0))
    span = _spans(doc)[1]
    span["attributes"].append({"key": "evaluations.0.evaluation.verdict", "value": {"stringValue": "x"}})
    span["attributes"][0]["value"] = {"stringValue": "ROUND"}
    found = problems(doc)
    assert any("evaluation.verdict" in p for p in found) and any("span kind" in p for p in found)


def test_one_span_per_round_and_step_and_each_check_once_as_an_evaluation():
    t = load_trace(SAMPLE)
    spans = _spans(export_openinference(t))
    assert len(spans) == 1 + len(t.rounds) + sum(len(r.steps) for r in t.rounds)
    root, by_id = spans[0], {s["spanId"]: s for s in spans}
    assert "parentSpanId" not in root
    rounds = [s for s in spans if s.get("parentSpanId") == root["spanId"]]
    assert [s["name"] for s in rounds] == [f"round {r.index}" for r in t.rounds]
    assert all(
        by_id[s["parentSpanId"]]["name"].startswith("round") for s in spans if s["name"].startswith("step")
    )
    labels = [v["stringValue"] for s in spans for k, v in _attrs(s).items() if k.endswith("evaluation.label")]
    assert len(labels) == sum(len(r.checks) for r in t.rounds)
    assert sorted(labels) == sorted(c.verdict for r in t.rounds for c in r.checks)


def test_export_is_deterministic_and_the_cli_writes_it_once(tmp_path, capsys):
    t = load_trace(SAMPLE)
    assert export_openinference(t) == export_openinference(t)
    out = tmp_path / "spans.json"
    assert main(["export", SAMPLE, "--format", "openinference", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == export_openinference(t)
    assert main(["export", SAMPLE, "--out", str(out)]) == 2  # exists, no --overwrite
    assert main(["export", SAMPLE, "--out", str(tmp_path / "spans.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("o3viz: error:") for line in err)


def test_an_imports_own_grade_is_a_trace_evaluation_not_one_of_o3viz_checks():
    t = make_trace(3, seed=0)
    t.info["file_is_correct"] = False
    root = _attrs(_spans(export_openinference(t))[0])
    assert root["evaluations.0.evaluation.name"]["stringValue"] == "source's grade"
    assert root["evaluations.0.evaluation.label"]["stringValue"] == "wrong"
    assert "evaluations.0.evaluation.annotator_kind" not in root  # who graded it, the source knows
