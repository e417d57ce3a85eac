"""Corrections never break a plan: regression tests for the three defects of issue 13.

1. After a prompt correction the plan's tree still reads (through the store, both GraphQL paths
   of ``Plan.tree``, ``decisiontrail tree`` and the demonstration's history rendering).
2. A correction settles the reviews it makes moot, so none is stranded and the plan can advance.
3. An idempotency key is scoped to its plan: reused with another request, it is refused.
"""

from __future__ import annotations

from functools import partial
import json
import threading
import time

from datetime import timedelta
from typing import Any

import httpx
import pytest

from decisiontrail.cli import main
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.graphdb import Graph, outbox
from decisiontrail.services.correction import correct
from decisiontrail.services.relay import read_numbered
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import at_once, decision
from test_api import INSTANTIATE, RECORD, ok, snapshot

TREE_OUTLINES = "query($id: ID!) { plan(id: $id) { tree { depth decision { id decisionType } } } }"
TREE_RECORDS = "query($id: ID!) { plan(id: $id) { tree { depth decision { id question chosenOption } } } }"
TREE_AS_OF = "query($id: ID!, $at: DateTime!) { plan(id: $id) { tree(asOf: $at) { depth decision { id } } } }"
CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id decisionType chosenOption } invalidated { id } }
}
"""


def _plan_with_strategy(store: Trail) -> tuple[str, str, str]:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    return plan.plan_id, root.decision_id, strategy.decision_id


# -- 1. the tree reads after a prompt correction --------------------------------------------


def test_the_current_tree_after_a_prompt_correction_is_the_new_root_alone(store: Trail) -> None:
    plan_id, root_id, strategy_id = _plan_with_strategy(store)
    before = reading.get_decision(store, strategy_id, principal=LOCAL).created_at + timedelta(microseconds=1)

    result = correct(store, root_id, "revert", "Rate-limit only the public endpoints", "too vague", principal=LOCAL)

    tree = reading.get_tree(store, plan_id, principal=LOCAL)
    assert tree is not None
    assert [d.decision_id for d in tree] == [result.correction.decision_id]
    past = reading.get_tree(store, plan_id, as_of=before, principal=LOCAL)
    assert past is not None and [d.decision_id for d in past] == [root_id, strategy_id]
    history = reading.get_tree(store, plan_id, history=True, principal=LOCAL)
    assert history is not None
    assert [d.decision_id for d in history] == [result.correction.decision_id, root_id, strategy_id]
    assert "superseded by" in history.render()


def test_a_prompt_corrected_twice_keeps_one_history_tree(store: Trail) -> None:
    plan_id, root_id, _ = _plan_with_strategy(store)
    second = correct(store, root_id, "revert", "public endpoints only", "too vague", principal=LOCAL).correction
    third = correct(store, second.decision_id, "revert", "public and partner endpoints", "too narrow", principal=LOCAL).correction
    history = reading.get_tree(store, plan_id, history=True, principal=LOCAL)
    assert history is not None and history.root.decision.decision_id == third.decision_id
    current = reading.get_tree(store, plan_id, principal=LOCAL)
    assert current is not None and [d.decision_id for d in current] == [third.decision_id]


def test_plan_tree_reads_over_http_after_a_prompt_correction_on_both_paths(api: httpx.Client, store: Trail) -> None:
    plan_id, root_id, strategy_id = _plan_with_strategy(store)
    before = reading.get_decision(store, strategy_id, principal=LOCAL).created_at + timedelta(microseconds=1)

    corrected = ok(
        api, CORRECT, input={"decisionId": root_id, "mode": "REVERT", "guidance": "public endpoints only", "reason": "vague"}
    )
    new_root = corrected["correctDecision"]["correction"]["id"]

    outlines = ok(api, TREE_OUTLINES, id=plan_id)["plan"]["tree"]
    assert outlines == [{"depth": 0, "decision": {"id": new_root, "decisionType": "PROMPT_DEFINITION"}}]
    records = ok(api, TREE_RECORDS, id=plan_id)["plan"]["tree"]
    assert [(e["depth"], e["decision"]["id"], json.loads(e["decision"]["chosenOption"])["description"]) for e in records] == [
        (0, new_root, "public endpoints only")
    ]
    past = ok(api, TREE_AS_OF, id=plan_id, at=before.isoformat())["plan"]["tree"]
    assert [(e["depth"], e["decision"]["id"]) for e in past] == [(0, root_id), (1, strategy_id)]


def test_an_invalidated_child_plan_has_an_empty_current_tree_over_http(api: httpx.Client, store: Trail) -> None:
    plan_id, root_id, strategy_id = _plan_with_strategy(store)
    spawn = recording_service.record(store, decision(plan_id, DecisionType.SUBPLAN_SPAWN, strategy_id), principal=LOCAL)
    advance_phase(store, plan_id, Phase.EXECUTE, principal=LOCAL)
    child, _ = instantiate_plan(store, "child", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    correct(store, root_id, "revert", "public endpoints only", "vague", principal=LOCAL)
    assert ok(api, TREE_OUTLINES, id=child.plan_id)["plan"]["tree"] == []
    assert ok(api, TREE_RECORDS, id=child.plan_id)["plan"]["tree"] == []


def test_decisiontrail_tree_prints_the_corrected_plan_with_ids(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_id, root_id, strategy_id = _plan_with_strategy(store)
    new_root = correct(store, root_id, "revert", "public endpoints only", "vague", principal=LOCAL).correction.decision_id
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)

    assert main(["-q", "tree", plan_id]) == 0
    current = capsys.readouterr().out
    assert new_root in current and root_id not in current and strategy_id not in current

    assert main(["-q", "tree", "--history", plan_id]) == 0
    history = capsys.readouterr().out.splitlines()
    assert new_root in history[0] and root_id in history[1] and strategy_id in history[2]
    assert f"superseded by {new_root}" in history[1]


# -- 2. a correction settles the reviews it makes moot -----------------------------------------

PENDING = "query($id: ID!) { pendingReviews(planId: $id) { id status } }"
RESOLVE = """
mutation($input: ResolveReviewInput!) { resolveReview(input: $input) { review { status } decision { id } } }
"""
CORRECT_WITH_REVIEWS = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id } cancelledReviews { id status cancelledBy { id } resolvedAt } }
}
"""
ADVANCE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id phase } }"


