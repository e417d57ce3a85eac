"""GraphQL types of the audit trail (``auditTrail``): one entry per write, a page of them, and its cursor."""

from __future__ import annotations

from datetime import datetime

import strawberry

from decisiontrail.domain.audit import AuditEntry as DomainAuditEntry
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.schema.errors import client_error
from decisiontrail.schema.pages import PageInfo, opaque_cursor, parse_cursor


@strawberry.type(description="One write, recorded in its own transaction: who, what, when, in which request.")
class AuditEntry:
    id: strawberry.ID
    at: datetime = strawberry.field(description="When it was written (UTC).")
    principal: str = strawberry.field(description="Who: the token's name, cli:<login> or process:<name>.")
    role: str = strawberry.field(description="The caller's role then: actor, reviewer, analyst or admin.")
    principal_project: str | None = strawberry.field(description="The project the caller was limited to, if any.")
    operation: str = strawberry.field(
        description="What: the use-case, as <service>.<function> (recording.record_decisions, correction.correct, ...)."
    )
    request_id: str | None = strawberry.field(
        description="The request: its X-Request-ID (given, or the one the service answered with), ws:<connection>:<operation> over WebSocket; null in process."
    )
    plan_ids: list[strawberry.ID] = strawberry.field(description="The plans it wrote in.")
    decision_ids: list[strawberry.ID] = strawberry.field(description="The decisions it named or made.")
    review_ids: list[strawberry.ID] = strawberry.field(description="The reviews it resolved, cancelled or lapsed.")
    other_ids: list[str] = strawberry.field(
        description="Anything else it wrote: a correction attempt, a run, an invariant set's key, a trace."
    )

    @classmethod
    def of(cls, entry: DomainAuditEntry) -> AuditEntry:
        return cls(
            id=strawberry.ID(entry.entry_id),
            at=entry.at,
            principal=entry.principal,
            role=entry.role,
            principal_project=entry.principal_project,
            operation=entry.operation,
            request_id=entry.request_id,
            plan_ids=[strawberry.ID(i) for i in entry.plan_ids],
            decision_ids=[strawberry.ID(i) for i in entry.decision_ids],
            review_ids=[strawberry.ID(i) for i in entry.review_ids],
            other_ids=list(entry.other_ids),
        )


@strawberry.type
class AuditEdge:
    cursor: str
    node: AuditEntry


@strawberry.type(description="A page of the audit trail, newest first.")
class AuditPage:
    edges: list[AuditEdge]
    page_info: PageInfo

    @strawberry.field
    def nodes(self) -> list[AuditEntry]:
        return [e.node for e in self.edges]


def audit_cursor(entry: DomainAuditEntry) -> str:
    """Where the next page begins: the entry's time and id."""
    return opaque_cursor("audit", f"{entry.at.isoformat()}|{entry.entry_id}")


def parse_audit_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    """The time and id an audit cursor names; VALIDATION_FAILED for any other string."""
    value = parse_cursor("audit", cursor)
    if value is None:
        return None
    try:
        at, entry_id = value.split("|")
        return datetime.fromisoformat(at), entry_id
    except ValueError:
        raise client_error(ValidationFailed(f"after: {cursor!r} is not a cursor of this list", field="after")) from None
