"""Placement rules for new decisions and child plans, judged from literal facts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from factories import decision

from decisiontrail.domain import Decision, DecisionType, Phase, Plan, new_ulid
from decisiontrail.domain.rules import DecisionPlacement, SpawnLink, check_decision_placement, check_spawn_link
from decisiontrail.exceptions import NotFound, RuleViolation

PLAN = new_ulid()
ROOT = new_ulid()
PARENT = new_ulid()

# A plan with a current root and a current parent in the same plan: every check passes.
OK = DecisionPlacement(
    plan_exists=True,
    decision_exists=False,
    current_root_id=ROOT,
    parent_plan_id=PLAN,
    parent_exists=True,
    parent_superseded=False,
    missing_dependencies=(),
    superseded_dependencies=(),
    corrected_exists=True,
)


def facts(**changes: Any) -> DecisionPlacement:
    return dataclasses.replace(OK, **changes)


def child(**fields: Any) -> Decision:
    return decision(PLAN, DecisionType.STRATEGY_CHOICE, fields.pop("parent", PARENT), **fields)


def root(**fields: Any) -> Decision:
    return decision(PLAN, DecisionType.PROMPT_DEFINITION, **fields)


# check_decision_placement: accepted


def test_normal_child_decision_accepted() -> None:
    check_decision_placement(child(depends_on=[new_ulid()]), OK)


def test_first_root_accepted() -> None:
    check_decision_placement(root(), facts(current_root_id=None, parent_exists=False, parent_plan_id=None))


def test_correction_of_root_accepted_as_second_prompt_definition() -> None:
    correction = root(is_correction=True, corrects_decision_id=ROOT, correction_reason="clearer prompt")
    check_decision_placement(correction, facts(current_root_id=ROOT, corrected_exists=True))


def test_correction_of_existing_decision_accepted() -> None:
    check_decision_placement(child(is_correction=True, corrects_decision_id=new_ulid()), facts(corrected_exists=True))


# check_decision_placement: one test per branch


def test_missing_plan_not_found() -> None:
    with pytest.raises(NotFound, match=f"plan {PLAN} does not exist") as caught:
        check_decision_placement(child(), facts(plan_exists=False))
    assert (caught.value.kind, caught.value.identifier) == ("plan", PLAN)


def test_recorded_decision_id_rejected() -> None:
    record = child()
    with pytest.raises(RuleViolation, match=f"decision {record.decision_id} is already recorded") as caught:
        check_decision_placement(record, facts(decision_exists=True))
    assert caught.value.rule == "unique_decision_id"


@pytest.mark.parametrize("field", ["downstream_decision_ids", "downstream_plan_ids"])
def test_downstream_ids_cannot_be_written(field: str) -> None:
    with pytest.raises(RuleViolation, match="derived") as caught:
        check_decision_placement(child(**{field: [new_ulid()]}), OK)
    assert caught.value.rule == "downstream_is_derived"


def test_new_decision_cannot_be_superseded() -> None:
    with pytest.raises(RuleViolation, match="superseded_by: a new decision cannot already be superseded") as caught:
        check_decision_placement(child(superseded_by=new_ulid()), OK)
    assert caught.value.rule == "superseded_by_set_by_correction"


def test_second_root_rejected() -> None:
    with pytest.raises(RuleViolation, match=f"already has its prompt_definition {ROOT}") as caught:
        check_decision_placement(root(), facts(current_root_id=ROOT))
    assert caught.value.rule == "single_root"


def test_second_root_correcting_another_decision_rejected() -> None:
    elsewhere = root(is_correction=True, corrects_decision_id=new_ulid())
    with pytest.raises(RuleViolation, match="only allowed as the correction of the first") as caught:
        check_decision_placement(elsewhere, facts(current_root_id=ROOT))
    assert caught.value.rule == "single_root"


def test_non_root_without_parent_rejected() -> None:
    with pytest.raises(RuleViolation, match="parent_decision_id: a strategy_choice decision must hang under") as caught:
        check_decision_placement(child(parent=None), OK)
    assert caught.value.rule == "parent_required"


def test_missing_parent_not_found() -> None:
    with pytest.raises(NotFound, match=f"parent decision {PARENT} does not exist") as caught:
        check_decision_placement(child(), facts(parent_exists=False))
    assert (caught.value.kind, caught.value.identifier) == ("parent decision", PARENT)


def test_parent_in_other_plan_rejected() -> None:
    other = new_ulid()
    with pytest.raises(RuleViolation, match=f"belongs to plan {other}, not to plan {PLAN}") as caught:
        check_decision_placement(child(), facts(parent_plan_id=other))
    assert caught.value.rule == "parent_in_same_plan"


def test_superseded_parent_rejected() -> None:
    with pytest.raises(RuleViolation, match=f"decision {PARENT} has been superseded") as caught:
        check_decision_placement(child(), facts(parent_superseded=True))
    assert caught.value.rule == "parent_is_current"


def test_missing_dependency_rejected() -> None:
    missing = new_ulid()
    with pytest.raises(RuleViolation, match=f"depends_on: no decision {missing} exists") as caught:
        check_decision_placement(child(depends_on=[missing]), facts(missing_dependencies=(missing,)))
    assert caught.value.rule == "dependency_exists"


def test_superseded_dependency_rejected() -> None:
    old = new_ulid()
    with pytest.raises(RuleViolation, match=f"depends_on: decision {old} has been superseded") as caught:
        check_decision_placement(child(depends_on=[old]), facts(superseded_dependencies=(old,)))
    assert caught.value.rule == "dependency_is_current"


def test_missing_corrected_decision_not_found() -> None:
    corrected = new_ulid()
    with pytest.raises(NotFound, match=f"corrected decision {corrected} does not exist") as caught:
        check_decision_placement(child(is_correction=True, corrects_decision_id=corrected), facts(corrected_exists=False))
    assert (caught.value.kind, caught.value.identifier) == ("corrected decision", corrected)


def test_missing_corrected_ignored_when_not_a_correction() -> None:
    check_decision_placement(child(), facts(corrected_exists=False))


# check_spawn_link

PARENT_PLAN = new_ulid()
SPAWNER = new_ulid()
SPAWN_OK = SpawnLink(
    plan_exists=False,
    parent_plan_exists=True,
    spawning_exists=True,
    spawning_plan_id=PARENT_PLAN,
    spawning_type=DecisionType.SUBPLAN_SPAWN,
    parent_phase=Phase.EXECUTE,
)


def child_plan() -> Plan:
    return Plan(description="child", parent_plan_id=PARENT_PLAN, spawned_by_decision_id=SPAWNER)


def link(**changes: Any) -> SpawnLink:
    return dataclasses.replace(SPAWN_OK, **changes)


def test_top_level_plan_accepted_without_spawn_facts() -> None:
    check_spawn_link(
        Plan(description="top"),
        SpawnLink(False, parent_plan_exists=False, spawning_exists=False, spawning_plan_id=None, spawning_type=None),
    )


@pytest.mark.parametrize("spawning_type", [DecisionType.SUBPLAN_SPAWN, DecisionType.SUBPLAN_PARALLEL_SPAWN])
def test_child_plan_spawned_by_spawning_decision_accepted(spawning_type: DecisionType) -> None:
    check_spawn_link(child_plan(), link(spawning_type=spawning_type))


def test_superseded_spawning_decision_rejected() -> None:
    with pytest.raises(RuleViolation, match=f"decision {SPAWNER} has been superseded") as caught:
        check_spawn_link(child_plan(), link(spawning_superseded=True))
    assert caught.value.rule == "spawn_by_current_decision"


@pytest.mark.parametrize("phase", [Phase.STRATEGIZE, Phase.APPLY])
def test_child_plan_refused_unless_its_parent_executes(phase: Phase) -> None:
    with pytest.raises(RuleViolation, match=f"plan {PARENT_PLAN} is in {phase.value}") as caught:
        check_spawn_link(child_plan(), link(parent_phase=phase))
    assert caught.value.rule == "spawn_in_execute"


@pytest.mark.parametrize("plan", [Plan(description="top"), child_plan()])
def test_existing_plan_id_rejected(plan: Plan) -> None:
    with pytest.raises(RuleViolation, match=f"plan {plan.plan_id} already exists") as caught:
        check_spawn_link(plan, link(plan_exists=True))
    assert caught.value.rule == "unique_plan_id"


def test_missing_parent_plan_not_found() -> None:
    with pytest.raises(NotFound, match=f"parent plan {PARENT_PLAN} does not exist") as caught:
        check_spawn_link(child_plan(), link(parent_plan_exists=False))
    assert (caught.value.kind, caught.value.identifier) == ("parent plan", PARENT_PLAN)


def test_missing_spawning_decision_not_found() -> None:
    with pytest.raises(NotFound, match=f"spawning decision {SPAWNER} does not exist") as caught:
        check_spawn_link(child_plan(), link(spawning_exists=False))
    assert (caught.value.kind, caught.value.identifier) == ("spawning decision", SPAWNER)


def test_spawning_decision_in_other_plan_rejected() -> None:
    other = new_ulid()
    with pytest.raises(RuleViolation, match=f"belongs to plan {other}, not to the parent plan {PARENT_PLAN}") as caught:
        check_spawn_link(child_plan(), link(spawning_plan_id=other))
    assert caught.value.rule == "spawn_from_parent_plan"


@pytest.mark.parametrize(
    ("spawning_type", "shown"),
    [
        (DecisionType.STRATEGY_CHOICE, "strategy_choice"),
        (DecisionType.TOOL_INVOCATION, "tool_invocation"),
        (None, "unknown"),
    ],
)
def test_non_spawning_decision_rejected(spawning_type: DecisionType | None, shown: str) -> None:
    with pytest.raises(RuleViolation, match=f"decision {SPAWNER} is a {shown} decision") as caught:
        check_spawn_link(child_plan(), link(spawning_type=spawning_type))
    assert caught.value.rule == "spawn_by_spawning_type"
