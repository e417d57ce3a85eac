"""What recording and resolving answer, and the events a subscription delivers."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.types import Info

from decisiontrail import events
from decisiontrail.events import EventKind as DecisionEventKind

from decisiontrail.schema.context import Context

from decisiontrail.schema.decision import Decision, load_decision
from decisiontrail.schema.review import Review


@strawberry.type
class RecordDecisionPayload:
    """``decision`` when it was persisted; ``review`` when the automation profile held it for a person."""

    decision: Decision | None
    review: Review | None


@strawberry.type
class ResolveReviewPayload:
    review: Review
    decision: Decision


@strawberry.type
class DecisionEvent:
    kind: DecisionEventKind
    plan_id: strawberry.ID
    decision_id: strawberry.ID | None
    review_id: strawberry.ID | None
    at: datetime = strawberry.field(description="when the change was written (just before its commit)")
    cursor: str = strawberry.field(
        description="the event's place in commit order: subscribe again with after: this cursor to receive what came after it"
    )

    @classmethod
    def of(cls, event: events.DecisionEvent) -> DecisionEvent:
        assert event.at is not None and event.seq is not None  # every event published comes from the outbox
        return cls(
            kind=DecisionEventKind(event.kind.value),
            plan_id=strawberry.ID(event.plan_id),
            decision_id=strawberry.ID(event.decision_id) if event.decision_id else None,
            review_id=strawberry.ID(event.review_id) if event.review_id else None,
            at=event.at,
            cursor=str(event.seq),
        )

    @strawberry.field
    async def decision(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, str(self.decision_id) if self.decision_id else None)
