"""Live events that cannot be missed: two service processes on one Neo4j, and subscribers that reconnect.

Each served app has its own event bus and relay, as two processes would; they share only the
database. The expected events are written here from the mutations' own answers, in the order
they were committed (one after another), never read from the outbox under test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, cast

import httpx
import pytest
from websockets.sync.client import ClientConnection

from decisiontrail.app import create_app
from decisiontrail.events import EventBus
from decisiontrail.graphdb import Graph, outbox
from decisiontrail.services import Trail
from decisiontrail.services.relay import EventRelay, read_numbered
from decisiontrail.access import LOCAL
from serving import served, subscribed
from test_api import INSTANTIATE, ok, record, snapshot

SUBSCRIBE = "subscription($id: ID!, $after: String) { decisionEvents(planId: $id, after: $after) { kind decisionId cursor } }"
CORRECT = 'mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: APPEND, guidance: "g"}) { correction { id } } }'


@pytest.fixture
def two_processes(store: Trail, graph: Graph) -> Iterator[tuple[str, str]]:
    with served(create_app(graph=graph)) as first, served(create_app(graph=graph)) as second:
        yield first, second


@contextmanager
def subscribed_to_plan(base_url: str, plan_id: str, after: str | None) -> Iterator[ClientConnection]:
    with subscribed(base_url, SUBSCRIBE, {"id": plan_id, "after": after}) as ws:
        yield ws


def receive(ws: ClientConnection, count: int) -> list[dict[str, Any]]:
    events = []
    while len(events) < count:
        message = json.loads(ws.recv(timeout=15))
        assert message["type"] == "next", message
        events.append(message["payload"]["data"]["decisionEvents"])
    return events


def test_subscribers_of_either_process_see_every_write_of_both_in_commit_order(
    two_processes: tuple[str, str], store: Trail
) -> None:
    first, second = two_processes
    with httpx.Client(base_url=first, timeout=30) as a, httpx.Client(base_url=second, timeout=30) as b:
        plan = ok(a, INSTANTIATE, input={"description": "two processes"})["instantiatePlan"]
        expected = [("RECORDED", plan["rootDecision"]["id"])]
        # after "0": the plan's events from the start, read from the outbox once listening, so the
        # first event received proves the subscription is live (no probe needed).
        with subscribed_to_plan(first, plan["id"], "0") as on_first, subscribed_to_plan(second, plan["id"], "0") as on_second:
            assert receive(on_first, 1)[0]["decisionId"] == receive(on_second, 1)[0]["decisionId"] == plan["rootDecision"]["id"]
            for i in range(6):
                writer = a if i % 2 == 0 else b
                made = record(writer, plan["id"], question=f"Which way {i}?", context=f"c{i}")["decision"]
                expected.append(("RECORDED", made["id"]))
            ok(b, CORRECT, d=expected[1][1])  # corrected through the second process
            seen_first = receive(on_first, 8)
            seen_second = receive(on_second, 8)

    assert [(e["kind"], e["decisionId"]) for e in seen_first[:6]] == expected[1:]
    assert seen_first == seen_second  # the same events, the same cursors, the same order
    assert [e["kind"] for e in seen_first[6:]] == ["RECORDED", "SUPERSEDED"]  # the correction, then what it superseded
    cursors = [int(e["cursor"]) for e in seen_first]
    assert cursors == sorted(cursors) and len(set(cursors)) == len(cursors)


def test_a_subscriber_that_reconnects_with_its_cursor_receives_exactly_what_it_missed(
    two_processes: tuple[str, str], store: Trail
) -> None:
    first, second = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "reconnect"})["instantiatePlan"]
        other = ok(a, INSTANTIATE, input={"description": "another plan"})["instantiatePlan"]
        with subscribed_to_plan(second, plan["id"], "0") as ws:
            (root_event,) = receive(ws, 1)
            seen = record(a, plan["id"], question="Seen?", context="seen")["decision"]
            (seen_event,) = receive(ws, 1)
        # Away: these are committed while no one listens.
        missed = [record(a, plan["id"], question=f"Missed {i}?", context=f"m{i}")["decision"]["id"] for i in range(3)]
        record(a, other["id"], question="Elsewhere?", context="e")  # another plan's: not this subscriber's
        with subscribed_to_plan(second, plan["id"], seen_event["cursor"]) as ws:
            caught_up = receive(ws, 3)
            live = record(a, plan["id"], question="Live?", context="live")["decision"]
            (live_event,) = receive(ws, 1)

    assert (root_event["decisionId"], seen_event["decisionId"]) == (plan["rootDecision"]["id"], seen["id"])
    assert [e["decisionId"] for e in caught_up] == missed
    assert live_event["decisionId"] == live["id"]  # and then live, nothing twice
    assert int(live_event["cursor"]) > int(caught_up[-1]["cursor"]) > int(seen_event["cursor"])


@pytest.mark.parametrize(("after", "message"), [("x1", "is not a cursor"), ("999999", "no event 999999 was ever published")])
def test_a_cursor_that_cannot_be_honoured_is_refused(
    two_processes: tuple[str, str], store: Trail, after: str, message: str
) -> None:
    first, _ = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "refused cursor"})["instantiatePlan"]
    with subscribed_to_plan(first, plan["id"], after) as ws:
        answer = json.loads(ws.recv(timeout=15))

    assert answer["type"] == "next" and answer["payload"]["data"] is None, answer  # no event, an error
    (error,) = answer["payload"]["errors"]
    assert message in error["message"]
    assert error["extensions"] == {"code": "VALIDATION_FAILED", "field": "after"}


def test_a_refused_write_announces_nothing(two_processes: tuple[str, str], store: Trail, graph: Graph) -> None:
    first, _ = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "refused"})["instantiatePlan"]
        refused = a.post(
            "/graphql",
            json={
                "query": 'mutation($p: ID!) { recordDecision(input: {planId: $p, decisionType: TOOL_INVOCATION, question: "q", '
                'chosenOption: "o", rationale: "r", contextSnapshot: {hotContextHash: "'
                + "0" * 64
                + '", hotContextRef: "r", actorStateRef: {threadId: "t", checkpointId: "c"}}}) { decision { id } } }',
                "variables": {"p": plan["id"]},
            },
        ).json()
        assert refused["errors"][0]["extensions"]["code"] == "PHASE_VIOLATION"  # a tool call in Strategize
        after_refusal = record(a, plan["id"], question="After?", context="after")["decision"]
        with subscribed_to_plan(first, plan["id"], "0") as ws:
            events = receive(ws, 2)

    assert [e["decisionId"] for e in events] == [plan["rootDecision"]["id"], after_refusal["id"]]


def test_a_cursor_older_than_the_outbox_keeps_is_refused_not_answered_with_a_gap(
    two_processes: tuple[str, str], store: Trail
) -> None:
    first, _ = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "pruned"})["instantiatePlan"]
        record(a, plan["id"], question="Old?", context="old")
        EventRelay(store.database, EventBus(), retention=timedelta(0)).prune()  # every event is past a zero retention
        record(a, plan["id"], question="New?", context="new")
        with subscribed_to_plan(first, plan["id"], "1") as ws:
            answer = json.loads(ws.recv(timeout=15))

    (error,) = answer["payload"]["errors"]
    assert "events up to 2 were pruned" in error["message"]


def test_a_subscriber_that_falls_behind_its_queue_reads_what_it_missed_from_the_outbox(store: Trail, graph: Graph) -> None:
    # A bus whose queues hold 3 events, relaying for one served app: the subscriber reads nothing
    # until 8 events were published, then must still receive all 8, in order, once each.
    import asyncio

    from decisiontrail.events import DecisionEvent as Event, EventKind, FellBehind

    async def scenario() -> list[int]:
        bus = EventBus(backlog=3)
        live = bus.listen("P")
        for seq in range(1, 9):
            bus.publish(Event(EventKind.RECORDED, "P", decision_id=f"d{seq}", seq=seq))
        await asyncio.sleep(0.05)  # the offers run on this loop
        got: list[int | str] = []
        try:
            got.append((await anext(live)).seq or 0)
        except FellBehind:
            got.append("fell behind")
        live.close()
        return got

    assert asyncio.run(scenario()) == ["fell behind"]  # told, to read them from the outbox: nothing silently dropped


def _batch(client: httpx.Client, plan_id: str, size: int, name: str) -> list[str]:
    inputs = [
        {
            "planId": plan_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": f"{name} {i}?",
            "chosenOption": "this way",
            "rationale": "because",
            "contextSnapshot": snapshot(f"{name}{i}"),
        }
        for i in range(size)
    ]
    batch = ok(client, "mutation($i: [RecordDecisionInput!]!) { recordDecisions(inputs: $i) { decision { id } } }", i=inputs)
    return [r["decision"]["id"] for r in batch["recordDecisions"]]


def test_over_websocket_a_slow_subscriber_still_receives_every_event(
    graph: Graph, store: Trail, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("decisiontrail.events.EventBus.__init__.__defaults__", (2,))  # queues of 2
    with served(create_app(graph=graph)) as url, httpx.Client(base_url=url, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "slow subscriber"})["instantiatePlan"]
        with subscribed_to_plan(url, plan["id"], "0") as ws:
            receive(ws, 1)  # live
            # One commit of eight events: the relay hands them over at once, six more than the queue holds.
            made = _batch(a, plan["id"], 8, "Burst")
            got = receive(ws, 8)

    assert [e["decisionId"] for e in got] == made


def test_a_cursor_inside_a_batchs_events_resumes_at_the_next_one(
    two_processes: tuple[str, str], store: Trail, graph: Graph
) -> None:
    # A batch's events are stored as one run (graphdb.outbox): a subscriber that saw part of it
    # and reconnects must receive exactly the rest, one event each.
    first, second = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "cursor inside a run"})["instantiatePlan"]
        made = _batch(a, plan["id"], 6, "Run")
        with subscribed_to_plan(second, plan["id"], "0") as ws:
            everything = receive(ws, 7)
        with subscribed_to_plan(second, plan["id"], everything[3]["cursor"]) as ws:
            rest = receive(ws, 3)
    stored = graph.driver.execute_query(
        "MATCH (e:Event {plan_id: $plan_id}) RETURN count(e) AS runs", plan_id=plan["id"], database_=graph.database
    ).records[0]["runs"]

    assert [e["decisionId"] for e in everything] == [plan["rootDecision"]["id"], *made]
    assert [int(e["cursor"]) for e in everything] == list(range(int(everything[0]["cursor"]), int(everything[0]["cursor"]) + 7))
    assert [e["decisionId"] for e in rest] == made[3:]
    assert [e["cursor"] for e in rest] == [e["cursor"] for e in everything[4:]]
    assert stored == 2  # the root's event, and the batch's six in one run


def test_pages_of_the_outbox_split_a_run_and_lose_nothing(two_processes: tuple[str, str], store: Trail) -> None:
    first, _ = two_processes
    with httpx.Client(base_url=first, timeout=30) as a:
        plan = ok(a, INSTANTIATE, input={"description": "pages"})["instantiatePlan"]
        start = read_numbered(store.database, outbox.read_after, 0, 1).last
        made = _batch(a, plan["id"], 10, "Paged")

    pages, cursor = [], start
    while page := read_numbered(store.database, outbox.read_after, cursor, 4, plan["id"]).rows:
        pages.append(page)
        cursor = page[-1]["seq"]

    assert [len(p) for p in pages] == [4, 4, 2]
    rows = [row for page in pages for row in page]
    assert [r["decision_id"] for r in rows] == made
    assert [r["seq"] for r in rows] == list(range(start + 1, start + 11))
    assert {(r["kind"], r["plan_id"], r["review_id"]) for r in rows} == {("recorded", plan["id"], None)}


class _Reads:
    """A database whose reads are noted: how many rows of the outbox each asked for (its writes,
    which number what is pending, pass)."""

    def __init__(self, database: Any) -> None:
        self.database = database
        self.limits: list[int] = []

    def read(self, work: Any, *args: Any) -> Any:
        self.limits.append(args[1])
        return self.database.read(work, *args)

    def write(self, work: Any, *args: Any) -> Any:
        return self.database.write(work, *args)


def test_with_nobody_listening_the_relay_reads_nothing_and_begins_where_its_subscribers_say(store: Trail) -> None:
    import asyncio

    from decisiontrail.domain import DecisionType
    from decisiontrail.events import EventKind
    from decisiontrail.services import recording, relay as relays
    from factories import decision, new_plan

    bus, reads = EventBus(), _Reads(store.database)
    relay = EventRelay(cast(Any, reads), bus)
    plan, root = new_plan(store)
    for _ in range(3):
        recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)

    assert relay.relay() == 0
    assert reads.limits == [] and relay.cursor is None  # nobody listens: nothing is read

    async def listened() -> tuple[list[int], int, int, Any]:
        live = bus.listen(plan.plan_id)
        waited = relay.relay()  # listening, but not yet said where it begins: the relay waits
        reads_while_waiting = list(reads.limits)
        end = relays.end(store.database)
        live.begin_after(end)
        made = recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
        published = relay.relay()
        event = await asyncio.wait_for(anext(live), 5)
        live.close()
        return reads_while_waiting, waited + published, end, (event.kind, event.decision_id, event.seq, made.decision_id)

    reads_while_waiting, published, end, (kind, decision_id, seq, made_id) = asyncio.run(listened())
    assert reads_while_waiting == []
    # Only what was committed after the subscriber began: not the three recorded before.
    assert published == 1 and (kind, decision_id, seq) == (EventKind.RECORDED, made_id, end + 1)
    assert reads.limits == [relay.batch]  # then the events after where it began are read
    assert relay.relay() == 0 and relay.cursor is None  # and, nobody listening again, forgotten


class _Unseen:
    """A database whose next read of the outbox does not see the events numbered ``hidden``: what
    a read made while their numbering committed could miss (Neo4j reads committed, not a
    snapshot). Every other read, and every write, goes through as it is."""

    def __init__(self, database: Any, hidden: set[int]) -> None:
        self.database = database
        self.hidden = hidden

    def read(self, work: Any, *args: Any) -> Any:
        page = self.database.read(work, *args)
        if self.hidden and work is outbox.read_after:
            page = outbox.OutboxPage([r for r in page.rows if r["seq"] not in self.hidden], page.last, page.pruned_through)
            self.hidden = set()
        return page

    def write(self, work: Any, *args: Any) -> Any:
        return self.database.write(work, *args)


def _relayed(store: Trail, unseen: _Unseen, relay: EventRelay, bus: EventBus, rounds: int) -> tuple[list[int], list[int]]:
    """Three recordings' events relayed to a subscriber of their plan in ``rounds`` rounds, the
    second of them unseen by the first read: their numbers, and the numbers the subscriber received."""
    import asyncio

    from decisiontrail.domain import DecisionType
    from decisiontrail.services import recording, relay as relays
    from factories import decision, new_plan

    plan, root = new_plan(store)

    async def relayed() -> tuple[list[int], list[int]]:
        live = bus.listen(plan.plan_id)
        live.begin_after(start := relays.end(store.database))
        unseen.hidden = {start + 2}
        for _ in range(3):
            recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
        relays.number_pending(store.database)
        for _ in range(rounds):
            relay.relay(woken=False)
        await asyncio.sleep(0.05)  # the bus hands events over on this loop (call_soon_threadsafe)
        received = []
        while not live.queue.empty():
            received.append((await anext(live)).seq)
        live.close()
        return [start + 1, start + 2, start + 3], received

    return asyncio.run(relayed())


def test_the_relay_never_publishes_past_an_event_its_read_did_not_see(store: Trail) -> None:
    # The middle event is unseen by the first read: the relay stops before it, and the next
    # round relays it and the one after, in order. (Published past it, it was lost to every
    # subscriber of the process: the cursor had moved on.)
    bus = EventBus()
    unseen = _Unseen(store.database, hidden=set())
    relay = EventRelay(cast(Any, unseen), bus)

    numbers, received = _relayed(store, unseen, relay, bus, rounds=2)

    assert received == numbers


def test_a_gap_that_never_fills_is_logged_and_relayed_past(
    store: Trail, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from decisiontrail.services import relay as relays

    monkeypatch.setattr(relays, "GAP_PATIENCE", 0.0)
    bus = EventBus()
    unseen = _Unseen(store.database, hidden=set())
    relay = EventRelay(cast(Any, unseen), bus)

    with caplog.at_level("WARNING", logger="decisiontrail.services.relay"):
        numbers, received = _relayed(store, unseen, relay, bus, rounds=1)

    assert received == [numbers[0], numbers[2]]  # the relay went on rather than silence everyone
    assert f"event {numbers[1]} was never seen" in caplog.text


class _NumberedBetween:
    """A read's statements, with ``between`` run (and committed) right after the first one."""

    def __init__(self, tx: Any, between: Any) -> None:
        self.tx, self.between, self.statements = tx, between, 0

    def run(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        result = self.tx.run(text, *args, **kwargs)
        self.statements += 1
        if self.statements > 1:
            return result
        record = result.single(strict=True)
        self.between()
        return _Answered(record)


class _Answered:
    def __init__(self, record: Any) -> None:
        self.record = record

    def single(self, strict: bool = False) -> Any:
        return self.record


def test_a_page_of_the_outbox_holds_every_event_up_to_its_counter_and_none_past_it(store: Trail) -> None:
    # Events numbered while the page is read (here: right after its first statement) are past
    # its counter and not on it; every event up to the counter is. A reader going on from the
    # counter (the relay's cursor, a reconnecting subscriber's) then skips none.
    from decisiontrail.domain import DecisionType
    from decisiontrail.services import recording, relay as relays
    from factories import decision, new_plan

    plan, root = new_plan(store)
    start = relays.end(store.database)
    made = [
        recording.record(
            store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
        ).decision_id
    ]
    relays.number_pending(store.database)

    def another_write_numbered() -> None:
        made.append(
            recording.record(
                store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
            ).decision_id
        )
        relays.number_pending(store.database)

    for plan_id in (None, plan.plan_id):
        page = store.database.read(
            lambda tx, plan_id=plan_id: outbox.read_after(_NumberedBetween(tx, another_write_numbered), start, 100, plan_id)
        )
        seqs = [row["seq"] for row in page.rows]
        assert seqs == list(range(start + 1, page.last + 1)), (plan_id, seqs, page.last)
        after = read_numbered(store.database, outbox.read_after, page.last, 100, plan_id).rows
        assert [row["decision_id"] for row in (*page.rows, *after)] == made, plan_id


def test_runs_deleted_while_they_are_numbered_are_a_reset_and_nothing_is_numbered(store: Trail, graph: Graph) -> None:
    # A wipe (or a restore) that commits between numbering's read of the pending runs and its
    # write: the runs it read are gone. Was a RuntimeError ("the counter was not locked"), logged
    # with a stack trace at every retry of the relay.
    from decisiontrail.graphdb.admin import delete_all_data
    from factories import new_plan

    new_plan(store)
    with pytest.raises(outbox.OutboxReset, match="1 of 1 pending runs were deleted"):
        store.database.write(lambda tx: outbox.number(_NumberedBetween(tx, lambda: delete_all_data(graph)), 10))

    assert (
        graph.driver.execute_query("MATCH (e:Event|PendingEvent) RETURN count(e) AS n", database_=graph.database).records[0]["n"]
        == 0
    )
    assert outbox_counter(graph) in (None, 0)  # nothing numbered: rolled back with the round


def outbox_counter(graph: Graph) -> int | None:
    records = graph.driver.execute_query(
        "OPTIONAL MATCH (c:EventCounter {name: 'events'}) RETURN c.seq AS seq", database_=graph.database
    ).records
    return records[0]["seq"]


def test_the_relay_meets_a_reset_outbox_with_one_line_and_numbers_afresh(
    store: Trail, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from decisiontrail.services import relay as relays
    from factories import new_plan

    new_plan(store)
    number = outbox.number
    calls: list[int] = []

    def reset_once(tx: Any, limit: int) -> outbox.Numbered:
        calls.append(limit)
        if len(calls) == 1:
            raise outbox.OutboxReset("1 of 1 pending runs were deleted while numbering")
        return number(tx, limit)

    monkeypatch.setattr(outbox, "number", reset_once)
    with caplog.at_level("INFO", logger="decisiontrail"):
        first = relays.number_pending(store.database)
        second = relays.number_pending(store.database)

    assert (first, second) == (0, 1)
    assert [r.getMessage() for r in caplog.records] == [
        "the event outbox was reset while numbering it (1 of 1 pending runs were deleted while numbering); numbering it afresh"
    ]


def test_a_wipe_under_a_running_relay_leaves_it_relaying_what_is_written_next(
    store: Trail, graph: Graph, caplog: pytest.LogCaptureFixture
) -> None:
    # The tests' wipe, bench's and reliability's --wipe, or a restore, under a served process
    # whose relay numbers and reads the outbox all the while: the wipe is retried past any
    # deadlock with it, and the relay goes on from the emptied outbox without an error.
    from decisiontrail.graphdb.admin import count_graph, delete_all_data
    from decisiontrail.services import lifecycle

    with caplog.at_level("WARNING"), served(create_app(graph=graph)) as url, httpx.Client(base_url=url, timeout=30) as a:
        before = ok(a, INSTANTIATE, input={"description": "before the wipe"})["instantiatePlan"]
        with subscribed_to_plan(url, before["id"], "0") as ws, ThreadPoolExecutor(1) as writer:
            receive(ws, 1)
            _batch(a, before["id"], 200, "Busy")
            # Plans written, and their events numbered and relayed, while the wipe runs.
            # (By another process's trail, without the served one's reconciler: one transaction a plan.)
            writing = writer.submit(
                lambda: [lifecycle.instantiate_plan(store, f"during {i}", principal=LOCAL) for i in range(60)]
            )
            while not writing.done():
                delete_all_data(graph)
            writing.result()
        delete_all_data(graph)
        assert count_graph(graph).nodes == 0
        after = ok(a, INSTANTIATE, input={"description": "after the wipe"})["instantiatePlan"]
        with subscribed_to_plan(url, after["id"], "0") as ws:
            first = receive(ws, 1)
            made = _batch(a, after["id"], 3, "Next")
            rest = receive(ws, 3)

    assert [e["decisionId"] for e in (*first, *rest)] == [after["rootDecision"]["id"], *made]
    assert [r.getMessage() for r in caplog.records if r.levelname in ("ERROR", "CRITICAL") or r.exc_info] == []
