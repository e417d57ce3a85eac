"""GraphQL types of ``plan.analytics``: the analytics of ``decisiontrail.analytics``, as analysts query them."""

from __future__ import annotations

from enum import Enum

import strawberry

from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.services.analysis import Analytics


@strawberry.enum
class AnalyticsScope(Enum):
    PLAN = "plan"
    HIERARCHY = "hierarchy"


@strawberry.type
class TypeCount:
    decision_type: DecisionType
    count: int


@strawberry.type
class PhaseCount:
    phase: Phase
    count: int


@strawberry.type
class NamedCount:
    name: str
    count: int


@strawberry.type
class DecisionCounts:
    total: int
    current: int
    superseded: int
    by_type: list[TypeCount]
    by_phase: list[PhaseCount]


@strawberry.type
class ConfidenceBucket:
    """Current decisions scored in [low, high); the last bucket includes 1.0."""

    low: float
    high: float
    count: int


@strawberry.type
class ConfidenceSummary:
    """Confidence of the current decisions that carry a score."""

    scored: int
    unscored: int
    minimum: float | None
    maximum: float | None
    mean: float | None
    median: float | None
    histogram: list[ConfidenceBucket]


@strawberry.type
class CorrectedDecision:
    decision_id: strawberry.ID
    decision_type: DecisionType
    plan_id: strawberry.ID
    sequence_number: int
    question: str | None
    corrections: int


@strawberry.type
class CorrectionSummary:
    corrections: int
    corrected: int
    rate: float | None = strawberry.field(description="corrected decisions over decisions recorded")
    attempts: int
    replay_outcomes: list[NamedCount]
    most_corrected: list[CorrectedDecision]


@strawberry.type
class TreeShape:
    decision_depth: int | None
    hierarchy_depth: int | None
    max_fan_out: int | None
    mean_fan_out: float | None
    widest_decision_id: strawberry.ID | None


@strawberry.type
class CriticalDecision:
    decision_id: strawberry.ID
    decision_type: DecisionType
    plan_id: strawberry.ID
    sequence_number: int
    question: str | None
    blast_radius: int = strawberry.field(description="how many decisions correcting this one would invalidate")


@strawberry.type
class ReviewSummary:
    total: int
    pending: int
    by_status: list[NamedCount]
    by_resolution: list[NamedCount]
    rate: float | None = strawberry.field(description="reviews over decisions proposed by actors")


@strawberry.type
class PlanSummary:
    plan_id: strawberry.ID
    parent_plan_id: strawberry.ID | None
    level: int
    description: str | None
    phase: Phase | None
    status: str | None
    decisions: int
    current: int
    superseded: int
    depth: int | None
    reviews: int


@strawberry.type
class PlanAnalytics:
    """Counts, confidence, corrections, shape, blast radius and reviews of a plan or hierarchy."""

    decisions: DecisionCounts
    confidence: ConfidenceSummary
    corrections: CorrectionSummary
    shape: TreeShape
    most_critical: list[CriticalDecision]
    reviews: ReviewSummary
    plans: list[PlanSummary]

    @classmethod
    def of(cls, a: Analytics) -> PlanAnalytics:
        c = a.corrections
        return cls(
            decisions=DecisionCounts(
                total=a.decisions.total,
                current=a.decisions.current,
                superseded=a.decisions.superseded,
                by_type=[TypeCount(decision_type=DecisionType(k), count=n) for k, n in a.decisions.by_type.items()],
                by_phase=[PhaseCount(phase=Phase(k), count=n) for k, n in a.decisions.by_phase.items()],
            ),
            confidence=ConfidenceSummary(
                **a.confidence.model_dump(exclude={"histogram"}),
                histogram=[ConfidenceBucket(**b.model_dump()) for b in a.confidence.histogram],
            ),
            corrections=CorrectionSummary(
                corrections=c.corrections,
                corrected=c.corrected,
                rate=c.rate,
                attempts=c.attempts,
                replay_outcomes=_counts(c.replay_outcomes),
                most_corrected=[
                    CorrectedDecision(**{**d.model_dump(), "decision_type": DecisionType(d.decision_type)})
                    for d in c.most_corrected
                ],
            ),
            shape=TreeShape(**a.shape.model_dump()),
            most_critical=[
                CriticalDecision(**{**d.model_dump(), "decision_type": DecisionType(d.decision_type)}) for d in a.most_critical
            ],
            reviews=ReviewSummary(
                total=a.reviews.total,
                pending=a.reviews.pending,
                by_status=_counts(a.reviews.by_status),
                by_resolution=_counts(a.reviews.by_resolution),
                rate=a.reviews.rate,
            ),
            plans=[PlanSummary(**{**p.model_dump(), "phase": Phase(p.phase) if p.phase else None}) for p in a.plans],
        )


def _counts(counts: dict[str, int]) -> list[NamedCount]:
    return [NamedCount(name=k, count=n) for k, n in counts.items()]