def _held(
    client: httpx.Client,
    plan_id: str,
    parent_id: str,
    decision_type: str = "STRATEGY_CHOICE",
    key: str | None = None,
    depends_on: tuple[str, ...] = (),
) -> str:
    """Record a low-confidence proposal under ``parent_id``; the plan's threshold holds it for review."""
    payload: dict[str, Any] = {
        "planId": plan_id,
        "parentDecisionId": parent_id,
        "decisionType": decision_type,
        "question": "Which store?",
        "chosenOption": "Redis",
        "alternativesConsidered": ["in memory"],
        "rationale": "shared across instances",
        "confidenceScore": 0.2,
        "contextSnapshot": snapshot(f"held {parent_id} {key}"),
    }
    if key is not None:
        payload["idempotencyKey"] = key
    if depends_on:
        payload["dependsOn"] = list(depends_on)
    answer = ok(client, RECORD, input=payload)["recordDecision"]
    assert answer["decision"] is None, answer
    review_id: str = answer["review"]["id"]
    return review_id


def _gated_plan(client: httpx.Client) -> tuple[str, str, str]:
    plan = ok(client, INSTANTIATE, input={"description": "gated", "automationProfile": {"editCode": 0.5, "executeCommand": 0.5}})
    plan_id = plan["instantiatePlan"]["id"]
    root_id = plan["instantiatePlan"]["rootDecision"]["id"]
    strategy = ok(
        client,
        RECORD,
        input={
            "planId": plan_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": "How?",
            "chosenOption": "a token bucket",
            "rationale": "simple",
            "confidenceScore": 0.9,
            "contextSnapshot": snapshot("strategy"),
        },
    )["recordDecision"]["decision"]["id"]
    return plan_id, root_id, strategy


