"""The audit trail in Neo4j: an entry written in its write's transaction, and a page of entries read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain.audit import AuditEntry, AuditPage
from decisiontrail.graphdb.database import Transaction
from decisiontrail.graphdb.records import native_datetime


def append(tx: Transaction, entry: AuditEntry) -> None:
    """Write ``entry``, linked to its plans and to those of its decisions (``audit/create_entry``)."""
    tx.run(
        query("audit/create_entry"),
        entry_id=entry.entry_id,
        at=entry.at,
        principal=entry.principal,
        role=entry.role,
        principal_project=entry.principal_project,
        operation=entry.operation,
        request_id=entry.request_id,
        plan_ids=list(entry.plan_ids),
        decision_ids=list(entry.decision_ids),
        review_ids=list(entry.review_ids),
        other_ids=list(entry.other_ids),
    ).consume()


END_OF_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def page(tx: Transaction, wanted: AuditPage, project: str | None) -> list[AuditEntry]:
    """The entries ``wanted`` names, newest first; with ``project``, only those whose every plan is in it.
    Found by the request's index, the plan's links or the index on time, as ``wanted`` narrows it."""
    after_at, after_id = wanted.after if wanted.after is not None else (None, None)
    latest = min(t for t in (wanted.until, after_at, END_OF_TIME) if t is not None)
    if wanted.request_id is not None:
        statement = query("audit/page_entries_of_request")
    elif wanted.plan_id is not None:
        statement = query("audit/page_entries_of_plan")
    else:
        statement = query("audit/page_entries")
    rows = tx.run(
        statement,
        latest=latest,
        first=wanted.first,
        after_at=after_at,
        after_id=after_id,
        plan_id=wanted.plan_id,
        principal=wanted.principal,
        since=wanted.since,
        until=wanted.until,
        request_id=wanted.request_id,
        project=project,
    )
    return [_entry(row["entry"]) for row in rows]


def _entry(stored: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(
        entry_id=stored["entry_id"],
        at=native_datetime(stored["at"]),
        principal=stored["principal"],
        role=stored["role"],
        principal_project=stored.get("principal_project"),
        operation=stored["operation"],
        request_id=stored.get("request_id"),
        plan_ids=tuple(stored.get("plan_ids") or ()),
        decision_ids=tuple(stored.get("decision_ids") or ()),
        review_ids=tuple(stored.get("review_ids") or ()),
        other_ids=tuple(stored.get("other_ids") or ()),
    )
