"""The plan lifecycle engine: instantiating plans, moving phases, and the decisions only it creates."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import JsonValue, ValidationError

from decisiontrail.domain import AutomationProfile, ContextSnapshot, Decision, DecisionType, Invariant, Phase, Plan
from decisiontrail.domain.correction import check_guidance
from decisiontrail.domain.recording import CapturedContext
from decisiontrail.exceptions import ValidationFailed, validation_failed
from decisiontrail.graphdb import DecisionStore

PROMPT_QUESTION = "What is this plan to accomplish?"


def prompt_context(description: str, arguments: Mapping[str, Any]) -> CapturedContext:
    """The prompt_definition's content: the action's description and the user's arguments."""
    return CapturedContext(json.dumps({"description": description, "arguments": arguments}, sort_keys=True, ensure_ascii=False))


def instantiate_plan(
    store: DecisionStore,
    description: str,
    arguments: Mapping[str, JsonValue] | None = None,
    *,
    automation_profile: AutomationProfile | None = None,
    invariants: Sequence[Invariant] = (),
    spawned_by_decision_id: str | None = None,
    owner: str | None = None,
    project: str | None = None,
) -> tuple[Plan, Decision]:
    """Create a plan from an action and its root prompt_definition, in one transaction.

    With ``spawned_by_decision_id`` (a subplan_spawn or subplan_parallel_spawn decision), the
    plan becomes that decision's child plan, in the spawning decision's plan's hierarchy, and
    in its parent plan's project: a child plan inherits it, and naming another is refused.
    """
    arguments = dict(arguments or {})
    parent_plan_id = store.get_decision(spawned_by_decision_id).plan_id if spawned_by_decision_id else None
    if parent_plan_id is not None:
        inherited = store.get_plan(parent_plan_id).project
        if project is not None and project != inherited:
            raise ValidationFailed(
                f"project: a child plan belongs to its parent plan's project ({inherited or 'none'}), not {project}",
                field="project",
            )
        project = inherited
    context = prompt_context(description, arguments)
    try:
        plan = Plan(
            description=description,
            arguments=arguments,
            parent_plan_id=parent_plan_id,
            spawned_by_decision_id=spawned_by_decision_id,
            automation_profile=automation_profile or AutomationProfile(),
            invariants=tuple(invariants),
            owner=owner,
            project=project,
        )
        root = Decision(
            plan_id=plan.plan_id,
            decision_type=DecisionType.PROMPT_DEFINITION,
            question=PROMPT_QUESTION,
            chosen_option=context.content,
            rationale="Created by the plan lifecycle engine from the action's description and the user's arguments.",
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        )
    except ValidationError as e:
        raise validation_failed(e) from e
    return store.instantiate(plan, root, context=context)


def record_user_intervention(
    store: DecisionStore,
    plan_id: str,
    guidance: str,
    *,
    parent_decision_id: str,
    question: str = "What did the user direct?",
    reason: str = "",
    depends_on: Sequence[str] = (),
    given_by: str | None = None,
) -> Decision:
    """A user's guidance as a user_intervention decision: the lifecycle engine's to create, never an actor's."""
    said = {"guidance": guidance, "reason": reason} | ({"given_by": given_by} if given_by is not None else {})
    context = CapturedContext(json.dumps(said, sort_keys=True, ensure_ascii=False))
    try:
        decision = Decision(
            plan_id=plan_id,
            parent_decision_id=parent_decision_id,
            decision_type=DecisionType.USER_INTERVENTION,
            question=question,
            chosen_option=guidance,
            rationale=reason or "Guidance given by the user.",
            depends_on=tuple(depends_on),
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        )
    except ValidationError as e:
        raise validation_failed(e) from e
    return store.record_decision(decision, context=context)


def add_guidance(
    store: DecisionStore, plan_id: str, guidance: str, *, parent_decision_id: str, reason: str = "", given_by: str | None = None
) -> Decision:
    """Guidance without a correction (ADR-033's ``agents plan prompt``): a user_intervention under
    ``parent_decision_id`` that supersedes nothing; the actor's next decisions may depend on it.
    Who gave it is kept in its context."""
    return record_user_intervention(
        store,
        plan_id,
        check_guidance(guidance),
        parent_decision_id=parent_decision_id,
        question="What guidance did the user give?",
        reason=reason.strip(),
        given_by=given_by,
    )


def advance_phase(store: DecisionStore, plan_id: str, phase: Phase, reason: str = "", *, by: str | None = None) -> Plan:
    """Strategize -> Execute -> Apply; Execute -> Strategize is a phase reversion. Each change is
    recorded with its reason and who asked (``Plan.phaseHistory``)."""
    return store.advance_phase(plan_id, phase, reason.strip(), by=by)
