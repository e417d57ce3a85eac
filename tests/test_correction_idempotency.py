"""A correction sent again under its idempotency key is answered with what the first one did.

A client whose answer to correctDecision was lost cannot tell whether the correction was made;
without a key, sending it again is refused (the decision is already superseded). With one, unique
in the corrected decision's plan as a recording's is, the same request is answered from the
attempt the first made: the same correction, attempt, invalidated decisions and plans, cancelled
reviews and lapsed approvals, with nothing written, announced or audited again. The key with
another request is refused, naming the attempt.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL
from decisiontrail.cli import main
from decisiontrail.domain import AutomationProfile, DecisionType, Phase
from decisiontrail.domain.recording import Review, ReviewAction
from decisiontrail.exceptions import Conflict, IdempotencyKeyMismatch, ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct, history
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services.reviews import resolve_review
from factories import actor_snapshot, decision, tool_input
from test_api import INSTANTIATE, RECORD, ok, snapshot

CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) {
    correction { id status } invalidated { id } invalidatedPlans { id }
    attempt { attemptId attemptNumber } cancelledReviews { id status } lapsedApprovals { id }
    replayFrontier { planId threadId }
  }
}"""


def _written(graph: Graph) -> dict[str, int]:
    """What a write leaves, by kind: decisions, attempts, reviews, audit entries, events (pending or
    numbered alike: the relay numbering them meanwhile changes neither count)."""
    records, _, _ = graph.driver.execute_query(
        """UNWIND ['Decision', 'CorrectionAttempt', 'Review', 'AuditEntry', 'PhaseChange'] AS label
           CALL (label) { MATCH (n) WHERE label IN labels(n) RETURN count(n) AS n }
           RETURN label, n
           UNION ALL
           MATCH (e) WHERE e:Event OR e:PendingEvent RETURN 'events' AS label, sum(coalesce(e.size, e.last_seq - e.seq + 1)) AS n""",
        database_=graph.database,
    )
    return {r["label"]: r["n"] for r in records}


def _gated_plan(client: httpx.Client) -> tuple[str, str, str]:
    """A plan whose threshold holds low-confidence proposals for a person, with a strategy and a
    subplan_spawn under it."""
    created = ok(
        client, INSTANTIATE, input={"description": "gated", "automationProfile": {"editCode": 0.5, "executeCommand": 0.5}}
    )
    plan_id = created["instantiatePlan"]["id"]
    strategy = _record(client, plan_id, "How?", 0.9, None)["decision"]["id"]
    spawn = _record(client, plan_id, "Which child plan?", 0.9, strategy, "SUBPLAN_SPAWN")["decision"]["id"]
    return plan_id, strategy, spawn


def _record(
    client: httpx.Client,
    plan_id: str,
    question: str,
    confidence: float,
    parent: str | None,
    decision_type: str = "STRATEGY_CHOICE",
) -> dict[str, Any]:
    proposal = {
        "planId": plan_id,
        "decisionType": decision_type,
        "question": question,
        "chosenOption": "a token bucket",
        "rationale": "simple",
        "confidenceScore": confidence,
        "contextSnapshot": snapshot(question),
        **({"parentDecisionId": parent} if parent else {}),
    }
    answer: dict[str, Any] = ok(client, RECORD, input=proposal)["recordDecision"]
    return answer


def test_the_same_correction_sent_again_with_its_key_is_answered_with_the_first_and_writes_nothing(
    api: httpx.Client, store: Trail, graph: Graph
) -> None:
    plan_id, strategy, spawn = _gated_plan(api)
    advance_phase(store, plan_id, Phase.EXECUTE, principal=LOCAL)
    child, _ = instantiate_plan(store, "child", spawned_by_decision_id=spawn, principal=LOCAL)
    review = _record(api, plan_id, "Which store?", 0.2, strategy, "IMPLEMENTATION_CHOICE")["review"]["id"]
    request = {"decisionId": strategy, "mode": "REVERT", "guidance": "a sliding window", "idempotencyKey": "fix-42"}

    first = ok(api, CORRECT, input=request)["correctDecision"]
    assert first["cancelledReviews"] == [{"id": review, "status": "CANCELLED"}]
    assert first["invalidatedPlans"] == [{"id": child.plan_id}]
    before = _written(graph)

    again = ok(api, CORRECT, input=request)["correctDecision"]

    assert again == first
    assert _written(graph) == before  # no second correction, attempt, event or audit entry
    assert [a.attempt_id for a in history(store, strategy, LOCAL)] == [first["attempt"]["attemptId"]]

    # still its own answer once its correction has been corrected in turn
    correct(store, first["correction"]["id"], "append", "a leaky bucket", principal=LOCAL)
    later = ok(api, CORRECT, input=request)["correctDecision"]
    assert later["attempt"] == first["attempt"] and later["invalidated"] == first["invalidated"]
    assert later["correction"] == {"id": first["correction"]["id"], "status": "SUPERSEDED"}


def test_the_key_with_another_request_is_refused_naming_the_attempt_and_nothing_is_written(
    api: httpx.Client, graph: Graph
) -> None:
    _, strategy, _ = _gated_plan(api)
    request = {"decisionId": strategy, "mode": "REVERT", "guidance": "a sliding window", "idempotencyKey": "fix-43"}
    attempt = ok(api, CORRECT, input=request)["correctDecision"]["attempt"]["attemptId"]
    before = _written(graph)

    for changed in ({"guidance": "a fixed window"}, {"mode": "APPEND"}, {"reason": "too coarse"}):
        body = api.post("/graphql", json={"query": CORRECT, "variables": {"input": request | changed}}).json()
        error = body["errors"][0]
        assert error["extensions"]["code"] == "IDEMPOTENCY_KEY_MISMATCH", (changed, error)
        assert attempt in error["message"] and strategy in error["message"], error
    assert _written(graph) == before


