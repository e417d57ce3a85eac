"""Pruning superseded history in Neo4j: the read that finds what a retention policy lets go, the deletes.

What goes (``cypher/retention/find_prunable.cypher``): decisions superseded before the cutoff in
plans in Apply, and plans invalidated before the cutoff whose nearest live (not invalidated)
ancestor plan is in Apply, whole. An invalidated plan's own phase froze when it was invalidated,
so its decisions wait for that ancestor too. With them go their context snapshots and checkpoint
groups unless something that stays still captured them, and a pruned plan's reviews and phase
changes. Correction attempts always stay: they keep every id they name as a property. The marker of
an OTLP trace (``:Trace``) goes with the last of the plans it was imported as (each names its trace:
``trace/mark_imported``); while one stays, the marker stays, so spans of the trace sent again are
told apart from a new trace's and record nothing twice.

What expires (``cypher/retention/find_expired_traces.cypher``): the spans of a trace whose root
span never came, with its marker, once nothing of the trace was received since the spans cutoff.

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

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain.retention import PRUNABLE_PHASE, PruneResult
from decisiontrail.graphdb.database import Transaction


def find_prunable(tx: Transaction, cutoff: datetime, spans_cutoff: datetime, dry_run: bool) -> PruneResult:
    """What a policy with ``cutoff`` lets go (``retention/find_prunable``) and the traces that expire
    as of ``spans_cutoff`` (``retention/find_expired_traces``)."""
    row = tx.run(query("retention/find_prunable"), cutoff=cutoff, phase=PRUNABLE_PHASE.value).single(strict=True)
    expired = {r["trace_id"]: r["spans"] for r in tx.run(query("retention/find_expired_traces"), cutoff=spans_cutoff)}
    return PruneResult(
        cutoff=cutoff,
        dry_run=dry_run,
        traces=row["traces"],
        spans_cutoff=spans_cutoff,
        expired_trace_ids=tuple(expired),
        expired_spans=sum(expired.values()),
        decision_ids=tuple(row["decision_ids"]),
        plan_ids=tuple(row["plan_ids"]),
        contexts=row["contexts"],
        checkpoint_groups=row["checkpoint_groups"],
        reviews=row["reviews"],
        phase_changes=row["phase_changes"],
    )


def delete_decisions(tx: Transaction, decision_ids: Sequence[str]) -> dict[str, Any]:
    """Delete these decisions and what only they held; deleted_ids, deleted_contexts, deleted_groups.

    Run again after a retry it deletes what is left: MATCH finds only what still exists.
    """
    return dict(tx.run(query("retention/delete_decisions"), decision_ids=list(decision_ids)).single(strict=True))


def delete_plans(tx: Transaction, plan_ids: Sequence[str]) -> dict[str, Any]:
    """Delete these plans whole; deleted_ids, deleted_reviews, deleted_phase_changes, deleted_contexts,
    deleted_traces (the markers of traces these were the last plans of)."""
    return dict(tx.run(query("retention/delete_plans"), plan_ids=list(plan_ids)).single(strict=True))


def expire_traces(tx: Transaction, trace_ids: Sequence[str], cutoff: datetime) -> dict[str, Any]:
    """Delete these traces and their kept spans if, under their locks, they still wait for their root
    and received nothing since ``cutoff``; expired_ids, expired_spans."""
    return dict(tx.run(query("retention/expire_traces"), trace_ids=sorted(trace_ids), cutoff=cutoff).single(strict=True))
