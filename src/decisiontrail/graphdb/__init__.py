"""Neo4j: the driver's lifecycle, the embedded server, migrations, the unit of work and the data mappers.

The only package that opens a session. Its mappers (``plans``, ``decisions``, ``reviews``,
``corrections``, ``contexts``, ``retention``) are functions of a transaction that run named Cypher
and return domain records; they judge nothing and publish nothing.
"""

from __future__ import annotations

from decisiontrail.graphdb.connection import Graph, open_graph

__all__ = ["Graph", "open_graph"]
