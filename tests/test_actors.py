"""record_decision inside real LangGraph actors (scripted models, SQLite checkpoints, the real Neo4j)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from decisiontrail.access import LOCAL
from decisiontrail.actors.graph import build_actor, sqlite_checkpointer
from decisiontrail.actors.reconciliation import QUESTION, reconcile_invariants
from decisiontrail.actors.replay import restore, resume_from
from decisiontrail.actors.scripted import ScriptedChatModel, decide, recorded_ids
from decisiontrail.actors.snapshot import canonical_context
from decisiontrail.actors.tool import LocalRecorder, record_decision_tool
from decisiontrail.domain import AutomationProfile, DecisionType, Invariant, Plan, Scope
from decisiontrail.domain.recording import ReviewAction
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services.invariants import set_invariants
from decisiontrail.services.lifecycle import instantiate_plan
from factories import to_execute
from decisiontrail.services.recording import RECORD_DECISION_INPUT_SCHEMA
from decisiontrail.services.reviews import pending_reviews, resolve_review
from decisiontrail.services import reading
from decisiontrail.services import Trail


@pytest.fixture
def checkpointer() -> Iterator[SqliteSaver]:
    with sqlite_checkpointer(":memory:") as saver:
        yield saver


def _run(store: Trail, saver: SqliteSaver, plan: Plan, script: list[Any], thread: str = "t-1", **state: Any) -> Any:
    actor = build_actor(ScriptedChatModel(script=script), [record_decision_tool(LocalRecorder(store, LOCAL))], saver)
    config = {"configurable": {"thread_id": thread}}
    result = actor.invoke({"messages": [HumanMessage("go")], "plan_id": plan.plan_id, **state}, config)
    return actor, config, result


def _tool_results(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_the_model_sees_adr_033s_input_schema(store: Trail) -> None:
    function = convert_to_openai_tool(record_decision_tool(LocalRecorder(store, LOCAL)))["function"]

    assert function["name"] == "record_decision"
    assert function["description"].startswith("Record a decision made during plan reasoning.")
    assert function["parameters"]["properties"] == RECORD_DECISION_INPUT_SCHEMA["properties"]
    assert function["parameters"]["required"] == ["decision_type", "question", "chosen_option", "rationale"]


def test_a_strategize_run_records_root_invariants_and_strategy(store: Trail, checkpointer: SqliteSaver) -> None:
    set_invariants(store, Scope.GLOBAL, None, [Invariant(name="coverage", statement=">= 80%")], principal=LOCAL)
    set_invariants(store, Scope.PROJECT, "web", [Invariant(name="api", statement="no breaking changes")], principal=LOCAL)
    invariants = [
        Invariant(name="coverage", statement=">= 90%", scope=Scope.ACTION),
        Invariant(name="api", statement="no breaking changes", scope=Scope.PLAN),
        Invariant(name="deps", statement="no new dependencies", scope=Scope.PLAN),
    ]
    plan, root = instantiate_plan(store, "p", invariants=invariants, project="web", principal=LOCAL)
    reconcile_invariants(store, plan, checkpointer)
    _run(
        store,
        checkpointer,
        plan,
        [decide(decision_type="strategy_choice", question="how?", chosen_option="this way", confidence_score=0.9, rationale="r")],
    )

    decisions = reading.list_decisions(store, plan.plan_id, principal=LOCAL)
    enforced = {d.chosen_option: d for d in decisions if d.decision_type is DecisionType.INVARIANT_ENFORCED}

    assert decisions[0].decision_id == root.decision_id
    assert set(enforced) == {">= 90%", "no breaking changes", "no new dependencies"}  # one per enforced invariant
    assert enforced[">= 90%"].alternatives_considered == (">= 80%",)
    assert "action scope" in enforced[">= 90%"].rationale and "global scope" in enforced[">= 90%"].rationale
    assert "plan > action > project > global" in enforced[">= 90%"].rationale
    assert enforced["no breaking changes"].alternatives_considered == ()  # identical, not a conflict
    assert all(d.question == QUESTION and d.parent_decision_id == root.decision_id for d in enforced.values())
    assert any(d.decision_type is DecisionType.STRATEGY_CHOICE for d in decisions)


def test_snapshot_is_captured_and_restoring_it_resumes_the_actor(store: Trail, checkpointer: SqliteSaver) -> None:
    plan, _ = instantiate_plan(store, "p", principal=LOCAL)
    actor, _, result = _run(
        store,
        checkpointer,
        plan,
        [
            decide(decision_type="strategy_choice", question="first?", chosen_option="a", rationale="r"),
            decide(decision_type="resource_selection", question="files?", chosen_option="b", rationale="r"),
        ],
        resources=["repo:app", {"resource_id": "repo:app", "path": "src/x.py"}],
    )
    (first_id, second_id) = [json.loads(str(m.content))["decision_id"] for m in _tool_results(result)]
    second = reading.get_decision(store, second_id, principal=LOCAL)
    snapshot = second.context_snapshot
    assert snapshot.actor_state_ref is not None

    restored = restore(actor, snapshot.actor_state_ref)
    stored_context = reading.read_context(store, snapshot.hot_context_hash, principal=LOCAL)

    # The checkpoint is the one the tool step started from: the model had just asked for the call.
    assert restored.next == ("tools",)
    assert canonical_context(restored.values["messages"]).content == stored_context
    assert canonical_context(restored.values["messages"]).context_hash == snapshot.hot_context_hash
    assert isinstance(restored.values["messages"][-1], AIMessage)
    assert restored.values["messages"][-1].tool_calls[0]["args"]["question"] == "files?"
    assert [(r.resource_id, r.path) for r in snapshot.relevant_resources] == [("repo:app", None), ("repo:app", "src/x.py")]
    assert reading.get_decision(store, first_id, principal=LOCAL).context_snapshot.actor_state_ref != snapshot.actor_state_ref

    decisions_before = len(reading.list_decisions(store, plan.plan_id, principal=LOCAL))
    resumed = resume_from(actor, snapshot.actor_state_ref)

    # The actor ran on from there to its end; replaying the recording step recorded nothing new.
    assert resumed["messages"][-1].content == "done"
    assert json.loads(str(_tool_results(resumed)[-1].content))["decision_id"] == second_id
    assert len(reading.list_decisions(store, plan.plan_id, principal=LOCAL)) == decisions_before


def test_a_gated_decision_pauses_the_actor_until_a_reviewer_resolves_it(store: Trail, checkpointer: SqliteSaver) -> None:
    plan, _ = instantiate_plan(store, "p", automation_profile=AutomationProfile(edit_code=0.8), principal=LOCAL)
    actor, config, result = _run(
        store,
        checkpointer,
        plan,
        [
            decide(
                decision_type="strategy_choice",
                question="which cache?",
                chosen_option="redis",
                alternatives_considered=["memcached"],
                confidence_score=0.6,
                rationale="familiar",
            ),
            lambda messages: AIMessage(content=f"recorded {recorded_ids(messages)}"),
        ],
    )

    (paused,) = result["__interrupt__"]
    request = paused.value
    assert request["question"] == "which cache?" and "below the strategize threshold 0.8" in request["reason"]
    assert [r.review_id for r in pending_reviews(store, plan.plan_id, principal=LOCAL)] == [request["review_id"]]
    assert all(
        d.decision_type is not DecisionType.STRATEGY_CHOICE for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)
    )

    _, decision = resolve_review(store, request["review_id"], ReviewAction.CUSTOM, "an in-process LRU", principal=LOCAL)
    final = actor.invoke(Command(resume={"review_id": request["review_id"]}), config)

    stored = reading.get_decision(store, decision.decision_id, principal=LOCAL)
    assert (stored.chosen_option, stored.alternatives_considered) == ("an in-process LRU", ("redis", "memcached"))
    assert json.loads(str(_tool_results(final)[-1].content)) == {"decision_id": decision.decision_id}
    assert final["messages"][-1].content == f"recorded ['{decision.decision_id}']"  # the actor resumed with it


def test_refusals_reach_the_model_as_tool_errors_and_write_nothing(store: Trail, graph: Graph, checkpointer: SqliteSaver) -> None:
    plan, _ = instantiate_plan(store, "p", principal=LOCAL)
    before = count_graph(graph)

    _, _, result = _run(
        store,
        checkpointer,
        plan,
        [
            decide(decision_type="prompt_definition", question="q", chosen_option="o", rationale="r"),
            decide(decision_type="strategy_choice", question="q", chosen_option="o", rationale="r", confidence_score=2),
            decide(decision_type="tool_invocation", question="q", chosen_option="o", rationale="r"),
        ],
    )

    errors = _tool_results(result)
    assert [m.status for m in errors] == ["error", "error", "error"]
    assert "created only by the plan lifecycle engine" in str(errors[0].content)
    assert "confidence_score" in str(errors[1].content)
    assert "the plan is in strategize" in str(errors[2].content)
    assert count_graph(graph) == before


def test_recording_outside_a_checkpointed_run_is_refused(store: Trail, graph: Graph) -> None:
    plan, _ = instantiate_plan(store, "p", principal=LOCAL)
    actor = build_actor(
        ScriptedChatModel(script=[decide(decision_type="strategy_choice", question="q", chosen_option="o", rationale="r")]),
        [record_decision_tool(LocalRecorder(store, LOCAL))],
        None,
    )
    before = count_graph(graph)

    result = actor.invoke({"messages": [HumanMessage("go")], "plan_id": plan.plan_id})

    (error,) = _tool_results(result)
    assert error.status == "error" and "actor_state_ref" in str(error.content)
    assert count_graph(graph) == before


def test_execute_decisions_recorded_by_an_actor_get_a_checkpoint_group(store: Trail, checkpointer: SqliteSaver) -> None:
    plan, _ = instantiate_plan(store, "p", principal=LOCAL)
    to_execute(store, plan.plan_id)
    actor, _, result = _run(
        store,
        checkpointer,
        plan,
        [decide(decision_type="tool_invocation", question="which tool?", chosen_option="pytest", rationale="r")],
        resources=[{"resource_id": "repo:app", "path": "tests/"}],
    )
    decision_id = json.loads(str(_tool_results(result)[0].content))["decision_id"]
    decision = reading.get_decision(store, decision_id, principal=LOCAL)

    group = reading.checkpoint_group(store, decision_id, principal=LOCAL)

    assert group is not None and decision.context_snapshot.actor_state_ref is not None
    assert group.checkpoint_id == decision.context_snapshot.actor_state_ref.checkpoint_id
    assert group.resources == ("repo:app:tests/",)
    # The group's checkpoint is a real one in the actor's checkpointer.
    assert restore(actor, decision.context_snapshot.actor_state_ref).values["plan_id"] == plan.plan_id
