"""Whole-database operations for operators and the test suite: counts, server facts, wiping."""

from __future__ import annotations

from dataclasses import dataclass

from decisiontrail.cypher import query
from decisiontrail.graphdb.connection import Graph


@dataclass(frozen=True)
class GraphCounts:
    nodes: int
    relationships: int


def count_graph(graph: Graph) -> GraphCounts:
    """How many data nodes and relationships the database holds (the migration ledger excluded)."""
    records, _, _ = graph.driver.execute_query(query("admin/count_graph"), database_=graph.database, routing_="r")
    return GraphCounts(nodes=records[0]["nodes"], relationships=records[0]["relationships"])


def server_version(graph: Graph) -> str:
    """The Neo4j kernel's version and edition, e.g. ``5.26.30 community``."""
    records, _, _ = graph.driver.execute_query(query("admin/server_components"), database_=graph.database, routing_="r")
    kernel = next(r for r in records if r["name"] == "Neo4j Kernel")
    return f"{kernel['version']} {kernel['edition']}"


def delete_all_data(graph: Graph) -> None:
    """Delete every plan and decision. Irreversible: for tests and explicit resets only.

    Deletes in batches, each its own transaction, so it also empties a database too big to
    delete in one: first the relationships, then the nodes, so a node with very many
    relationships is not deleted with all of them at once. Interrupted, it leaves part of the
    data, which a second call removes.
    """
    with graph.driver.session(database=graph.database) as session:
        session.run(query("admin/delete_all_relationships")).consume()
        session.run(query("admin/delete_all_data")).consume()


def schema_names(graph: Graph) -> tuple[set[str], set[str]]:
    """The names of the database's constraints and of its indexes."""
    names = []
    for name in ("admin/list_constraints", "admin/list_indexes"):
        records, _, _ = graph.driver.execute_query(query(name), database_=graph.database, routing_="r")
        names.append({record["name"] for record in records})
    return names[0], names[1]
