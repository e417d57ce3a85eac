"""Spans as OTLP carries them, and what each carries: a plan, a decision of one type, or nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from decisiontrail.domain.decision import SPAWNING_TYPES, DecisionType
from decisiontrail.domain.recording import ACTOR_DECISION_TYPES
from decisiontrail.domain.traces.conventions import (
    DECISION_PREFIX,
    GEN_AI_OPERATION,
    INFERENCE_KINDS,
    INFERENCE_OPERATIONS,
    INPUTS,
    KIND_TYPES,
    OPERATION_TYPES,
    OUTPUTS,
    PLAN_KINDS,
    PLAN_OPERATIONS,
    SPAN_KIND,
    message_text,
)
from decisiontrail.exceptions import ValidationFailed

AttributeValue = str | bool | int | float | list[Any] | dict[str, Any] | None

AGENT: Final = "agent"
"""What a span that becomes a plan carries: an agent's span, or a workflow's."""
MAX_TEXT: Final = 2000
"""Characters of a question or chosen option taken from a span; the whole span is kept in the decision's context."""


@dataclass(frozen=True)
class Span:
    """One span as OTLP carries it, ids in lower-case hex, times in Unix nanoseconds."""

    trace_id: str
    span_id: str
    name: str
    start_ns: int
    end_ns: int = 0
    parent_span_id: str | None = None
    parent_is_remote: bool = False
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    resource: Mapping[str, AttributeValue] = field(default_factory=dict)
    links: tuple[str, ...] = ()
    """Span ids, in this trace, that the span links to."""
    status: str = "UNSET"

    @property
    def kind(self) -> str:
        """OpenInference's span kind, upper-case ('' for none)."""
        return str(self.attributes.get(SPAN_KIND, "")).upper()

    @property
    def operation(self) -> str:
        """The GenAI conventions' operation ('' for none)."""
        return str(self.attributes.get(GEN_AI_OPERATION, ""))

    @property
    def is_model_call(self) -> bool:
        return self.kind in INFERENCE_KINDS or self.operation in INFERENCE_OPERATIONS

    def text(self, *names: str) -> str | None:
        """The first of ``names`` the span has as a non-blank attribute, as text."""
        for name in names:
            value = self.attributes.get(name)
            if value is None or value == "":
                continue
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
            if text.strip():
                return text
        return None

    def input(self) -> str | None:
        """What the span was given, as text (GenAI messages by their text parts)."""
        return next((t for t in (message_text(self.attributes.get(name)) for name in INPUTS) if t), None)

    def output(self) -> str | None:
        """What the span produced, as text (GenAI messages by their text parts)."""
        return next((t for t in (message_text(self.attributes.get(name)) for name in OUTPUTS) if t), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "name": self.name,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "parent_span_id": self.parent_span_id,
            "parent_is_remote": self.parent_is_remote,
            "attributes": dict(self.attributes),
            "resource": dict(self.resource),
            "links": list(self.links),
            "status": self.status,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Span:
        return cls(**{**data, "links": tuple(data.get("links", ())), "attributes": data.get("attributes") or {}})

    def slim(self) -> Span:
        """What a span that carries no decision is kept as: where it sits in the trace, its kind, the
        agent-graph node it names and, for a model call, the start of its output (the plan, when a
        plan span holds the call).

        >>> chat = Span("t", "s", "chat", 0, attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 9,
        ...     "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Go by train"}]}]'})
        >>> chat.slim().attributes
        {'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': 'Go by train'}
        """
        kept: dict[str, AttributeValue] = {
            k: v for k, v in self.attributes.items() if k.startswith("graph.node.") or k in (SPAN_KIND, GEN_AI_OPERATION)
        }
        if self.is_model_call:
            produced = self.output()
            if produced is not None:
                kept[OUTPUTS[-1]] = short(produced)
        return Span(
            self.trace_id, self.span_id, self.name, self.start_ns, self.end_ns, self.parent_span_id, self.parent_is_remote, kept
        )


def is_trace_root(span: Span) -> bool:
    """Whether the span starts its trace: it has no parent. (A span whose parent is in another
    process is not a root: the trace is imported once the span above every other has arrived.)"""
    return span.parent_span_id is None


def decision_kind(span: Span) -> str | DecisionType | None:
    """What a span carries: ``"agent"`` (a plan), a decision type, or None (no decision).

    >>> decision_kind(Span("t", "s", "search", 0, attributes={"openinference.span.kind": "TOOL"}))
    <DecisionType.TOOL_INVOCATION: 'tool_invocation'>
    >>> decision_kind(Span("t", "s", "invoke_agent planner", 0, attributes={"gen_ai.operation.name": "invoke_agent"}))
    'agent'
    >>> decision_kind(Span("t", "s", "invoke_workflow crew", 0, attributes={"gen_ai.operation.name": "invoke_workflow"}))
    'agent'
    >>> decision_kind(Span("t", "s", "plan planner", 0, attributes={"gen_ai.operation.name": "plan"}))
    <DecisionType.STRATEGY_CHOICE: 'strategy_choice'>
    >>> decision_kind(Span("t", "s", "chat", 0, attributes={"gen_ai.operation.name": "chat"})) is None
    True
    >>> decision_kind(Span("t", "s", "search_memory", 0, attributes={"gen_ai.operation.name": "search_memory"})) is None
    True
    """
    kind, operation = span.kind, span.operation
    if kind in PLAN_KINDS or operation in PLAN_OPERATIONS:
        return AGENT
    named = span.attributes.get(DECISION_PREFIX + "type")
    if named is not None:
        confidence(span)
        return _named_type(span, named)
    if kind == "DECISION":
        return DecisionType.IMPLEMENTATION_CHOICE
    found = KIND_TYPES.get(kind) or OPERATION_TYPES.get(operation)
    if found is None and any(name.startswith(DECISION_PREFIX) for name in span.attributes):
        name = f"span {span.span_id}: {DECISION_PREFIX}type"
        raise ValidationFailed(f"{name}: is required on a span that names its decision with {DECISION_PREFIX}*", field=name)
    if found is not None:
        confidence(span)
    return found


def kept_out_reason(span: Span) -> str:
    """Why a span that carries no decision is kept out, for a request's partial-success message: its kind or operation."""
    kind = span.attributes.get(SPAN_KIND) or span.attributes.get(GEN_AI_OPERATION) or "no kind"
    return str(kind)


def confidence(span: Span) -> float | None:
    """The confidence a span names for its decision, checked to lie in [0, 1]."""
    value = span.attributes.get(DECISION_PREFIX + "confidence")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        name = f"span {span.span_id}: {DECISION_PREFIX}confidence"
        raise ValidationFailed(f"{name}: {value!r} is not a number in [0, 1]", field=name)
    return float(value)


def short(text: str) -> str:
    """Text as a question or chosen option holds it: stripped, never empty, at most ``MAX_TEXT`` characters."""
    text = text.strip() or "(empty)"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _named_type(span: Span, value: object) -> DecisionType:
    field_name = f"span {span.span_id}: {DECISION_PREFIX}type"
    try:
        kind = DecisionType(str(value))
    except ValueError:
        allowed = ", ".join(t.value for t in ACTOR_DECISION_TYPES)
        raise ValidationFailed(f"{field_name}: {value!r} is not one of {allowed}", field=field_name) from None
    if kind not in ACTOR_DECISION_TYPES or kind in SPAWNING_TYPES:
        raise ValidationFailed(
            f"{field_name}: {kind.value} is not a type a span records (a plan's prompt and its spawns come from agent spans)",
            field=field_name,
        )
    return kind
