"""The trends' reads (``cypher/trends``): counts grouped in Cypher, over the plans a caller sees, returned as plain values."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.graphdb.database import Transaction
from decisiontrail.graphdb.records import native_datetime


def _scope(owner: str | None, project: str | None, since: datetime | None, until: datetime | None) -> dict[str, Any]:
    return {"owner": owner, "project": project, "since": since, "until": until}


def decisions_per_day(
    tx: Transaction, owner: str | None, project: str | None, since: datetime | None, until: datetime | None
) -> list[tuple[str, int, int]]:
    """(day as ISO date, decisions, corrections) for each UTC day that has a decision, oldest first."""
    rows = tx.run(query("trends/decisions_per_day"), _scope(owner, project, since, until))
    return [(row["day"], row["decisions"], row["corrections"]) for row in rows]


def correction_rates(
    tx: Transaction, owner: str | None, project: str | None, since: datetime | None, until: datetime | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The counts by decision type ({decision_type, decisions, corrected}) and by actor ({actor, ...})."""
    row = tx.run(query("trends/correction_rates"), _scope(owner, project, since, until)).single(strict=True)
    return list(row["by_type"]), list(row["by_actor"])


def confidence_outcomes(
    tx: Transaction, owner: str | None, project: str | None, since: datetime | None, until: datetime | None
) -> dict[int, tuple[int, int]]:
    """Bucket (0-9) -> (corrected, kept), for the buckets that hold any scored decision."""
    rows = tx.run(query("trends/confidence_outcomes"), _scope(owner, project, since, until))
    return {row["bucket"]: (row["corrected"], row["kept"]) for row in rows}


def review_waits(
    tx: Transaction,
    owner: str | None,
    project: str | None,
    since: datetime | None,
    until: datetime | None,
    bounds: list[float],
) -> dict[str, Any]:
    """resolved, pending, median, p90, longest, oldest_pending (seconds or None) and buckets ([{resolved, pending}])."""
    row = tx.run(query("trends/review_waiting_times"), _scope(owner, project, since, until), bounds=bounds).single(strict=True)
    return dict(row)


def top_invalidating(
    tx: Transaction,
    owner: str | None,
    project: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
) -> list[dict[str, Any]]:
    """The corrected decisions whose corrections invalidated most, most first (see the statement)."""
    rows = tx.run(query("trends/top_invalidating"), _scope(owner, project, since, until), limit=limit)
    return [{**row.data(), "last_at": native_datetime(row["last_at"])} for row in rows]


def visible_projects(tx: Transaction, owner: str | None, project: str | None) -> list[str]:
    """Every project of a plan of ``owner`` (None: anyone's) in ``project`` (None: any), in name order."""
    return [row["project"] for row in tx.run(query("trends/visible_projects"), owner=owner, project=project)]
