"""Agent spans as an OTLP exporter sends them (OTLP/JSON): the benchmarks' OTLP import, the
reliability scenarios' exports and the OTLP tests' spans are built here."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def otlp_export(traces: int, decisions: int, tag: str) -> bytes:
    """An OTLP/JSON export of ``traces`` traces, each an agent span (a plan) and ``decisions``
    decision spans under it, ids derived from ``tag`` so that each run sends traces of its own."""
    t0 = 1_767_225_600_000_000_000
    resource_spans = []
    for t in range(traces):
        trace_id = hashlib.sha256(f"{tag}/{t}".encode()).hexdigest()[:32]
        agent = f"{t + 1:04x}{'0' * 11}1"
        spans = [json_span(trace_id, agent, "agent", t0, None, {"openinference.span.kind": "AGENT", "input.value": f"Plan {t}"})]
        for d in range(decisions):
            spans.append(
                json_span(
                    trace_id,
                    f"{t + 1:04x}{d + 2:012x}",
                    f"choice {d}",
                    t0 + (d + 1) * 1_000_000,
                    agent,
                    {
                        "openinference.span.kind": "DECISION",
                        "decisiontrail.decision.type": "implementation_choice",
                        "decisiontrail.decision.question": f"Which option for step {d}?",
                        "decisiontrail.decision.chosen_option": f"option {d}",
                        "decisiontrail.decision.alternatives": ["another"],
                        "decisiontrail.decision.confidence": 0.8,
                    },
                )
            )
        resource_spans.append(
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "reliability"}}]},
                "scopeSpans": [{"scope": {"name": "reliability"}, "spans": spans}],
            }
        )
    return json.dumps({"resourceSpans": resource_spans}).encode()


def json_span(
    trace_id: str,
    span_id: str,
    name: str,
    start: int,
    parent: str | None,
    attributes: dict[str, Any],
    *,
    duration: int = 500_000,
) -> dict[str, Any]:
    """One span as OTLP/JSON has it: times in nanoseconds since the epoch (``duration`` long),
    attributes typed by their Python values (a float, a list, else a string)."""

    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, float):
            return {"doubleValue": v}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": v}

    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + duration),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }
    if parent is not None:
        span["parentSpanId"] = parent
    return span
