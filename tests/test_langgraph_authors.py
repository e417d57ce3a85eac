"""An agent author's own LangGraph graph (issue 45, Build 5): it records through the API with the
decision-tools skill, is corrected over GraphQL, and its ReplayHandler, following decisionEvents over
the WebSocket, replays the correction in the author's graph and reports it. Only HTTP and WebSocket
pass between the author's graph and the service."""

from __future__ import annotations

import threading
from typing import Any

import httpx
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from decisiontrail.actors.graph import build_actor
from decisiontrail.actors.scripted import ScriptedChatModel, decide, unless_corrected
from decisiontrail.client import DecisionTrailClient
from decisiontrail.langgraph import ReplayHandler, decision_tools, role_prompt
from decisiontrail.services import Trail, reading
from decisiontrail.access import LOCAL
from test_api import ok
from test_runtime_api import ATTEMPT, CORRECT, until

REDIS = "Redis counters shared by every replica"


def _author_graph(client: DecisionTrailClient) -> Any:
    model = ScriptedChatModel(
        script=[
            unless_corrected(
                decide(
                    decision_type="strategy_choice",
                    question="Where are buckets kept?",
                    chosen_option="In process",
                    confidence_score=0.9,
                    rationale="one replica",
                ),
                decide(
                    decision_type="strategy_choice",
                    question="Where are buckets kept?",
                    chosen_option=REDIS,
                    alternatives_considered=["In process"],
                    confidence_score=0.9,
                    rationale="three replicas",
                ),
            ),
            decide(
                decision_type="resource_selection",
                question="Which files?",
                chosen_option="gateway/limits.py",
                confidence_score=0.9,
                rationale="the limiter lives there",
            ),
        ]
    )
    return build_actor(model, decision_tools(client), InMemorySaver())


def test_an_authors_graph_records_is_corrected_and_replays_through_the_api(
    api: httpx.Client, base_url: str, store: Trail
) -> None:
    with DecisionTrailClient(base_url) as client:
        plan = client.instantiate_plan("the author's plan")
        graph = _author_graph(client)
        assert [t.name for t in decision_tools(client)] == ["record_decision", "revert_to_strategize"]
        graph.invoke(
            {
                "messages": [SystemMessage(role_prompt("strategy")), HumanMessage("Plan rate limiting")],
                "plan_id": plan["id"],
            },
            {"configurable": {"thread_id": "author-1"}},
        )
        first = [
            d for d in reading.list_decisions(store, plan["id"], principal=LOCAL) if d.decision_type.value == "strategy_choice"
        ]
        assert [d.chosen_option for d in first] == ["In process"]
        assert first[0].context_snapshot.actor_state_ref.thread_id == "author-1"  # type: ignore[union-attr]

        # From the plan's first event: a handler that subscribed after the correction was made would
        # otherwise never hear of it (it skips what it already reported, so this replays nothing twice).
        handler = ReplayHandler(client, graph, plan["id"], cursor="0")
        stop = threading.Event()
        # it stops once told to (after its next event), or after 5 s without one
        follower = threading.Thread(target=handler.follow, kwargs={"stop": stop, "idle_timeout": 5}, daemon=True)
        follower.start()
        try:
            ok(
                api,
                CORRECT,
                input={"decisionId": first[0].decision_id, "mode": "REVERT", "guidance": "Use Redis: three replicas"},
            )

            def reported() -> dict[str, Any] | None:
                (attempt,) = ok(api, ATTEMPT, id=first[0].decision_id)["decision"]["corrections"]
                return attempt if attempt["replayOutcome"] != "PENDING" else None

            attempt = until(reported, timeout=60, what="the author's replay")
        finally:
            stop.set()
        follower.join(timeout=30)

    assert attempt["replayOutcome"] == "REPLAYED", attempt["replayDetail"]
    replayed = [reading.get_decision(store, i, principal=LOCAL) for i in attempt["replayedDecisionIds"]]
    assert [(d.decision_type.value, d.chosen_option) for d in replayed] == [
        ("strategy_choice", REDIS),
        ("resource_selection", "gateway/limits.py"),
    ]
    assert all(d.superseded_by is None for d in replayed)
    assert handler.replayed == [attempt["attemptId"]] and handler.cursor is not None
    assert not follower.is_alive()
