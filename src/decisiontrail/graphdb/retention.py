"""Pruning superseded history: one read finds what a retention policy lets go, bounded writes delete it.

What goes (``cypher/retention/find_prunable.cypher``): decisions superseded before the cutoff in
plans in Apply, and plans invalidated before the cutoff whose nearest live (not invalidated)
ancestor plan is in Apply, whole. An invalidated plan's own phase froze when it was invalidated,
so its decisions wait for that ancestor too. With them go their context snapshots and checkpoint
groups unless something that stays still captured them, and a pruned plan's reviews and phase
changes. Correction attempts always stay: they keep every id they name as a property.

A stale record stays while a record that stays refers to it, directly or through other stale
records (PARENT, DEPENDS_ON, SUPERSEDED_BY, CORRECTS, IN_PLAN, CHILD_OF, SPAWNED_BY): no
surviving decision loses its parent, a dependency, its successor (without which it would read as
current) or its plan, and no surviving plan its parent plan or spawning decision. The case that
binds in practice is a correction's original: the current correction CORRECTS it and correction
history walks that edge to find the attempts, so the original stays while its superseded
downstream goes. A review of a surviving plan stays even when the decision it resolved as goes.

The read and the deletes are separate transactions. Between them nothing new refers to the found
records in normal use: recording and add_dependency refuse superseded parents and dependencies,
and a correction only supersedes current decisions. (The store does not refuse spawning a child
plan from a superseded decision, or a new root in an invalidated plan; doing either to history
older than the cutoff while a prune runs could leave a dangling reference.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, LiteralString

import neo4j

from decisiontrail.cypher import query
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.retention import PRUNABLE_PHASE, PruneResult, RetentionPolicy
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb.connection import Graph, translated_errors

log = logging.getLogger(__name__)

BATCH_SIZE = 1000
"""Records deleted per write transaction: bounds the transaction's memory on a large history."""


def prune(
    graph: Graph,
    policy: RetentionPolicy,
    *,
    dry_run: bool,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
    batch_size: int = BATCH_SIZE,
) -> PruneResult:
    """Delete (or, with ``dry_run``, only find) the history ``policy`` lets go as of ``now``.

    The dry run returns exactly the set the real run would delete. The real run deletes the
    decisions first, then the plans, ``batch_size`` at a time, each batch in its own write
    transaction, and reports each batch through ``progress``; it returns what it deleted.
    """
    if batch_size < 1:
        raise ValidationFailed(f"batch_size: a batch deletes at least one record, not {batch_size}", field="batch_size")
    cutoff = policy.cutoff(now or utc_now())
    report = progress or log.info
    found = _find(graph, cutoff, dry_run)
    report(
        f"found {len(found.decision_ids)} decision(s) and {len(found.plan_ids)} plan(s) "
        f"superseded or invalidated before {cutoff.isoformat()}"
    )
    if dry_run or found.empty:
        return found

    deleted_decisions: list[str] = []
    deleted_plans: list[str] = []
    contexts = groups = reviews = changes = 0
    for batch in _batches(found.decision_ids, batch_size):
        row = _write(graph, query("retention/delete_decisions"), decision_ids=list(batch))
        deleted_decisions += row["deleted_ids"]
        contexts += row["deleted_contexts"]
        groups += row["deleted_groups"]
        report(f"deleted {len(deleted_decisions)}/{len(found.decision_ids)} decision(s)")
    for batch in _batches(found.plan_ids, batch_size):
        row = _write(graph, query("retention/delete_plans"), plan_ids=list(batch))
        deleted_plans += row["deleted_ids"]
        reviews += row["deleted_reviews"]
        changes += row["deleted_phase_changes"]
        contexts += row["deleted_contexts"]
        report(f"deleted {len(deleted_plans)}/{len(found.plan_ids)} plan(s)")
    return PruneResult(
        cutoff=cutoff,
        dry_run=False,
        decision_ids=tuple(deleted_decisions),
        plan_ids=tuple(deleted_plans),
        contexts=contexts,
        checkpoint_groups=groups,
        reviews=reviews,
        phase_changes=changes,
    )


def _find(graph: Graph, cutoff: datetime, dry_run: bool) -> PruneResult:
    with translated_errors():
        records, _, _ = graph.driver.execute_query(
            query("retention/find_prunable"),
            {"cutoff": cutoff, "phase": PRUNABLE_PHASE.value},
            database_=graph.database,
            routing_=neo4j.RoutingControl.READ,
        )
    row = records[0]
    return PruneResult(
        cutoff=cutoff,
        dry_run=dry_run,
        decision_ids=tuple(row["decision_ids"]),
        plan_ids=tuple(row["plan_ids"]),
        contexts=row["contexts"],
        checkpoint_groups=row["checkpoint_groups"],
        reviews=row["reviews"],
        phase_changes=row["phase_changes"],
    )


def _write(graph: Graph, statement: LiteralString, **params: Any) -> dict[str, Any]:
    def work(tx: neo4j.ManagedTransaction) -> dict[str, Any]:
        # A retried transaction deletes the same ids again: MATCH finds what is left, so it is idempotent.
        return dict(tx.run(statement, params).single(strict=True))

    with translated_errors("the prune conflicts with another write"), graph.driver.session(database=graph.database) as session:
        return session.execute_write(work)


def _batches(ids: Sequence[str], size: int) -> list[Sequence[str]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]
