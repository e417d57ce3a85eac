"""Decision events (recorded, superseded, review pending or resolved), fanned out to subscribers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from decisiontrail.domain.decision import utc_now


class EventKind(StrEnum):
    RECORDED = "recorded"
    SUPERSEDED = "superseded"
    REVIEW_PENDING = "review_pending"
    REVIEW_RESOLVED = "review_resolved"
    REVIEW_CANCELLED = "review_cancelled"


@dataclass(frozen=True)
class DecisionEvent:
    kind: EventKind
    plan_id: str
    decision_id: str | None = None
    review_id: str | None = None
    at: datetime | None = None


class EventBus:
    """Publishes from any thread (the store writes in worker threads) to asyncio subscribers.

    A subscriber that falls behind by more than ``backlog`` events loses the oldest, so a slow
    client never holds up writers.
    """

    def __init__(self, backlog: int = 1000) -> None:
        self.backlog = backlog
        self._lock = threading.Lock()
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[DecisionEvent], str | None]] = set()

    def publish(self, event: DecisionEvent) -> None:
        if event.at is None:
            event = DecisionEvent(event.kind, event.plan_id, event.decision_id, event.review_id, utc_now())
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue, plan_id in subscribers:
            if plan_id is None or plan_id == event.plan_id:
                loop.call_soon_threadsafe(self._offer, queue, event)

    def _offer(self, queue: asyncio.Queue[DecisionEvent], event: DecisionEvent) -> None:
        if queue.full():
            queue.get_nowait()
        queue.put_nowait(event)

    async def subscribe(self, plan_id: str | None) -> AsyncIterator[DecisionEvent]:
        """Events of one plan (or all with None) from now on, until the subscriber leaves."""
        queue: asyncio.Queue[DecisionEvent] = asyncio.Queue(maxsize=self.backlog)
        entry = (asyncio.get_running_loop(), queue, plan_id)
        with self._lock:
            self._subscribers.add(entry)
        try:
            while True:
                yield await queue.get()
        finally:
            with self._lock:
                self._subscribers.discard(entry)
