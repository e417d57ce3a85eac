"""List variables coerced by a plan of their type (schema/variables.py) are what graphql-core makes
of them, and whatever the plan would have to refuse is left to graphql-core, errors and all."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    GraphQLArgument,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLString,
    get_variable_values,
)
from graphql import (
    ExecutionResult,
    execute as graphql_execute,
    parse,
)
from graphql.language import OperationDefinitionNode

from decisiontrail.api import schema
from decisiontrail.schema import execution
from decisiontrail.schema.execution import DirectFieldsExecutionContext
from decisiontrail.schema.variables import PLANS_KEPT, Unplanned, plan_of, precoerce

GRAPHQL = schema._schema
RECORD_MANY = "mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { id } } }"
PLAN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def _input(i: int, **fields: Any) -> dict[str, Any]:
    return {
        "planId": PLAN,
        "decisionType": "RESOURCE_SELECTION",
        "question": f"Which file holds part {i}?",
        "chosenOption": f"src/part_{i}.py",
        "rationale": "It holds the neighbouring code.",
        "contextSnapshot": {
            "hotContextHash": "0" * 64,
            "hotContextRef": "bench://context",
            "actorStateRef": {"threadId": "t", "checkpointId": "c"},
        },
        **fields,
    }


VALID = {
    "required fields only": [_input(0)],
    "every field": [
        _input(
            1,
            alternativesConsidered=["a", "b"],
            confidenceScore=0.5,
            parentDecisionId=PLAN,
            dependsOn=[PLAN, "01ARZ3NDEKTSV4RRFFQ69G5FAW"],
            idempotencyKey="k",
            actorReasoning="because",
            artifactsProduced=[
                {"artifactPath": "a.py", "artifactType": "file"},
                {"artifactPath": "b", "artifactType": "x", "digest": "sha256:00"},
            ],
            contextSnapshot={
                "hotContextHash": "1" * 64,
                "hotContextRef": "r",
                "actorStateRef": {"threadId": "t", "checkpointId": "c", "checkpointNs": "ns"},
                "relevantResources": [{"resourceId": "r1"}, {"resourceId": "r2", "path": "p"}],
                "hotContext": "the context",
            },
        )
    ],
    "nulls where allowed": [_input(2, confidenceScore=None, dependsOn=None, artifactsProduced=None, alternativesConsidered=None)],
    "an integer for a float": [_input(3, confidenceScore=1)],
    "many": [_input(i, decisionType=t) for i, t in enumerate(["RESOURCE_SELECTION", "STRATEGY_CHOICE", "TOOL_INVOCATION"] * 5)],
}

INVALID = {
    "null in a non-null list": [None],
    "a missing required field": [{k: v for k, v in _input(0).items() if k != "question"}],
    "an unknown field": [_input(0, colour="blue")],
    "an unknown enum value": [_input(0, decisionType="NOT_A_TYPE")],
    "a user_intervention (not an actor's type)": [_input(0, decisionType="USER_INTERVENTION")],
    "a string for a float": [_input(0, confidenceScore="high")],
    "a number for a string": [_input(0, question=42)],
    "null for a required nested field": [
        _input(0, contextSnapshot={"hotContextHash": "h", "hotContextRef": "r", "actorStateRef": None})
    ],
    "a list where an object goes": [_input(0, contextSnapshot=[])],
    "an object where a list item goes": [_input(0), "not an object"],
}


def _sources(sources: dict[str, Any]) -> dict[str, Any]:
    # (A signature's type is made anew for each request: its wrappers compare by identity.)
    return {name: (str(s.signature.type), s.signature.default, s.value) for name, s in sources.items()}


def _definitions() -> Any:
    operation = parse(RECORD_MANY).definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    return operation.variable_definitions


@pytest.mark.parametrize("inputs", VALID.values(), ids=VALID.keys())
def test_a_valid_list_is_coerced_by_its_plan_as_graphql_core_coerces_it(inputs: list[dict[str, Any]]) -> None:
    expected = get_variable_values(GRAPHQL, _definitions(), {"inputs": inputs})
    assert not isinstance(expected, list), expected

    plans: dict[str, Any] = {}
    coerced, raw = precoerce(GRAPHQL, parse(RECORD_MANY), None, {"inputs": inputs}, plans)
    plan = plans["[RecordDecisionInput!]!"]
    again, _ = precoerce(GRAPHQL, parse(RECORD_MANY), None, {"inputs": inputs}, plans)
    executor = DirectFieldsExecutionContext.build(GRAPHQL, parse(RECORD_MANY), None, None, {"inputs": inputs})

    assert coerced == again == {"inputs": expected.coerced["inputs"]}  # the plan coerced it (graphql-core saw [])
    assert plans == {"[RecordDecisionInput!]!": plan}  # made once
    assert raw == {"inputs": []}
    assert not isinstance(executor, list), executor
    assert executor.variable_values.coerced == expected.coerced
    assert _sources(executor.variable_values.sources) == _sources(expected.sources)  # the raw input


@pytest.mark.parametrize("inputs", INVALID.values(), ids=INVALID.keys())
def test_what_the_plan_would_refuse_is_judged_by_graphql_core_with_its_errors(inputs: list[Any]) -> None:
    expected = get_variable_values(GRAPHQL, _definitions(), {"inputs": inputs})
    assert isinstance(expected, list) and expected, expected

    coerced, raw = precoerce(GRAPHQL, parse(RECORD_MANY), None, {"inputs": inputs}, {})
    errors = DirectFieldsExecutionContext.build(GRAPHQL, parse(RECORD_MANY), None, None, {"inputs": inputs})

    assert (coerced, raw) == ({}, {"inputs": inputs})
    assert isinstance(errors, list)
    assert [e.formatted for e in errors] == [e.formatted for e in expected]


def test_one_value_for_a_list_is_left_to_graphql_core_which_makes_it_a_list_of_one() -> None:
    document = parse("mutation($ids: [ID!]) { __typename }")
    coerced, raw = precoerce(GRAPHQL, document, None, {"ids": "one"}, {})
    executor = DirectFieldsExecutionContext.build(GRAPHQL, document, None, None, {"ids": "one"})

    assert (coerced, raw) == ({}, {"ids": "one"})
    assert not isinstance(executor, list)
    assert executor.variable_values.coerced == {"ids": ["one"]}


def test_the_operation_is_found_by_name_and_an_unclear_one_is_left_to_graphql_core() -> None:
    two = parse("query A($ids: [ID!]) { __typename } query B($names: [String!]) { __typename }")
    raw = {"ids": ["1"], "names": ["x"]}

    assert precoerce(GRAPHQL, two, "B", raw, {})[0] == {"names": ["x"]}
    assert precoerce(GRAPHQL, two, "A", raw, {})[0] == {"ids": ["1"]}
    assert precoerce(GRAPHQL, two, None, raw, {})[0] == {}  # graphql-core says which operation it needs
    assert precoerce(GRAPHQL, two, "C", raw, {})[0] == {}
    errors = DirectFieldsExecutionContext.build(GRAPHQL, two, None, None, raw)
    assert isinstance(errors, list) and "Must provide operation name" in errors[0].message


def test_an_input_object_that_contains_itself_or_is_one_of_has_no_plan() -> None:
    node = GraphQLInputObjectType("Node", lambda: {"next": GraphQLInputField(node), "name": GraphQLInputField(GraphQLString)})
    one_of = GraphQLInputObjectType(
        "Either", {"a": GraphQLInputField(GraphQLString), "b": GraphQLInputField(GraphQLString)}, is_one_of=True
    )
    query = GraphQLObjectType(
        "Query",
        {
            "walk": GraphQLField(GraphQLString, args={"nodes": GraphQLArgument(GraphQLList(node))}),
            "pick": GraphQLField(GraphQLString, args={"either": GraphQLArgument(GraphQLList(GraphQLNonNull(one_of)))}),
        },
    )
    tiny = GraphQLSchema(query)
    with pytest.raises(Unplanned):
        plan_of(GraphQLList(node))
    with pytest.raises(Unplanned):
        plan_of(GraphQLList(one_of))

    plans: dict[str, Any] = {}
    document = parse("query($nodes: [Node], $either: [Either!]) { walk(nodes: $nodes) pick(either: $either) }")
    raw = {"nodes": [{"next": {"name": "b"}, "name": "a"}], "either": [{"a": "x"}]}
    assert precoerce(tiny, document, None, raw, plans) == ({}, raw)
    assert plans == {"[Node]": None, "[Either!]": None}  # remembered as without a plan


def test_plans_kept_are_bounded_and_a_type_past_them_is_still_coerced_by_plan() -> None:
    plans: dict[str, Any] = {f"[Kept{i}]": None for i in range(PLANS_KEPT)}
    document = parse("mutation($ids: [ID!]) { __typename }")

    coerced, _ = precoerce(GRAPHQL, document, None, {"ids": ["1", "2"]}, plans)

    assert coerced == {"ids": ["1", "2"]}
    assert len(plans) == PLANS_KEPT


def test_graphql_core_hands_build_the_operation_name_where_it_is_looked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # build's parameters after the variables are taken as graphql-core passes them (positionally);
    # were they read wrongly, another operation's variables would be coerced here.
    seen: list[tuple[str | None, dict[str, Any]]] = []

    def watched(*args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        coerced, raw = precoerce(*args)
        seen.append((args[2], coerced))
        return coerced, raw

    monkeypatch.setattr(execution, "precoerce", watched)
    two = parse("query A($ids: [ID!]) { __typename } query B($names: [String!]) { __typename }")

    result = graphql_execute(
        GRAPHQL,
        two,
        variable_values={"ids": ["1"], "names": ["x"]},
        operation_name="B",
        executor_class=DirectFieldsExecutionContext,
    )

    assert isinstance(result, ExecutionResult)
    assert result.errors is None and result.data == {"__typename": "Query"}
    assert seen == [("B", {"names": ["x"]})]
