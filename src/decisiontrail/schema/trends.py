"""GraphQL types of ``trends``: a project's decisions and corrections over time, what was corrected most, how long reviews waited."""

from __future__ import annotations

from datetime import date, datetime

import strawberry

from decisiontrail.domain.decision import DecisionType
from decisiontrail.services import trends as service


@strawberry.type(description="One UTC day: the decisions recorded, corrections left out, and the corrections recorded.")
class TrendDay:
    day: date
    decisions: int
    corrections: int


@strawberry.type(description="Of the decisions of one type (corrections left out), how many a correction was made of.")
class TypeCorrectionRate:
    decision_type: DecisionType
    decisions: int
    corrected: int
    rate: float = strawberry.field(description="corrected / decisions.")


@strawberry.type(
    description=(
        "Of one actor's decisions (corrections left out), how many a correction was made of. The actor is the "
        "plan's owner: the token that instantiated the plan, the one actor that records in it."
    )
)
class ActorCorrectionRate:
    actor: str | None = strawberry.field(description="The plans' owner; null for plans made in process or at the command line.")
    decisions: int
    corrected: int
    rate: float = strawberry.field(description="corrected / decisions.")


@strawberry.type(
    description=(
        "Scored decisions (corrections left out) with a confidence in [low, high) (the last bucket holds 1.0 too): "
        "those a correction was made of, and those kept (still current). One superseded only as another's "
        "downstream is neither."
    )
)
class ConfidenceOutcome:
    low: float
    high: float
    corrected: int
    kept: int


@strawberry.type(
    description="Reviews that waited in [lowSeconds, highSeconds): resolved ones by their wait, pending ones by their age."
)
class WaitingTimeBucket:
    label: str
    low_seconds: float
    high_seconds: float | None = strawberry.field(description="Null for the last bucket: no upper bound.")
    resolved: int
    pending: int


@strawberry.type(
    description=(
        "How long reviews waited for a person: a resolved one from creation to resolution (cancelled ones, "
        "which no person answered, are left out), a pending one from creation to now; percentiles interpolated."
    )
)
class ReviewWaitingTimes:
    resolved: int
    pending: int
    median_seconds: float | None
    p90_seconds: float | None
    longest_seconds: float | None
    oldest_pending_seconds: float | None
    buckets: list[WaitingTimeBucket]


@strawberry.type(
    description=(
        "A decision whose corrections invalidated most: how many decisions (itself included) and plans they "
        "invalidated, among those the caller may see."
    )
)
class InvalidatingDecision:
    decision_id: strawberry.ID
    plan_id: strawberry.ID
    plan_description: str
    sequence_number: int
    decision_type: DecisionType
    question: str
    chosen_option: str
    corrections: int
    invalidated_decisions: int
    invalidated_plans: int
    last_corrected_at: datetime


@strawberry.type(
    description=(
        "A project's trends (or those of every plan the caller sees): decisions recorded at or after since and "
        "before until, corrections made then, reviews created then."
    )
)
class Trends:
    project: str | None
    since: datetime | None
    until: datetime | None
    projects: list[str] = strawberry.field(description="Every project the caller sees a plan of: the page's picker.")
    decisions_per_day: list[TrendDay] = strawberry.field(description="Oldest first; days between with none as zeros.")
    correction_rate_by_type: list[TypeCorrectionRate]
    correction_rate_by_actor: list[ActorCorrectionRate]
    confidence: list[ConfidenceOutcome] = strawberry.field(description="Ten buckets of 0.1, lowest first.")
    review_waiting_times: ReviewWaitingTimes
    top_invalidating: list[InvalidatingDecision] = strawberry.field(
        description=f"The {service.TOP_INVALIDATING} that invalidated most, most first (then by decision id)."
    )

    @classmethod
    def of(cls, found: service.Trends) -> Trends:
        waits = found.review_waits
        return cls(
            project=found.project,
            since=found.since,
            until=found.until,
            projects=list(found.projects),
            decisions_per_day=[
                TrendDay(day=d.day, decisions=d.decisions, corrections=d.corrections) for d in found.decisions_per_day
            ],
            correction_rate_by_type=[
                TypeCorrectionRate(
                    decision_type=DecisionType(r.decision_type), decisions=r.decisions, corrected=r.corrected, rate=r.rate
                )
                for r in found.correction_rate_by_type
            ],
            correction_rate_by_actor=[
                ActorCorrectionRate(actor=r.actor, decisions=r.decisions, corrected=r.corrected, rate=r.rate)
                for r in found.correction_rate_by_actor
            ],
            confidence=[ConfidenceOutcome(low=b.low, high=b.high, corrected=b.corrected, kept=b.kept) for b in found.confidence],
            review_waiting_times=ReviewWaitingTimes(
                resolved=waits.resolved,
                pending=waits.pending,
                median_seconds=waits.median_seconds,
                p90_seconds=waits.p90_seconds,
                longest_seconds=waits.longest_seconds,
                oldest_pending_seconds=waits.oldest_pending_seconds,
                buckets=[
                    WaitingTimeBucket(
                        label=b.label,
                        low_seconds=b.low_seconds,
                        high_seconds=b.high_seconds,
                        resolved=b.resolved,
                        pending=b.pending,
                    )
                    for b in waits.buckets
                ],
            ),
            top_invalidating=[
                InvalidatingDecision(
                    decision_id=strawberry.ID(t.decision_id),
                    plan_id=strawberry.ID(t.plan_id),
                    plan_description=t.plan_description,
                    sequence_number=t.sequence_number,
                    decision_type=DecisionType(t.decision_type),
                    question=t.question,
                    chosen_option=t.chosen_option,
                    corrections=t.corrections,
                    invalidated_decisions=t.invalidated_decisions,
                    invalidated_plans=t.invalidated_plans,
                    last_corrected_at=t.last_corrected_at,
                )
                for t in found.top_invalidating
            ],
        )
