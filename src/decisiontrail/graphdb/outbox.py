"""The event outbox: rows written in the transaction of the change they announce, numbered in commit order.

What an event means is the services' (``services.relay``); here it is a row of ``kind``, ``plan_id``,
``decision_id``, ``review_id``, and, read back, its ``seq`` and ``at``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.graphdb.database import Transaction


@dataclass(frozen=True)
class OutboxPage:
    """Rows after a cursor, and the sequence's state: ``last`` number given, numbers up to ``pruned_through`` deleted."""

    rows: list[dict[str, Any]]
    last: int
    pruned_through: int


def append(tx: Transaction, rows: Sequence[Mapping[str, Any]], at: datetime) -> None:
    """Add ``rows`` as the transaction's last statement (the counter's lock is held until its commit)."""
    if rows:
        tx.run(query("event/append_events"), events=list(rows), at=at).consume()


def read_after(tx: Transaction, after: int, limit: int, plan_id: str | None = None) -> OutboxPage:
    """Up to ``limit`` rows numbered after ``after`` (of one plan, or all), in order; ``at`` as ISO 8601 text."""
    if plan_id is None:
        record = tx.run(query("event/read_events"), after=after, limit=limit).single(strict=True)
    else:
        record = tx.run(query("event/read_plan_events"), after=after, limit=limit, plan_id=plan_id).single(strict=True)
    return OutboxPage([dict(row) for row in record["events"]], record["last"], record["pruned_through"])


def prune(tx: Transaction, before: datetime, limit: int) -> int | None:
    """Delete up to ``limit`` of the oldest rows from before ``before``; the last number deleted, if any."""
    record = tx.run(query("event/prune_events"), before=before, limit=limit).single()
    return None if record is None else int(record["through"])
