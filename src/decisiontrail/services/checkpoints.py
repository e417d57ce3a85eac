"""Where the actors' LangGraph checkpoints are kept: in the trail's own Neo4j (docs/checkpoints.md)."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from decisiontrail.graphdb.checkpoints import Neo4jCheckpointSaver
from decisiontrail.services.trail import Trail


def checkpointer(trail: Trail) -> BaseCheckpointSaver[Any]:
    """The checkpointer every actor of this process uses: beside the decisions, in every dump and
    restore, seen by every replica, removed by retention with its plan."""
    return Neo4jCheckpointSaver(trail.graph)
