"""A plan's write lock (its :PlanLock) taken twice in one transaction, while writers queue on it.

Neo4j 5 makes every transaction waiting for a node's lock a deadlock victim when the holder sets a
property of that node from its own value again (SET n.x = n.x + 1, as taking the lock does). A use-case reaches its plan's lock from more than one statement (a correction's
second round, a phase read after locking a decision, a recording after a dependency check), so a
statement that takes a lock its transaction holds must write nothing: the writers queued behind
it then simply wait their turn instead of being sent back to retry.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import neo4j
import pytest

from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import corrections, decisions, plans
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.access import LOCAL
from factories import decision, new_plan

# Each takes, again, the lock of the plan of the decision ``d`` in a transaction that holds it.
TAKES_AGAIN: dict[str, Callable[[neo4j.Transaction, Any], Any]] = {
    "plan/read_phase": lambda tx, d: plans.lock_and_read_phase(tx, d.plan_id),
    "decision/lock_plans_of": lambda tx, d: decisions.lock_plans_of(tx, [d.decision_id]),
    "correction/read_correction_facts": lambda tx, d: corrections.lock_decision(tx, d.decision_id),
    "correction/begin_correction": lambda tx, d: corrections.begin(tx, d.decision_id, "01TESTCORRECTION"),
}


def _blocked(graph: Graph) -> int:
    found, _, _ = graph.driver.execute_query(
        "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n", database_=graph.database
    )
    return int(found[0]["n"])


def _writes(graph: Graph, plan_id: str) -> int:
    found, _, _ = graph.driver.execute_query(
        "MATCH (lock:PlanLock {plan_id: $id}) RETURN lock.writes AS writes", id=plan_id, database_=graph.database
    )
    return int(found[0]["writes"])


@pytest.mark.parametrize("statement", sorted(TAKES_AGAIN))
def test_taking_a_held_plan_lock_again_leaves_the_writers_queued_on_it_waiting(
    store: Trail, graph: Graph, caplog: pytest.LogCaptureFixture, statement: str
) -> None:
    plan, root = new_plan(store)
    before = _writes(graph, plan.plan_id)
    outcome: list[Any] = []

    def record() -> None:
        try:
            outcome.append(
                recording_service.record(
                    store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id), principal=LOCAL
                )
            )
        except Exception as e:  # reported below
            outcome.append(e)

    writer = threading.Thread(target=record)
    with (
        caplog.at_level(logging.INFO, logger="decisiontrail.graphdb.database"),
        graph.driver.session(database=graph.database) as session,
    ):
        holding = session.begin_transaction()
        assert plans.lock_and_read_phase(holding, plan.plan_id) is not None
        writer.start()
        for _ in range(200):  # until the recording waits for the lock
            if _blocked(graph):
                break
            writer.join(0.05)
        else:
            pytest.fail("the recording never waited for the plan's lock")
        TAKES_AGAIN[statement](holding, root)
        holding.commit()
        writer.join(30)

    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    retried = [r.getMessage() for r in caplog.records if "met concurrent writes" in r.getMessage()]
    assert retried == []  # it waited once, and was not sent back to retry
    assert _writes(graph, plan.plan_id) == before + 2  # taken once by each transaction
    assert [d.decision_id for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)] == [
        root.decision_id,
        outcome[0].decision_id,
    ]
