"""The outbox numbered after the commit: a write waits for no other plan's, and numbers keep each plan's commit order.

Writes store their events pending; ``relay.number_pending`` numbers them (the relay, or whoever
reads the outbox). The expected order is taken from what the writes answered (a plan's sequence
numbers, given under its lock), never from the outbox under test.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from typing import Any, cast

from decisiontrail.cypher import query
from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph, outbox
from decisiontrail.services import Trail, recording
from decisiontrail.events import EventBus
from decisiontrail.services.relay import EventRelay, end, missed, number_pending, read_numbered
from decisiontrail.access import LOCAL
from factories import at_once, decision, new_plan


def _record(store: Trail, plan_id: str, parent_id: str) -> Any:
    return recording.record(store, decision(plan_id, DecisionType.STRATEGY_CHOICE, parent_id), principal=LOCAL)


def _plan_events(store: Trail, plan_id: str, after: int) -> list[str]:
    return [row["decision_id"] for row in read_numbered(store.database, outbox.read_after, after, 10_000, plan_id).rows]


def _pending(graph: Graph, plan_id: str) -> int:
    return graph.driver.execute_query(
        "MATCH (p:PendingEvent {plan_id: $plan_id}) RETURN count(p) AS n", plan_id=plan_id, database_=graph.database
    ).records[0]["n"]


def test_a_write_into_one_plan_does_not_wait_for_another_plans_commit(store: Trail, graph: Graph) -> None:
    held, held_root = new_plan(store)
    other, other_root = new_plan(store)
    announcement = outbox.Announcement.of_runs(
        [outbox.Run("recorded", held.plan_id, decision_ids=[held_root.decision_id])], datetime.now(UTC)
    )
    assert announcement is not None
    finished = threading.Event()
    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        try:
            # A write into the first plan that has announced its events and not committed yet.
            tx.run(query("event/append_events"), announce=announcement.param).consume()
            writer = threading.Thread(target=lambda: (_record(store, other.plan_id, other_root.decision_id), finished.set()))
            writer.start()
            done_meanwhile = finished.wait(15)
        finally:
            tx.rollback()
    writer.join(30)

    assert done_meanwhile  # numbered inside the write, it waited for the counter's lock until the rollback
    assert finished.is_set()


def test_a_plans_events_are_numbered_in_commit_order_when_the_clock_says_otherwise(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)
    start = end(store.database)
    made = [_record(store, plan.plan_id, root.decision_id).decision_id for _ in range(3)]
    # The clock went back between the writes: each stamped before the one committed ahead of it.
    graph.driver.execute_query(
        "MATCH (p:PendingEvent {plan_id: $plan_id}) SET p.stamp = p.stamp - duration({seconds: p.plan_write})",
        plan_id=plan.plan_id,
        database_=graph.database,
    )

    assert _plan_events(store, plan.plan_id, start) == made


def test_a_run_after_a_write_not_seen_yet_waits_for_it(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)
    start = end(store.database)
    first, second = (_record(store, plan.plan_id, root.decision_id).decision_id for _ in range(2))
    # The first write's commit not seen yet by whoever numbers (as a statement running beside it may not).
    hide = "MATCH (p:PendingEvent {plan_id: $plan_id}) WHERE $id IN p.decision_ids REMOVE p:PendingEvent SET p:Hidden"
    graph.driver.execute_query(hide, plan_id=plan.plan_id, id=first, database_=graph.database)

    number_pending(store.database)
    held_back = (_plan_events(store, plan.plan_id, start), _pending(graph, plan.plan_id))
    graph.driver.execute_query("MATCH (p:Hidden) REMOVE p:Hidden SET p:PendingEvent", database_=graph.database)

    assert held_back == ([], 1)
    assert _plan_events(store, plan.plan_id, start) == [first, second]


def test_writes_from_many_threads_are_numbered_without_gaps_each_plan_in_commit_order(store: Trail) -> None:
    plans = [new_plan(store) for _ in range(4)]
    start = end(store.database)
    writing = threading.Event()

    def write(plan_index: int) -> list[tuple[int, str]]:
        plan, root = plans[plan_index]
        made = [_record(store, plan.plan_id, root.decision_id) for _ in range(5)]
        return [(d.sequence_number, d.decision_id) for d in made]

    def numberer() -> int:
        numbered = 0
        while writing.is_set():
            numbered += number_pending(store.database, batch=3)
        return numbered

    writing.set()
    counter = threading.Thread(target=numberer)
    counter.start()
    try:
        outcomes = at_once(*(lambda i=i: write(i % 4) for i in range(8)))
    finally:
        writing.clear()
        counter.join(60)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes

    rows = read_numbered(store.database, outbox.read_after, start, 10_000).rows
    assert [row["seq"] for row in rows] == list(range(start + 1, start + 41))
    for index, (plan, _) in enumerate(plans):
        committed = sorted(pair for i, made in enumerate(outcomes) if i % 4 == index for pair in made)
        assert [row["decision_id"] for row in rows if row["plan_id"] == plan.plan_id] == [d for _, d in committed]


def test_a_relay_nobody_listens_to_numbers_what_waits_when_it_prunes(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)
    made = _record(store, plan.plan_id, root.decision_id).decision_id
    relay = EventRelay(store.database, EventBus())

    waiting = _pending(graph, plan.plan_id)
    relay.prune()  # as it does every 10 minutes, subscribers or not

    assert (waiting, _pending(graph, plan.plan_id)) == (2, 0)
    assert made in [row["decision_id"] for row in store.database.read(outbox.read_after, 0, 100_000, plan.plan_id).rows]


class _Noted:
    """A database whose writes are noted by the work they run."""

    def __init__(self, database: Any) -> None:
        self.database = database
        self.writes: list[str] = []

    def read(self, work: Any, *args: Any) -> Any:
        return self.database.read(work, *args)

    def write(self, work: Any, *args: Any) -> Any:
        self.writes.append(work.__name__)
        return self.database.write(work, *args)


def test_at_the_interval_a_relay_numbers_only_when_events_wait(store: Trail) -> None:
    plan, root = new_plan(store)
    noted, bus = _Noted(store.database), EventBus()
    relay = EventRelay(cast(Any, noted), bus)

    async def relayed() -> tuple[list[str], int, list[str], Any]:
        live = bus.listen(plan.plan_id)
        live.begin_after(end(store.database))
        quiet = relay.relay(woken=False)  # nothing waits: read, nothing written
        writes_while_quiet = list(noted.writes)
        made = _record(store, plan.plan_id, root.decision_id)  # another process's commit, say
        published = relay.relay(woken=False)
        event = await asyncio.wait_for(anext(live), 5)
        live.close()
        return writes_while_quiet, quiet + published, list(noted.writes), (event.decision_id, made.decision_id)

    writes_while_quiet, published, writes, (received, made) = asyncio.run(relayed())
    assert writes_while_quiet == []
    assert (published, writes, received) == (1, ["number"], made)


def test_a_new_plans_first_write_not_seen_yet_holds_the_next_back(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)  # its first announcing write: the root's
    made = _record(store, plan.plan_id, root.decision_id).decision_id
    hide = "MATCH (p:PendingEvent {plan_id: $plan_id}) WHERE $id IN p.decision_ids REMOVE p:PendingEvent SET p:Hidden"
    graph.driver.execute_query(hide, plan_id=plan.plan_id, id=root.decision_id, database_=graph.database)

    number_pending(store.database)
    held_back = (_plan_events(store, plan.plan_id, 0), _pending(graph, plan.plan_id))
    graph.driver.execute_query("MATCH (p:Hidden) REMOVE p:Hidden SET p:PendingEvent", database_=graph.database)
    in_order = _plan_events(store, plan.plan_id, 0)
    later = _record(store, plan.plan_id, root.decision_id).decision_id  # and the plan goes on being numbered

    assert held_back == ([], 1)
    assert in_order == [root.decision_id, made]
    assert _plan_events(store, plan.plan_id, 0) == [root.decision_id, made, later]


def test_a_run_whose_earlier_write_is_never_seen_is_numbered_after_a_while(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)
    start = end(store.database)
    lost, kept = (_record(store, plan.plan_id, root.decision_id).decision_id for _ in range(2))
    graph.driver.execute_query(
        "MATCH (p:PendingEvent {plan_id: $plan_id}) WHERE $lost IN p.decision_ids DETACH DELETE p "
        "WITH count(*) AS deleted MATCH (p:PendingEvent {plan_id: $plan_id}) SET p.stamp = p.stamp - duration({minutes: 2})",
        plan_id=plan.plan_id,
        lost=lost,
        database_=graph.database,
    )

    assert _plan_events(store, plan.plan_id, start) == [kept]


def test_pruning_keeps_a_run_numbered_late_until_those_before_it_go(store: Trail, graph: Graph) -> None:
    plan, root = new_plan(store)
    start = end(store.database)
    made = [_record(store, plan.plan_id, root.decision_id).decision_id for _ in range(2)]
    end(store.database)  # numbered
    # The second write's run was numbered late, after waiting past the retention: older than the first's.
    graph.driver.execute_query(
        "MATCH (e:Event {plan_id: $plan_id}) WHERE $id IN e.decision_ids SET e.at = e.at - duration({days: 8})",
        plan_id=plan.plan_id,
        id=made[1],
        database_=graph.database,
    )

    EventRelay(store.database, EventBus()).prune()

    assert [e.decision_id for e in missed(store.database, plan.plan_id, start, principal=LOCAL).events] == made