def test_a_correction_cancels_a_review_whose_parent_it_supersedes_and_the_plan_advances(api: httpx.Client) -> None:
    plan_id, root_id, strategy_id = _gated_plan(api)
    review_id = _held(api, plan_id, strategy_id)

    corrected = ok(api, CORRECT_WITH_REVIEWS, input={"decisionId": strategy_id, "mode": "REVERT", "guidance": "a sliding window"})
    correction_id = corrected["correctDecision"]["correction"]["id"]

    assert [(r["id"], r["status"], r["cancelledBy"]["id"]) for r in corrected["correctDecision"]["cancelledReviews"]] == [
        (review_id, "CANCELLED", correction_id)
    ]
    assert corrected["correctDecision"]["cancelledReviews"][0]["resolvedAt"] is not None
    assert ok(api, PENDING, id=plan_id)["pendingReviews"] == []
    replayed = {
        "planId": plan_id,
        "parentDecisionId": root_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": "Which limiter, now?",
        "chosenOption": "a sliding window",
        "rationale": "as corrected",
        "confidenceScore": 0.9,
        "contextSnapshot": snapshot("replayed"),
    }
    ok(api, RECORD, input=replayed)  # the replay decides the strategy anew
    assert ok(api, ADVANCE, id=plan_id, phase="EXECUTE")["advancePhase"]["phase"] == "EXECUTE"
    # A cancelled review is settled: resolving it is refused, and nothing is recorded.
    body = api.post(
        "/graphql", json={"query": RESOLVE, "variables": {"input": {"reviewId": review_id, "action": "APPROVE"}}}
    ).json()
    assert body["errors"][0]["extensions"]["rule"] == "review_is_pending"


def test_a_correction_cancels_a_review_in_another_plan_that_depends_on_what_it_supersedes(api: httpx.Client) -> None:
    # The review waits in a plan the correction's downstream does not reach: only its proposal
    # depends on the corrected decision. Left pending, it could never be approved (its dependency
    # superseded) and would block its plan's phase advance until someone rejected it.
    plan_id, _, strategy_id = _gated_plan(api)
    other_id, other_root, _ = _gated_plan(api)
    review_id = _held(api, other_id, other_root, depends_on=(strategy_id,))
    bystander_id = _held(api, other_id, other_root, key="bystander")  # depends on nothing superseded: stays pending

    corrected = ok(api, CORRECT_WITH_REVIEWS, input={"decisionId": strategy_id, "mode": "REVERT", "guidance": "another way"})

    correction_id = corrected["correctDecision"]["correction"]["id"]
    assert [(r["id"], r["status"], r["cancelledBy"]["id"]) for r in corrected["correctDecision"]["cancelledReviews"]] == [
        (review_id, "CANCELLED", correction_id)
    ]
    assert ok(api, PENDING, id=other_id)["pendingReviews"] == [{"id": bystander_id, "status": "PENDING"}]
    body = api.post(
        "/graphql", json={"query": RESOLVE, "variables": {"input": {"reviewId": review_id, "action": "APPROVE"}}}
    ).json()
    assert body["errors"][0]["extensions"]["rule"] == "review_is_pending"


def test_a_correction_announces_itself_what_it_supersedes_and_the_reviews_it_cancels_in_order(
    api: httpx.Client, store: Trail
) -> None:
    # The supersession's statement carries the events: the correction recorded, each decision it
    # supersedes (the corrected one first, then by plan and sequence number, as its answer lists
    # them), each review it cancels (here one in its plan and one in another), numbered one after another.
    plan_id, _, strategy_id = _gated_plan(api)
    below = [
        ok(
            api,
            RECORD,
            input={
                "planId": plan_id,
                "parentDecisionId": strategy_id,
                "decisionType": "RESOURCE_SELECTION",
                "question": f"Which file {i}?",
                "chosenOption": f"limiter_{i}.py",
                "rationale": "it holds the middleware",
                "confidenceScore": 0.9,
                "contextSnapshot": snapshot(f"below {i}"),
            },
        )["recordDecision"]["decision"]["id"]
        for i in range(2)
    ]
    other_id, other_root, _ = _gated_plan(api)
    held_here = _held(api, plan_id, strategy_id)
    held_there = _held(api, other_id, other_root, depends_on=(strategy_id,))
    start = read_numbered(store.database, outbox.read_after, 0, 0).last

    answer = ok(
        api,
        CORRECT_WITH_REVIEWS.replace("correction { id }", "correction { id } invalidated { id }"),
        input={"decisionId": strategy_id, "mode": "REVERT", "guidance": "a sliding window"},
    )["correctDecision"]

    invalidated = [d["id"] for d in answer["invalidated"]]
    assert invalidated == [strategy_id, *below]
    cancelled = [r["id"] for r in answer["cancelledReviews"]]
    assert sorted(cancelled) == sorted([held_here, held_there])
    review_plan = {held_here: plan_id, held_there: other_id}
    page = read_numbered(store.database, outbox.read_after, start, 100)
    assert [(e["seq"], e["kind"], e["plan_id"], e["decision_id"], e["review_id"]) for e in page.rows] == [
        (start + 1, "recorded", plan_id, answer["correction"]["id"], None),
        *((start + 2 + i, "superseded", plan_id, d, None) for i, d in enumerate(invalidated)),
        *((start + 2 + len(invalidated) + i, "review_cancelled", review_plan[r], None, r) for i, r in enumerate(cancelled)),
    ]
    assert page.last == start + 1 + len(invalidated) + len(cancelled)


