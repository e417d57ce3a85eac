"""The event outbox: rows written in the transaction of the change they announce, numbered in commit order.

What an event means is the services' (``services.relay``); here it is a row of ``kind``, ``plan_id``,
``decision_id``, ``review_id``, and, read back, its ``seq`` and ``at``.

Stored packed: consecutive events of one write with the same kind and plan (a batch's recordings,
a correction's supersessions) are one ``:Event`` node numbered ``seq`` to ``last_seq``, holding
their ids in order. A node per event made announcing a batch of 1,000 recordings cost a fifth of
writing the decisions, and a correction of 10,000 as much as its walk. Read back, every event is
a row of its own.
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


@dataclass(frozen=True)
class Announcement:
    """The events a write announces, as the ``$announce`` parameter of the statement that carries
    them: ``event/append_events`` on its own (``append``), or its subquery at the end of a write's
    last statement (``decisions.create_all``, ``corrections.supersede_downstream``), which saves
    the round trip of a statement of their own. ``at`` is the time each of them records."""

    count: int
    runs: list[dict[str, Any]]
    at: datetime

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]], at: datetime) -> Announcement | None:
        """``rows`` (``kind``, ``plan_id``, ``decision_id``, ``review_id``) announced at ``at``; None if there are none."""
        return cls(len(rows), packed(rows), at) if rows else None

    @classmethod
    def of_runs(cls, runs: Sequence[Run], at: datetime) -> Announcement | None:
        """Events given as runs already (a correction's supersessions, plan by plan), without a row each.

        >>> runs = [Run("superseded", "P", decision_ids=["a", "b"]), Run("review_cancelled", "P", review_ids=["r"])]
        >>> a = Announcement.of_runs(runs, datetime(2026, 12, 1))
        >>> a.count, [(r["offset"], r["size"], r["decision_ids"], r["review_ids"]) for r in a.runs]
        (3, [(0, 2, ['a', 'b'], None), (2, 1, None, ['r'])])
        """
        stored, offset = [], 0
        for run in runs:
            size = len(run.decision_ids) if run.decision_ids is not None else len(run.review_ids or ())
            if size:
                stored.append(
                    {
                        "offset": offset,
                        "size": size,
                        "kind": run.kind,
                        "plan_id": run.plan_id,
                        "decision_ids": run.decision_ids,
                        "review_ids": run.review_ids,
                    }
                )
                offset += size
        return cls(offset, stored, at) if offset else None


@dataclass(frozen=True)
class Run:
    """Consecutive events of one kind in one plan: their decision ids, their review ids, or both
    (the same number of each), in order."""

    kind: str
    plan_id: str
    decision_ids: Sequence[str] | None = None
    review_ids: Sequence[str] | None = None


def announce_param(announcement: Announcement | None) -> dict[str, Any] | None:
    """The ``$announce`` parameter of a statement that carries ``announcement`` (null: it announces nothing)."""
    if announcement is None:
        return None
    return {"count": announcement.count, "runs": announcement.runs, "at": announcement.at}


def append(tx: Transaction, announcement: Announcement | None) -> None:
    """Write ``announcement`` in a statement of its own, the transaction's last (the counter's lock
    is held until its commit)."""
    if announcement is not None:
        tx.run(query("event/append_events"), announce=announce_param(announcement)).consume()


def packed(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` as runs of consecutive events with the same kind, plan and ids given: each run's
    ``offset`` (its first event's place in ``rows``), ``size``, and ids in order (a list, or None
    where the run's events have none: a Neo4j list holds no nulls).

    >>> rows = [{"kind": "recorded", "plan_id": "P", "decision_id": d, "review_id": None} for d in "ab"]
    >>> rows.append({"kind": "review_pending", "plan_id": "P", "decision_id": None, "review_id": "r"})
    >>> [(r["offset"], r["size"], r["decision_ids"], r["review_ids"]) for r in packed(rows)]
    [(0, 2, ['a', 'b'], None), (2, 1, None, ['r'])]
    """
    runs: list[dict[str, Any]] = []
    shape: tuple[Any, ...] | None = None
    for offset, row in enumerate(rows):
        decision_id, review_id = row["decision_id"], row["review_id"]
        row_shape = (row["kind"], row["plan_id"], decision_id is None, review_id is None)
        if row_shape != shape:
            shape = row_shape
            run: dict[str, Any] = {
                "offset": offset,
                "size": 0,
                "kind": row["kind"],
                "plan_id": row["plan_id"],
                "decision_ids": None if decision_id is None else [],
                "review_ids": None if review_id is None else [],
            }
            runs.append(run)
        run["size"] += 1
        if decision_id is not None:
            run["decision_ids"].append(decision_id)
        if review_id is not None:
            run["review_ids"].append(review_id)
    return runs


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
