"""Records as a read as of a past moment shows them: what existed then, in the state it was in then.

A decision's own moment is in ``domain.correction.as_it_stood``; these are the plan's and the other
records' around it. Each takes what the store dated and the moment; none reads anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from decisiontrail.domain.correction import CorrectionAttempt, ReplayOutcome
from decisiontrail.domain.decision import Phase
from decisiontrail.domain.plan import Plan
from decisiontrail.domain.recording import Review, ReviewStatus


@dataclass(frozen=True)
class PhaseChange:
    """One change of a plan's phase, as the store dated it."""

    from_phase: Phase
    to_phase: Phase
    at: datetime


def existed(created_at: datetime, moment: datetime | None) -> bool:
    """Whether a record created at ``created_at`` existed at ``moment`` (None: now, when all do)."""
    return moment is None or created_at <= moment


def changes_until(changes: Iterable[PhaseChange], moment: datetime | None) -> list[PhaseChange]:
    """The changes made by ``moment``, in the order given."""
    return [c for c in changes if moment is None or c.at <= moment]


def phase_at(current: Phase, changes: Sequence[PhaseChange], moment: datetime | None) -> Phase:
    """The phase a plan was in at ``moment``, given its phase now and every change, oldest first.

    >>> from datetime import UTC
    >>> day = lambda d: datetime(2026, 12, d, tzinfo=UTC)
    >>> changes = [PhaseChange(Phase.STRATEGIZE, Phase.EXECUTE, day(2)), PhaseChange(Phase.EXECUTE, Phase.STRATEGIZE, day(4))]
    >>> [phase_at(Phase.STRATEGIZE, changes, day(d)).value for d in (1, 3, 5)]
    ['strategize', 'execute', 'strategize']
    """
    if moment is None:
        return current
    made = changes_until(changes, moment)
    if made:
        return made[-1].to_phase
    return changes[0].from_phase if changes else current


def plan_as_it_stood(plan: Plan, changes: Sequence[PhaseChange], moment: datetime | None) -> Plan:
    """``plan`` as of ``moment``: in the phase it was in then, and not yet invalidated by a
    correction made after it (a prompt correction's new description is not dated: docs/graphql.md, "Reading the past")."""
    if moment is None:
        return plan
    update: dict[str, object] = {"phase": phase_at(plan.phase, changes, moment)}
    if plan.invalidated_at is not None and plan.invalidated_at > moment:
        update["invalidated_at"] = None
    return plan.model_copy(update=update)


def attempt_as_it_stood(attempt: CorrectionAttempt, moment: datetime | None) -> CorrectionAttempt:
    """``attempt`` as of ``moment``: its replay still pending if its outcome was reported after it."""
    if moment is None or attempt.replayed_at is None or attempt.replayed_at <= moment:
        return attempt
    return attempt.model_copy(
        update={"replay_outcome": ReplayOutcome.PENDING, "replay_detail": None, "replayed_decision_ids": (), "replayed_at": None}
    )


def review_as_it_stood(review: Review, moment: datetime | None) -> Review:
    """``review`` as of ``moment``: lapsed only if it lapsed by then (else as it had been resolved),
    resolved or cancelled only if that happened by then (else pending, with nothing of its answer).

    A review created after ``moment`` did not exist then (``existed``); the caller leaves it out.

    >>> from datetime import UTC
    >>> day = lambda d: datetime(2026, 12, d, tzinfo=UTC)
    >>> review = Review.model_construct(created_at=day(1), status=ReviewStatus.LAPSED, resolved_at=day(2),
    ...                                 lapsed_from=ReviewStatus.APPROVED, lapsed_at=day(4))
    >>> [review_as_it_stood(review, day(d)).status.value for d in (1, 3, 5)]
    ['pending', 'approved', 'lapsed']
    """
    if moment is None:
        return review
    update: dict[str, object] = {}
    status = review.status
    if review.lapsed_at is not None and review.lapsed_at > moment:
        status = review.lapsed_from or status
        update |= {"lapsed_by": None, "lapsed_at": None, "lapsed_from": None}
    if status is not ReviewStatus.PENDING and (review.resolved_at is None or review.resolved_at > moment):
        status = ReviewStatus.PENDING
        update |= {
            "resolved_at": None,
            "resolved_option": None,
            "decision_id": None,
            "cancelled_by": None,
            "resolved_by": None,
            "approved_digest": None,
        }
    if status is not review.status:
        update["status"] = status
    return review.model_copy(update=update) if update else review