def test_a_correction_that_reverts_the_phase_cancels_reviews_of_types_the_phase_refuses(api: httpx.Client, store: Trail) -> None:
    plan_id, root_id, strategy_id = _gated_plan(api)
    other = ok(
        api,
        RECORD,
        input={
            "planId": plan_id,
            "parentDecisionId": root_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": "Where?",
            "chosenOption": "at the gateway",
            "rationale": "one place",
            "confidenceScore": 0.9,
            "contextSnapshot": snapshot("other"),
        },
    )["recordDecision"]["decision"]["id"]
    ok(api, ADVANCE, id=plan_id, phase="EXECUTE")
    tool = _held(api, plan_id, other, "TOOL_INVOCATION")  # hangs under the strategy the correction keeps
    keeps = _held(api, plan_id, other, "RESOURCE_SELECTION")  # allowed in Strategize too: still resolvable

    corrected = ok(api, CORRECT_WITH_REVIEWS, input={"decisionId": strategy_id, "mode": "REVERT", "guidance": "a sliding window"})

    assert [r["id"] for r in corrected["correctDecision"]["cancelledReviews"]] == [tool]
    assert reading.get_plan(store, plan_id, principal=LOCAL).phase.value == "strategize"
    assert [r["id"] for r in ok(api, PENDING, id=plan_id)["pendingReviews"]] == [keeps]
    resolved = ok(api, RESOLVE, input={"reviewId": keeps, "action": "APPROVE"})["resolveReview"]
    assert resolved["review"]["status"] == "APPROVED"
    assert ok(api, ADVANCE, id=plan_id, phase="EXECUTE")["advancePhase"]["phase"] == "EXECUTE"


def test_a_prompt_correction_cancels_the_reviews_of_its_invalidated_child_plans(api: httpx.Client, store: Trail) -> None:
    plan_id, root_id, strategy_id = _gated_plan(api)
    spawn = recording_service.record(store, decision(plan_id, DecisionType.SUBPLAN_SPAWN, strategy_id), principal=LOCAL)
    advance_phase(store, plan_id, Phase.EXECUTE, principal=LOCAL)
    child, child_root = instantiate_plan(
        store,
        "child",
        spawned_by_decision_id=spawn.decision_id,
        automation_profile=reading.get_plan(store, plan_id, principal=LOCAL).automation_profile,
        principal=LOCAL,
    )
    child_review = _held(api, child.plan_id, child_root.decision_id)

    corrected = ok(api, CORRECT_WITH_REVIEWS, input={"decisionId": root_id, "mode": "REVERT", "guidance": "narrower"})

    assert [r["id"] for r in corrected["correctDecision"]["cancelledReviews"]] == [child_review]
    assert reading.list_reviews(store, child.plan_id, principal=LOCAL)[0].status.value == "cancelled"


