"""What every use-case works with: the database, where it opens its one transaction, and the bus its events go to."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from decisiontrail.domain import Plan
from decisiontrail.domain.decision import utc_now
from decisiontrail.events import DecisionEvent, EventBus
from decisiontrail.exceptions import IdempotencyKeyInUse
from decisiontrail.graphdb import outbox
from decisiontrail.graphdb.connection import Graph, open_graph
from decisiontrail.graphdb.database import Database, Transaction
from decisiontrail.graphdb.embedded import Progress
from decisiontrail.services.relay import EventRelay, row_of
from decisiontrail.settings import Neo4jSettings

T = TypeVar("T")

log = logging.getLogger(__name__)


Reconciler = Callable[["Trail", Plan], None]
"""Records, through the record_decision tool, one invariant_enforced per invariant the plan enforces and no current decision does yet."""


class KeysInFlight:
    """The idempotency keys (plan id, key) of the writes this process is running: a second request
    with a key whose first is still running is refused (``IdempotencyKeyInUse``), as the IETF
    Idempotency-Key draft and Stripe do, rather than made to wait behind it.

    A process's own: a request with the key arriving at another process serving the same database
    waits for the first's plan lock instead, and is then answered with what the first recorded.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[tuple[str, str]] = set()

    @contextmanager
    def holding(self, keys: Collection[tuple[str, str]]) -> Iterator[None]:
        """Hold ``keys`` for the duration of the block; refused at once if a running write holds one."""
        wanted = set(keys)
        with self._lock:
            busy = wanted & self._running
            if busy:
                plan_id, key = min(busy)
                raise IdempotencyKeyInUse(
                    f"idempotency_key: {key!r} is in use in plan {plan_id}: a request with it is still being processed; "
                    "send this one again once it has finished, and it is answered with what that one recorded"
                )
            self._running |= wanted
        try:
            yield
        finally:
            with self._lock:
                self._running -= wanted


@dataclass(frozen=True)
class Trail:
    """The decision trail as the services see it. Entry points build one per process and pass it in.

    A use-case runs its work in one transaction of ``database``; a write that announces events
    writes them in that same transaction (``write``), to the outbox, from which every serving
    process's ``relay`` publishes them to its subscribers (``events``) in commit order.
    """

    database: Database
    events: EventBus | None = field(default=None)
    reconciler: Reconciler | None = field(default=None)
    """What runs at each of a plan's Strategize entries (``entered_strategize``): the Invariant
    Reconciliation Actor, wired in by the entry point that has one (ADR-033)."""
    relay: EventRelay | None = field(default=None)
    """Publishes the outbox to ``events`` while it runs (``relay.running()``, the serving process's lifespan)."""
    wake_runtime: Callable[[], None] | None = field(default=None)
    """Tells this process's runtime workers that a run may have been queued (else they find it when they next look)."""
    keys_in_flight: KeysInFlight = field(default_factory=KeysInFlight, compare=False)
    """The idempotency keys of this process's writes running now (shared by the copies ``replace`` makes)."""

    @classmethod
    def on(cls, graph: Graph, events: EventBus | None = None, reconciler: Reconciler | None = None) -> Trail:
        database = Database(graph)
        return cls(database, events, reconciler, EventRelay(database, events) if events is not None else None)

    @property
    def graph(self) -> Graph:
        return self.database.graph

    def entered_strategize(self, plan: Plan) -> None:
        """``plan`` entered Strategize (instantiated, reverted from Execute, corrected back into it),
        or a review in it was resolved while it is there: the reconciler, where the entry point
        wired one, records the invariant_enforced decisions it is missing (ADR-033)."""
        if self.reconciler is not None:
            self.reconciler(self, plan)

    def work_queued(self) -> None:
        """A write may have queued a plan run (a run started, a correction's replay, a review resolved)."""
        if self.wake_runtime is not None:
            self.wake_runtime()

    def write(
        self,
        work: Callable[[Transaction], T],
        events: Callable[[T], Iterable[DecisionEvent]] | None = None,
        *,
        conflict: str | None = None,
    ) -> T:
        """``work`` in one write transaction (as ``Database.write``, saying ``conflict`` when a
        uniqueness constraint refuses it), announcing its events in that same transaction, to the
        outbox: announced if and only if committed. ``events`` gives them from the result, and
        they are written as the transaction's last statement; without it, ``work`` announces its
        own with its last write (a statement given an ``outbox.Announcement``: ``announcement``),
        which saves that statement's round trip."""

        def announced(tx: Transaction) -> T:
            result = work(tx)
            if events is not None:
                outbox.append(tx, announcement(events(result), utc_now()))
            return result

        result = self.database.write_or(conflict, announced) if conflict else self.database.write(announced)
        if self.relay is not None:
            self.relay.wake()
        return result


def announcement(events: Iterable[DecisionEvent], at: datetime) -> outbox.Announcement | None:
    """``events`` as the outbox's announcement of them, stamped ``at`` (None if there are none)."""
    return outbox.Announcement.of([row_of(e) for e in events], at)


@contextmanager
def open_trail(
    settings: Neo4jSettings,
    *,
    events: EventBus | None = None,
    reconciler: Reconciler | None = None,
    progress: Progress = log.info,
) -> Iterator[Trail]:
    """Connect to Neo4j (starting the embedded server when no URI is set), migrate its schema, and
    yield the trail over it; everything opened is closed on exit."""
    with open_graph(settings, progress=progress) as graph:
        yield Trail.on(graph, events, reconciler)
