"""Plan runs in Neo4j: functions of a transaction, each running one named statement (``cypher/run``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain.runs import PlanRun
from decisiontrail.graphdb.database import Transaction
from decisiontrail.graphdb.records import native_datetime


def create(tx: Transaction, run: PlanRun) -> PlanRun | None:
    """Store ``run``, linked to its plan; None when the plan does not exist."""
    record = tx.run(query("run/create_run"), plan_id=run.plan_id, props=properties(run)).single()
    return None if record is None else run_from_record(record["run"])


def get_many(tx: Transaction, run_ids: Sequence[str]) -> list[PlanRun | None]:
    """One result per id, in the order given; None where no such run exists."""
    found = {r.run_id: r for r in (run_from_record(rec["run"]) for rec in tx.run(query("run/get_runs"), run_ids=list(run_ids)))}
    return [found.get(run_id) for run_id in run_ids]


def of_plans(tx: Transaction, plan_ids: Sequence[str]) -> list[PlanRun | None]:
    """Each plan's newest run, in the order given; None for a plan the runtime never ran."""
    found = {
        r.plan_id: r for r in (run_from_record(rec["run"]) for rec in tx.run(query("run/runs_of_plans"), plan_ids=list(plan_ids)))
    }
    return [found.get(plan_id) for plan_id in plan_ids]


def claim(tx: Transaction, worker: str, now: datetime, lease_until: datetime) -> PlanRun | None:
    """The oldest claimable run, now held by ``worker``; None when there is none."""
    record = tx.run(query("run/claim_run"), worker=worker, now=now, lease_until=lease_until).single()
    return None if record is None else run_from_record(record["run"])


def heartbeat(tx: Transaction, worker: str, run_ids: Sequence[str], lease_until: datetime) -> list[str]:
    """Extend ``worker``'s leases on ``run_ids``; the ids among them it no longer holds."""
    rows = tx.run(query("run/heartbeat"), worker=worker, run_ids=list(run_ids), lease_until=lease_until)
    return [r["lost"] for r in rows]


def update(tx: Transaction, held: PlanRun, worker: str, changes: Mapping[str, Any], now: datetime) -> PlanRun | None:
    """Set ``changes`` on the run ``worker`` holds (as ``held``, its claim); None if it holds it no more."""
    record = tx.run(
        query("run/update_run"), run_id=held.run_id, worker=worker, attempts=held.attempts, changes=dict(changes), now=now
    ).single()
    return None if record is None else run_from_record(record["run"])


def pop_replay(tx: Transaction, held: PlanRun, worker: str, attempt_id: str) -> PlanRun | None:
    record = tx.run(
        query("run/pop_replay"), run_id=held.run_id, worker=worker, attempts=held.attempts, attempt_id=attempt_id
    ).single()
    return None if record is None else run_from_record(record["run"])


def finish(
    tx: Transaction,
    held: PlanRun,
    worker: str,
    status: str,
    changes: Mapping[str, Any],
    now: datetime,
    failed_replays: Sequence[str] = (),
) -> PlanRun | None:
    """End ``worker``'s turn with the run (waiting, succeeded, failed; queued again if a replay
    waits), ``failed_replays`` taken off its queue; None if it holds it no more."""
    record = tx.run(
        query("run/finish_run"),
        run_id=held.run_id,
        worker=worker,
        attempts=held.attempts,
        status=status,
        changes=dict(changes),
        now=now,
        failed_replays=list(failed_replays),
    ).single()
    return None if record is None else run_from_record(record["run"])


def active_in_hierarchy(tx: Transaction, plan_id: str) -> int:
    """How many runs of the plan and the plans below it are queued or running."""
    active: int = tx.run(query("run/active_in_hierarchy"), plan_id=plan_id).single(strict=True)["active"]
    return active


def wake(tx: Transaction, plan_ids: Sequence[str], now: datetime) -> list[str]:
    """Queue the waiting runs of ``plan_ids`` again; their ids."""
    return [r["run_id"] for r in tx.run(query("run/wake_runs"), plan_ids=list(plan_ids), now=now)]


def queue_replay(
    tx: Transaction, plan_id: str, attempt_id: str, invalidated_plan_ids: Sequence[str], now: datetime
) -> str | None:
    """Give the plan's run the attempt to replay and cancel the runs of the invalidated plans; the
    run's id, None when the runtime does not run the plan."""
    record = tx.run(
        query("run/queue_replay"),
        plan_id=plan_id,
        attempt_id=attempt_id,
        invalidated_plan_ids=list(invalidated_plan_ids),
        now=now,
    ).single(strict=True)
    run_id: str | None = record["run_id"]
    return run_id


def cancel(tx: Transaction, run_id: str, reason: str, now: datetime) -> tuple[PlanRun, str] | None:
    """Cancel the run unless it finished; (the run now, its status before); None for an unknown id."""
    record = tx.run(query("run/cancel_run"), run_id=run_id, reason=reason, now=now).single()
    return None if record is None else (run_from_record(record["run"]), record["was"])


def properties(run: PlanRun) -> dict[str, Any]:
    props = run.model_dump(mode="python", exclude_none=True)
    props["replays"] = list(run.replays)
    return {k: (v.value if hasattr(v, "value") else v) for k, v in props.items()}


def run_from_record(props: Mapping[str, Any]) -> PlanRun:
    values = {k: v for k, v in dict(props).items() if not k.startswith("_")}
    for key in ("lease_until", "created_at", "updated_at"):
        if values.get(key) is not None:
            values[key] = native_datetime(values[key])
    values["replays"] = tuple(values.get("replays") or ())
    return PlanRun.model_validate(values)
