"""Accountable approvals over HTTP (issue 45, Build 6): a resolved review records who resolved it
(the caller's token, never a name the client gives) and the digest of the exact action approved;
an approval lapses when a correction supersedes what it rested on, and the plan's next asking of
that question is held for a person again, whatever its confidence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL, Principal, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile
from decisiontrail.domain.recording import ReviewAction, ReviewStatus
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail, analysis, reading
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.recording import record_decision
from decisiontrail.services.reviews import resolve_review
from factories import actor_snapshot, tool_input
from serving import served, subscribed
from test_api import INSTANTIATE, error_code, gql, ok, snapshot

RECORD = """
mutation($input: RecordDecisionInput!) {
  recordDecision(input: $input) { decision { id chosenOption actionDigest } review { id status reason digest } }
}"""
REVIEW_FIELDS = """id status resolvedBy digest approvedDigest lapsedAt lapsedFrom lapsedBy { id }
  reopens { id } reopenedBy { id status } decision { id actionDigest chosenOption status }"""
REVIEW = "query($id: ID!) { review(id: $id) { " + REVIEW_FIELDS + " } }"
RESOLVE = """
mutation($input: ResolveReviewInput!) {
  resolveReview(input: $input) { review { id status resolvedBy digest approvedDigest } decision { id actionDigest chosenOption } }
}"""
CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id } lapsedApprovals { id status lapsedFrom lapsedBy { id } } }
}"""
EVENTS = "subscription($id: ID!, $after: String) { decisionEvents(planId: $id, after: $after) { kind reviewId } }"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    return {
        "actor": issue_token(path, "agent-7", Role.ACTOR),
        "reviewer": issue_token(path, "dana", Role.REVIEWER),
        "_file": str(path),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


@pytest.fixture
def actor(base_url: str, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {tokens['actor']}"}) as client:
        yield client


@pytest.fixture
def reviewer(base_url: str, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {tokens['reviewer']}"}) as client:
        yield client


def _record(client: httpx.Client, plan_id: str, question: str, confidence: float, **fields: Any) -> dict[str, Any]:
    payload = {
        "planId": plan_id,
        "decisionType": fields.pop("decisionType", "STRATEGY_CHOICE"),
        "question": question,
        "chosenOption": fields.pop("chosenOption", f"answer to {question}"),
        "alternativesConsidered": fields.pop("alternativesConsidered", ["the other way"]),
        "confidenceScore": confidence,
        "rationale": "because",
        "contextSnapshot": fields.pop("contextSnapshot", snapshot(question)),
        **fields,
    }
    found: dict[str, Any] = ok(client, RECORD, input=payload)["recordDecision"]
    return found


def _plan(actor: httpx.Client) -> str:
    """A plan whose Strategize decisions below 0.9 wait for a person, with an approach recorded."""
    created = ok(actor, INSTANTIATE, input={"description": "Add rate limiting", "automationProfile": {"editCode": 0.9}})
    plan_id: str = created["instantiatePlan"]["id"]
    return plan_id


def _review(client: httpx.Client, review_id: str) -> dict[str, Any]:
    found: dict[str, Any] = ok(client, REVIEW, id=review_id)["review"]
    return found


def test_a_resolution_records_the_callers_token_and_the_digest_of_what_it_approved(
    actor: httpx.Client, reviewer: httpx.Client, graph: Graph
) -> None:
    plan_id = _plan(actor)
    approach = _record(actor, plan_id, "Which approach?", 0.95)["decision"]
    held = _record(actor, plan_id, "Which limiter?", 0.4, parentDecisionId=approach["id"])["review"]
    assert held["status"] == "PENDING" and held["digest"].startswith("sha256:") and len(held["digest"]) == 71

    # no client-supplied name: the input has no such field, and nothing is written
    before = count_graph(graph)
    named = gql(
        reviewer,
        'mutation($id: ID!) { resolveReview(input: {reviewId: $id, action: APPROVE, resolvedBy: "mallory"}) { review { id } } }',
        id=held["id"],
    )
    assert named["errors"] and "resolvedBy" in named["errors"][0]["message"]
    # a digest other than the review's: refused, nothing written
    stale = error_code(reviewer, RESOLVE, input={"reviewId": held["id"], "action": "APPROVE", "digest": "sha256:" + "0" * 64})
    assert stale["code"] == "CONFLICT" and held["digest"] in stale["message"]
    assert count_graph(graph) == before and _review(reviewer, held["id"])["status"] == "PENDING"

    resolved = ok(reviewer, RESOLVE, input={"reviewId": held["id"], "action": "APPROVE", "digest": held["digest"]})
    review, decision = resolved["resolveReview"]["review"], resolved["resolveReview"]["decision"]
    assert review["resolvedBy"] == "dana"  # the reviewer's token, not the actor's, not "local"
    assert review["approvedDigest"] == held["digest"] == decision["actionDigest"]
    stored = _review(actor, held["id"])
    assert (stored["approvedDigest"], stored["decision"]["id"]) == (held["digest"], decision["id"])

    # an override approves another action: its digest is the decision's, not the proposal's
    other = _record(actor, plan_id, "Which store?", 0.4, parentDecisionId=approach["id"])["review"]
    overridden = ok(
        reviewer, RESOLVE, input={"reviewId": other["id"], "action": "SELECT_ALTERNATIVE", "option": "the other way"}
    )["resolveReview"]
    assert overridden["decision"]["chosenOption"] == "the other way"
    assert overridden["review"]["approvedDigest"] == overridden["decision"]["actionDigest"] != other["digest"]
    assert overridden["review"]["resolvedBy"] == "dana"


def test_an_approval_lapses_when_what_it_rested_on_is_corrected_and_its_question_is_asked_again(
    actor: httpx.Client, reviewer: httpx.Client, base_url: str, tokens: dict[str, str], store: Trail
) -> None:
    plan_id = _plan(actor)
    approach = _record(actor, plan_id, "Which approach?", 0.95)["decision"]
    held = _record(actor, plan_id, "Which limiter?", 0.4, parentDecisionId=approach["id"])["review"]
    approved = ok(reviewer, RESOLVE, input={"reviewId": held["id"], "action": "APPROVE"})["resolveReview"]["decision"]

    corrected = ok(reviewer, CORRECT, input={"decisionId": approach["id"], "mode": "REVERT", "guidance": "A gateway limiter"})[
        "correctDecision"
    ]
    correction_id = corrected["correction"]["id"]

    assert corrected["lapsedApprovals"] == [
        {"id": held["id"], "status": "LAPSED", "lapsedFrom": "APPROVED", "lapsedBy": {"id": correction_id}}
    ]
    lapsed = _review(reviewer, held["id"])
    assert lapsed["lapsedAt"] is not None and lapsed["reopenedBy"] is None
    assert lapsed["decision"]["id"] == approved["id"] and lapsed["decision"]["status"] == "SUPERSEDED"
    assert lapsed["approvedDigest"] == approved["actionDigest"]  # what was approved stays on record

    # the actor's replay asks the same question again, now sure of it: a person decides anyway
    replacement = _record(actor, plan_id, "Which approach?", 0.95, parentDecisionId=correction_id)["decision"]
    again = _record(actor, plan_id, "Which limiter?", 0.99, parentDecisionId=replacement["id"])["review"]
    assert again is not None and again["status"] == "PENDING" and held["id"] in again["reason"]
    assert _review(reviewer, again["id"])["reopens"] == {"id": held["id"]}
    assert _review(reviewer, held["id"])["reopenedBy"] == {"id": again["id"], "status": "PENDING"}
    # a question that was never approved is judged by the profile alone; and a lapse is asked once
    assert _record(actor, plan_id, "Which window?", 0.99, parentDecisionId=replacement["id"])["decision"] is not None
    second = _record(
        actor, plan_id, "Which limiter?", 0.99, parentDecisionId=replacement["id"], contextSnapshot=snapshot("asked once more")
    )
    assert second["decision"] is not None

    answered = ok(reviewer, RESOLVE, input={"reviewId": again["id"], "action": "APPROVE", "digest": again["digest"]})
    assert answered["resolveReview"]["review"]["approvedDigest"] == again["digest"] != held["digest"]

    with subscribed(base_url, EVENTS, {"id": plan_id, "after": "0"}, token=tokens["reviewer"]) as ws:
        seen = []
        while True:  # everything is committed: the outbox sends it at once
            try:
                message = json.loads(ws.recv(timeout=3))
            except TimeoutError:
                break
            seen.append(message["payload"]["data"]["decisionEvents"])
    assert {"kind": "REVIEW_LAPSED", "reviewId": held["id"]} in seen
    assert analysis.check_all(store, principal=LOCAL).ok


def test_correcting_the_approved_decision_itself_replaces_the_approval_rather_than_lapsing_it(
    actor: httpx.Client, reviewer: httpx.Client
) -> None:
    plan_id = _plan(actor)
    approach = _record(actor, plan_id, "Which approach?", 0.95)["decision"]
    held = _record(actor, plan_id, "Which limiter?", 0.4, parentDecisionId=approach["id"])["review"]
    approved = ok(reviewer, RESOLVE, input={"reviewId": held["id"], "action": "APPROVE"})["resolveReview"]["decision"]

    corrected = ok(reviewer, CORRECT, input={"decisionId": approved["id"], "mode": "REVERT", "guidance": "A token bucket"})[
        "correctDecision"
    ]

    assert corrected["lapsedApprovals"] == []
    assert _review(reviewer, held["id"])["status"] == "APPROVED"


def test_a_resolution_is_answered_as_its_own_transaction_resolved_it(store: Trail) -> None:
    """Found by the load test: a correction committed between the resolution's commit and its
    answer lapsed the review, and the answer, read back afterwards, said LAPSED. The answer is the
    review as its own transaction left it."""
    plan, root = instantiate_plan(store, "p", automation_profile=AutomationProfile(edit_code=0.9), principal=LOCAL)
    approach = record_decision(
        store,
        tool_input("strategy_choice", confidence_score=0.95),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot("a"),
        principal=LOCAL,
    )
    held = record_decision(
        store,
        tool_input("strategy_choice", question="Which limiter?", confidence_score=0.4, parent_decision_id=approach.decision_id),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot("b"),
        principal=LOCAL,
    )
    reviewer = Principal("dana", Role.REVIEWER)
    lapsing = {"done": False}

    def correct_meanwhile() -> None:  # after the resolution's commit, before its answer
        if not lapsing["done"]:
            lapsing["done"] = True
            correct(store, approach.decision_id, "revert", "another approach", principal=reviewer)

    racing = replace(store, wake_runtime=correct_meanwhile)
    review, decision = resolve_review(racing, held.review_id, ReviewAction.APPROVE, principal=reviewer)

    assert lapsing["done"] and reading.get_review(store, held.review_id, principal=LOCAL).status is ReviewStatus.LAPSED
    assert review.status is ReviewStatus.APPROVED and review.resolved_by == "dana"
    assert review.decision_id == decision.decision_id and review.approved_digest == decision.action_digest


REVIEW_THEN = "query($id: ID!, $at: DateTime) { review(id: $id, asOf: $at) { " + REVIEW_FIELDS + " } }"
INBOX_THEN = """
query($status: ReviewStatus, $plan: ID, $at: DateTime) {
  reviews(status: $status, planId: $plan, asOf: $at) { totalCount nodes { id status } }
}"""


def test_a_review_read_as_of_a_moment_is_as_it_stood_then(actor: httpx.Client, reviewer: httpx.Client) -> None:
    # Was: no read reached a review as of a moment; the inbox and review(id) answered today's state.
    plan_id = _plan(actor)
    approach = _record(actor, plan_id, "Which approach?", 0.95)["decision"]
    moments = [datetime.now(UTC).isoformat()]  # 0: before the review
    held = _record(actor, plan_id, "Which limiter?", 0.4, parentDecisionId=approach["id"])["review"]
    moments.append(datetime.now(UTC).isoformat())  # 1: pending
    approved = ok(reviewer, RESOLVE, input={"reviewId": held["id"], "action": "APPROVE"})["resolveReview"]["decision"]
    moments.append(datetime.now(UTC).isoformat())  # 2: approved
    ok(reviewer, CORRECT, input={"decisionId": approach["id"], "mode": "REVERT", "guidance": "A gateway limiter"})
    moments.append(datetime.now(UTC).isoformat())  # 3: lapsed

    def then(i: int) -> dict[str, Any] | None:
        found: dict[str, Any] | None = ok(reviewer, REVIEW_THEN, id=held["id"], at=moments[i])["review"]
        return found

    assert then(0) is None
    pending, approved_then, lapsed = then(1), then(2), then(3)
    assert pending is not None and approved_then is not None and lapsed is not None
    assert (pending["status"], pending["decision"], pending["resolvedBy"], pending["approvedDigest"]) == (
        "PENDING",
        None,
        None,
        None,
    )
    assert (approved_then["status"], approved_then["lapsedAt"], approved_then["lapsedBy"]) == ("APPROVED", None, None)
    assert approved_then["decision"] == {**approved, "status": "CURRENT"}  # the decision as it stood then too
    assert (lapsed["status"], lapsed["lapsedFrom"]) == ("LAPSED", "APPROVED")
    assert lapsed["decision"]["status"] == "SUPERSEDED"

    def inbox(status: str, i: int) -> list[tuple[str, str]]:
        found = ok(reviewer, INBOX_THEN, status=status, plan=plan_id, at=moments[i])["reviews"]
        assert found["totalCount"] == len(found["nodes"])  # the count is held to the same moment
        return [(n["id"], n["status"]) for n in found["nodes"]]

    assert inbox("PENDING", 0) == []
    assert inbox("PENDING", 1) == [(held["id"], "PENDING")]
    assert inbox("PENDING", 2) == [] and inbox("APPROVED", 2) == [(held["id"], "APPROVED")]
    assert inbox("APPROVED", 3) == [] and inbox("LAPSED", 3) == [(held["id"], "LAPSED")]
    assert ok(reviewer, INBOX_THEN, status="LAPSED", plan=plan_id, at=None)["reviews"]["nodes"] == [
        {"id": held["id"], "status": "LAPSED"}
    ]
