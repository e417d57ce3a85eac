"""What every use-case works with: the database, where it opens its one transaction, and the bus its events go to."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from decisiontrail.access import Principal
from decisiontrail.domain import Plan
from decisiontrail.domain.audit import AuditEntry
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.ids import new_ulid
from decisiontrail.events import DecisionEvent, EventBus
from decisiontrail.exceptions import IdempotencyKeyInUse
from decisiontrail.graphdb import audit as audit_log
from decisiontrail.graphdb import outbox
from decisiontrail.graphdb.connection import Graph, open_graph, request_id
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
class Touched:
    """The ids a write names or makes, as its audit entry keeps them."""

    plans: Collection[str] = ()
    decisions: Collection[str] = ()
    reviews: Collection[str] = ()
    others: Collection[str] = ()  # a correction attempt, a run, an invariant set's key, a trace

    @classmethod
    def of(cls, records: Iterable[object], *others: str) -> Touched:
        """The ids the domain's records carry (a decision's, a review's, a plan's, a run's: ``plan_id``,
        ``decision_id``, ``review_id``, ``run_id``, ``attempt_id``), and ``others``."""
        found: dict[str, list[str]] = {"plan_id": [], "decision_id": [], "review_id": [], "run_id": [], "attempt_id": []}
        for record in records:
            for name, ids in found.items():
                value = getattr(record, name, None)
                if isinstance(value, str):
                    ids.append(value)
        extra = [*found["run_id"], *found["attempt_id"], *others]
        return cls(found["plan_id"], found["decision_id"], found["review_id"], extra)

    def __or__(self, other: Touched) -> Touched:
        return Touched(
            [*self.plans, *other.plans],
            [*self.decisions, *other.decisions],
            [*self.reviews, *other.reviews],
            [*self.others, *other.others],
        )


@dataclass(frozen=True)
class Audit(Generic[T]):
    """Who asked for a write and which use-case it is: ``Trail.write`` leaves its audit entry in the
    write's own transaction (committed with it, rolled back with it), stamped with the request's id."""

    principal: Principal
    operation: str  # the use-case: ``<service module>.<function>`` (recording.record_decisions)
    named: Touched = Touched()  # what the caller named, known before the write
    made: Callable[[T], Touched | None] | None = None
    """What the write made or reached, from its result; None when it wrote nothing after all (no entry)."""

    def entry(self, result: T, at: datetime) -> AuditEntry | None:
        made = self.made(result) if self.made is not None else Touched()
        if made is None:
            return None
        touched = self.named | made
        return AuditEntry(
            entry_id=new_ulid(),
            at=at,
            principal=self.principal.name,
            role=self.principal.role.value,
            principal_project=self.principal.project,
            operation=self.operation,
            request_id=request_id.get(),
            plan_ids=_distinct(touched.plans),
            decision_ids=_distinct(touched.decisions),
            review_ids=_distinct(touched.reviews),
            other_ids=_distinct(touched.others),
        )


def _distinct(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


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
        audit: Audit[T] | None,
        conflict: str | None = None,
    ) -> T:
        """``work`` in one write transaction (as ``Database.write``, saying ``conflict`` when a
        uniqueness constraint refuses it), announcing its events in that same transaction, to the
        outbox: announced if and only if committed. ``events`` gives them from the result, and
        they are written as the transaction's last statement; without it, ``work`` announces its
        own with its last write (a statement given an ``outbox.Announcement``: ``announcement``),
        which saves that statement's round trip.

        ``audit`` says who asked and what for: the write's audit entry is written after ``work``, in
        the same transaction. It is a required argument, so that no use-case forgets it; None only
        for the runtime's own bookkeeping of a run it holds (its lease, its progress), which no caller asked for."""

        def announced(tx: Transaction) -> T:
            result = work(tx)
            at = utc_now()
            if events is not None:
                outbox.append(tx, announcement(events(result), at))
            entry = audit.entry(result, at) if audit is not None else None
            if entry is not None:
                audit_log.append(tx, entry)
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
