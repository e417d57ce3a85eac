"""What a span's decision says: its question, chosen option, alternatives and resources, and whose it is."""

from __future__ import annotations

import json

from decisiontrail.domain.decision import DecisionType, ResourceRef
from decisiontrail.domain.traces.conventions import DECISION_PREFIX, Operation
from decisiontrail.domain.traces.spans import AGENT, Span, decision_kind
from decisiontrail.exceptions import ValidationFailed

Content = tuple[str, str, tuple[str, ...], tuple[ResourceRef, ...]]
"""Question, chosen option, alternatives, resources."""


def agent_name(span: Span) -> str:
    """The name of the agent (or workflow) a plan's span stands for."""
    names = ("gen_ai.agent.name", "agent.name", "graph.node.id")
    named = span.text(*(("gen_ai.workflow.name", *names) if plan_noun(span) == "workflow" else names))
    if named is None and decision_kind(span) != AGENT:  # a trace's root standing in for its agent: the service
        service = span.resource.get("service.name")
        named = service if isinstance(service, str) and service.strip() else None
    return named or span.name


def plan_noun(span: Span) -> str:
    """What a plan's span is, in a question: ``"workflow"`` or ``"agent"``."""
    return "workflow" if span.operation == Operation.INVOKE_WORKFLOW else "agent"


def content(span: Span, kind: DecisionType, *, question: str | None = None, chosen: str | None = None) -> Content:
    """Question, chosen option, alternatives and resources of a span's decision: what the span names
    with ``decisiontrail.decision.*``, else ``question`` and ``chosen`` when given, else what its kind gives."""
    named_question = span.text(DECISION_PREFIX + "question")
    named_choice = span.text(DECISION_PREFIX + "chosen_option")
    alternatives = _strings(span.attributes.get(DECISION_PREFIX + "alternatives"))
    resources: tuple[ResourceRef, ...] = ()
    if question is None or chosen is None:
        question, chosen, resources = _by_kind(span, kind, named_choice is None)
    return named_question or question, named_choice or chosen, alternatives, resources


def _by_kind(span: Span, kind: DecisionType, choice_unnamed: bool) -> tuple[str, str, tuple[ResourceRef, ...]]:
    if kind is DecisionType.TOOL_INVOCATION:
        tool = span.text("tool.name", "gen_ai.tool.name") or span.name
        arguments = span.text("tool.parameters", "gen_ai.tool.call.arguments", "input.value")
        return "Which tool to call, with which arguments?", f"{tool}({arguments})" if arguments else tool, ()
    if kind is DecisionType.RESOURCE_SELECTION and choice_unnamed:
        found = documents(span)
        query = span.text("input.value", "gen_ai.retrieval.query.text") or span.name
        chosen = ", ".join(found) if found else span.text("output.value") or "no documents"
        return f"Which documents to use for: {query}?", chosen, tuple(ResourceRef(resource_id=d) for d in found)
    return span.text("input.value") or span.name, span.text("output.value") or span.name, ()


def documents(span: Span) -> list[str]:
    """The ids of the documents a retrieval returned, in order: OpenInference's
    ``retrieval.documents.N.document.id``, else the ``id`` of each of GenAI's ``gen_ai.retrieval.documents``.

    >>> documents(Span("t", "s", "retrieval", 0, attributes={"gen_ai.retrieval.documents": '[{"id": "doc_1", "score": 0.9}]'}))
    ['doc_1']
    """
    found: dict[int, str] = {}
    for name, value in span.attributes.items():
        parts = name.split(".")
        if len(parts) == 5 and parts[:2] == ["retrieval", "documents"] and parts[3:] == ["document", "id"] and parts[2].isdigit():
            if str(value).strip():  # a document without an id is no resource to name
                found[int(parts[2])] = str(value)
    if found:
        return [found[i] for i in sorted(found)]
    listed = span.attributes.get("gen_ai.retrieval.documents")
    if isinstance(listed, str):
        try:
            listed = json.loads(listed)
        except ValueError:
            return []
    items = listed if isinstance(listed, list) else []
    return [str(d["id"]) for d in items if isinstance(d, dict) and d.get("id") is not None and str(d["id"]).strip()]


def _strings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        return (value,)
    raise ValidationFailed(
        f"{DECISION_PREFIX}alternatives: {value!r} is not a list of strings", field=DECISION_PREFIX + "alternatives"
    )
