"""The quick part of the reliability harness: a short load verified exactly-once, Neo4j stopped under load, and the verifier caught failing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx

from decisiontrail.app import create_app
from decisiontrail.domain import DecisionType
from decisiontrail.domain.ids import new_ulid
from decisiontrail.graphdb import Graph
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import decision, new_plan
from reliability import faults, load
from reliability.load import RECORD, RECORD_MANY
from reliability.outcome import Outcome
from serving import served


def test_a_short_load_stores_every_acknowledged_decision_exactly_once(graph: Graph, store: Trail, tmp_path: Path) -> None:
    with served(create_app(graph=graph)) as url:
        # 12 s: at 8 s, a run that started slowly had yet to correct a spawn with children, or to
        # make a review moot in one of nine runs here (the races below must have happened)
        outcome = load.run(url, graph, seconds=12, clients=4, out=tmp_path / "acks.jsonl")

    figures = outcome.figures
    assert outcome.failures == [], figures
    assert figures["acknowledged"] == figures["stored"] > 10
    assert figures["lost"] == figures["duplicated"] == figures["check_violations"] == 0
    # The journal held as a history against the final graph (reliability.history): every invariant held,
    # every acknowledged decision counted in the graph, every correction's set the closure at its moment.
    history = figures["history"]
    assert history["violations"] == 0 and set(history["violations by invariant"].values()) == {0}
    assert history["operations checked"] >= figures["acknowledged"]
    assert history["acknowledged decisions found stored once"] == figures["acknowledged"]
    assert history["corrections checked against the closure at their moment"] >= history["acknowledged corrections"] > 0
    # (spawns are recorded in batches: recordDecisions)
    assert figures["acknowledged_by_op"].keys() >= {"instantiate", "record", "spawn", "child", "resolve", "correct_spawn"}
    # The races happened: spawns were corrected with children added under them (invalidated with them),
    # reviews were resolved, and others made moot by a correction of the decision they waited under.
    assert figures["child_plans_acknowledged"] == figures["child_plans_stored"] > 0
    assert figures["spawns_corrected_with_children"] > 0 and figures["child_plans_invalidated"] > 0
    assert figures["reviews_resolved"] > 0 and figures["reviews_made_moot"] > 0
    # ... and left nothing behind that they should not have.
    assert figures["current_under_superseded"] == figures["active_child_plans_of_superseded_spawns"] == 0
    assert figures["unresolvable_reviews"] == figures["review_writes_lost"] == figures["review_writes_mismatched"] == 0


def test_neo4j_stopped_mid_load_answers_unavailable_at_once_and_loses_nothing(tmp_path: Path) -> None:
    # A Neo4j of the test's own: the session's shared server must never be stopped.
    outcome = faults.neo4j_restart(tmp_path, seconds=10, clients=2, down_seconds=3, heap_mb=384, pagecache_mb=32)

    assert outcome.failures == []
    figures = outcome.figures
    assert figures["faults_injected"] == figures["faults_survived"] == 1
    assert figures["unavailable_answers"] > 0 and figures["service_restarted"] == 0
    assert figures["acknowledged"] == figures["stored"] and figures["lost"] == figures["duplicated"] == 0


def test_neo4j_killed_mid_load_recovers_from_its_log_and_loses_nothing(tmp_path: Path) -> None:
    outcome = faults.neo4j_restart(tmp_path, seconds=10, clients=2, down_seconds=2, heap_mb=384, pagecache_mb=32, crash=True)

    assert outcome.name == "neo4j_crash" and outcome.failures == []
    figures = outcome.figures
    assert figures["faults_injected"] == figures["faults_survived"] == 1
    assert figures["service_restarted"] == 0  # the same service process answered again
    assert figures["acknowledged"] == figures["stored"] and figures["lost"] == figures["duplicated"] == 0
    assert figures["half_written"] == figures["check_violations"] == 0


def _input(plan_id: str, parent_id: str, key: str) -> dict[str, Any]:
    digest = hashlib.sha256(key.encode()).hexdigest()
    return {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": f"how ({key})?",
        "chosenOption": "so",
        "rationale": "r",
        "parentDecisionId": parent_id,
        "idempotencyKey": key,
        "contextSnapshot": {
            "hotContextHash": digest,
            "hotContextRef": f"test://{digest}",
            "actorStateRef": {"threadId": "t", "checkpointId": new_ulid()},
        },
    }


def test_a_write_sent_again_after_a_lost_answer_returns_what_was_recorded(graph: Graph, store: Trail) -> None:
    plan, root = new_plan(store)
    single = _input(plan.plan_id, root.decision_id, "retry-1")
    batch = [_input(plan.plan_id, root.decision_id, f"retry-{n}") for n in (2, 3)]
    with served(create_app(graph=graph)) as url, httpx.Client(base_url=url, timeout=30) as http:
        # The first answer is "lost" (ignored); the retry carries the same keys, as load.Client does.
        sent = [http.post("/graphql", json={"query": RECORD, "variables": {"input": single}}).json() for _ in range(2)]
        sent_many = [http.post("/graphql", json={"query": RECORD_MANY, "variables": {"inputs": batch}}).json() for _ in range(2)]

    first, again = (s["data"]["recordDecision"]["decision"]["id"] for s in sent)
    assert first == again
    first_ids, again_ids = ([p["decision"]["id"] for p in s["data"]["recordDecisions"]] for s in sent_many)
    assert first_ids == again_ids
    assert len(reading.list_decisions(store, plan.plan_id, principal=LOCAL)) == 1 + 3


def test_the_verifier_reports_lost_duplicated_and_half_written_decisions(graph: Graph, store: Trail) -> None:
    plan, root = new_plan(store)
    kept = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), idempotency_key="k-1", principal=LOCAL
    )
    copy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), idempotency_key="k-2", principal=LOCAL
    )
    # A second decision answering to k-1 (as a retried write recorded twice would), and one without its parent.
    graph.driver.execute_query(
        "MATCH (d:Decision {decision_id: $id}) SET d.retired_idempotency_key = 'k-1' REMOVE d.idempotency_key",
        id=copy.decision_id,
        database_=graph.database,
    )
    orphan = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    graph.driver.execute_query(
        "MATCH (:Decision {decision_id: $id})-[p:PARENT]->() DELETE p", id=orphan.decision_id, database_=graph.database
    )

    def ack(decision_id: str, sequence_number: int, key: str | None) -> dict[str, Any]:
        return {
            "type": "ack",
            "op": "record",
            "decision_id": decision_id,
            "plan_id": plan.plan_id,
            "client": 0,
            "request": sequence_number,
            "sequence_number": sequence_number,
            "idempotency_key": key,
            "ms": 1.0,
        }

    events = [
        {"type": "plan", "plan_id": plan.plan_id},
        ack(root.decision_id, 0, None),
        ack(kept.decision_id, kept.sequence_number, "k-1"),
        ack(new_ulid(), 99, "k-never-stored"),
        {"type": "error", "op": "record", "code": "UNEXPECTED", "ms": 1.0},
    ]
    outcome = Outcome("load", "a journal that does not match the database")
    load.verify(events, graph, outcome)

    assert not outcome.passed
    figures = outcome.figures
    assert (figures["acknowledged"], figures["stored"], figures["lost"], figures["duplicated"]) == (3, 2, 1, 1)
    assert figures["half_written"] == 1 and figures["check_violations"] >= 1
    assert outcome.errors_by_code == {"UNEXPECTED": 1}
    # lost, duplicated, half written, checks, the unexpected error; and the history's recorded_once
    assert len(outcome.failures) == 6
    assert figures["history"]["violations by invariant"]["recorded_once"] == 2  # the decision lost, k-1 on two decisions
    assert [f for f in outcome.failures if f.startswith("history:")] == [outcome.failures[-1]]
    assert "recorded_once" in outcome.failures[-1]
