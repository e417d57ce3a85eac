"""Plans in Neo4j: functions of a transaction, each running one named statement and returning domain records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain import Phase, Plan
from decisiontrail.domain.decision import DecisionType
from decisiontrail.domain.invariants import Invariant
from decisiontrail.domain.pages import PlanPage
from decisiontrail.domain.rules import SpawnLink
from decisiontrail.graphdb.database import Transaction, lock_holder
from decisiontrail.graphdb.records import invariants_of, json_text, plan_from_record, plan_properties


def get_many(tx: Transaction, plan_ids: list[str]) -> list[Plan | None]:
    """One result per id, in the order given; None where no such plan exists."""
    found = {p.plan_id: p for p in map(plan_from_record, tx.run(query("plan/get_plans"), plan_ids=plan_ids))}
    return [found.get(plan_id) for plan_id in plan_ids]


def count(tx: Transaction) -> int:
    return int(tx.run(query("plan/count_plans")).single(strict=True)["plans"])


def child_plans_of(tx: Transaction, plan_ids: list[str]) -> list[list[str]]:
    """For each plan, in the order given, its child plans' ids in creation order."""
    found = {r["parent_id"]: list(r["child_ids"]) for r in tx.run(query("plan/child_plans_of"), plan_ids=plan_ids)}
    return [found.get(plan_id, []) for plan_id in plan_ids]


def page(tx: Transaction, page: PlanPage) -> tuple[int | None, list[str]]:
    """(how many plans match, None unless ``page.count``; the ids of one page of them after ``page.after``,
    or before it, newest first, with ``page.newest_first``)."""
    record = tx.run(query("plan/page_plans"), **page.params()).single(strict=True)
    return record["total"], list(record["plan_ids"])


def read_spawn_link(tx: Transaction, plan: Plan) -> SpawnLink:
    """Lock the spawning decision's plan and read the facts a new plan's spawn link is judged by."""
    row = tx.run(
        query("plan/read_spawn_link"),
        holder=lock_holder(tx),
        plan_id=plan.plan_id,
        parent_plan_id=plan.parent_plan_id,
        spawned_by_decision_id=plan.spawned_by_decision_id,
    ).single(strict=True)
    return SpawnLink(
        plan_exists=row["plan_exists"],
        parent_plan_exists=row["parent_plan_exists"],
        spawning_exists=row["spawning_exists"],
        spawning_plan_id=row["spawning_plan_id"],
        spawning_type=DecisionType(row["spawning_type"]) if row["spawning_type"] else None,
        spawning_superseded=row["spawning_superseded"],
        parent_phase=Phase(row["parent_phase"]) if row["parent_phase"] else None,
        children=tuple(row["children"]),
    )


def create(tx: Transaction, plan: Plan) -> None:
    tx.run(
        query("plan/create_plan"),
        props=plan_properties(plan),
        parent_plan_id=plan.parent_plan_id,
        spawned_by_decision_id=plan.spawned_by_decision_id,
    ).consume()


def set_prompt(tx: Transaction, plan_id: str, description: str, arguments: Mapping[str, Any]) -> None:
    tx.run(query("plan/set_prompt"), plan_id=plan_id, description=description, arguments=json_text(arguments)).consume()


@dataclass(frozen=True)
class PhaseFacts:
    """What a plan's phase is judged by, read under its lock (``lock_and_read_phase``)."""

    phase: Phase
    pending_reviews: int
    strategy_choices: int
    """Its current strategy_choice decisions."""
    invariants: tuple[Invariant, ...]
    """The invariants it declares."""
    enforcing: tuple[str, ...]
    """The rationales of its current invariant_enforced decisions."""


def lock_and_read_phase(tx: Transaction, plan_id: str) -> PhaseFacts | None:
    """Under the plan's lock: its phase and what a phase change is judged by; None for an unknown plan."""
    row = tx.run(query("plan/read_phase"), plan_id=plan_id, holder=lock_holder(tx)).single()
    if row is None:
        return None
    return PhaseFacts(
        Phase(row["phase"]),
        int(row["pending_reviews"]),
        int(row["strategy_choices"]),
        invariants_of(row["invariants"]),
        tuple(row["enforcing"]),
    )


def change_phase(tx: Transaction, plan_id: str, current: Phase, target: Phase, reason: str, at: datetime, by: str | None) -> None:
    tx.run(
        query("plan/change_phase"),
        plan_id=plan_id,
        from_phase=current.value,
        to_phase=target.value,
        reason=reason,
        at=at,
        by=by,
    ).consume()


def phase_changes(tx: Transaction, plan_ids: list[str]) -> list[list[dict[str, Any]]]:
    """For each plan, in the order given, its phase changes, oldest first: from_phase, to_phase, reason, at, by."""
    return [list(r["changes"]) for r in tx.run(query("plan/list_phase_changes"), plan_ids=plan_ids)]


def scopes(tx: Transaction, targets: list[tuple[str, str]]) -> list[tuple[bool, str | None, str | None]]:
    """For each (kind, id) of a plan, decision or review, in order: (found, its plan's owner, its plan's project)."""
    rows = tx.run(query("access/read_scopes"), targets=[{"kind": kind, "id": id} for kind, id in targets])
    return [(bool(r["found"]), r["owner"], r["project"]) for r in rows]
