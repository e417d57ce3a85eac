"""GraphQL Review: a decision held for a person, and the review connection."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.types import Info

from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.recording import ReviewStatus

from decisiontrail.domain.recording import Review as DomainReview
from decisiontrail.schema.context import Context
from decisiontrail.schema.errors import call
from decisiontrail.services import reading

from decisiontrail.schema.common import ContextSnapshot, snapshot_of
from decisiontrail.schema.decision import Decision, load_decision
from decisiontrail.schema.pages import PageInfo, counted


@strawberry.type
class Review:
    """A decision held for a person because its confidence was below the plan's threshold."""

    model: strawberry.Private[DomainReview]
    as_of: strawberry.Private[datetime | None] = None
    """The moment it is read as of (None: now): its model is as it stood then, and so is every
    record read through it."""

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.model.review_id)

    @strawberry.field
    def plan_id(self) -> strawberry.ID:
        return strawberry.ID(self.model.plan_id)

    @strawberry.field
    def status(self) -> ReviewStatus:
        return ReviewStatus(self.model.status.value)

    @strawberry.field
    def decision_type(self) -> DecisionType:
        return DecisionType(self.model.proposal.decision_type.value)

    @strawberry.field
    def question(self) -> str:
        return self.model.proposal.question

    @strawberry.field
    def chosen_option(self) -> str:
        return self.model.proposal.chosen_option

    @strawberry.field
    def alternatives_considered(self) -> list[str]:
        return list(self.model.proposal.alternatives_considered)

    @strawberry.field
    def confidence_score(self) -> float | None:
        return self.model.proposal.confidence_score

    @strawberry.field
    def reason(self) -> str:
        return self.model.reason

    @strawberry.field
    async def decision(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, self.model.decision_id, self.as_of)

    @strawberry.field
    def created_at(self) -> datetime:
        return self.model.created_at

    @strawberry.field
    def resolved_at(self) -> datetime | None:
        """When a reviewer resolved it, or a correction cancelled it."""
        return self.model.resolved_at

    @strawberry.field
    def rationale(self) -> str:
        return self.model.proposal.rationale

    @strawberry.field
    def phase(self) -> Phase:
        """The phase the proposal was made in."""
        return Phase(self.model.phase.value)

    @strawberry.field
    def threshold(self) -> float:
        """The plan's confidence threshold for that phase, which the proposal fell below."""
        return self.model.threshold

    @strawberry.field
    async def parent(self, info: Info[Context, None]) -> Decision | None:
        """The decision the proposal would hang under once resolved."""
        return await load_decision(info, self.model.parent_decision_id, self.as_of)

    @strawberry.field
    def context_snapshot(self) -> ContextSnapshot:
        return snapshot_of(self.model.proposal.context_snapshot)

    @strawberry.field
    def resolved_by(self) -> str | None:
        """Who resolved it: the caller's principal (its token's name), never a name the client
        gives; null while pending or when cancelled."""
        return self.model.resolved_by

    @strawberry.field
    async def cancelled_by(self, info: Info[Context, None]) -> Decision | None:
        """The correction decision that made this review moot (status CANCELLED)."""
        return await load_decision(info, self.model.cancelled_by, self.as_of)

    @strawberry.field
    def digest(self) -> str:
        """`sha256:<hex>` of the action approving it records (see `Decision.actionDigest`): give it
        to `resolveReview` as `digest` to approve exactly what you read."""
        return self.model.digest

    @strawberry.field
    def approved_digest(self) -> str | None:
        """The `actionDigest` of the decision it resolved as: what the person authorised; null until resolved."""
        return self.model.approved_digest

    @strawberry.field
    async def lapsed_by(self, info: Info[Context, None]) -> Decision | None:
        """The correction that superseded a decision this approval rested on (status LAPSED)."""
        return await load_decision(info, self.model.lapsed_by, self.as_of)

    @strawberry.field
    def lapsed_at(self) -> datetime | None:
        return self.model.lapsed_at

    @strawberry.field
    def lapsed_from(self) -> ReviewStatus | None:
        """How it had been resolved before it lapsed."""
        return ReviewStatus(self.model.lapsed_from.value) if self.model.lapsed_from is not None else None

    @strawberry.field
    async def reopens(self, info: Info[Context, None]) -> Review | None:
        """The lapsed review whose question this one asks again (after the correction), if any."""
        return await _review(info, self.model.reopens, self.as_of)

    @strawberry.field
    async def reopened_by(self, info: Info[Context, None]) -> Review | None:
        """The review that asks this lapsed one's question again, once the plan reached it."""
        return await _review(info, self.model.reopened_by, self.as_of)


async def _review(info: Info[Context, None], review_id: str | None, as_of: datetime | None) -> Review | None:
    """The review, if it exists (existed ``as_of``) and lies in a plan the caller may see, as it stood then."""
    if review_id is None:
        return None
    found = await call(reading.get_reviews, info.context.trail, [review_id], info.context.caller, as_of=as_of)
    return Review(model=found[0], as_of=as_of) if found else None


@strawberry.type
class ReviewEdge:
    cursor: str
    node: Review


@strawberry.type
class ReviewConnection:
    edges: list[ReviewEdge]
    page_info: PageInfo
    total: strawberry.Private[int | None]
    """None when the selection does not ask for ``totalCount``: then nothing was counted."""

    @strawberry.field
    def total_count(self) -> int:
        return counted(self.total)

    @strawberry.field
    def nodes(self) -> list[Review]:
        return [e.node for e in self.edges]
