"""Captured contexts in Neo4j: the full context a decision was made in, stored under its hash."""

from __future__ import annotations

from decisiontrail.cypher import query
from decisiontrail.graphdb.database import Transaction


def find(tx: Transaction, context_hashes: list[str]) -> list[str | None]:
    """For each hash, in the order given, the full context stored under it, or None when the service holds none."""
    result = tx.run(query("context/get_contexts"), context_hashes=context_hashes)
    return [None if r["content"] is None else str(r["content"]) for r in result]
