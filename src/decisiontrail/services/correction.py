"""Correcting a decision (ADR-007): the one place that decides what a correction means."""

from __future__ import annotations

from collections.abc import Sequence

from decisiontrail.domain.correction import (
    CorrectionAttempt,
    CorrectionResult,
    Impact,
    ReplayOutcome,
    check_guidance,
    check_replay_outcome,
    parse_mode,
)
from decisiontrail.graphdb import DecisionStore


def correct(
    store: DecisionStore,
    decision_id: str,
    mode: str,
    guidance: str,
    reason: str = "",
    *,
    requested_by: str = "user",
) -> CorrectionResult:
    """Supersede ``decision_id`` and its whole downstream (across child plans) by a correction.

    ``mode`` is ``revert`` (roll back to the original's checkpoint and re-run from there) or
    ``append`` (keep the state reached and add the fix after the plan's latest decision).
    Returns the correction decision, the attempt record, what was invalidated and the replay
    frontier. Refused, with nothing written, for an unknown id, an unknown mode, empty
    guidance, or a decision already superseded (the error names its successor).
    """
    return store.correct(decision_id, parse_mode(mode), check_guidance(guidance), reason.strip(), requested_by)


def preview(store: DecisionStore, decision_id: str) -> Impact:
    """What correcting ``decision_id`` would invalidate: decisions, plans, counts by type."""
    return store.preview_correction(decision_id)


def history(store: DecisionStore, decision_id: str) -> list[CorrectionAttempt]:
    """Every correction attempt on the chain ``decision_id`` belongs to, oldest first."""
    return store.correction_attempts(decision_id)


def record_replay(
    store: DecisionStore,
    attempt_id: str,
    outcome: ReplayOutcome,
    detail: str | None = None,
    decision_ids: Sequence[str] = (),
) -> CorrectionAttempt:
    """Record how the actors' replay of a correction went and which decisions it recorded."""
    return store.set_replay_outcome(attempt_id, check_replay_outcome(outcome), detail, tuple(dict.fromkeys(decision_ids)))


def attempt(store: DecisionStore, attempt_id: str) -> CorrectionAttempt:
    """One correction attempt by its id."""
    return store.get_attempt(attempt_id)
