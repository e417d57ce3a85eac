"""GraphQL types of correction: what one would invalidate (Impact), where a decision comes from (Lineage),
the attempts made and what a correction did (CorrectionPayload)."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime

import strawberry
from strawberry.types import Info

from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome
from decisiontrail.domain.decision import DecisionType

from decisiontrail.domain.correction import CorrectionAttempt as DomainCorrectionAttempt
from decisiontrail.domain.correction import CorrectionResult as DomainCorrectionResult
from decisiontrail.domain.correction import FrontierPoint as DomainFrontierPoint
from decisiontrail.domain.correction import Impact as DomainImpact
from decisiontrail.schema.context import Context
from decisiontrail.schema.execution import Identities
from decisiontrail.schema.errors import call
from decisiontrail.services import reading
from decisiontrail.services import correction as correction_service

from decisiontrail.schema.common import CheckpointRef, CountByType, checkpoint_of
from decisiontrail.schema.decision import Decision, counts_seen, decisions_as_of, load_decisions, visible_decisions
from decisiontrail.schema.plan import Plan, load_plans, plans_now, visible_plans
from decisiontrail.schema.review import Review


@strawberry.type(description="One edge of the walk from the corrected decision: the record it reaches and how.")
class PathStep:
    relationship: str = strawberry.field(
        description="PARENT, DEPENDS_ON, SPAWNED_BY or IN_PLAN: how the record reached hangs on the one before it"
    )
    node_id: strawberry.ID = strawberry.field(description="the decision or plan reached")


@strawberry.type(description="Why a decision is downstream of the corrected one: a shortest chain of edges to it.")
class InvalidationPath:
    decision_id: strawberry.ID
    steps: list[PathStep]


async def _paths(
    info: Info[Context, None], origin_id: str, decision_ids: list[str], plan_ids: list[str]
) -> list[InvalidationPath]:
    """The invalidation path of each decision, in order; for a caller some plans are hidden from,
    only paths through records it may see."""
    found = await call(correction_service.explain, info.context.trail, origin_id, [*decision_ids, *plan_ids])
    paths = [(d, found[d]) for d in decision_ids if d in found]
    if info.context.limited:
        named = sorted({step.node_id for _, steps in paths for step in steps})
        decisions = {d.decision_id for d in await info.context.decisions.load_many(named) if d is not None}
        plans = {p.plan_id for p in await info.context.plans.load_many(named) if p is not None}
        paths = [(d, steps) for d, steps in paths if all(s.node_id in decisions | plans for s in steps)]
    return [
        InvalidationPath(
            decision_id=strawberry.ID(d),
            steps=[PathStep(relationship=s.relationship, node_id=strawberry.ID(s.node_id)) for s in steps],
        )
        for d, steps in paths
    ]


@strawberry.type
class Impact:
    """What correcting a decision would invalidate."""

    model: strawberry.Private[DomainImpact]
    as_of: strawberry.Private[datetime | None] = None
    """The moment an ``impact(asOf:)`` was asked about: its decisions read as they stood then."""

    @strawberry.field(graphql_type=list[Decision])  # type: ignore[untyped-decorator]
    def decisions(self, info: Info[Context, None]) -> Identities | Awaitable[list[Decision]]:
        return decisions_as_of(info, list(self.model.decision_ids), self.as_of)

    @strawberry.field(graphql_type=list[Plan])  # type: ignore[untyped-decorator]
    def plans(self, info: Info[Context, None]) -> Identities | Awaitable[list[Plan]]:
        return plans_now(info, list(self.model.plan_ids))

    @strawberry.field
    async def counts_by_type(self, info: Info[Context, None]) -> list[CountByType]:
        return await counts_seen(info, self.model.decision_ids, self.model.counts_by_type)

    @strawberry.field
    async def paths(self, info: Info[Context, None]) -> list[InvalidationPath]:
        """Why each decision would be invalidated: the chain of edges from the corrected one."""
        origin = self.model.decision_id
        downstream = [d for d in self.model.decision_ids if d != origin]
        return await _paths(info, origin, downstream, list(self.model.plan_ids))


@strawberry.type
class Lineage:
    """Where a decision comes from: ancestors (through parent plans) and what it depends on."""

    decision_ids: strawberry.Private[list[str]]
    plan_ids: strawberry.Private[list[str]]
    as_of: strawberry.Private[datetime | None] = None
    """The moment a ``lineage(asOf:)`` was asked about: its decisions read as they stood then."""

    @strawberry.field(graphql_type=list[Decision])  # type: ignore[untyped-decorator]
    def decisions(self, info: Info[Context, None]) -> Identities | Awaitable[list[Decision]]:
        return decisions_as_of(info, self.decision_ids, self.as_of)

    @strawberry.field(graphql_type=list[Plan])  # type: ignore[untyped-decorator]
    def plans(self, info: Info[Context, None]) -> Identities | Awaitable[list[Plan]]:
        return plans_now(info, self.plan_ids)


@strawberry.type
class ReplayPoint:
    plan_id: strawberry.ID
    thread_id: str
    checkpoint: CheckpointRef | None
    first_invalidated_decision_id: strawberry.ID
    decision_type: DecisionType

    @classmethod
    def of(cls, point: DomainFrontierPoint) -> ReplayPoint:
        return cls(
            plan_id=strawberry.ID(point.plan_id),
            thread_id=point.thread_id,
            checkpoint=checkpoint_of(point.checkpoint),
            first_invalidated_decision_id=strawberry.ID(point.first_invalidated_decision_id),
            decision_type=DecisionType(point.decision_type.value),
        )


@strawberry.type
class CorrectionAttempt:
    model: strawberry.Private[DomainCorrectionAttempt]
    attempt_id: strawberry.ID
    attempt_number: int
    mode: CorrectionMode
    guidance: str
    reason: str
    requested_by: str
    at: datetime

    # What the correction invalidated is counted as the caller may see it: a count must not tell
    # of decisions or plans in plans hidden from it, any more than a list of ids may.
    @strawberry.field
    async def invalidated_decision_count(self, info: Info[Context, None]) -> int:
        if not info.context.limited:
            return len(self.model.invalidated_decision_ids)
        return len(await visible_decisions(info, self.model.invalidated_decision_ids))

    @strawberry.field
    async def invalidated_plan_count(self, info: Info[Context, None]) -> int:
        if not info.context.limited:
            return len(self.model.invalidated_plan_ids)
        return len(await visible_plans(info, self.model.invalidated_plan_ids))

    @strawberry.field
    async def counts_by_type(self, info: Info[Context, None]) -> list[CountByType]:
        return await counts_seen(info, self.model.invalidated_decision_ids, self.model.counts_by_type)

    replay_outcome: ReplayOutcome
    original_decision_id: strawberry.ID
    corrected_decision_id: strawberry.ID
    correction_decision_id: strawberry.ID
    replay_detail: str | None
    replayed_at: datetime | None = strawberry.field(description="when the replay's outcome was reported; null while pending")

    @strawberry.field
    async def replayed_decision_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        """The decisions the replay recorded, as the replaying actor reported them: those the caller may see."""
        ids = self.model.replayed_decision_ids
        if info.context.limited:
            seen = {d.decision_id for d in await visible_decisions(info, ids)}
            ids = tuple(i for i in ids if i in seen)
        return [strawberry.ID(i) for i in ids]

    @strawberry.field(
        description="Where the invalidated work re-runs: each actor run's first invalidated decision and its checkpoint (those the caller may see)."
    )  # type: ignore[untyped-decorator]
    async def replay_frontier(self, info: Info[Context, None]) -> list[ReplayPoint]:
        points = self.model.replay_frontier
        if info.context.limited:
            seen = {p.plan_id for p in await visible_plans(info, [p.plan_id for p in points])}
            points = tuple(p for p in points if p.plan_id in seen)
        return [ReplayPoint.of(p) for p in points]

    @classmethod
    def of(cls, a: DomainCorrectionAttempt) -> CorrectionAttempt:
        return cls(
            original_decision_id=strawberry.ID(a.original_decision_id),
            corrected_decision_id=strawberry.ID(a.corrected_decision_id),
            correction_decision_id=strawberry.ID(a.correction_decision_id),
            replay_detail=a.replay_detail,
            replayed_at=a.replayed_at,
            attempt_id=strawberry.ID(a.attempt_id),
            attempt_number=a.attempt_number,
            mode=CorrectionMode(a.mode.value),
            guidance=a.guidance,
            reason=a.reason,
            requested_by=a.requested_by,
            at=a.at,
            model=a,
            replay_outcome=a.replay_outcome,
        )


@strawberry.type
class CorrectionPayload:
    model: strawberry.Private[DomainCorrectionResult]

    @strawberry.field
    def correction(self) -> Decision:
        return Decision(model=self.model.correction)

    @strawberry.field
    async def invalidated(self, info: Info[Context, None]) -> list[Decision]:
        return await load_decisions(info, list(self.model.invalidated))

    @strawberry.field
    async def invalidated_plans(self, info: Info[Context, None]) -> list[Plan]:
        return await load_plans(info, list(self.model.invalidated_plans))

    @strawberry.field
    async def paths(self, info: Info[Context, None]) -> list[InvalidationPath]:
        """Why each decision was invalidated: the chain of edges from the corrected one."""
        origin = self.model.attempt.corrected_decision_id
        downstream = [d for d in self.model.invalidated if d != origin]
        return await _paths(info, origin, downstream, list(self.model.invalidated_plans))

    @strawberry.field
    def attempt(self) -> CorrectionAttempt:
        return CorrectionAttempt.of(self.model.attempt)

    @strawberry.field
    async def replay_frontier(self, info: Info[Context, None]) -> list[ReplayPoint]:
        """Where each invalidated plan's actor resumes; only plans the caller may see."""
        points = self.model.replay_frontier
        if info.context.limited:
            seen = {p.plan_id for p in await visible_plans(info, [point.plan_id for point in points])}
            points = tuple(point for point in points if point.plan_id in seen)
        return [ReplayPoint.of(p) for p in points]

    @strawberry.field
    async def cancelled_reviews(self, info: Info[Context, None]) -> list[Review]:
        """Pending reviews the correction made moot, now CANCELLED with it: those in plans you may see
        (a correction's downstream can reach plans of other owners or projects through DEPENDS_ON)."""
        reviews = await call(reading.get_reviews, info.context.trail, list(self.model.cancelled_reviews), info.context.caller)
        return [Review(model=r) for r in reviews]

    @strawberry.field
    async def lapsed_approvals(self, info: Info[Context, None]) -> list[Review]:
        """Resolved reviews whose approval lapsed, now LAPSED: each resolved as a decision the
        correction superseded, so a person approved it on grounds that changed. When the plan asks
        such a question again it is held for a person, whatever the confidence (`Review.reopens`).
        Those in plans you may see."""
        reviews = await call(reading.get_reviews, info.context.trail, list(self.model.lapsed_reviews), info.context.caller)
        return [Review(model=r) for r in reviews]
