"""Reviews in Neo4j: functions of a transaction, each running one named statement and returning domain records."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from decisiontrail.cypher import query
from decisiontrail.domain.pages import ReviewPage
from decisiontrail.domain.recording import CapturedContext, Review, ReviewStatus
from decisiontrail.graphdb.database import Rows, Transaction
from decisiontrail.graphdb.decisions import context_param
from decisiontrail.graphdb.records import review_from_record, review_properties


def get_many(tx: Transaction, review_ids: list[str]) -> list[Review | None]:
    """One result per id, in the order given; None where no such review exists."""
    found = {r.review_id: r for r in map(review_from_record, tx.run(query("review/get_reviews"), review_ids=review_ids))}
    return [found.get(review_id) for review_id in review_ids]


def page(tx: Transaction, page: ReviewPage) -> tuple[int | None, list[Review]]:
    """(how many reviews match, None unless ``page.count``; one page of them after ``page.after``),
    in one statement."""
    record = tx.run(query("review/page_reviews"), **page.params()).single(strict=True)
    return record["total"], [review_from_record(r) for r in record["reviews"]]


def in_plan(tx: Transaction, plan_id: str, status: ReviewStatus | None = None) -> list[Review]:
    """The plan's reviews, oldest first, optionally only those with ``status``."""
    records = list(tx.run(query("review/list_plan_reviews"), plan_id=plan_id, status=status.value if status else None))
    return [review_from_record(r) for r in records]


def lock(tx: Transaction, review_id: str) -> Review | None:
    """The review, locked so that of two concurrent resolutions one wins; None for an unknown id."""
    record = tx.run(query("review/lock_review"), review_id=review_id).single()
    return None if record is None else review_from_record(record)


def create_all(tx: Transaction, held: Sequence[tuple[Review, CapturedContext | None]]) -> None:
    """Write held proposals' reviews, each with the context captured for it, in one statement."""
    if not held:
        return
    rows = Rows(
        {"plan_id": review.plan_id, "props": review_properties(review), "context": context_param(context)}
        for review, context in held
    )
    tx.run(query("review/create_reviews"), reviews=rows).consume()


def mark_resolved(
    tx: Transaction,
    review_id: str,
    status: ReviewStatus,
    at: datetime,
    option: str | None,
    resolved_by: str,
    approved_digest: str,
) -> None:
    tx.run(
        query("review/mark_resolved"),
        review_id=review_id,
        status=status.value,
        resolved_at=at,
        resolved_option=option,
        resolved_by=resolved_by,
        approved_digest=approved_digest,
    ).consume()
