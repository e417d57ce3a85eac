"""The Invariant Reconciliation Actor: at Strategize entry, one invariant_enforced decision per enforced invariant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from decisiontrail.actors.graph import build_actor
from decisiontrail.actors.scripted import ScriptedChatModel, decide
from decisiontrail.actors.tool import record_decision_tool
from decisiontrail.domain import Invariant, Plan
from decisiontrail.domain.invariants import reconcile
from decisiontrail.services import Trail


QUESTION = "Should this invariant apply to this plan?"


def reconciliation_script(invariants: Sequence[Invariant]) -> list[AIMessage]:
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
        for enforced in reconcile(invariants)
    ]


def reconcile_invariants(
    store: Trail, plan: Plan, checkpointer: BaseCheckpointSaver[Any], *, thread_id: str | None = None
) -> dict[str, Any]:
    """Run the reconciliation actor over the plan's declared invariants; returns its final state."""
    actor = build_actor(
        ScriptedChatModel(script=reconciliation_script(plan.invariants)), [record_decision_tool(store)], checkpointer
    )
    declared = "\n".join(f"- [{i.scope.value}] {i.name}: {i.statement}" for i in plan.invariants) or "(none)"
    config: RunnableConfig = {"configurable": {"thread_id": thread_id or f"reconcile-{plan.plan_id}"}}
    result: dict[str, Any] = actor.invoke(
        {"messages": [HumanMessage(f"Reconcile the invariants of plan {plan.plan_id}:\n{declared}")], "plan_id": plan.plan_id},
        config,
    )
    return result
