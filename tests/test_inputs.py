"""Input objects built by plan (schema/input_plans.py) are the ones strawberry's own conversion builds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from graphql import GraphQLInputObjectType, Undefined, coerce_input_value
from strawberry.types.arguments import convert_argument
from strawberry.types.base import StrawberryObjectDefinition

from decisiontrail.api import schema
from decisiontrail.schema.input_plans import InputBuilder
from decisiontrail.schema.inputs import InstantiatePlanInput, RecordDecisionInput, RecordReplayInput
from decisiontrail.schema.pages import DecisionFilter

ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

CASES: list[tuple[type, dict[str, Any]]] = [
    (
        RecordDecisionInput,
        {
            "planId": ULID,
            "decisionType": "TOOL_INVOCATION",
            "question": "Which tool?",
            "chosenOption": "grep",
            "rationale": "fast",
            "contextSnapshot": {
                "hotContextHash": "a" * 64,
                "hotContextRef": "ref://a",
                "actorStateRef": {"threadId": "t", "checkpointId": "c"},
                "relevantResources": [{"resourceId": "r1"}, {"resourceId": "r2", "path": "src/x.py"}],
                "hotContext": "the context",
            },
            "alternativesConsidered": ["sed", "awk"],
            "confidenceScore": 0.5,
            "parentDecisionId": ULID,
            "dependsOn": [ULID],
            "idempotencyKey": "k",
            "actorReasoning": None,
            "artifactsProduced": [{"artifactPath": "out.txt", "artifactType": "file", "digest": None}],
        },
    ),
    (
        RecordDecisionInput,  # the least a client sends: every optional field left out
        {
            "planId": ULID,
            "decisionType": "STRATEGY_CHOICE",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": {
                "hotContextHash": "b" * 64,
                "hotContextRef": "ref://b",
                "actorStateRef": {"threadId": "t", "checkpointId": "c"},
            },
        },
    ),
    (
        InstantiatePlanInput,
        {
            "description": "d",
            "arguments": {"nested": [1, {"x": None}]},
            "automationProfile": {"editCode": 0.5},
            "invariants": [{"name": "n", "statement": "s"}, {"name": "m", "statement": "t", "scope": "PROJECT"}],
        },
    ),
    (RecordReplayInput, {"attemptId": ULID, "outcome": "REPLAYED"}),
    (RecordReplayInput, {"attemptId": ULID, "outcome": "FAILED", "decisionIds": [ULID], "detail": "x"}),
    (
        DecisionFilter,
        {"types": ["TOOL_INVOCATION"], "phases": None, "status": "CURRENT", "createdFrom": "2026-01-01T00:00:00Z", "text": "x"},
    ),
]


@contextmanager
def strawberry_conversion() -> Iterator[None]:
    """Every input type converted by strawberry itself, as before the plans were installed."""
    installed = [
        (d, d.from_input)
        for d in (c.definition for c in schema.schema_converter.type_map.values())
        if isinstance(d, StrawberryObjectDefinition) and isinstance(d.from_input, InputBuilder)
    ]
    for definition, _ in installed:
        definition.from_input = None
    try:
        yield
    finally:
        for definition, builder in installed:
            definition.from_input = builder


def convert(cls: type, value: dict[str, Any]) -> Any:
    graphql_type = schema._schema.get_type(cls.__strawberry_definition__.name)  # type: ignore[attr-defined]
    assert isinstance(graphql_type, GraphQLInputObjectType)
    coerced = coerce_input_value(value, graphql_type)
    assert coerced is not Undefined, f"the schema refuses {value}"
    return convert_argument(coerced, cls, schema.schema_converter.scalar_registry, schema.config)


def test_every_input_type_is_built_by_plan() -> None:
    inputs = [
        c.definition
        for c in schema.schema_converter.type_map.values()
        if isinstance(c.definition, StrawberryObjectDefinition) and c.definition.is_input
    ]
    assert len(inputs) > 10
    assert all(isinstance(d.from_input, InputBuilder) for d in inputs)


@pytest.mark.parametrize(("cls", "value"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_a_planned_input_equals_strawberrys(cls: type, value: dict[str, Any]) -> None:
    planned = convert(cls, value)
    with strawberry_conversion():
        expected = convert(cls, value)
    assert type(planned) is cls
    assert planned == expected


def test_a_default_list_is_not_shared_between_values() -> None:
    """A list in a value is copied: a resolver that changes it changes no later request's default."""
    first = convert(RecordReplayInput, CASES[3][1])
    first.decision_ids.append(ULID)
    assert convert(RecordReplayInput, CASES[3][1]).decision_ids == []
