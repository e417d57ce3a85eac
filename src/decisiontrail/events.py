"""Decision events (recorded, superseded, review pending or resolved), fanned out to subscribers."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from decisiontrail.domain.decision import utc_now


class EventKind(StrEnum):
    RECORDED = "recorded"
    SUPERSEDED = "superseded"
    REVIEW_PENDING = "review_pending"
    REVIEW_RESOLVED = "review_resolved"
    REVIEW_CANCELLED = "review_cancelled"
    REVIEW_LAPSED = "review_lapsed"  # a correction superseded what the review's approval rested on
    RUN_UPDATED = "run_updated"  # the runtime's run of the plan changed state (Plan.run)


@dataclass(frozen=True)
class DecisionEvent:
    kind: EventKind
    plan_id: str
    decision_id: str | None = None
    review_id: str | None = None
    at: datetime | None = None
    """When it was written: in the transaction of the change, so before its commit."""
    seq: int | None = None
    """Its number in the outbox, in commit order across every process; a subscriber's cursor."""
    made: dict[object, Any] = field(default_factory=dict, init=False, compare=False, hash=False, repr=False)
    """What is made of it for its subscribers here, made once by the first who needs it: every
    subscriber's queue holds this same object (``EventBus.publish``)."""


class EventBus:
    """Publishes from any thread (the outbox relay reads in a worker thread) to asyncio subscribers.

    A subscriber that falls behind by more than ``backlog`` events is told (``FellBehind``) and
    reads what it missed from the outbox, so a slow client never holds up the others nor loses an event.
    """

    def __init__(self, backlog: int = 1000) -> None:
        self.backlog = backlog
        self._lock = threading.Lock()
        self._subscribers: set[Subscriber] = set()

    def publish(self, event: DecisionEvent) -> None:
        if event.at is None:
            event = dataclasses.replace(event, at=utc_now())
        with self._lock:
            subscribers = list(self._subscribers)
        # One call into each event loop for all of its subscribers: a call from another thread
        # wakes the loop through a pipe, a write per call, and a loop holds a thousand subscribers.
        by_loop: dict[asyncio.AbstractEventLoop, list[Subscriber]] = {}
        for subscriber in subscribers:
            if subscriber.plan_id is None or subscriber.plan_id == event.plan_id:
                by_loop.setdefault(subscriber.loop, []).append(subscriber)
        for loop, offered in by_loop.items():
            loop.call_soon_threadsafe(_offer, offered, event)

    @property
    def listening(self) -> bool:
        """Whether anyone is subscribed now."""
        with self._lock:
            return bool(self._subscribers)

    def begins_after(self) -> int | None:
        """Where publishing is to begin for the subscribers: the earliest ``after`` among them;
        None while nobody listens or one of them has not said yet."""
        with self._lock:
            afters = [s.after for s in self._subscribers]
        if not afters or any(after is None for after in afters):
            return None
        return min(after for after in afters if after is not None)

    def listen(self, plan_id: str | None) -> Subscriber:
        """Events of one plan (or all with None) from this moment on, until the subscriber is closed.

        Registered before this returns, so a reader that then reads the outbox (its end, or what
        it missed after a cursor) misses nothing between the two; it then says where it begins
        (``Subscriber.begin_after``).
        """
        subscriber = Subscriber(self, asyncio.get_running_loop(), plan_id, asyncio.Queue(maxsize=self.backlog + 1))
        with self._lock:
            self._subscribers.add(subscriber)
        return subscriber

    def _leave(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(subscriber)


def _offer(subscribers: list[Subscriber], event: DecisionEvent) -> None:
    """``event`` offered to each of ``subscribers``, on their event loop."""
    for subscriber in subscribers:
        subscriber.offer(event)


class FellBehind(Exception):
    """A subscriber's queue overflowed and was emptied: what it held is to be read from the outbox,
    after the last event the subscriber was given."""

    def __init__(self) -> None:
        super().__init__("the subscriber fell behind")


@dataclass(eq=False)
class Subscriber:
    """One subscriber's queue of events: an async iterator, closed when the subscriber leaves.

    When it falls behind by more than the queue holds, the queue is emptied and the next read
    raises ``FellBehind``: nothing is dropped without the reader knowing, and the reader can read
    what it missed from the outbox.
    """

    bus: EventBus
    loop: asyncio.AbstractEventLoop
    plan_id: str | None
    queue: asyncio.Queue[DecisionEvent | None]
    behind: bool = False
    after: int | None = None
    """The number of the last event in the outbox that is not this subscriber's: it is owed every
    one after it. None until its reader has read where that is (``begin_after``); meanwhile the
    relay of a process that had nobody listening waits for it."""

    def begin_after(self, seq: int) -> None:
        """Owed every event numbered after ``seq`` (the outbox's end when read, or the last of what it missed)."""
        self.after = seq

    def offer(self, event: DecisionEvent) -> None:
        """Called on the subscriber's event loop (``EventBus.publish``), as ``__anext__`` runs."""
        if self.behind:
            return  # to be read from the outbox
        if self.queue.qsize() >= self.bus.backlog:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)  # wakes a reader waiting on the queue, to be told
            self.behind = True
            return
        self.queue.put_nowait(event)

    def __aiter__(self) -> Subscriber:
        return self

    async def __anext__(self) -> DecisionEvent:
        event = await self.queue.get()
        if event is None:
            self.behind = False
            raise FellBehind()
        return event

    def close(self) -> None:
        self.bus._leave(self)
