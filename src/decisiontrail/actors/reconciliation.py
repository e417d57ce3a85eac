"""The Invariant Reconciliation Actor: at Strategize entry, one invariant_enforced decision per enforced invariant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from decisiontrail.access import process
from decisiontrail.actors.graph import build_actor
from decisiontrail.actors.scripted import ScriptedChatModel, decide
from decisiontrail.actors.tool import LocalRecorder, record_decision_tool
from decisiontrail.domain import DecisionType, Plan
from decisiontrail.domain.invariants import ENFORCEMENT_QUESTION as QUESTION
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.invariants import Enforced, unenforced
from decisiontrail.services import Trail, reading
from decisiontrail.services.invariants import regather_invariants

__all__ = ["QUESTION", "RECONCILER", "Reconciler", "reconcile_invariants", "reconciliation_script"]

RECONCILER = process("reconciler")
"""Who the Invariant Reconciliation Actor acts as: it reads and records in any plan that enters Strategize."""


def reconciliation_script(enforced: Sequence[Enforced]) -> list[AIMessage]:
    """One record_decision call per enforced invariant, with what it overrides and why.

    Reconciliation is rule-based (scope precedence), so its "model" is this script.
    """
    return [
        decide(
            decision_type="invariant_enforced",
            question=QUESTION,
            chosen_option=enforced.invariant.statement,
            alternatives_considered=[o.statement for o in enforced.overridden],
            confidence_score=1.0,
            rationale=f"{enforced.invariant.name}: {enforced.rationale}",
        )
        for enforced in enforced
    ]


def reconcile_invariants(
    store: Trail, plan: Plan, checkpointer: BaseCheckpointSaver[Any], *, thread_id: str | None = None
) -> dict[str, Any] | None:
    """Run the reconciliation actor over the invariants the plan declares (gathered again from the
    global and project sets as they are now, less what removeInvariant removed from it; and read again:
    a correction or a review may have changed it since ``plan`` was read) for those that no current
    invariant_enforced enforces and no pending review proposes: a plan that re-enters Strategize
    keeps what it enforced. Every one missing is proposed in one run, each its own review where the
    automation profile asks for one (the actor does not stop at the first); resolving those reviews
    runs the reconciler again (``services.reviews.resolve_review``). Its final state, or None when
    there was nothing to record."""
    plan = regather_invariants(store, plan.plan_id, RECONCILER)  # the scopes as they are now, less what was removed
    enforcing = [
        d.rationale
        for d in reading.list_decisions(store, plan.plan_id, RECONCILER, current_only=True)
        if d.decision_type is DecisionType.INVARIANT_ENFORCED
    ]
    proposed = [
        r.proposal.rationale
        for r in reading.pending_reviews(store, plan.plan_id, RECONCILER)
        if r.proposal.decision_type is DecisionType.INVARIANT_ENFORCED
    ]
    missing = unenforced(plan.invariants, enforcing, proposed)
    if not missing:
        return None
    tool = record_decision_tool(LocalRecorder(store, RECONCILER), pause_for_review=False)
    actor = build_actor(ScriptedChatModel(script=reconciliation_script(missing)), [tool], checkpointer)
    declared = "\n".join(f"- [{i.scope.value}] {i.name}: {i.statement}" for i in plan.invariants) or "(none)"
    # A run of its own each time: its tool calls are new recordings (a thread used before would
    # carry on that run's conversation, where the script is already played).
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id or f"reconcile-{plan.plan_id}-{new_ulid()}", "plan_id": plan.plan_id}
    }
    result: dict[str, Any] = actor.invoke(
        {"messages": [HumanMessage(f"Reconcile the invariants of plan {plan.plan_id}:\n{declared}")], "plan_id": plan.plan_id},
        config,
    )
    return result


class Reconciler:
    """The trail's reconciler (``Trail.reconciler``): the actor above, checkpointed in ``checkpointer``."""

    def __init__(self, checkpointer: BaseCheckpointSaver[Any]) -> None:
        self.checkpointer = checkpointer

    def __call__(self, trail: Trail, plan: Plan) -> None:
        reconcile_invariants(trail, plan, self.checkpointer)
