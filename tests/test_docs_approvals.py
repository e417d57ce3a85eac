"""docs/approvals.md's examples, run against a served API: the inbox and an approval with its digest,
the check, the correction that lapses it, and the review that asks again."""

from __future__ import annotations

import httpx

from decisiontrail.access import LOCAL
from decisiontrail.domain import AutomationProfile, Decision
from decisiontrail.domain.recording import Review
from decisiontrail.services import Trail
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.recording import record_decision
from docs_examples import example, run_graphql
from factories import actor_snapshot, tool_input

PAGE = "docs/approvals.md"


def _record(store: Trail, plan_id: str, question: str, confidence: float, parent: str | None = None) -> Decision | Review:
    arguments = tool_input("strategy_choice", question=question, chosen_option=f"answer to {question}")
    arguments |= {"confidence_score": confidence, "alternatives_considered": ["the other way"]}
    if parent is not None:
        arguments["parent_decision_id"] = parent
    return record_decision(store, arguments, plan_id=plan_id, snapshot=actor_snapshot(text=question), principal=LOCAL)


def test_the_approval_examples_approve_check_lapse_and_ask_again(api: httpx.Client, store: Trail) -> None:
    plan, _ = instantiate_plan(store, "Add rate limiting", automation_profile=AutomationProfile(edit_code=0.9), principal=LOCAL)
    approach = _record(store, plan.plan_id, "Which approach?", 0.95)
    assert isinstance(approach, Decision)
    held = _record(store, plan.plan_id, "Which limiter?", 0.4, approach.decision_id)
    assert isinstance(held, Review)
    approvals = example(PAGE, "query Inbox {")

    (waiting,) = run_graphql(api, approvals, "Inbox")["reviews"]["nodes"]
    assert waiting["id"] == held.review_id and waiting["question"] == "Which limiter?" and waiting["confidenceScore"] == 0.4
    approved = run_graphql(api, approvals, "Approve", id=waiting["id"], digest=waiting["digest"])["resolveReview"]
    checked = run_graphql(api, example(PAGE, "query Check($id: ID!) {"), "Check", id=held.review_id)["review"]

    # "After APPROVE, approvedDigest equals the review's digest and the decision's actionDigest."
    assert approved["review"]["status"] == "APPROVED" and approved["review"]["resolvedBy"] == "local"
    assert approved["review"]["approvedDigest"] == waiting["digest"] == approved["decision"]["actionDigest"]
    assert checked == {
        "status": "APPROVED",
        "resolvedBy": "local",
        "approvedDigest": waiting["digest"],
        "decision": {"id": approved["decision"]["id"], "actionDigest": waiting["digest"], "status": "CURRENT"},
    }

    corrected = run_graphql(api, example(PAGE, "mutation Correct($id: ID!) {"), "Correct", id=approach.decision_id)[
        "correctDecision"
    ]
    correction = corrected["correction"]["id"]
    assert corrected["lapsedApprovals"] == [
        {"id": held.review_id, "status": "LAPSED", "lapsedFrom": "APPROVED", "lapsedBy": {"id": correction}}
    ]

    # The replay asks the question again, sure of it now: a person is asked anyway.
    replacement = _record(store, plan.plan_id, "Which approach?", 0.95, correction)
    assert isinstance(replacement, Decision)
    again = _record(store, plan.plan_id, "Which limiter?", 0.99, replacement.decision_id)
    assert isinstance(again, Review)
    reopened = run_graphql(api, example(PAGE, "query Reopened($id: ID!) {"), "Reopened", id=again.review_id)["review"]

    assert reopened["id"] == again.review_id and reopened["status"] == "PENDING" and held.review_id in reopened["reason"]
    assert reopened["digest"].startswith("sha256:") and reopened["digest"] != waiting["digest"]
    assert reopened["reopens"] == {
        "id": held.review_id,
        "status": "LAPSED",
        "lapsedFrom": "APPROVED",
        "approvedDigest": waiting["digest"],
        "resolvedBy": "local",
        "decision": {"chosenOption": "answer to Which limiter?", "status": "SUPERSEDED"},
    }
