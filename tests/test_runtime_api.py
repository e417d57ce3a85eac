"""The plan runtime over HTTP (issue 45): runPlan runs a plan in the service, a correction over GraphQL
is replayed by the service with no client acting, a review pauses the run, refusals write nothing."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail, analysis
from decisiontrail.access import LOCAL
from serving import subscribed
from test_api import error_code, ok

RUN = """
mutation($input: RunPlanInput!) { runPlan(input: $input) { id phase run { id status modelName } } }"""
PLAN = """
query($id: ID!) { plan(id: $id) {
  id phase
  run { id status currentActor waitingFor generation error pendingReplays }
  decisions(filter: {status: CURRENT}) { nodes { id decisionType chosenOption } }
  childPlans { id phase description invalidatedAt run { status parentRunId } }
} }"""
CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id } attempt { attemptId replayOutcome } invalidatedPlans { id } }
}"""
ATTEMPT = """
query($id: ID!) { decision(id: $id) { corrections { attemptId replayOutcome replayDetail replayedDecisionIds } } }"""
DECISION = "query($id: ID!) { decision(id: $id) { id decisionType chosenOption status } }"
PENDING = "query($id: ID!) { pendingReviews(planId: $id) { id decisionType } }"
INBOX = "query($project: String) { reviews(status: PENDING, project: $project) { nodes { id } } }"
RESOLVE = "mutation($id: ID!) { resolveReview(input: {reviewId: $id, action: APPROVE}) { decision { id } } }"
CANCEL = 'mutation($id: ID!) { cancelRun(runId: $id, reason: "not needed") { id status error } }'
RUN_BY_ID = "query($id: ID!) { run(id: $id) { id status plan { id } } }"