def test_a_replay_after_a_correction_records_anew_with_the_reviews_key(api: httpx.Client) -> None:
    """A review's idempotency key is retired with its decision: the replay's proposal with the
    same key is judged again (held anew) instead of answered with the old review."""
    plan_id, _, strategy_id = _gated_plan(api)
    first = _held(api, plan_id, strategy_id, key="step-7")
    approved = ok(api, RESOLVE, input={"reviewId": first, "action": "APPROVE"})["resolveReview"]["decision"]["id"]
    ok(api, CORRECT, input={"decisionId": approved, "mode": "REVERT", "guidance": "the other store"})

    again = _held(api, plan_id, strategy_id, key="step-7")

    assert again != first
    pending = [r["id"] for r in ok(api, PENDING, id=plan_id)["pendingReviews"]]
    assert pending == [again]


def test_a_pending_reviews_key_is_retired_when_a_correction_cancels_it(api: httpx.Client) -> None:
    plan_id, _, strategy_id = _gated_plan(api)
    first = _held(api, plan_id, strategy_id, key="step-8")
    correction = ok(api, CORRECT, input={"decisionId": strategy_id, "mode": "REVERT", "guidance": "other"})
    new_parent = correction["correctDecision"]["correction"]["id"]

    again = _held(api, plan_id, new_parent, key="step-8")

    assert again != first


# -- 3. an idempotency key is scoped to its plan ------------------------------------------------


def _proposal(plan_id: str, key: str, **fields: Any) -> dict[str, Any]:
    return {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": fields.pop("question", "Which limiter?"),
        "chosenOption": fields.pop("chosenOption", "a token bucket"),
        "rationale": "simple",
        "confidenceScore": 0.9,
        "contextSnapshot": snapshot("keyed"),
        "idempotencyKey": key,
        **fields,
    }


def test_a_key_used_in_another_plan_records_in_this_plan(api: httpx.Client, store: Trail) -> None:
    plan_a = ok(api, INSTANTIATE, input={"description": "a"})["instantiatePlan"]["id"]
    plan_b = ok(api, INSTANTIATE, input={"description": "b"})["instantiatePlan"]["id"]

    in_a = ok(api, RECORD, input=_proposal(plan_a, "step-1"))["recordDecision"]["decision"]
    in_b = ok(api, RECORD, input=_proposal(plan_b, "step-1", question="Which store?"))["recordDecision"]["decision"]

    assert in_b["id"] != in_a["id"]
    assert reading.get_decision(store, in_b["id"], principal=LOCAL).plan_id == plan_b
    assert reading.get_decision(store, in_b["id"], principal=LOCAL).question == "Which store?"
    assert len(reading.list_decisions(store, plan_b, principal=LOCAL)) == 2


def test_the_same_request_with_its_key_returns_the_same_decision(api: httpx.Client, store: Trail) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "a"})["instantiatePlan"]["id"]
    first = ok(api, RECORD, input=_proposal(plan, "step-2"))["recordDecision"]["decision"]
    again = ok(api, RECORD, input=_proposal(plan, "step-2"))["recordDecision"]["decision"]
    assert again["id"] == first["id"]
    assert len(reading.list_decisions(store, plan, principal=LOCAL)) == 2


def test_a_key_reused_in_its_plan_for_another_request_is_a_conflict_naming_the_decision(api: httpx.Client, graph: Graph) -> None:
    from decisiontrail.graphdb.admin import count_graph

    plan = ok(api, INSTANTIATE, input={"description": "a"})["instantiatePlan"]["id"]
    first = ok(api, RECORD, input=_proposal(plan, "step-3"))["recordDecision"]["decision"]
    before = count_graph(graph)

    body = api.post(
        "/graphql", json={"query": RECORD, "variables": {"input": _proposal(plan, "step-3", chosenOption="a leaky bucket")}}
    ).json()

    error = body["errors"][0]
    assert error["extensions"]["code"] == "IDEMPOTENCY_KEY_MISMATCH"
    assert first["id"] in error["message"] and "idempotency" in error["message"]
    assert count_graph(graph) == before


def test_a_key_reused_for_another_request_in_one_batch_is_refused_whole(api: httpx.Client, store: Trail) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "a"})["instantiatePlan"]["id"]
    batch = """mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { id } } }"""
    body = api.post(
        "/graphql",
        json={
            "query": batch,
            "variables": {
                "inputs": [
                    _proposal(plan, "step-4"),
                    _proposal(plan, "step-4", chosenOption="a leaky bucket"),
                ]
            },
        },
    ).json()
    assert body["errors"][0]["extensions"]["code"] == "IDEMPOTENCY_KEY_MISMATCH"
    assert len(reading.list_decisions(store, plan, principal=LOCAL)) == 1


