"""Live events across processes: every process relays the outbox to its subscribers, in commit order.

A write that announces events writes them in its own transaction (``Trail.write``), pending;
they are numbered after its commit (``number_pending``: by whoever reads the outbox next and finds
them). Each serving process runs one ``EventRelay``: a thread that numbers what is pending, reads
what was numbered after its cursor and hands it to the process's ``EventBus``, woken at once by its
own commits and every ``interval`` for the other processes'. While nobody is subscribed it reads
nothing (but numbers, now and then, what waits, so the outbox's retention applies to it): each
subscriber reads where it begins (the outbox's ``end``, or, when it reconnects with the cursor of
the last event it saw, what it ``missed``), and the relay begins at the earliest of them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from decisiontrail.access import Action, Principal
from decisiontrail.domain.decision import utc_now
from decisiontrail.events import DecisionEvent, EventBus, EventKind
from decisiontrail.exceptions import DecisionTrailError, ValidationFailed
from decisiontrail.graphdb import outbox
from decisiontrail.graphdb.database import Database, Transaction
from decisiontrail.services.visibility import require_role, require_visible

log = logging.getLogger(__name__)

RETENTION = timedelta(days=7)
"""How long the outbox keeps an event: how long a subscriber may stay away and still catch up."""
GAP_PATIENCE = 5.0
"""Seconds the relay waits for a number missing from the sequence before it relays past it."""
STOP_WITHIN = 10.0
"""Seconds a relay's ``running`` waits at exit for its thread's round to end."""
RELAY_THREAD = "decisiontrail-event-relay"
"""The name of a relay's thread (``EventRelay.running``)."""
MISSED_LIMIT = 10_000
"""Events a reconnecting subscriber may ask for at once; more, and it reads the plan again instead."""


