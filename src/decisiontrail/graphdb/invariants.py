"""Invariant sets in Neo4j (the global one and each project's), and a plan's declared invariants."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain.invariants import Invariant, InvariantSet, Scope
from decisiontrail.graphdb.database import Transaction
from decisiontrail.graphdb.records import json_text, native_datetime


def get_sets(tx: Transaction, project: str | None) -> tuple[InvariantSet | None, InvariantSet | None]:
    """(the global set, ``project``'s set), None where none was ever set."""
    found = [_set(r) for r in tx.run(query("invariant/get_sets"), project=project)]
    by_scope = {s.scope: s for s in found}
    return by_scope.get(Scope.GLOBAL), by_scope.get(Scope.PROJECT)


def put_set(tx: Transaction, invariant_set: InvariantSet) -> InvariantSet:
    """Replace the set with the same key; the set as stored."""
    record = tx.run(
        query("invariant/set_invariants"),
        key=invariant_set.key,
        scope=invariant_set.scope.value,
        project=invariant_set.project,
        invariants=_dump(invariant_set.invariants),
        at=invariant_set.updated_at,
        by=invariant_set.updated_by,
    ).single(strict=True)
    return _set(record)


def set_plan_invariants(
    tx: Transaction, plan_id: str, invariants: Sequence[Invariant], removed: Sequence[str] | None = None
) -> None:
    """The plan's declared invariants; with ``removed``, the names removed from it too."""
    tx.run(
        query("plan/set_invariants"),
        plan_id=plan_id,
        invariants=_dump(invariants),
        removed=list(removed) if removed is not None else None,
    ).consume()


def _dump(invariants: Sequence[Invariant]) -> str:
    return json_text([i.model_dump(mode="json") for i in invariants])


def _set(row: Mapping[str, Any]) -> InvariantSet:
    return InvariantSet(
        scope=Scope(row["scope"]),
        project=row["project"],
        invariants=tuple(Invariant(**i) for i in json.loads(row["invariants"] or "[]")),
        updated_at=native_datetime(row["updated_at"]) if row["updated_at"] is not None else None,
        updated_by=row["updated_by"],
    )
