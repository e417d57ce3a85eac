"""The look-ahead at a selection, and the plan tree it lets one statement of outlines serve."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from strawberry.types.nodes import FragmentSpread, SelectedField

from decisiontrail.access import LOCAL, Principal, Role
from decisiontrail.domain import DecisionType

from decisiontrail.schema.context import Context
from decisiontrail.api import schema
from decisiontrail.schema.selection import OUTLINE, TREE_OF_OUTLINES, asks_only
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from factories import decision


def _field(name: str, *selections: SelectedField | FragmentSpread) -> SelectedField:
    return SelectedField(name=name, directives={}, arguments={}, selections=list(selections))


def test_a_selection_within_the_shape_is_served_at_any_depth() -> None:
    nested = _field("children", _field("id"), _field("dependsOn", _field("decisionType"), _field("children", _field("id"))))
    assert asks_only([_field("id"), nested], OUTLINE)


def test_one_field_outside_the_shape_anywhere_refuses_it() -> None:
    deep = _field("children", _field("dependsOn", _field("question")))
    assert not asks_only([_field("id"), deep], OUTLINE)
    assert not asks_only([_field("id"), _field("parent", _field("id"))], OUTLINE)


def test_fragments_count_as_selected() -> None:
    fragment = FragmentSpread(name="F", type_condition="Decision", directives={}, selections=[_field("rationale")])
    assert not asks_only([_field("id"), fragment], OUTLINE)
    assert asks_only([FragmentSpread(name="G", type_condition="Decision", directives={}, selections=[_field("id")])], OUTLINE)


TREE = """query($id: ID!, $at: DateTime) { plan(id: $id) { tree(asOf: $at) { depth decision {
  %s id decisionType status sequenceNumber phase supersededById
  children { id parentDecisionId dependsOn { id planId children { id } } }
  dependsOn { id planId decisionType }
} } } }"""
OUTLINED = TREE % ""
WHOLE = TREE % "question"  # one field an outline lacks: the field-by-field path


def _run(store: Trail, principal: Principal, text: str, **variables: Any) -> dict[str, Any]:
    context = Context(trail=store, principal=principal)
    result = asyncio.run(schema.execute(text, variable_values=variables, context_value=context))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def _without_question(data: dict[str, Any]) -> dict[str, Any]:
    for entry in data["plan"]["tree"]:
        del entry["decision"]["question"]
    return data


def _ids(data: Any) -> set[str]:
    if isinstance(data, dict):
        return {v for k, v in data.items() if k == "id" and isinstance(v, str)} | {i for v in data.values() for i in _ids(v)}
    if isinstance(data, list):
        return {i for v in data for i in _ids(v)}
    return set()


@pytest.fixture
def plans(store: Trail) -> dict[str, Any]:
    """ann's plan, whose decisions depend on ann's other plan and on bob's, with a correction in its history."""
    mine, root = instantiate_plan(store, "ann's plan", owner="ann", principal=LOCAL)
    other_mine, other_root = instantiate_plan(store, "ann's other plan", owner="ann", principal=LOCAL)
    bobs, bob_root = instantiate_plan(store, "bob's plan", owner="bob", principal=LOCAL)
    theirs = recording_service.record(
        store, decision(bobs.plan_id, DecisionType.STRATEGY_CHOICE, bob_root.decision_id), principal=LOCAL
    )
    elsewhere = recording_service.record(
        store, decision(other_mine.plan_id, DecisionType.STRATEGY_CHOICE, other_root.decision_id), principal=LOCAL
    )
    strategy = recording_service.record(
        store, decision(mine.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    recording_service.record(
        store, decision(mine.plan_id, DecisionType.RESOURCE_SELECTION, strategy.decision_id, question="r?"), principal=LOCAL
    )
    mixed = recording_service.record(
        store,
        decision(
            mine.plan_id,
            DecisionType.STRATEGY_CHOICE,
            root.decision_id,
            question="mixed?",
            depends_on=(theirs.decision_id, strategy.decision_id, elsewhere.decision_id),
        ),
        principal=LOCAL,
    )
    recording_service.record(
        store,
        decision(mine.plan_id, DecisionType.RESOURCE_SELECTION, mixed.decision_id, depends_on=(strategy.decision_id,)),
        principal=LOCAL,
    )
    corrected = correct(store, strategy.decision_id, "revert", "try again", "wrong", principal=LOCAL)
    return {"plan_id": mine.plan_id, "theirs": theirs.decision_id, "elsewhere": elsewhere.decision_id, "at": corrected.attempt.at}


@pytest.mark.parametrize("principal", [LOCAL, Principal("ann", Role.ACTOR)], ids=["admin", "actor"])
@pytest.mark.parametrize("moment", [None, "before", "after"])
def test_the_outlined_tree_answers_as_the_field_by_field_one(
    store: Trail, plans: dict[str, Any], principal: Principal, moment: str | None
) -> None:
    at: datetime | None = {None: None, "before": plans["at"] - timedelta(microseconds=1), "after": plans["at"]}[moment]
    variables = {"id": plans["plan_id"], "at": at.isoformat() if at else None}

    whole = _without_question(_run(store, principal, WHOLE, **variables))
    store.database.round_trips = 0
    outlined = _run(store, principal, OUTLINED, **variables)

    assert outlined == whole
    # The plan, its outline, the dependencies in other plans (and their plans, for an actor) and their children.
    assert store.database.round_trips <= 5
    seen = _ids(outlined)
    assert plans["elsewhere"] in seen
    assert (plans["theirs"] in seen) is (principal is LOCAL)  # bob's decision stays hidden from ann


def _plan_of(store: Trail, size: int) -> str:
    plan, root = instantiate_plan(store, f"{size} decisions", principal=LOCAL)
    previous = root
    for i in range(size):
        parent = root if i % 3 == 0 else previous
        previous = recording_service.record(
            store,
            decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, parent.decision_id, depends_on=(previous.decision_id,)),
            principal=LOCAL,
        )
    return plan.plan_id


def test_the_outlined_tree_costs_two_statements_at_any_size(store: Trail) -> None:
    trips = []
    for size in (3, 40):
        plan_id = _plan_of(store, size)
        store.database.round_trips = 0
        data = _run(store, LOCAL, OUTLINED, id=plan_id, at=None)
        assert len(data["plan"]["tree"]) == size + 1
        trips.append(store.database.round_trips)
    assert trips == [2, 2]  # the plan, and its outline: no query per decision or per level


def test_asks_only_takes_the_tree_field_itself() -> None:
    tree = _field("tree", _field("depth"), _field("decision", _field("id"), _field("children", _field("decisionType"))))
    assert asks_only([tree], TREE_OF_OUTLINES)
    assert not asks_only([_field("tree", _field("decision", _field("createdAt")))], TREE_OF_OUTLINES)


def test_a_field_asked_twice_under_one_name_is_answered_for_both_selections(store: Trail) -> None:
    # The same response key twice, once with ids only and once with more: merged, both are served
    # (ids alone would be answered from the walk; the question needs the records).
    plan, root = instantiate_plan(store, "merged selections", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    document = """query($id: ID!) {
      lineage(decisionId: $id) { decisions { id } }
      lineage(decisionId: $id) { decisions { question } }
    }"""

    data = _run(store, LOCAL, document, id=strategy.decision_id)

    assert data["lineage"]["decisions"] == [{"id": root.decision_id, "question": root.question}]
