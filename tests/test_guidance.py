"""addGuidance over HTTP: a user's guidance without a correction (ADR-033's `agents plan prompt`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from test_api import INSTANTIATE, RECORD, gql, ok, snapshot

GUIDE = """
mutation($input: AddGuidanceInput!) {
  addGuidance(input: $input) { id planId decisionType chosenOption rationale parent { id } status }
}"""


def _plan(api: httpx.Client) -> tuple[str, str]:
    plan = ok(api, INSTANTIATE, input={"description": "Add rate limiting"})["instantiatePlan"]
    return plan["id"], plan["rootDecision"]["id"]


def test_guidance_is_a_user_intervention_the_next_decision_can_depend_on(api: httpx.Client, store: Trail) -> None:
    plan_id, root_id = _plan(api)
    guidance = ok(
        api,
        GUIDE,
        input={"planId": plan_id, "parentDecisionId": root_id, "guidance": " Only the public endpoints ", "reason": "scope"},
    )["addGuidance"]

    assert guidance["decisionType"] == "USER_INTERVENTION" and guidance["planId"] == plan_id
    assert (guidance["chosenOption"], guidance["rationale"]) == ("Only the public endpoints", "scope")
    assert guidance["parent"] == {"id": root_id} and guidance["status"] == "CURRENT"
    stored = reading.get_decision(store, guidance["id"], principal=LOCAL)
    assert (
        json.loads(reading.read_context(store, stored.context_snapshot.hot_context_hash, principal=LOCAL))["given_by"] == "local"
    )

    after = ok(
        api,
        RECORD,
        input={
            "planId": plan_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": "Which limiter?",
            "chosenOption": "a token bucket",
            "rationale": "as guided",
            "dependsOn": [guidance["id"]],
            "contextSnapshot": snapshot("guided"),
        },
    )["recordDecision"]["decision"]
    assert reading.get_decision(store, after["id"], principal=LOCAL).depends_on == (guidance["id"],)
    assert [d.decision_id for d in reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)] == [
        root_id,
        guidance["id"],
        after["id"],
    ]


@pytest.mark.parametrize(
    ("change", "code", "detail"),
    [
        ({"guidance": "   "}, "VALIDATION_FAILED", "guidance"),
        ({"planId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "NOT_FOUND", "plan 01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        ({"parentDecisionId": "OTHER_ROOT"}, "VALIDATION_FAILED", "parent"),
        ({"parentDecisionId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "NOT_FOUND", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ],
)
def test_refused_guidance_writes_nothing(api: httpx.Client, graph: Graph, change: dict[str, Any], code: str, detail: str) -> None:
    plan_id, root_id = _plan(api)
    _, other_root = _plan(api)
    variables = {"planId": plan_id, "parentDecisionId": root_id, "guidance": "public endpoints only"} | change
    if variables["parentDecisionId"] == "OTHER_ROOT":
        variables["parentDecisionId"] = other_root
    before = count_graph(graph)

    body = gql(api, GUIDE, input=variables)

    error = body["errors"][0]
    assert error["extensions"]["code"] == code, error
    assert detail in error["message"]
    assert count_graph(graph) == before
