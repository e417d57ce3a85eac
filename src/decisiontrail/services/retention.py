"""Pruning superseded history, and expiring OTLP spans whose trace's root never came: one read finds
what a retention policy lets go, bounded writes delete it.

What goes, and why what stays stays, is written where it is found: ``graphdb/retention.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from decisiontrail.access import Action, Principal
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.retention import PruneResult, RetentionPolicy
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import retention
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_whole_store

log = logging.getLogger(__name__)

BATCH_SIZE = 1000
"""Records deleted per write transaction: bounds the transaction's memory on a large history."""


def prune(
    trail: Trail,
    policy: RetentionPolicy,
    *,
    principal: Principal,
    dry_run: bool,
    now: datetime | None = None,
    progress: Callable[[str], None] | None = None,
    batch_size: int = BATCH_SIZE,
) -> PruneResult:
    """Delete (or, with ``dry_run``, only find) the history ``policy`` lets go as of ``now``, and the
    traces still waiting for their root span that received nothing for ``policy.trace_wait``.

    The dry run returns exactly the set the real run would delete. The real run expires the
    waiting traces first, then deletes the decisions, then the plans (with the markers of the
    traces whose last plans they were), ``batch_size`` at a time, each batch in its own write
    transaction, and reports each batch through ``progress``; it returns what it deleted. A trace
    that received a span or its root between the read and its batch is judged again and kept.
    Only for a ``principal`` that may configure and sees every plan (the command line, a retention job).
    """
    require_whole_store(principal, Action.CONFIGURE)
    if batch_size < 1:
        raise ValidationFailed(f"batch_size: a batch deletes at least one record, not {batch_size}", field="batch_size")
    moment = now or utc_now()
    cutoff, spans_cutoff = policy.cutoff(moment), policy.spans_cutoff(moment)
    report = progress or log.info
    found = trail.database.read(retention.find_prunable, cutoff, spans_cutoff, dry_run)
    report(
        f"found {len(found.decision_ids)} decision(s) and {len(found.plan_ids)} plan(s) "
        f"superseded or invalidated before {cutoff.isoformat()}, and {len(found.expired_trace_ids)} trace(s) "
        f"waiting for their root span with nothing received since {spans_cutoff.isoformat()}"
    )
    if dry_run or found.empty:
        return found

    expired_traces: list[str] = []
    deleted_decisions: list[str] = []
    deleted_plans: list[str] = []
    contexts = groups = reviews = changes = traces = spans = 0
    for batch in _batches(found.expired_trace_ids, batch_size):
        row = trail.database.write_or("the prune conflicts with another write", retention.expire_traces, batch, spans_cutoff)
        expired_traces += row["expired_ids"]
        spans += row["expired_spans"]
        report(f"expired {len(expired_traces)}/{len(found.expired_trace_ids)} trace(s)")
    for batch in _batches(found.decision_ids, batch_size):
        row = trail.database.write_or("the prune conflicts with another write", retention.delete_decisions, batch)
        deleted_decisions += row["deleted_ids"]
        contexts += row["deleted_contexts"]
        groups += row["deleted_groups"]
        report(f"deleted {len(deleted_decisions)}/{len(found.decision_ids)} decision(s)")
    for batch in _batches(found.plan_ids, batch_size):
        row = trail.database.write_or("the prune conflicts with another write", retention.delete_plans, batch)
        deleted_plans += row["deleted_ids"]
        reviews += row["deleted_reviews"]
        changes += row["deleted_phase_changes"]
        contexts += row["deleted_contexts"]
        traces += row["deleted_traces"]
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
        traces=traces,
        spans_cutoff=spans_cutoff,
        expired_trace_ids=tuple(expired_traces),
        expired_spans=spans,
    )


def _batches(ids: Sequence[str], size: int) -> list[Sequence[str]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]
