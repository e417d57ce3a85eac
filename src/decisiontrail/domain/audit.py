"""The audit trail's records: who wrote what, when and in which request, and a page of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class AuditEntry:
    """One successful write, as its transaction recorded it."""

    entry_id: str
    at: datetime
    principal: str  # the caller's name (a token's, ``cli:<login>``, ``process:<name>``)
    role: str
    principal_project: str | None  # the project the caller was limited to
    operation: str  # the use-case, as the API names it (recordDecision, correctDecision, ...)
    request_id: str | None  # the HTTP request's (X-Request-ID) or the WebSocket operation's; None in process
    plan_ids: tuple[str, ...]  # the plans it wrote in: those named and those of the decisions named
    decision_ids: tuple[str, ...]  # the decisions it wrote or touched (named, and made)
    review_ids: tuple[str, ...]
    other_ids: tuple[str, ...]  # anything else it wrote: a correction attempt, a run, an invariant set's key


@dataclass(frozen=True)
class AuditPage:
    """Which entries to read: newest first, ``first`` of them after ``after`` (an entry's time and id)."""

    first: int
    after: tuple[datetime, str] | None = None
    plan_id: str | None = None
    principal: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    request_id: str | None = None
