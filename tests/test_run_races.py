"""Two writers of one run at once: the second judges the run as the first committed it.

Found by CI (seed 2856700538): a parent run finishing its turn as waiting for its child, while that
child's run finished and woke it, read ``woken`` before taking the run's lock and wrote over the
wake; the parent then waited for ever for a child that had succeeded. Each case here holds the
first writer's transaction open (its locks taken, nothing committed), starts the second, waits
until Neo4j reports it blocked behind the first, then commits the first: the order that lost the
write, made certain instead of waited for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from decisiontrail.actors.runtime import RUNTIME
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.runs import PlanRun, RunRequest, RunStatus
from decisiontrail.exceptions import Conflict
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import runs as stored
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services import Trail, runs
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.access import LOCAL


def _held(store: Trail, description: str, parent: PlanRun | None = None, replays: tuple[str, ...] = ()) -> PlanRun:
    """A plan's run, queued with ``replays`` and claimed by a worker of its own (the only run queued)."""
    plan, _ = instantiate_plan(
        store, description, run=RunRequest(parent_run_id=parent.run_id if parent else None), principal=LOCAL
    )
    for attempt_id in replays:
        store.database.write(stored.queue_replay, plan.plan_id, attempt_id, [], utc_now())
    held = runs.claim(store, f"worker of {description}", principal=RUNTIME)
    assert held is not None and held.plan_id == plan.plan_id
    return held


def _blocked(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        found: int = session.run(
            "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS blocked"
        ).single(strict=True)["blocked"]
    return found


@contextmanager
def _second_waits_for_first(
    graph: Graph, first: Callable[[Transaction], object], second: Callable[[], Any]
) -> Iterator[list[Any]]:
    """Run ``first`` in a transaction left open, then ``second`` in a thread until Neo4j reports it
    blocked behind ``first``'s locks; commit ``first``, and yield what ``second`` came to (its
    result, or what it raised) once it has."""
    came_to: list[Any] = []

    def run_second() -> None:
        try:
            came_to.append(second())
        except Exception as e:  # the test reads it
            came_to.append(e)

    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        first(tx)
        thread = threading.Thread(target=run_second, name="the second writer")
        thread.start()
        deadline = time.monotonic() + 30
        while not _blocked(graph):
            assert thread.is_alive(), f"the second writer did not wait for the first's lock: {came_to}"
            assert time.monotonic() < deadline, "the second writer was not blocked behind the first within 30 s"
            time.sleep(0.05)
        tx.commit()
    thread.join(timeout=30)
    assert not thread.is_alive() and came_to, "the second writer did not finish once the first committed"
    yield came_to


def _status(store: Trail, run: PlanRun) -> tuple[RunStatus, bool | None, tuple[str, ...]]:
    found = runs.runs_of_plans(store, [run.plan_id])[0]
    assert found is not None
    props = store.database.read(
        lambda tx: tx.run("MATCH (r:PlanRun {run_id: $id}) RETURN r.woken AS woken", id=run.run_id).single(strict=True)
    )
    return found.status, props["woken"], tuple(found.replays)


def test_a_parent_finishing_its_turn_while_its_child_finishes_is_queued_again(store: Trail, graph: Graph) -> None:
    parent = _held(store, "Rotate the keys")
    child = _held(store, "Rotate the billing keys", parent=parent)

    def child_succeeds(tx: Transaction) -> object:
        return stored.finish(tx, child, child.claimed_by or "", RunStatus.SUCCEEDED.value, {}, utc_now())

    def parent_waits_for_its_children() -> Any:
        return runs.finish(store, parent, parent.claimed_by or "", RunStatus.WAITING, principal=RUNTIME, waiting_for="children")

    with _second_waits_for_first(graph, child_succeeds, parent_waits_for_its_children) as came_to:
        assert isinstance(came_to[0], PlanRun)

    # the child's wake is the parent's: queued again for a worker, not left waiting for a child that has finished
    assert _status(store, parent)[:2] == (RunStatus.QUEUED, False)
    assert _status(store, child)[0] is RunStatus.SUCCEEDED


def test_a_run_finishing_its_turn_while_its_review_is_resolved_is_queued_again(store: Trail, graph: Graph) -> None:
    held = _held(store, "Rotate the keys")

    def review_resolved(tx: Transaction) -> object:
        return stored.wake(tx, [held.plan_id], utc_now())  # what resolving a review of the plan does, in its transaction

    def run_waits_for_its_review() -> Any:
        return runs.finish(store, held, held.claimed_by or "", RunStatus.WAITING, principal=RUNTIME, waiting_for="review")

    with _second_waits_for_first(graph, review_resolved, run_waits_for_its_review) as came_to:
        assert isinstance(came_to[0], PlanRun)

    assert _status(store, held)[:2] == (RunStatus.QUEUED, False)


def test_a_replay_queued_while_a_worker_takes_up_another_stays_queued(store: Trail, graph: Graph) -> None:
    # Held before the statements locked first too (the list is read in the SET that writes it);
    # kept as the guard of a correction's replay, which a lost write would drop without a word.
    held = _held(store, "Rotate the keys", replays=("attempt-1",))
    assert held.replays == ("attempt-1",)

    def correction_queues_a_replay(tx: Transaction) -> object:
        return stored.queue_replay(tx, held.plan_id, "attempt-2", [], utc_now())

    def worker_takes_up_the_first() -> Any:
        return runs.take_replay(store, held, held.claimed_by or "", "attempt-1", principal=RUNTIME)

    with _second_waits_for_first(graph, correction_queues_a_replay, worker_takes_up_the_first) as came_to:
        assert isinstance(came_to[0], PlanRun)

    assert _status(store, held)[2] == ("attempt-2",)


def test_a_run_that_finished_while_it_was_being_cancelled_is_refused_and_stays_finished(store: Trail, graph: Graph) -> None:
    held = _held(store, "Rotate the keys")

    def worker_finishes(tx: Transaction) -> object:
        return stored.finish(tx, held, held.claimed_by or "", RunStatus.SUCCEEDED.value, {}, utc_now())

    def cancelled() -> Any:
        return runs.cancel_run(store, held.run_id, "not needed", principal=LOCAL)

    with _second_waits_for_first(graph, worker_finishes, cancelled) as came_to:
        refused = came_to[0]

    assert isinstance(refused, Conflict) and "already succeeded" in refused.message
    assert _status(store, held)[0] is RunStatus.SUCCEEDED


@pytest.mark.parametrize("lost", [False, True])
def test_a_heartbeat_behind_a_cancel_reports_the_run_lost(store: Trail, graph: Graph, lost: bool) -> None:
    held = _held(store, "Rotate the keys")

    def cancel_or_not(tx: Transaction) -> object:
        if lost:
            return stored.cancel(tx, held.run_id, "cancelled by local", utc_now())
        return stored.update(tx, held, held.claimed_by or "", {"actor": "strategy"}, utc_now())

    def heartbeat() -> Any:
        return runs.heartbeat(store, held.claimed_by or "", [held.run_id], principal=RUNTIME)

    with _second_waits_for_first(graph, cancel_or_not, heartbeat) as came_to:
        assert came_to[0] == ([held.run_id] if lost else [])
