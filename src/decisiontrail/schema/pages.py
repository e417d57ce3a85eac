"""Paging: opaque cursors, a page's info, the decision filter, and whether a selection asks for a total."""

from __future__ import annotations

import base64
from datetime import datetime

import strawberry
from strawberry.types import Info

from decisiontrail.domain.decision import DecisionType, Phase

from decisiontrail.domain.pages import DecisionPage, SearchHit, page_size
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.schema.context import Context
from decisiontrail.schema.errors import client_error
from decisiontrail.schema.selection import asks_for

from decisiontrail.schema.common import DecisionStatus


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.input
class DecisionFilter:
    types: list[DecisionType] | None = None
    phases: list[Phase] | None = None
    status: DecisionStatus | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    text: str | None = strawberry.field(default=None, description="in the question or the chosen option, any case")


def opaque_cursor(kind: str, value: object) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode()


def plan_cursor(plan_id: str) -> str:
    return opaque_cursor("plan", plan_id)


def review_cursor(review_id: str) -> str:
    return opaque_cursor("review", review_id)


def search_cursor(hit: SearchHit) -> str:
    """Where a search's next page begins: the hit's rank (by id or not, score) and id."""
    return opaque_cursor("found", f"{int(hit.exact)}|{hit.score!r}|{hit.decision_id}")


def parse_search_cursor(cursor: str | None) -> SearchHit | None:
    """The hit a search's cursor names; VALIDATION_FAILED for any other string."""
    value = parse_cursor("found", cursor)
    if value is None:
        return None
    try:
        exact, score, decision_id = value.split("|")
        return SearchHit(decision_id, exact == "1", float(score))
    except ValueError:
        raise client_error(ValidationFailed(f"after: {cursor!r} is not a cursor of this list", field="after")) from None


def parse_cursor(kind: str, cursor: str | None) -> str | None:
    """The value an opaque cursor of ``kind`` carries; VALIDATION_FAILED for a foreign one."""
    if cursor is None:
        return None
    try:
        found, value = base64.urlsafe_b64decode(cursor.encode()).decode().split(":", 1)
    except (ValueError, UnicodeDecodeError):
        found, value = "", ""
    if found != kind or not value:
        raise client_error(ValidationFailed(f"after: {cursor!r} is not a cursor of this list", field="after"))
    return value


def asks_for_total(info: Info[Context, None]) -> bool:
    """Whether the connection's selection asks for ``totalCount``: a page is counted only then (a
    count reads everything that matches; the page only itself)."""
    return any(asks_for(f.selections, "totalCount") for f in info.selected_fields)


def counted(total: int | None) -> int:
    """A connection's total, which was counted because its selection asked for it."""
    if total is None:
        raise RuntimeError("totalCount was read but not counted: asks_for_total judged the selection wrong")
    return total


def decision_page(first: int | None, after: str | None, filter: DecisionFilter | None) -> DecisionPage:
    try:
        size = page_size(first)
    except ValidationFailed as e:
        raise client_error(e) from e
    cursor = parse_cursor("decision", after)
    f = filter or DecisionFilter()
    return DecisionPage(
        first=size + 1,  # one more than asked: whether there is a next page
        after=int(cursor) if cursor is not None and cursor.isdigit() else None,
        types=tuple(f.types) if f.types else None,
        phases=tuple(f.phases) if f.phases else None,
        current=None if f.status is None else f.status is DecisionStatus.CURRENT,
        min_confidence=f.min_confidence,
        max_confidence=f.max_confidence,
        created_from=f.created_from,
        created_to=f.created_to,
        text=f.text,
    )
