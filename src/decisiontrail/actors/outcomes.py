"""What a run owes the corrections it replays: the replay's input, read from its correction
attempt, and the attempt's outcome once the replay ended (REPLAYED, NOT_NEEDED or FAILED), also
when its run is given up; for the runtime's workers (``actors.runtime``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from decisiontrail.access import Principal
from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.domain.runs import Actor, PlanRun, actor_of_thread
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.services import Trail, reading
from decisiontrail.services.correction import record_replay

log = logging.getLogger("decisiontrail.actors.runtime")


def replay_of(trail: Trail, principal: Principal, attempt_id: str, plan_id: str) -> dict[str, Any]:
    """What a generation replaying correction attempt ``attempt_id`` in ``plan_id`` starts from."""
    attempt = reading.get_attempt(trail, attempt_id, principal)
    point = next(
        (
            p
            for p in attempt.replay_frontier
            if p.plan_id == plan_id and actor_of_thread(p.thread_id) in (Actor.STRATEGY, Actor.EXECUTION)
        ),
        None,
    )
    return {
        "attempt_id": attempt_id,
        "at": attempt.at.isoformat(),
        "guidance": attempt.guidance,
        "mode": attempt.mode.value,
        "correction_decision_id": attempt.correction_decision_id,
        "thread_id": point.thread_id if point is not None else None,
        "checkpoint": point.checkpoint.model_dump() if point is not None and point.checkpoint is not None else None,
    }


def report(
    trail: Trail, principal: Principal, worker: str, state: Mapping[str, Any], outcome: ReplayOutcome, detail: str | None
) -> None:
    """Set the outcome of the correction ``state``'s generation replayed, if it replayed one."""
    replay = state.get("replay")
    if not replay or reading.get_attempt(trail, replay["attempt_id"], principal).replay_outcome is not ReplayOutcome.PENDING:
        return
    ids: list[str] = []
    if outcome is ReplayOutcome.REPLAYED:
        since = datetime.fromisoformat(replay["at"])
        ids = [
            d.decision_id
            for d in reading.list_decisions(trail, state["plan_id"], principal, current_only=True)
            if d.created_at > since and d.decision_id != replay["correction_decision_id"]
        ]
        if not ids:
            outcome, detail = ReplayOutcome.NOT_NEEDED, "the plan went on from the correction without re-deciding anything"
        else:
            detail = f"{len(ids)} decision(s) recorded anew by worker {worker}"
    try:
        record_replay(trail, replay["attempt_id"], outcome, detail, ids, principal=principal)
    except DecisionTrailError as e:
        log.warning("could not record the outcome of correction attempt %s: %s", replay["attempt_id"], e.message)


def give_up(trail: Trail, principal: Principal, held: PlanRun, detail: str) -> list[str]:
    """A run given up owes its replays an outcome: the one its generation was replaying and those
    still queued are FAILED, not left pending for ever; their ids, to take off its queue."""
    reported = []
    for attempt_id in dict.fromkeys(a for a in (held.replaying, *held.replays) if a):
        try:
            if reading.get_attempt(trail, attempt_id, principal).replay_outcome is ReplayOutcome.PENDING:
                record_replay(trail, attempt_id, ReplayOutcome.FAILED, detail, [], principal=principal)
            reported.append(attempt_id)
        except DecisionTrailError as e:  # left queued: the run goes back to the queue for it
            log.warning("could not record the outcome of correction attempt %s: %s", attempt_id, e.message)
    return reported
