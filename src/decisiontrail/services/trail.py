"""What every use-case works with: the database, where it opens its one transaction, and the bus its events go to."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from decisiontrail.events import DecisionEvent, EventBus
from decisiontrail.graphdb.connection import Graph, open_graph
from decisiontrail.graphdb.database import Database
from decisiontrail.graphdb.embedded import Progress
from decisiontrail.settings import Neo4jSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trail:
    """The decision trail as the services see it. Entry points build one per process and pass it in.

    A use-case runs its work in one transaction of ``database`` and, only after the commit, hands
    its events to ``events`` (when the process publishes any).
    """

    database: Database
    events: EventBus | None = field(default=None)

    @classmethod
    def on(cls, graph: Graph, events: EventBus | None = None) -> Trail:
        return cls(Database(graph), events)

    @property
    def graph(self) -> Graph:
        return self.database.graph

    def publish(self, events: Iterable[DecisionEvent]) -> None:
        if self.events is None:
            return
        for event in events:
            self.events.publish(event)


@contextmanager
def open_trail(settings: Neo4jSettings, *, events: EventBus | None = None, progress: Progress = log.info) -> Iterator[Trail]:
    """Connect to Neo4j (starting the embedded server when no URI is set), migrate its schema, and
    yield the trail over it; everything opened is closed on exit."""
    with open_graph(settings, progress=progress) as graph:
        yield Trail.on(graph, events)
