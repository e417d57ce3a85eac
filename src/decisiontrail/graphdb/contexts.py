"""Captured contexts in Neo4j: the full context a decision was made in, stored under its hash."""

from __future__ import annotations

from decisiontrail.cypher import query
from decisiontrail.graphdb.database import Transaction


def find(tx: Transaction, context_hash: str) -> str | None:
    """The full context stored under ``context_hash``, or None when the service holds none."""
    record = tx.run(query("context/get_context"), context_hash=context_hash).single()
    return None if record is None else str(record["content"])