class EventRelay:
    """Reads the outbox after its cursor and publishes each event to ``bus``, in order, in a thread of its own."""

    def __init__(
        self,
        database: Database,
        bus: EventBus,
        *,
        interval: float = 0.1,
        batch: int = 1000,
        retention: timedelta = RETENTION,
        prune_every: float = 600.0,
    ) -> None:
        self.database = database
        self.bus = bus
        self.interval = interval
        self.batch = batch
        self.retention = retention
        self.prune_every = prune_every
        self.cursor: int | None = None
        self._gap: tuple[int, float] | None = None
        """The first number missing after the cursor, and when it was first found missing."""
        self._wake = threading.Event()
        self._stop = threading.Event()

    def wake(self) -> None:
        """Something was committed here: read the outbox now rather than at the next interval."""
        self._wake.set()

    @contextmanager
    def running(self) -> Iterator[EventRelay]:
        """Relay in a daemon thread from now on, until exit."""
        self._stop.clear()
        self.cursor = None
        thread = threading.Thread(target=self._run, name=RELAY_THREAD, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._wake.set()
            thread.join(timeout=STOP_WITHIN)
            if thread.is_alive():  # a statement of its round still running: it stops after it
                log.error("the event relay did not stop within %.0fs; it stops once its round ends", STOP_WITHIN)

    def relay(self, *, woken: bool = True) -> int:
        """Publish every event committed after the cursor; how many. ``woken`` by a commit of this
        process, events wait to be numbered, which is done before reading; otherwise (at the
        interval, for the other processes' commits) the outbox is read first, and numbered and
        read again only if it says events wait.

        With nobody listening nothing is read (the relay was woken by every commit of its process,
        and read the outbox's end each time, for no one): the cursor is forgotten, and taken again
        from the subscribers, who say where they begin (``Subscriber.begin_after``) once they have
        read it; until each has, the relay waits (it is woken when one has).
        """
        published = 0
        while True:
            if not self.bus.listening:
                self.cursor = None
                return published
            if self.cursor is None:
                self.cursor = self.bus.begins_after()
                if self.cursor is None:
                    return published
            try:
                if woken:
                    number_pending(self.database, self.batch)
                    page = self.database.read(outbox.read_after, self.cursor, self.batch)
                    woken = False
                else:
                    page = read_numbered(self.database, outbox.read_after, self.cursor, self.batch)
            except outbox.OutboxReset as e:  # read while the store was emptied: read it again next round
                log.warning("the event outbox was reset while reading it (%s); reading it afresh", e)
                return published
            if page.last < self.cursor:  # the store was emptied or restored: its sequence starts again
                log.warning("the event sequence went back from %d to %d; relaying from its start", self.cursor, page.last)
                self.cursor = 0
                continue
            events = self._unbroken(page)
            for event in events:
                self.bus.publish(event)
                assert event.seq is not None
                self.cursor = event.seq
            published += len(events)
            if len(events) < self.batch:
                return published

    def _unbroken(self, page: outbox.OutboxPage) -> list[DecisionEvent]:
        """The page's events from the one after the cursor on, up to the first missing number.

        The sequence has no gaps, and the page holds every event up to its counter, read first
        (``outbox.read_after``); a number missing all the same is one whose numbering this read did
        not see, and published past, it would be lost to every subscriber here. So the relay stops
        before it and reads again at its next round; after ``GAP_PATIENCE`` it logs the gap and goes
        on (a relay that never went on would silence every subscriber). Numbers pruned before the
        cursor caught up are skipped at once.
        """
        assert self.cursor is not None
        expected = self.cursor + 1
        if page.rows and self.cursor < page.pruned_through:
            expected = max(expected, page.rows[0]["seq"])
        events: list[DecisionEvent] = []
        for row in page.rows:
            if row["seq"] != expected:
                if self._gap is None or self._gap[0] != expected:
                    self._gap = (expected, time.monotonic())
                if time.monotonic() - self._gap[1] < GAP_PATIENCE:
                    return events
                log.warning("event %d was never seen; relaying from %d on", expected, row["seq"])
                expected = row["seq"]
            events.append(event_of(row))
            expected += 1
        self._gap = None
        return events

    def prune(self) -> None:
        """Delete the events older than the retention, a batch per transaction (those pending
        numbered first: a process nobody subscribes to numbers nothing otherwise)."""
        read_numbered(self.database, outbox.read_after, 0, 0)
        before = utc_now() - self.retention
        while self.database.write(outbox.prune, before, 10_000) is not None:
            pass

    def _run(self) -> None:
        pruned_at = 0.0
        failing = False
        woken = True
        while not self._stop.is_set():
            try:
                self.relay(woken=woken)
                if self.prune_every and (now := time.monotonic()) - pruned_at >= self.prune_every:
                    pruned_at = now
                    self.prune()
                if failing:
                    log.info("relaying events again")
                failing = False
            except DecisionTrailError as e:  # Neo4j unavailable: say so once, keep trying
                if not failing:
                    log.warning("cannot read the event outbox (%s); retrying", e.message)
                failing = True
                self._stop.wait(1.0)
            except Exception:  # a bug must not end the relay: every subscriber would go quiet
                log.exception("relaying events failed; retrying")
                self._stop.wait(1.0)
            woken = self._wake.wait(self.interval)
            self._wake.clear()


def end(database: Database) -> int:
    """The number of the last event committed: where a new subscriber begins."""
    return read_numbered(database, outbox.read_after, 0, 0).last


def number_pending(database: Database, batch: int = 1000) -> int:
    """Number the events committed and not numbered yet, ``batch`` runs a transaction; how many
    runs. A run held back (its plan's earlier write committed, not seen yet) waits for the next call."""
    done = 0
    while True:
        try:
            step = database.write(outbox.number, batch)
        except outbox.OutboxReset as e:
            # Not a fault: the store was emptied or restored under this round. Readers see the
            # sequence go back (``EventRelay.relay``); the next call numbers what is there then.
            log.warning("the event outbox was reset while numbering it (%s); numbering it afresh", e)
            return done
        done += step.numbered
        if step.read < batch or step.numbered == 0:
            return done


def read_numbered(database: Database, read: Callable[..., outbox.OutboxPage], *args: Any) -> outbox.OutboxPage:
    """``read(tx, *args)``'s page of the outbox, read again after numbering when events were
    pending: every event committed before the call is among what it numbers."""
    page = database.read(read, *args)
    if page.pending:  # numbered here, or by another meanwhile: read again either way
        number_pending(database)
        page = database.read(read, *args)
    return page


@dataclass(frozen=True)
class Missed:
    """A plan's events after a cursor, and ``through``: the outbox's end when they were read (every
    event of the plan up to it is among them)."""

    events: list[DecisionEvent]
    through: int


def missed(database: Database, plan_id: str, after: int, *, principal: Principal, limit: int = MISSED_LIMIT) -> Missed:
    """A plan's events committed after the cursor ``after``, in order: what a subscriber that
    reconnects with it missed. Refused when the outbox no longer holds them all (pruned, or the
    cursor is past its end) or there are more than ``limit``; NotFound for a plan ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> outbox.OutboxPage:
        require_visible(tx, principal, plan_ids=[plan_id])
        return outbox.read_after(tx, after, limit + 1, plan_id)

    if after < 0:
        raise ValidationFailed("after: a cursor is a sequence number, 0 or more", field="after")
    page = read_numbered(database, work)
    if after < page.pruned_through:
        raise ValidationFailed(
            f"after: events up to {page.pruned_through} were pruned (kept {RETENTION.days} days); read the plan again",
            field="after",
        )
    if after > page.last:
        raise ValidationFailed(f"after: no event {after} was ever published (the last is {page.last})", field="after")
    if len(page.rows) > limit:
        raise ValidationFailed(f"after: more than {limit} events were missed; read the plan again", field="after")
    # The rows go up to the counter, read before them (outbox.read_after); what was numbered since
    # is left to the live stream, which was listening before the read.
    return Missed([event_of(row) for row in page.rows], page.last)


def row_of(event: DecisionEvent) -> dict[str, str | None]:
    """What the outbox stores of an event (its number and time are the outbox's)."""
    return {"kind": event.kind.value, "plan_id": event.plan_id, "decision_id": event.decision_id, "review_id": event.review_id}


def event_of(row: Mapping[str, Any]) -> DecisionEvent:
    """An event as the outbox holds it, numbered."""
    return DecisionEvent(
        EventKind(row["kind"]),
        row["plan_id"],
        decision_id=row["decision_id"],
        review_id=row["review_id"],
        at=datetime.fromisoformat(row["at"]),
        seq=row["seq"],
    )
