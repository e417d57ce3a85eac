"""Human review of decisions held back by the automation profile (ADR-033, Automation Profile Interaction)."""

from __future__ import annotations

from decisiontrail.domain import Decision
from decisiontrail.domain.recording import Review, ReviewAction, ReviewStatus
from decisiontrail.graphdb import DecisionStore


def pending_reviews(store: DecisionStore, plan_id: str) -> list[Review]:
    """The plan's decisions waiting for a person, oldest first."""
    return store.list_reviews(plan_id, ReviewStatus.PENDING)


def resolve_review(
    store: DecisionStore, review_id: str, action: ReviewAction, option: str | None = None, *, resolved_by: str | None = None
) -> tuple[Review, Decision]:
    """Approve the actor's choice, select one of its alternatives, or give custom guidance.

    The decision is persisted with that outcome; an override moves the actor's original
    choice into alternatives_considered. ``resolved_by`` (the caller) is kept on the review.
    """
    return store.resolve_review(review_id, action, option, resolved_by=resolved_by)
