"""Plan runs: the runtime's durable work (issue 45). Each use-case one transaction, announced.

A run is queued with its plan (``lifecycle.instantiate_plan(run=...)``), claimed by exactly one
worker of any serving process (``claim``: a lease kept by ``heartbeat``), and ended by it
(``finish``: waiting for a review or its children, succeeded, failed). A correction of a plan the
runtime runs queues the replay on its run in the correction's own transaction
(``graphdb.runs.queue_replay``); resolving a review, or a child run finishing, queues a waiting
run again. Every write is guarded by the claim: a worker that lost its run (its lease lapsed and
another took it, or it was cancelled) writes nothing more to it. The workers act as the runtime's
principal (``actors.runtime.RUNTIME``), which must be allowed to record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from decisiontrail.access import Action, Principal
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.runs import LEASE, PlanRun, RunStatus, check_cancellable, lease_end
from decisiontrail.events import DecisionEvent, EventKind
from decisiontrail.exceptions import NotFound
from decisiontrail.graphdb import runs
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role, require_visible


def _announced(run: PlanRun | None) -> list[DecisionEvent]:
    return [] if run is None else [DecisionEvent(EventKind.RUN_UPDATED, run.plan_id)]


def find_run(trail: Trail, run_id: str, principal: Principal) -> PlanRun | None:
    """The run, None for an unknown one or one in a plan ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> PlanRun | None:
        found = runs.get_many(tx, [run_id])[0]
        if found is None:
            return None
        try:
            require_visible(tx, principal, plan_ids=[found.plan_id])
        except NotFound:
            return None
        return found

    return trail.database.read(work)


def get_run(trail: Trail, run_id: str, principal: Principal) -> PlanRun:
    """The run, NotFound for an unknown one or one in a plan ``principal`` may not see."""
    found = find_run(trail, run_id, principal)
    if found is None:
        raise NotFound("run", run_id)
    return found


def runs_of_plans(trail: Trail, plan_ids: Sequence[str]) -> list[PlanRun | None]:
    """Each plan's newest run (None where the runtime never ran it). A batch read for plans the
    caller was shown (``Plan.run``'s loader, the runtime's own plans): it judges nobody."""
    return trail.database.read(runs.of_plans, plan_ids)


def active_in_hierarchy(trail: Trail, plan_id: str, principal: Principal) -> int:
    """How many runs of the plan and the plans below it are queued or running (none: it has settled)."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> int:
        require_visible(tx, principal, plan_ids=[plan_id])
        return runs.active_in_hierarchy(tx, plan_id)

    return trail.database.read(work)


def cancel_run(trail: Trail, run_id: str, reason: str = "", *, principal: Principal) -> PlanRun:
    """Stop a run that has not finished: a worker holding it stops at its next step; its plan stays
    as far as it got. Refused (CONFLICT) for a finished run, NotFound as ``get_run``, Forbidden for
    a ``principal`` that may not record."""
    require_role(principal, Action.RECORD)
    by = principal.name
    note = f"cancelled by {by}" + (f": {reason.strip()}" if reason.strip() else "")

    def work(tx: Transaction) -> PlanRun:
        found = runs.get_many(tx, [run_id])[0]
        if found is None:
            raise NotFound("run", run_id)
        try:
            require_visible(tx, principal, plan_ids=[found.plan_id])
        except NotFound:
            raise NotFound("run", run_id) from None
        check_cancellable(found)
        cancelled = runs.cancel(tx, run_id, note, utc_now())
        assert cancelled is not None  # found above, under the same transaction
        run, was = cancelled
        # judged again as the statement found it once locked: a worker may have finished it meanwhile
        check_cancellable(run.model_copy(update={"status": RunStatus(was)}))
        return run

    return trail.write(work, _announced, audit=Audit(principal, "runs.cancel_run", made=lambda run: Touched.of([run])))


# The worker's side (actors.runtime): a claim, its lease, and the writes it guards, each by the
# runtime's ``principal``; the worker that holds a run is named by ``worker``.


def claim(trail: Trail, worker: str, lease: timedelta = LEASE, *, principal: Principal) -> PlanRun | None:
    """The oldest claimable run, now held by ``worker`` for ``lease`` (its attempts counted); None if none waits."""
    require_role(principal, Action.RECORD)
    now = utc_now()
    return trail.database.write(runs.claim, worker, now, lease_end(now, lease))


def heartbeat(trail: Trail, worker: str, run_ids: Sequence[str], lease: timedelta = LEASE, *, principal: Principal) -> list[str]:
    """Extend the leases ``worker`` holds by ``lease``; the run ids it has lost."""
    require_role(principal, Action.RECORD)
    if not run_ids:
        return []
    return trail.database.write(runs.heartbeat, worker, list(run_ids), lease_end(utc_now(), lease))


def update(trail: Trail, held: PlanRun, worker: str, *, principal: Principal, **changes: Any) -> PlanRun | None:
    """Record what the worker holding ``held`` is doing (its actor, generation); None if it lost it."""
    require_role(principal, Action.RECORD)
    # The runtime's bookkeeping of a run it holds, no caller's request: not audited (nor the claim, nor its lease).
    return trail.write(lambda tx: runs.update(tx, held, worker, _values(changes), utc_now()), _announced, audit=None)


def take_replay(trail: Trail, held: PlanRun, worker: str, attempt_id: str, *, principal: Principal) -> PlanRun | None:
    """The replay of ``attempt_id`` taken up by the worker: out of the run's queue, a new generation."""
    require_role(principal, Action.RECORD)

    def work(tx: Transaction) -> PlanRun | None:
        if runs.pop_replay(tx, held, worker, attempt_id) is None:
            return None
        return runs.update(tx, held, worker, {"generation": held.generation + 1, "replaying": attempt_id}, utc_now())

    return trail.write(work, _announced, audit=None)  # the runtime's bookkeeping, as update's


def finish(
    trail: Trail,
    held: PlanRun,
    worker: str,
    status: RunStatus,
    *,
    principal: Principal,
    failed_replays: Sequence[str] = (),
    **changes: Any,
) -> PlanRun | None:
    """End the worker's turn with the run, ``failed_replays`` (reported failed) off its queue; a
    finished run wakes its parent's. None if it lost it."""
    require_role(principal, Action.RECORD)
    work = lambda tx: runs.finish(tx, held, worker, status.value, _values(changes), utc_now(), failed_replays)  # noqa: E731
    return trail.write(work, _announced, audit=None)  # the runtime's bookkeeping, as update's


def wake(tx: Transaction, plan_ids: Sequence[str]) -> list[str]:
    """Inside a use-case's transaction: queue the waiting runs of ``plan_ids`` again."""
    return runs.wake(tx, plan_ids, utc_now())


def _values(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.value if hasattr(v, "value") else v) for k, v in changes.items()}
