"""Placement rules: where a new decision or plan may attach, judged from facts read in its transaction."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from decisiontrail.domain.decision import SPAWNING_TYPES, Decision, DecisionType, Phase
from decisiontrail.domain.plan import Plan
from decisiontrail.exceptions import Conflict, NotFound, RuleViolation


@dataclass(frozen=True)
class DecisionPlacement:
    """What the store knows, under the plan's lock, about where a new decision would go."""

    plan_exists: bool
    decision_exists: bool
    current_root_id: str | None
    parent_plan_id: str | None
    parent_exists: bool
    parent_superseded: bool
    missing_dependencies: tuple[str, ...]
    superseded_dependencies: tuple[str, ...]
    corrected_exists: bool


def check_decision_placement(decision: Decision, facts: DecisionPlacement) -> None:
    """Raise unless ``decision`` may be recorded where it says it goes.

    The rules: the plan exists; the id is new; a plan has one current prompt_definition
    (a second one only as the correction of the first); every other decision hangs under
    a current parent in the same plan; dependencies exist and are current; the corrected
    decision exists.
    """
    if not facts.plan_exists:
        raise NotFound("plan", decision.plan_id)
    if facts.decision_exists:
        raise RuleViolation(f"decision {decision.decision_id} is already recorded", rule="unique_decision_id")
    if decision.downstream_decision_ids or decision.downstream_plan_ids:
        raise RuleViolation(
            "downstream_decision_ids/downstream_plan_ids: these are derived from the dependent "
            "decisions' depends_on and from child plans' spawning links; they cannot be written",
            rule="downstream_is_derived",
        )
    if decision.superseded_by is not None or decision.superseded_at is not None:
        raise RuleViolation(
            "superseded_by: a new decision cannot already be superseded; corrections set it",
            rule="superseded_by_set_by_correction",
        )
    if decision.decision_type is DecisionType.PROMPT_DEFINITION:
        root = facts.current_root_id
        if root is not None and decision.corrects_decision_id != root:
            raise RuleViolation(
                f"plan {decision.plan_id} already has its prompt_definition {root}; "
                "a second root is only allowed as the correction of the first",
                rule="single_root",
            )
    elif decision.parent_decision_id is None:
        raise RuleViolation(
            f"parent_decision_id: a {decision.decision_type.value} decision must hang under a parent "
            "decision; only the prompt_definition is a root",
            rule="parent_required",
        )
    elif not facts.parent_exists:
        raise NotFound("parent decision", decision.parent_decision_id)
    elif facts.parent_plan_id != decision.plan_id:
        raise RuleViolation(
            f"parent_decision_id: decision {decision.parent_decision_id} belongs to plan "
            f"{facts.parent_plan_id}, not to plan {decision.plan_id}; the tree never crosses plans",
            rule="parent_in_same_plan",
        )
    elif facts.parent_superseded:
        raise RuleViolation(
            f"parent_decision_id: decision {decision.parent_decision_id} has been superseded; "
            "new decisions go into the current tree",
            rule="parent_is_current",
        )
    if facts.missing_dependencies:
        raise RuleViolation(
            f"depends_on: no decision {', '.join(facts.missing_dependencies)} exists",
            rule="dependency_exists",
        )
    if facts.superseded_dependencies:
        raise RuleViolation(
            f"depends_on: decision {', '.join(facts.superseded_dependencies)} has been superseded; "
            "the current tree depends on no superseded decision",
            rule="dependency_is_current",
        )
    if decision.corrects_decision_id is not None and not facts.corrected_exists:
        raise NotFound("corrected decision", decision.corrects_decision_id)


@dataclass(frozen=True)
class SpawnLink:
    """What the store knows about the decision a child plan says spawned it."""

    plan_exists: bool
    parent_plan_exists: bool
    spawning_exists: bool
    spawning_plan_id: str | None
    spawning_type: DecisionType | None
    spawning_superseded: bool = False
    parent_phase: Phase | None = None  # the spawning decision's plan's phase
    children: tuple[str, ...] = ()  # the plans the spawning decision already spawned


def check_spawn_link(plan: Plan, link: SpawnLink) -> None:
    """Raise unless ``plan`` may be created with the parent and spawning decision it names."""
    if link.plan_exists:
        raise RuleViolation(f"plan {plan.plan_id} already exists", rule="unique_plan_id")
    if plan.parent_plan_id is None or plan.spawned_by_decision_id is None:
        return
    if not link.parent_plan_exists:
        raise NotFound("parent plan", plan.parent_plan_id)
    if not link.spawning_exists:
        raise NotFound("spawning decision", plan.spawned_by_decision_id)
    if link.spawning_plan_id != plan.parent_plan_id:
        raise RuleViolation(
            f"spawned_by_decision_id: decision {plan.spawned_by_decision_id} belongs to plan "
            f"{link.spawning_plan_id}, not to the parent plan {plan.parent_plan_id}",
            rule="spawn_from_parent_plan",
        )
    if link.spawning_type not in SPAWNING_TYPES:
        kind = link.spawning_type.value if link.spawning_type else "unknown"
        raise RuleViolation(
            f"spawned_by_decision_id: decision {plan.spawned_by_decision_id} is a {kind} decision; "
            "only subplan_spawn and subplan_parallel_spawn decisions spawn child plans",
            rule="spawn_by_spawning_type",
        )
    if link.spawning_superseded:
        raise RuleViolation(
            f"spawned_by_decision_id: decision {plan.spawned_by_decision_id} has been superseded; "
            "child plans are spawned by current decisions",
            rule="spawn_by_current_decision",
        )
    if link.parent_phase is not None and link.parent_phase is not Phase.EXECUTE:
        raise RuleViolation(
            f"spawned_by_decision_id: a child plan is instantiated once its parent plan is in execute "
            f"(ADR-007's decision timing: the spawn is decided in strategize, the child runs in execute); "
            f"plan {plan.parent_plan_id} is in {link.parent_phase.value}",
            rule="spawn_in_execute",
        )
    if link.spawning_type is DecisionType.SUBPLAN_SPAWN and link.children:
        raise Conflict(
            f"spawned_by_decision_id: decision {plan.spawned_by_decision_id} is a subplan_spawn and already "
            f"spawned plan {link.children[0]}; a subplan_spawn spawns one child plan (a subplan_parallel_spawn, a group)"
        )


def check_new_dependency(decision: Decision, dependency: Decision, downstream_of_decision: Iterable[str]) -> None:
    """Raise unless ``decision`` may be recorded as depending on ``dependency``."""
    if dependency.decision_id == decision.decision_id:
        raise RuleViolation("depends_on: a decision cannot depend on itself", rule="no_self_dependency")
    for d in (decision, dependency):
        if d.superseded_by is not None:
            raise RuleViolation(
                f"decision {d.decision_id} has been superseded by {d.superseded_by}; influence is recorded "
                "between current decisions",
                rule="dependency_is_current",
            )
    if dependency.decision_id in set(downstream_of_decision):
        raise RuleViolation(
            f"depends_on: decision {dependency.decision_id} lies downstream of {decision.decision_id}; "
            "depending on it would make a cycle",
            rule="no_dependency_cycle",
        )
    if dependency.decision_id in decision.depends_on:
        raise RuleViolation(
            f"depends_on: decision {decision.decision_id} already depends on {dependency.decision_id}",
            rule="dependency_is_new",
        )