def until(check: Callable[[], Any], timeout: float = 90.0, what: str = "the run") -> Any:
    """Poll ``check`` until it answers something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} did not get there within {timeout:.0f} s"
        time.sleep(0.1)


def plan_when(api: httpx.Client, plan_id: str, *statuses: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        plan: dict[str, Any] = ok(api, PLAN, id=plan_id)["plan"]
        return plan if plan["run"]["status"] in statuses else None

    found: dict[str, Any] = until(check, what=f"the run of plan {plan_id} (to {statuses})")
    return found


def types(plan: dict[str, Any]) -> list[str]:
    return [d["decisionType"] for d in plan["decisions"]["nodes"]]


def test_run_plan_runs_a_hierarchy_and_a_correction_over_graphql_replays_itself(api: httpx.Client, store: Trail) -> None:
    started = ok(
        api,
        RUN,
        input={
            "description": "Add rate limiting to the billing API",
            "invariants": [{"name": "coverage", "statement": "Coverage stays at 80%"}],
        },
    )["runPlan"]
    assert started["phase"] == "STRATEGIZE" and started["run"]["modelName"] == "scripted"

    plan = plan_when(api, started["id"], "SUCCEEDED")
    assert plan["phase"] == "APPLY"
    assert sorted(types(plan)) == [
        "IMPLEMENTATION_CHOICE",
        "INVARIANT_ENFORCED",
        "PROMPT_DEFINITION",
        "RESOURCE_SELECTION",
        "STRATEGY_CHOICE",
        "SUBPLAN_SPAWN",
        "TOOL_INVOCATION",
    ]
    (child,) = plan["childPlans"]
    assert child["phase"] == "APPLY" and child["run"] == {"status": "SUCCEEDED", "parentRunId": plan["run"]["id"]}
    assert child["invalidatedAt"] is None
    assert analysis.check_all(store, principal=LOCAL).ok

    strategy = next(d for d in plan["decisions"]["nodes"] if d["decisionType"] == "STRATEGY_CHOICE")
    corrected = ok(
        api,
        CORRECT,
        input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "Use Redis counters shared by every replica"},
    )["correctDecision"]
    assert corrected["attempt"]["replayOutcome"] == "PENDING"
    assert [p["id"] for p in corrected["invalidatedPlans"]] == [child["id"]]

    # No client acts from here on: the service replays the correction.
    def replay_reported() -> dict[str, Any] | None:
        (attempt,) = ok(api, ATTEMPT, id=strategy["id"])["decision"]["corrections"]
        return attempt if attempt["replayOutcome"] != "PENDING" else None

    attempt = until(replay_reported, what="the replay")
    assert attempt["replayOutcome"] == "REPLAYED", attempt["replayDetail"]
    assert attempt["attemptId"] == corrected["attempt"]["attemptId"]
    replayed = [ok(api, DECISION, id=i)["decision"] for i in attempt["replayedDecisionIds"]]
    replayed_choice = next(d for d in replayed if d["decisionType"] == "STRATEGY_CHOICE")
    assert replayed_choice["chosenOption"] == "Use Redis counters shared by every replica"

    after = plan_when(api, plan["id"], "SUCCEEDED")
    assert after["phase"] == "APPLY" and after["run"]["generation"] == 1 and after["run"]["pendingReplays"] == []
    current = after["decisions"]["nodes"]
    assert [d["chosenOption"] for d in current if d["decisionType"] == "STRATEGY_CHOICE"].count(
        "Use Redis counters shared by every replica"
    ) == 1  # the correction decision is a user_intervention; the replay re-decided it once
    assert replayed_choice["id"] in {d["id"] for d in current}
    # the old child plan is invalidated; the replay's spawn has a child of its own, run to Apply
    live = [c for c in after["childPlans"] if c["invalidatedAt"] is None]
    assert len(live) == 1 and live[0]["id"] != child["id"]
    assert live[0]["phase"] == "APPLY" and live[0]["run"]["status"] == "SUCCEEDED"
    assert next(c for c in after["childPlans"] if c["id"] == child["id"])["invalidatedAt"] is not None
    assert ok(api, RUN_BY_ID, id=after["run"]["id"])["run"]["plan"]["id"] == plan["id"]
    assert analysis.check_all(store, principal=LOCAL).ok


def test_a_run_waits_for_its_reviews_and_goes_on_when_they_are_resolved(api: httpx.Client, store: Trail) -> None:
    # The inbox is read for this run's project: oldest first across the session's shared database,
    # its first page could hold only other tests' pending reviews (it hung once that way).
    project = f"rotate-{uuid.uuid4().hex[:8]}"
    started = ok(
        api, RUN, input={"description": "Rotate the API keys", "automationProfile": {"editCode": 0.95}, "project": project}
    )["runPlan"]

    first = plan_when(api, started["id"], "WAITING")
    assert (first["run"]["waitingFor"], first["run"]["currentActor"]) == ("review", "STRATEGY")
    resolved = 0
    deadline = time.monotonic() + 180
    while True:
        plan = plan_when(api, started["id"], "WAITING", "SUCCEEDED", "FAILED")
        if plan["run"]["status"] != "WAITING":
            break
        # the parent waits for its reviews, then for its child plan, whose run waits for its own
        pending = ok(api, INBOX, project=project)["reviews"]["nodes"]
        if not pending:
            # a run left waiting with nothing to wait for (a lost wake: test_run_races) ends here, said
            assert time.monotonic() < deadline, f"the run waits with no review pending: {plan['run']}, {plan['childPlans']}"
            time.sleep(0.1)
            continue
        for review in pending:
            ok(api, RESOLVE, id=review["id"])
            resolved += 1

    assert plan["run"]["status"] == "SUCCEEDED", plan["run"]["error"]
    # each strategy decision (0.9) is below 0.95: the approach, the resources and the spawn in the
    # plan, the approach and the resources in its child; Execute's threshold is 0, so none there
    assert resolved == 5
    assert plan["phase"] == "APPLY" and plan["childPlans"][0]["phase"] == "APPLY"
    assert analysis.check_all(store, principal=LOCAL).ok


def test_a_cancelled_run_stops_where_it_is(api: httpx.Client, store: Trail) -> None:
    started = ok(api, RUN, input={"description": "Rotate the API keys", "automationProfile": {"editCode": 1.0}})["runPlan"]
    waiting = plan_when(api, started["id"], "WAITING")

    cancelled = ok(api, CANCEL, id=waiting["run"]["id"])["cancelRun"]

    assert cancelled["status"] == "CANCELLED" and cancelled["error"] == "cancelled by local: not needed"
    for review in ok(api, PENDING, id=started["id"])["pendingReviews"]:
        ok(api, RESOLVE, id=review["id"])  # resolving it does not wake a cancelled run
    time.sleep(1.0)
    plan = ok(api, PLAN, id=started["id"])["plan"]
    assert plan["run"]["status"] == "CANCELLED" and plan["phase"] == "STRATEGIZE"
    refused = error_code(api, CANCEL, id=waiting["run"]["id"])
    assert refused["code"] == "CONFLICT" and "already cancelled" in refused["message"]


def test_refusals_name_the_field_and_write_nothing(api: httpx.Client, store: Trail, graph: Graph) -> None:
    before = count_graph(graph)

    bad_model = error_code(api, RUN, input={"description": "x", "model": "not a model"})
    bad_arguments = error_code(api, RUN, input={"description": "x", "arguments": [1, 2]})
    blank = error_code(api, RUN, input={"description": "  "})
    unknown = error_code(api, CANCEL, id="01JBBBBBBBBBBBBBBBBBBBBBBB")

    assert (bad_model["code"], bad_model["field"]) == ("VALIDATION_FAILED", "model")
    assert (bad_arguments["code"], bad_arguments["field"]) == ("VALIDATION_FAILED", "arguments")
    assert blank["code"] == "VALIDATION_FAILED" and "description" in blank["message"]
    assert unknown["code"] == "NOT_FOUND" and "01JBBBBBBBBBBBBBBBBBBBBBBB" in unknown["message"]
    assert ok(api, RUN_BY_ID, id="01JBBBBBBBBBBBBBBBBBBBBBBB")["run"] is None
    assert count_graph(graph) == before


def test_a_runs_changes_are_events_of_its_plan(api: httpx.Client, base_url: str, store: Trail) -> None:
    started = ok(api, RUN, input={"description": "Rotate the API keys", "arguments": {"depth": 1}})["runPlan"]
    plan_when(api, started["id"], "SUCCEEDED")

    query = "subscription($id: ID!, $after: String) { decisionEvents(planId: $id, after: $after) { kind decisionId cursor } }"
    with subscribed(base_url, query, {"id": started["id"], "after": "0"}) as ws:
        seen = []
        while True:  # the run has finished: every event is in the outbox, sent at once
            try:
                message = json.loads(ws.recv(timeout=3))
            except TimeoutError:
                break
            assert message["type"] == "next", message
            seen.append(message["payload"]["data"]["decisionEvents"])
    kinds = [e["kind"] for e in seen]
    assert kinds[0] == "RECORDED" and kinds[1] == "RUN_UPDATED"  # the root, then the run queued, in one write
    assert kinds[-1] == "RUN_UPDATED"  # the run succeeded, after the plan's last decision
    assert kinds.count("RECORDED") == 5  # the root, the approach, the resources, the implementation and its tool
    assert all(e["decisionId"] is None for e in seen if e["kind"] == "RUN_UPDATED")


REVIEW = "query($id: ID!) { review(id: $id) { id status digest reopens { id status } } }"
APPROVE = """
mutation($id: ID!, $digest: String) { resolveReview(input: {reviewId: $id, action: APPROVE, digest: $digest}) { review { id } } }"""


def test_a_replay_pauses_where_it_asks_again_what_a_lapsed_approval_had_approved(api: httpx.Client, store: Trail) -> None:
    """Accountable approvals in the runtime: a correction lapses the approvals resting on what it
    superseded; the replay, reaching one's question, waits for a person again; once they answer,
    the replay finishes with no client acting otherwise."""
    started = ok(
        api,
        RUN,
        input={"description": "Rotate the API keys", "arguments": {"depth": 1}, "automationProfile": {"editCode": 0.92}},
    )["runPlan"]
    approved = []
    while (plan := plan_when(api, started["id"], "WAITING", "SUCCEEDED", "FAILED"))["run"]["status"] == "WAITING":
        for review in ok(api, PENDING, id=started["id"])["pendingReviews"]:
            ok(api, APPROVE, id=review["id"])
            approved.append(review["id"])
    assert plan["run"]["status"] == "SUCCEEDED" and len(approved) == 2  # the approach and the resources, each at 0.9
    strategy = next(d for d in plan["decisions"]["nodes"] if d["decisionType"] == "STRATEGY_CHOICE")

    corrected = ok(
        api, CORRECT, input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "Rotate with a grace period"}
    )["correctDecision"]
    assert corrected["attempt"]["replayOutcome"] == "PENDING"
    # the approach was corrected itself (its approval replaced, not lapsed); the resources' lapsed
    assert [ok(api, REVIEW, id=r)["review"]["status"] for r in approved] == ["APPROVED", "LAPSED"]

    # the replay re-decides the approach as the guidance says (0.95: above the threshold); the
    # resources question waits for a person again, and the run with it
    def asked_again() -> list[dict[str, Any]] | None:
        pending: list[dict[str, Any]] = ok(api, PENDING, id=started["id"])["pendingReviews"]
        return pending or None

    (again,) = until(asked_again, what="the replay's question")
    waiting = plan_when(api, started["id"], "WAITING")
    assert (waiting["run"]["waitingFor"], waiting["run"]["currentActor"]) == ("review", "STRATEGY")
    asked = ok(api, REVIEW, id=again["id"])["review"]
    assert asked["reopens"] == {"id": approved[1], "status": "LAPSED"}

    ok(api, APPROVE, id=again["id"], digest=asked["digest"])

    def replay_reported() -> dict[str, Any] | None:
        (attempt,) = ok(api, ATTEMPT, id=strategy["id"])["decision"]["corrections"]
        return attempt if attempt["replayOutcome"] != "PENDING" else None

    assert until(replay_reported, what="the replay")["replayOutcome"] == "REPLAYED"
    assert plan_when(api, started["id"], "SUCCEEDED")["phase"] == "APPLY"
    assert analysis.check_all(store, principal=LOCAL).ok
