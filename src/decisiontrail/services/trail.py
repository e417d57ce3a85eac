"""What every use-case works with: the database, where it opens its one transaction, and the bus its events go to."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from decisiontrail.domain import Plan
from decisiontrail.events import DecisionEvent, EventBus
from decisiontrail.graphdb.connection import Graph, open_graph
from decisiontrail.graphdb.database import Database
from decisiontrail.graphdb.embedded import Progress
from decisiontrail.settings import Neo4jSettings

log = logging.getLogger(__name__)


Reconciler = Callable[["Trail", Plan], None]
"""Records, through the record_decision tool, one invariant_enforced per invariant the plan enforces and no current decision does yet."""


@dataclass(frozen=True)
class Trail:
    """The decision trail as the services see it. Entry points build one per process and pass it in.

    A use-case runs its work in one transaction of ``database`` and, only after the commit, hands
    its events to ``events`` (when the process publishes any).
    """

    database: Database
    events: EventBus | None = field(default=None)
    reconciler: Reconciler | None = field(default=None)
    """What runs at a plan's Strategize entry (its instantiation, a revert from Execute): the
    Invariant Reconciliation Actor, wired in by the entry point that has one (ADR-033)."""

    @classmethod
    def on(cls, graph: Graph, events: EventBus | None = None, reconciler: Reconciler | None = None) -> Trail:
        return cls(Database(graph), events, reconciler)

    @property
    def graph(self) -> Graph:
        return self.database.graph

    def publish(self, events: Iterable[DecisionEvent]) -> None:
        if self.events is None:
            return
        for event in events:
            self.events.publish(event)


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
