"""Neo4j: the driver's lifecycle, the embedded server, migrations and repositories.

The only package that opens a session.
"""

from __future__ import annotations

from decisiontrail.graphdb.connection import Graph, open_graph
from decisiontrail.graphdb.repository import DecisionStore

__all__ = ["DecisionStore", "Graph", "open_graph"]
