"""End to end: correct a strategy_choice, replay the actor from its checkpoint with the guidance."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from decisiontrail.actors.graph import build_actor, sqlite_checkpointer
from decisiontrail.actors.reconciliation import reconcile_invariants
from decisiontrail.actors.replay import replay_correction
from decisiontrail.actors.scripted import ScriptedChatModel, decide
from decisiontrail.actors.tool import LocalRecorder, record_decision_tool
from decisiontrail.domain import DecisionType, Invariant
from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome

from decisiontrail.services.correction import correct, history, record_replay
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL


@pytest.fixture
def checkpointer() -> Iterator[SqliteSaver]:
    with sqlite_checkpointer(":memory:") as saver:
        yield saver


def _corrected(messages: Sequence[BaseMessage]) -> bool:
    return any(isinstance(m, HumanMessage) and str(m.content).startswith("Correction:") for m in messages)


def strategy_step(messages: Sequence[BaseMessage]) -> AIMessage:
    where = "per-service middleware" if _corrected(messages) else "the API gateway"
    return decide(
        decision_type="strategy_choice", question="Where to limit?", chosen_option=where, confidence_score=0.9, rationale="r"
    )


def resources_step(messages: Sequence[BaseMessage]) -> AIMessage:
    files = "services/*/middleware.py" if _corrected(messages) else "gateway/limits.py"
    return decide(
        decision_type="resource_selection", question="Which files?", chosen_option=files, confidence_score=0.9, rationale="r"
    )


def test_revert_replays_the_actor_from_the_recorded_checkpoint(store: Trail, checkpointer: SqliteSaver) -> None:
    plan, root = instantiate_plan(
        store, "rate limiting", invariants=[Invariant(name="api", statement="no breaking changes")], principal=LOCAL
    )
    reconcile_invariants(store, plan, checkpointer)
    actor = build_actor(
        ScriptedChatModel(script=[strategy_step, resources_step]),
        [record_decision_tool(LocalRecorder(store, LOCAL))],
        checkpointer,
    )
    actor.invoke({"messages": [HumanMessage("Plan it.")], "plan_id": plan.plan_id}, {"configurable": {"thread_id": "strategy"}})
    by_type = {d.decision_type: d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)}
    strategy, resources = by_type[DecisionType.STRATEGY_CHOICE], by_type[DecisionType.RESOURCE_SELECTION]
    invariant = by_type[DecisionType.INVARIANT_ENFORCED]

    result = correct(
        store, strategy.decision_id, "revert", "Limit in per-service middleware", "the gateway is shared", principal=LOCAL
    )
    (point,) = result.replay_frontier
    assert point.checkpoint == strategy.context_snapshot.actor_state_ref and point.thread_id == "strategy"

    final = replay_correction(actor, point, "Limit in per-service middleware", mode=CorrectionMode.REVERT)
    record_replay(store, result.attempt.attempt_id, ReplayOutcome.REPLAYED, principal=LOCAL)

    current = reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)
    replaced = {d.decision_type: d for d in current if d.sequence_number > result.correction.sequence_number}
    assert set(result.invalidated) == {strategy.decision_id, resources.decision_id}
    assert replaced[DecisionType.STRATEGY_CHOICE].chosen_option == "per-service middleware"
    assert replaced[DecisionType.RESOURCE_SELECTION].chosen_option == "services/*/middleware.py"
    # The replacements form the new current subtree; the untouched branch keeps its decision.
    assert replaced[DecisionType.RESOURCE_SELECTION].parent_decision_id == replaced[DecisionType.STRATEGY_CHOICE].decision_id
    assert {d.decision_id for d in current} == {
        root.decision_id,
        invariant.decision_id,
        result.correction.decision_id,
        *(d.decision_id for d in replaced.values()),
    }
    # The actor went on from the restored state: the corrected conversation, not the original one.
    recorded = [json.loads(str(m.content))["decision_id"] for m in final["messages"] if m.type == "tool"]
    assert recorded == [replaced[DecisionType.STRATEGY_CHOICE].decision_id, replaced[DecisionType.RESOURCE_SELECTION].decision_id]
    assert history(store, strategy.decision_id, principal=LOCAL)[0].replay_outcome is ReplayOutcome.REPLAYED
