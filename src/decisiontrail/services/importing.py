"""Importing agent traces: OpenTelemetry spans from any instrumented runtime become plans and decisions.

One request (an OTLP export, or a file given to ``decisiontrail import otlp``) is one write
transaction: its traces are locked, its spans kept until their trace's root span has arrived,
and each trace whose root is in is imported whole by ``domain.traces.import_steps``, its
decisions placed by the same rules as every other recording. A trace is imported once: spans
sent again, or after their trace was imported, record nothing. Spans whose root never comes do not
wait forever: a prune expires a trace that received nothing for the trace wait
(``services.retention``), and a span of it sent later is kept again, as a new trace's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from decisiontrail.access import Action, Principal
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.placement import Recording
from decisiontrail.domain.plan import MAX_PROJECT
from decisiontrail.domain.traces import (
    ChangePhase,
    CreatePlan,
    PlaceDecisions,
    Span,
    decision_kind,
    import_steps,
    is_trace_root,
    kept_out_reason,
    recorded_id,
)
from decisiontrail.events import DecisionEvent
from decisiontrail.exceptions import Conflict, ValidationFailed
from decisiontrail.graphdb import traces
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.lifecycle import change_phase, store_plan
from decisiontrail.services.recording import events_of, place
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role

PROJECT_ATTRIBUTE = "decisiontrail.project"
"""The resource attribute naming the project a trace's plans belong to (else the caller's)."""


@dataclass(frozen=True)
class ImportReport:
    """What one request did with its spans."""

    spans: int
    kept_out: Counter[str] = field(default_factory=Counter)
    """Spans that carry no decision, by their kind: kept out of the lineage."""
    already_imported: int = 0
    """Spans of traces imported before that were imported with them: nothing recorded again."""
    late: int = 0
    """Spans that carry a decision but arrived after their trace was imported: not recorded."""
    waiting: int = 0
    """Spans kept until their trace's root span arrives."""
    traces: tuple[str, ...] = ()
    """Traces imported by this request."""
    plan_ids: tuple[str, ...] = ()
    decision_ids: tuple[str, ...] = ()

    @property
    def rejected(self) -> int:
        """OTLP's ``rejected_spans``: the spans kept out of the lineage, and those that came too late."""
        return sum(self.kept_out.values()) + self.late

    def message(self) -> str:
        """OTLP's ``error_message``: why spans were kept out, and what else a sender should know ('' if nothing)."""
        said = []
        if self.kept_out:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.kept_out.items()))
            said.append(f"{self.rejected} of {self.spans} spans carry no decision and were kept out ({kinds})")
        if self.late:
            said.append(f"{self.late} spans arrived after their trace was imported and were not recorded")
        if self.already_imported:
            said.append(f"{self.already_imported} spans belong to traces imported before; nothing was recorded twice")
        if self.waiting:
            said.append(f"{self.waiting} spans wait for their trace's root span")
        return "; ".join(said)


