"""Whole-database operations for operators and the test suite: counts, server facts, wiping."""

from __future__ import annotations

from dataclasses import dataclass

from decisiontrail.cypher import query
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.database import Database, Transaction

WIPE_BATCH = 1000
"""Relationships, then nodes, a wipe deletes a transaction (admin/delete_all_*)."""


@dataclass(frozen=True)
class GraphCounts:
    nodes: int
    relationships: int


def ping(tx: Transaction) -> None:
    """A transaction on the database, and nothing else: raises when the database takes none."""
    tx.run(query("admin/ping")).consume()


def count_graph(graph: Graph) -> GraphCounts:
    """How many data nodes and relationships the database holds (the migration ledger excluded)."""
    records, _, _ = graph.driver.execute_query(query("admin/count_graph"), database_=graph.database, routing_="r")
    return GraphCounts(nodes=records[0]["nodes"], relationships=records[0]["relationships"])


def server_version(graph: Graph) -> str:
    """The Neo4j kernel's version and edition, e.g. ``5.26.30 community``."""
    records, _, _ = graph.driver.execute_query(query("admin/server_components"), database_=graph.database, routing_="r")
    kernel = next(r for r in records if r["name"] == "Neo4j Kernel")
    return f"{kernel['version']} {kernel['edition']}"


def delete_all_data(graph: Graph, *, batch: int = WIPE_BATCH) -> None:
    """Delete every plan and decision. Irreversible: for tests and explicit resets only.

    Deletes in batches, each a write transaction of its own, so it also empties a database too
    big to delete in one: first the relationships, then the nodes, so a node with very many
    relationships is not deleted with all of them at once. A batch that meets a concurrent writer
    (a served relay numbering events, a deadlock) is retried like any write (``Database.write``),
    not failed. Interrupted, it leaves part of the data, which a second call removes.
    """
    database = Database(graph)
    for name in ("admin/delete_all_relationships", "admin/delete_all_data"):
        while database.write(_delete_batch, name, batch) == batch:
            pass


def _delete_batch(tx: Transaction, name: str, batch: int) -> int:
    return int(tx.run(query(name), batch=batch).single(strict=True)["deleted"])


def schema_names(graph: Graph) -> tuple[set[str], set[str]]:
    """The names of the database's constraints and of its indexes."""
    names = []
    for name in ("admin/list_constraints", "admin/list_indexes"):
        records, _, _ = graph.driver.execute_query(query(name), database_=graph.database, routing_="r")
        names.append({record["name"] for record in records})
    return names[0], names[1]
