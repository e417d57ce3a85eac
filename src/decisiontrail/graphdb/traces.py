"""OTLP traces in Neo4j: the lock each import takes on its traces, spans kept until their trace's root arrives."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from decisiontrail.cypher import query
from decisiontrail.domain.traces import Span, is_trace_root
from decisiontrail.graphdb.database import Transaction


def lock(tx: Transaction, trace_ids: Sequence[str], at: datetime, sender: str | None) -> dict[str, tuple[bool, str | None]]:
    """Lock the traces (creating their records on first sight, as ``sender``'s); for each, whether
    it was imported already, and who sent its first spans."""
    rows = tx.run(query("trace/lock_traces"), trace_ids=sorted(set(trace_ids)), at=at, sender=sender)
    return {row["trace_id"]: (row["imported"], row["sender"]) for row in rows}


def recorded(tx: Transaction, ids: Sequence[str]) -> set[str]:
    """Which of these plan or decision ids exist."""
    return set(tx.run(query("trace/find_recorded"), ids=list(ids)).single(strict=True)["found"])


def keep(tx: Transaction, spans: Sequence[Span], at: datetime) -> None:
    """Keep spans until their trace is imported, from ``at`` (what a prune's trace wait counts from);
    a span kept already is not kept twice."""
    rows = [
        {
            "key": f"{s.trace_id}:{s.span_id}",
            "trace_id": s.trace_id,
            "span_id": s.span_id,
            "is_root": is_trace_root(s),
            "body": json.dumps(s.to_json(), ensure_ascii=False, sort_keys=True),
        }
        for s in spans
    ]
    tx.run(query("trace/stage_spans"), spans=rows, at=at).consume()


def complete(tx: Transaction, trace_ids: Sequence[str]) -> dict[str, list[Span]]:
    """Of ``trace_ids``, the traces not yet imported whose root span has arrived, with all their kept spans."""
    rows = tx.run(query("trace/read_complete"), trace_ids=sorted(set(trace_ids)))
    return {row["trace_id"]: [Span.from_json(json.loads(body)) for body in row["bodies"]] for row in rows}


def kept(tx: Transaction, trace_ids: Sequence[str]) -> dict[str, list[Span]]:
    """The spans kept of ``trace_ids`` (not yet imported), by trace; a trace with none is left out."""
    rows = tx.run(query("trace/read_kept"), trace_ids=sorted(set(trace_ids)))
    return {row["trace_id"]: [Span.from_json(json.loads(body)) for body in row["bodies"]] for row in rows}


def mark_imported(tx: Transaction, imported: Mapping[str, tuple[Sequence[str], int]], at: datetime) -> None:
    """Record each trace as imported (with the ids of its plans, each plan naming the trace, and its
    count of decisions) and drop its kept spans."""
    traces = [
        {"trace_id": t, "plan_ids": list(plan_ids), "decisions": decisions} for t, (plan_ids, decisions) in imported.items()
    ]
    tx.run(query("trace/mark_imported"), traces=traces, at=at).consume()