def import_spans(trail: Trail, spans: Sequence[Span], *, principal: Principal) -> ImportReport:
    """Keep ``spans`` and import every trace whose root span has now arrived, in one transaction:
    all of it is written, or (a span refused by a rule) none.

    Plans are the caller's, in the project the spans' resource names (``decisiontrail.project``)
    or else the caller's own; a caller limited to a project imports only into it. A trace is one
    caller's: spans of a trace another caller sent first are refused (``CONFLICT``). A caller whose
    role may not record is refused (Forbidden) before anything is read.
    """
    require_role(principal, Action.RECORD)
    kinds = {(s.trace_id, s.span_id): decision_kind(s) for s in spans}  # a malformed decision attribute refuses the request
    kept_out = Counter(kept_out_reason(s) for s in spans if kinds[(s.trace_id, s.span_id)] is None)
    projects = {s.trace_id: _project(s, principal) for s in spans}
    owner = principal.name
    at = utc_now()

    def work(tx: Transaction) -> tuple[ImportReport, list[DecisionEvent]]:
        locked = traces.lock(tx, [s.trace_id for s in spans], at, owner)
        for trace_id, (_, sender) in locked.items():
            if sender != owner:
                raise Conflict(
                    f"trace {trace_id} is recorded by another caller ({sender or 'the command line'}); it is theirs to send"
                )
        imported_before = {t for t, (imported, _) in locked.items() if imported}
        # What carries no decision is kept only as a place in the trace (with a model call's output, which
        # may be the plan of the plan span around it), except a root, which may stand in for its agent.
        fresh = [
            s if kinds[(s.trace_id, s.span_id)] is not None or is_trace_root(s) else s.slim()
            for s in spans
            if s.trace_id not in imported_before
        ]
        # A trace whose root is here is imported now, from these spans and those kept of it before:
        # its spans are not kept only to be read back and dropped in this transaction (for a trace
        # sent whole, as many writes as its decisions'). The others' spans are kept until theirs comes.
        rooted = {s.trace_id for s in fresh if is_trace_root(s)}
        traces.keep(tx, [s for s in fresh if s.trace_id not in rooted], at)
        again = [(s, recorded_id(s)) for s in spans if s.trace_id in imported_before]
        found = traces.recorded(tx, [i for _, i in again if i is not None])
        late = sum(1 for _, i in again if i is not None and i not in found)
        complete = traces.complete(tx, [s.trace_id for s in fresh if s.trace_id not in rooted])
        complete.update(_with_kept(traces.kept(tx, sorted(rooted)) if rooted else {}, fresh, rooted))
        complete = dict(sorted(complete.items()))
        events: list[DecisionEvent] = []
        plan_ids: list[str] = []
        decision_ids: list[str] = []
        counts: dict[str, tuple[list[str], int]] = {}
        for trace_id, trace_spans in complete.items():
            before = (len(plan_ids), len(decision_ids))
            for step in import_steps(trace_spans, owner=owner, project=projects.get(trace_id)):
                if isinstance(step, CreatePlan):
                    store_plan(tx, step.plan)
                    placed = place(tx, [Recording(step.root, context=step.context)])
                    plan_ids.append(step.plan.plan_id)
                elif isinstance(step, PlaceDecisions):
                    placed = place(tx, [Recording(d, context=c) for d, c in step.decisions])
                else:
                    assert isinstance(step, ChangePhase)
                    change_phase(tx, step.plan_id, step.target, step.reason, at=step.at, by=owner)
                    continue
                decision_ids.extend(d.decision_id for d, _ in placed.decisions)
                events.extend(events_of(placed))
            counts[trace_id] = (plan_ids[before[0] :], len(decision_ids) - before[1])
        traces.mark_imported(tx, counts, at)
        report = ImportReport(
            spans=len(spans),
            kept_out=kept_out,
            already_imported=len(again) - late,
            late=late,
            waiting=sum(1 for s in fresh if s.trace_id not in complete),
            traces=tuple(complete),
            plan_ids=tuple(plan_ids),
            decision_ids=tuple(decision_ids),
        )
        return report, events

    def imported(done: tuple[ImportReport, list[DecisionEvent]]) -> Touched | None:
        # Spans only of traces imported before (sent again, or late) write nothing, and leave no entry.
        report = done[0]
        if not report.traces and not report.waiting:
            return None
        return Touched(plans=report.plan_ids, decisions=report.decision_ids, others=sorted({s.trace_id for s in spans}))

    report, _ = trail.write(work, lambda done: done[1], audit=Audit(principal, "importing.import_spans", made=imported))
    return report


def _with_kept(kept: dict[str, list[Span]], arriving: Sequence[Span], trace_ids: set[str]) -> dict[str, list[Span]]:
    """Each of ``trace_ids``' spans: those kept of it before, then those arriving now that were not
    (a span sent again counts once, as the first kept of it, as keeping it would have had it).

    >>> from decisiontrail.domain.traces.spans import Span
    >>> def span(span_id, name):
    ...     return Span(trace_id="t", span_id=span_id, parent_span_id=None, name=name, start_ns=1, end_ns=2)
    >>> whole = _with_kept({"t": [span("a", "kept")]}, [span("a", "again"), span("b", "new")], {"t"})
    >>> [(s.span_id, s.name) for s in whole["t"]]
    [('a', 'kept'), ('b', 'new')]
    """
    whole: dict[str, dict[str, Span]] = {t: {s.span_id: s for s in kept.get(t, [])} for t in trace_ids}
    for s in arriving:
        if s.trace_id in whole:
            whole[s.trace_id].setdefault(s.span_id, s)
    return {t: list(spans.values()) for t, spans in whole.items()}


def _project(span: Span, principal: Principal) -> str | None:
    named = span.resource.get(PROJECT_ATTRIBUTE)
    limited_to = principal.project
    if named is None or named == "":
        return limited_to
    if not isinstance(named, str) or not named.strip() or len(named) > MAX_PROJECT:
        raise ValidationFailed(
            f"resource.{PROJECT_ATTRIBUTE}: {str(named)[:40]!r} is not a project name (1 to {MAX_PROJECT} characters)",
            field=f"resource.{PROJECT_ATTRIBUTE}",
        )
    if limited_to is not None and named != limited_to:
        raise ValidationFailed(
            f"resource.{PROJECT_ATTRIBUTE}: this token records only into project {limited_to}, not {named}",
            field=f"resource.{PROJECT_ATTRIBUTE}",
        )
    return named