def test_without_its_key_or_with_another_a_superseded_decision_is_still_refused(api: httpx.Client) -> None:
    _, strategy, _ = _gated_plan(api)
    ok(api, CORRECT, input={"decisionId": strategy, "mode": "REVERT", "guidance": "g", "idempotencyKey": "fix-44"})
    for key in (None, "fix-45"):
        request = {"decisionId": strategy, "mode": "REVERT", "guidance": "g", "idempotencyKey": key}
        body = api.post("/graphql", json={"query": CORRECT, "variables": {"input": request}}).json()
        assert body["errors"][0]["extensions"]["code"] == "CONFLICT", body
        assert "already superseded" in body["errors"][0]["message"]


@pytest.mark.parametrize(("key", "says"), [("  ", "must not be blank"), ("k" * 1025, "at most 1024 characters")])
def test_a_blank_or_overlong_key_is_refused_naming_the_field(api: httpx.Client, graph: Graph, key: str, says: str) -> None:
    _, strategy, _ = _gated_plan(api)
    before = _written(graph)
    request = {"decisionId": strategy, "mode": "REVERT", "guidance": "g", "idempotencyKey": key}
    body = api.post("/graphql", json={"query": CORRECT, "variables": {"input": request}}).json()
    error = body["errors"][0]
    assert error["extensions"]["code"] == "VALIDATION_FAILED" and error["extensions"].get("field") == "idempotency_key", error
    assert says in error["message"]
    assert _written(graph) == before


def test_a_key_is_its_plan_s_the_same_key_corrects_in_another_plan(store: Trail) -> None:
    decided = []
    for name in ("a", "b"):
        plan, root = instantiate_plan(store, name, principal=LOCAL)
        strategy = recording_service.record(
            store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
        )
        decided.append(strategy.decision_id)
    first = correct(store, decided[0], "revert", "g", principal=LOCAL, idempotency_key="same")
    other = correct(store, decided[1], "revert", "g", principal=LOCAL, idempotency_key="same")
    assert not first.repeated and not other.repeated
    assert other.attempt.attempt_id != first.attempt.attempt_id
    assert other.invalidated == (decided[1],)


def test_an_approval_lapsed_by_the_first_is_in_the_answer_again(store: Trail) -> None:
    gated = AutomationProfile(edit_code=0.5, execute_command=0.5)  # holds a low-confidence proposal for a person
    plan, root = instantiate_plan(store, "gated", automation_profile=gated, principal=LOCAL)
    approach = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    held = recording_service.record_decision(
        store,
        tool_input("strategy_choice", confidence_score=0.2, parent_decision_id=approach.decision_id),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        principal=LOCAL,
    )
    assert isinstance(held, Review)
    resolve_review(store, held.review_id, ReviewAction.APPROVE, principal=LOCAL)

    first = correct(store, approach.decision_id, "revert", "a gateway", principal=LOCAL, idempotency_key="lapse")
    again = correct(store, approach.decision_id, "revert", "a gateway", principal=LOCAL, idempotency_key="lapse")

    assert first.lapsed_reviews == (held.review_id,) and first.attempt.lapsed_review_ids == (held.review_id,)
    assert again.repeated and again.lapsed_reviews == first.lapsed_reviews
    assert again.attempt == first.attempt


def test_the_same_request_sent_twice_at_once_makes_one_correction(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "twice", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    answers: list[Any] = []
    start = threading.Barrier(2)

    def send() -> None:
        start.wait()
        try:
            answers.append(correct(store, strategy.decision_id, "revert", "g", principal=LOCAL, idempotency_key="twice"))
        except Exception as e:  # noqa: BLE001 - kept for the assertion below
            answers.append(e)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert all(not isinstance(a, Exception) for a in answers), answers
    assert len({a.attempt.attempt_id for a in answers}) == 1 and sorted(a.repeated for a in answers) == [False, True]
    assert len(history(store, strategy.decision_id, LOCAL)) == 1


def test_correct_on_the_command_line_run_again_with_its_key_says_what_the_first_did(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, root = instantiate_plan(store, "cli", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    run = ["-q", "correct", strategy.decision_id, "--guidance", "a sliding window", "--idempotency-key", "cli-1"]

    assert main(run) == 0
    first = capsys.readouterr().out
    assert main(run) == 0
    again = capsys.readouterr().out

    assert "earlier request with this key; nothing written now" in again and "earlier request" not in first
    assert first.splitlines()[1:] == again.splitlines()[1:]
    assert len(history(store, strategy.decision_id, LOCAL)) == 1
    assert main([*run[:-1], "cli-1", "--reason", "another request"]) == 2
    assert "already used in this plan for a different correction" in capsys.readouterr().err


def test_the_key_refuses_with_the_services_exceptions(store: Trail) -> None:
    plan, root = instantiate_plan(store, "exceptions", principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    correct(store, strategy.decision_id, "revert", "g", principal=LOCAL, idempotency_key="k")
    with pytest.raises(IdempotencyKeyMismatch):
        correct(store, strategy.decision_id, "append", "g", principal=LOCAL, idempotency_key="k")
    with pytest.raises(Conflict, match="already superseded"):
        correct(store, strategy.decision_id, "revert", "g", principal=LOCAL)
    with pytest.raises(ValidationFailed, match="idempotency_key"):
        correct(store, strategy.decision_id, "revert", "g", principal=LOCAL, idempotency_key="")
    assert reading.get_decision(store, strategy.decision_id, principal=LOCAL).superseded_by is not None
