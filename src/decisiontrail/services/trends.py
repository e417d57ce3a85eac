"""The trends of a project (or of every plan the caller sees): how much was decided and corrected, what was
corrected most, how long reviews waited. Each series is grouped in Cypher (``cypher/trends``) over the plans
the caller may see, in one read; here empty days and buckets are filled in and rates divided."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from decisiontrail.access import Action, Principal
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import trends as stored
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_role

WAIT_BOUNDS: tuple[tuple[float, str], ...] = (
    (60.0, "under 1 min"),
    (600.0, "1-10 min"),
    (3600.0, "10 min-1 h"),
    (4 * 3600.0, "1-4 h"),
    (86400.0, "4 h-1 day"),
    (7 * 86400.0, "1 day-1 week"),
)
"""The waiting times' buckets: each one's upper bound in seconds (exclusive) and its label; past the last, "1 week or more"."""
LAST_WAIT_LABEL = "1 week or more"
TOP_INVALIDATING = 10
"""How many decisions ``top_invalidating`` lists."""


@dataclass(frozen=True)
class DayCount:
    day: date
    decisions: int  # recorded that day, corrections left out
    corrections: int  # correction decisions recorded that day


@dataclass(frozen=True)
class CorrectionRate:
    decisions: int  # corrections left out
    corrected: int  # those a correction was made of

    @property
    def rate(self) -> float:
        return self.corrected / self.decisions if self.decisions else 0.0


@dataclass(frozen=True)
class TypeCorrectionRate(CorrectionRate):
    decision_type: str


@dataclass(frozen=True)
class ActorCorrectionRate(CorrectionRate):
    actor: str | None  # the plans' owner; None for plans made in process or at the command line


@dataclass(frozen=True)
class ConfidenceBucket:
    low: float
    high: float  # exclusive, but for the last bucket, which holds 1.0
    corrected: int
    kept: int


@dataclass(frozen=True)
class WaitBucket:
    label: str
    low_seconds: float
    high_seconds: float | None  # exclusive; None for the last
    resolved: int
    pending: int


@dataclass(frozen=True)
class ReviewWaits:
    resolved: int
    pending: int
    median_seconds: float | None
    p90_seconds: float | None
    longest_seconds: float | None
    oldest_pending_seconds: float | None
    buckets: tuple[WaitBucket, ...]


@dataclass(frozen=True)
class Invalidating:
    decision_id: str
    plan_id: str
    plan_description: str
    sequence_number: int
    decision_type: str
    question: str
    chosen_option: str
    corrections: int
    invalidated_decisions: int
    invalidated_plans: int
    last_corrected_at: datetime


@dataclass(frozen=True)
class Trends:
    project: str | None
    since: datetime | None
    until: datetime | None
    projects: tuple[str, ...]  # every project the caller sees a plan of
    decisions_per_day: tuple[DayCount, ...]
    correction_rate_by_type: tuple[TypeCorrectionRate, ...]
    correction_rate_by_actor: tuple[ActorCorrectionRate, ...]
    confidence: tuple[ConfidenceBucket, ...]
    review_waits: ReviewWaits
    top_invalidating: tuple[Invalidating, ...]


def trends(
    trail: Trail,
    principal: Principal,
    *,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Trends:
    """The trends of ``project``'s plans (None: every plan ``principal`` sees) recorded at or after ``since``
    and before ``until``; a token limited to a project asking for another gets that project's trends as it
    sees them: empty. VALIDATION_FAILED (``until``) when ``until`` is not after ``since``."""
    require_role(principal, Action.READ)
    if since is not None and until is not None and since >= until:
        raise ValidationFailed(f"until: must be after since ({since.isoformat()}), not {until.isoformat()}", field="until")
    owner = principal.owner_scope
    if principal.project is not None and project is not None and project != principal.project:
        return _empty(project, since, until)
    scope = principal.project or project

    def work(tx: Transaction) -> Trends:
        days = stored.decisions_per_day(tx, owner, scope, since, until)
        by_type, by_actor = stored.correction_rates(tx, owner, scope, since, until)
        confidence = stored.confidence_outcomes(tx, owner, scope, since, until)
        waits = stored.review_waits(tx, owner, scope, since, until, [bound for bound, _ in WAIT_BOUNDS])
        top = stored.top_invalidating(tx, owner, scope, since, until, TOP_INVALIDATING)
        return Trends(
            project=project,
            since=since,
            until=until,
            projects=tuple(stored.visible_projects(tx, owner, principal.project)),
            decisions_per_day=every_day([DayCount(date.fromisoformat(d), n, c) for d, n, c in days]),
            correction_rate_by_type=tuple(
                TypeCorrectionRate(r["decisions"], r["corrected"], r["decision_type"]) for r in by_type
            ),
            correction_rate_by_actor=tuple(ActorCorrectionRate(r["decisions"], r["corrected"], r["actor"]) for r in by_actor),
            confidence=confidence_buckets(confidence),
            review_waits=_waits(waits),
            top_invalidating=tuple(_invalidating(row) for row in top),
        )

    return trail.database.read(work)


def every_day(days: list[DayCount]) -> tuple[DayCount, ...]:
    """``days`` (in order) with the days between them that had no decision, as zeros.

    >>> [(d.day.day, d.decisions) for d in every_day([DayCount(date(2026, 1, 1), 2, 0), DayCount(date(2026, 1, 3), 1, 1)])]
    [(1, 2), (2, 0), (3, 1)]
    """
    if not days:
        return ()
    found = {d.day: d for d in days}
    first, last = days[0].day, days[-1].day
    span = (last - first).days
    return tuple(found.get(day, DayCount(day, 0, 0)) for day in (first + timedelta(days=i) for i in range(span + 1)))


def confidence_buckets(found: dict[int, tuple[int, int]]) -> tuple[ConfidenceBucket, ...]:
    """The ten buckets of 0.1, those ``found`` has no decision in as zeros; none when no decision had a score.

    >>> [(b.low, b.corrected, b.kept) for b in confidence_buckets({9: (1, 2)})][-2:]
    [(0.8, 0, 0), (0.9, 1, 2)]
    >>> confidence_buckets({})
    ()
    """
    if not found:
        return ()
    return tuple(ConfidenceBucket(i / 10, (i + 1) / 10, *found.get(i, (0, 0))) for i in range(10))


def _waits(found: dict[str, Any]) -> ReviewWaits:
    counts = found["buckets"]
    lows = [0.0, *(bound for bound, _ in WAIT_BOUNDS)]
    highs: list[float | None] = [*(bound for bound, _ in WAIT_BOUNDS), None]
    labels = [*(label for _, label in WAIT_BOUNDS), LAST_WAIT_LABEL]
    return ReviewWaits(
        resolved=int(found["resolved"]),
        pending=int(found["pending"]),
        median_seconds=_seconds(found["median"]),
        p90_seconds=_seconds(found["p90"]),
        longest_seconds=_seconds(found["longest"]),
        oldest_pending_seconds=_seconds(found["oldest_pending"]),
        buckets=tuple(
            WaitBucket(label, low, high, count["resolved"], count["pending"])
            for label, low, high, count in zip(labels, lows, highs, counts, strict=True)
        )
        if found["resolved"] or found["pending"]
        else (),
    )


def _seconds(value: float | None) -> float | None:
    return None if value is None else float(value)


def _invalidating(row: dict[str, Any]) -> Invalidating:
    return Invalidating(
        decision_id=str(row["decision_id"]),
        plan_id=str(row["plan_id"]),
        plan_description=str(row["plan_description"] or ""),
        sequence_number=int(row["sequence_number"]),
        decision_type=str(row["decision_type"]),
        question=str(row["question"]),
        chosen_option=str(row["chosen_option"]),
        corrections=int(row["corrections"]),
        invalidated_decisions=int(row["decisions"]),
        invalidated_plans=int(row["plans"]),
        last_corrected_at=row["last_at"],
    )


def _empty(project: str | None, since: datetime | None, until: datetime | None) -> Trends:
    """The trends of a project a token limited to another asks for: nothing, not even the projects it may
    pick (its own is no answer to the question it asked)."""
    return Trends(
        project=project,
        since=since,
        until=until,
        projects=(),
        decisions_per_day=(),
        correction_rate_by_type=(),
        correction_rate_by_actor=(),
        confidence=(),
        review_waits=ReviewWaits(0, 0, None, None, None, None, ()),
        top_invalidating=(),
    )
