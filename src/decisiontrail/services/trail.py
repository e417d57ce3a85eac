"""What every use-case works with: the database, where it opens its one transaction, and the bus its events go to."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from decisiontrail.events import DecisionEvent, EventBus
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.database import Database


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