def test_a_key_whose_first_request_is_still_running_is_refused_in_use_and_its_retry_answered(
    api: httpx.Client, store: Trail, graph: Graph
) -> None:
    """As the IETF Idempotency-Key draft and Stripe: a second request with a key whose first is
    still being processed is refused at once (its own code, retryable, nothing written) instead of
    queued behind it; sent again once the first finished, it is answered with the first's decision."""
    plan = ok(api, INSTANTIATE, input={"description": "a"})["instantiatePlan"]["id"]
    request = {"query": RECORD, "variables": {"input": _proposal(plan, "step-5")}}
    answers: dict[str, Any] = {}

    def send(name: str) -> None:
        answers[name] = api.post("/graphql", json=request).json()

    # The plan's write lock, held by a transaction of the test's: a recording into the plan waits
    # inside its write, its key held, until the lock is given up.
    with graph.driver.session(database=graph.database) as session:
        holder = session.begin_transaction()
        holder.run("MATCH (lock:PlanLock {plan_id: $plan}) SET lock.writes = coalesce(lock.writes, 0) + 1", plan=plan).consume()
        first = threading.Thread(target=send, args=("first",))
        first.start()
        time.sleep(1.0)  # the first is waiting for the lock, its key held
        send("second")
        holder.rollback()
    first.join(timeout=30)

    second = answers["second"]["errors"][0]
    assert second["extensions"] == {"code": "IDEMPOTENCY_KEY_IN_USE", "retryable": True}
    assert "step-5" in second["message"]
    recorded = answers["first"]["data"]["recordDecision"]["decision"]
    again = ok(api, RECORD, input=_proposal(plan, "step-5"))["recordDecision"]["decision"]
    assert again["id"] == recorded["id"]
    assert len(reading.list_decisions(store, plan, principal=LOCAL)) == 2  # the root and the one decision


# -- a race: child plans instantiated while the correction supersedes their spawn -----------------


def test_child_plans_instantiated_during_a_correction_of_their_spawn_are_never_left_active(store: Trail) -> None:
    """Two clients instantiate child plans under a spawn while a correction supersedes it: each
    child is refused or invalidated with the spawn, in every trial (a partial invalidation is not
    permitted, ADR-007)."""
    for trial in range(10):
        plan_id = _race_instantiations_against_a_correction(store, trial)
        children = reading.child_plans_of(store, [plan_id])[0]
        active = [c for c in children if not reading.get_plan(store, c, principal=LOCAL).is_invalidated]
        assert active == [], f"trial {trial}: child plans {active} are active under the superseded spawn"
        for child in children:
            assert reading.list_decisions(store, child, current_only=True, principal=LOCAL) == []


def _race_instantiations_against_a_correction(store: Trail, trial: int) -> str:
    """A plan whose spawn's strategy is corrected while two clients instantiate under the spawn; its id."""
    plan, root = instantiate_plan(store, f"race {trial}", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    spawn = recording_service.record(
        store, decision(plan.plan_id, DecisionType.SUBPLAN_PARALLEL_SPAWN, strategy.decision_id), principal=LOCAL
    )
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    *instantiated, corrected = at_once(
        partial(instantiate_plan, store, "child 0", spawned_by_decision_id=spawn.decision_id, principal=LOCAL),
        partial(instantiate_plan, store, "child 1", spawned_by_decision_id=spawn.decision_id, principal=LOCAL),
        partial(correct, store, strategy.decision_id, "revert", "another approach", "race", principal=LOCAL),
        timeout=60,
    )
    # An instantiation may be refused (the spawn was superseded first); the correction must succeed.
    unexpected = [
        o for o in instantiated if isinstance(o, BaseException) and getattr(o, "rule", None) != "spawn_by_current_decision"
    ]
    if isinstance(corrected, BaseException):
        unexpected.append(corrected)
    assert not unexpected, unexpected
    return plan.plan_id
