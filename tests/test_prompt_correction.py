"""A prompt correction carries the new prompt (ADR-007's vague-prompt scenario): the new root records
it, the plan shows it, and the original stays readable in the root it superseded."""

from __future__ import annotations

import json

import httpx

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from test_api import error_code, ok

INSTANTIATE = """
mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"""
CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id decisionType chosenOption alternativesConsidered } }
}"""
PLAN = """
query($id: ID!) {
  plan(id: $id) { description arguments rootDecision { id chosenOption } tree { decision { id } } }
}"""
RECORD = """
mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"""


def test_a_prompt_correction_gives_the_plan_its_new_description_and_arguments(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "Add rate limiting", "arguments": {"limit": 600}})["instantiatePlan"]
    original_root = plan["rootDecision"]["id"]

    corrected = ok(
        api,
        CORRECT,
        input={
            "decisionId": original_root,
            "mode": "REVERT",
            "guidance": "limit per client, not globally",
            "description": "Add per-client rate limiting",
            "arguments": {"limit": 100, "per": "client"},
        },
    )["correctDecision"]["correction"]

    assert corrected["decisionType"] == "PROMPT_DEFINITION"
    assert json.loads(corrected["chosenOption"]) == {
        "description": "Add per-client rate limiting",
        "arguments": {"limit": 100, "per": "client"},
    }
    assert json.loads(corrected["alternativesConsidered"][0])["description"] == "Add rate limiting"  # the original stays readable
    now = ok(api, PLAN, id=plan["id"])["plan"]
    assert (now["description"], now["arguments"]) == ("Add per-client rate limiting", {"limit": 100, "per": "client"})
    assert now["rootDecision"]["id"] == corrected["id"]
    assert [n["decision"]["id"] for n in now["tree"]] == [corrected["id"]]


def test_without_a_description_the_guidance_is_the_new_description_and_the_arguments_stay(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "Add rate limiting", "arguments": {"limit": 600}})["instantiatePlan"]

    ok(api, CORRECT, input={"decisionId": plan["rootDecision"]["id"], "mode": "REVERT", "guidance": "Add rate limits per route"})

    now = ok(api, PLAN, id=plan["id"])["plan"]
    assert (now["description"], now["arguments"]) == ("Add rate limits per route", {"limit": 600})


def test_a_new_prompt_on_any_other_correction_is_refused_and_nothing_is_written(api: httpx.Client, graph: Graph) -> None:
    from test_api import snapshot

    plan = ok(api, INSTANTIATE, input={"description": "Add rate limiting"})["instantiatePlan"]
    strategy = ok(
        api,
        RECORD,
        input={
            "planId": plan["id"],
            "decisionType": "STRATEGY_CHOICE",
            "question": "where?",
            "chosenOption": "gateway",
            "rationale": "r",
            "parentDecisionId": plan["rootDecision"]["id"],
            "contextSnapshot": snapshot("s"),
        },
    )["recordDecision"]["decision"]
    before = count_graph(graph)

    refused = error_code(
        api, CORRECT, input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "g", "description": "a new prompt"}
    )
    blank = error_code(
        api, CORRECT, input={"decisionId": plan["rootDecision"]["id"], "mode": "REVERT", "guidance": "g", "description": " "}
    )

    assert (refused["code"], refused["field"]) == ("VALIDATION_FAILED", "description")
    assert (blank["code"], blank["field"]) == ("VALIDATION_FAILED", "description")
    assert count_graph(graph) == before
    assert ok(api, PLAN, id=plan["id"])["plan"]["description"] == "Add rate limiting"
