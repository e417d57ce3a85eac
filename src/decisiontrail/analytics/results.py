"""What ``analyze`` answers with: frozen records of counts, confidence, corrections, shape, blast radius, reviews and plans."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Analytics",
    "ConfidenceBucket",
    "ConfidenceSummary",
    "CorrectedDecision",
    "CorrectionSummary",
    "CriticalDecision",
    "DecisionCounts",
    "PlanSummary",
    "ReviewSummary",
    "TreeShape",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DecisionCounts(_Frozen):
    """The decisions recorded, current and superseded, by type and by phase (enum order, no zeros)."""

    total: int
    current: int
    superseded: int
    by_type: dict[str, int]
    by_phase: dict[str, int]


class ConfidenceBucket(_Frozen):
    """How many scores fall in [low, high); the last bucket also holds 1.0."""

    low: float
    high: float
    count: int


class ConfidenceSummary(_Frozen):
    """The confidence scores of the current decisions; None where there is no score to summarise."""

    scored: int
    unscored: int
    minimum: float | None
    maximum: float | None
    mean: float | None
    median: float | None
    histogram: tuple[ConfidenceBucket, ...]


class CorrectedDecision(_Frozen):
    """The first decision of a correction chain and how many times the chain was corrected."""

    decision_id: str
    decision_type: str
    plan_id: str
    sequence_number: int
    question: str | None
    corrections: int


class CorrectionSummary(_Frozen):
    """Corrections recorded, decisions corrected, the correction rate, replays and the chains corrected most."""

    corrections: int
    corrected: int
    rate: float | None
    attempts: int
    replay_outcomes: dict[str, int]
    most_corrected: tuple[CorrectedDecision, ...]


class TreeShape(_Frozen):
    """How deep and wide the current trees are; depth 0 is a plan's root, or the hierarchy's top plan."""

    decision_depth: int | None
    hierarchy_depth: int | None
    max_fan_out: int | None
    mean_fan_out: float | None
    widest_decision_id: str | None


class CriticalDecision(_Frozen):
    """A current decision and its blast radius: how many decisions correcting it would invalidate, itself included."""

    decision_id: str
    decision_type: str
    plan_id: str
    sequence_number: int
    question: str | None
    blast_radius: int


class ReviewSummary(_Frozen):
    """The reviews held, by status and by how a person resolved them, and the review rate."""

    total: int
    pending: int
    by_status: dict[str, int]
    by_resolution: dict[str, int]
    rate: float | None


class PlanSummary(_Frozen):
    """One plan of the scope: where it sits in the hierarchy, its state, its decisions and depth."""

    plan_id: str
    parent_plan_id: str | None
    level: int
    description: str | None
    phase: str | None
    status: str | None
    decisions: int
    current: int
    superseded: int
    depth: int | None
    reviews: int


class Analytics(_Frozen):
    """Everything ``analyze`` computes for one plan or one hierarchy."""

    decisions: DecisionCounts
    confidence: ConfidenceSummary
    corrections: CorrectionSummary
    shape: TreeShape
    most_critical: tuple[CriticalDecision, ...]
    reviews: ReviewSummary
    plans: tuple[PlanSummary, ...]
