"""Corrections in Neo4j: downstream walks, supersession and attempts, as functions of a transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from decisiontrail.cypher import query
from decisiontrail.domain import Decision, Phase
from decisiontrail.domain.correction import CorrectionAttempt, Downstream, Impact, ImpactedDecision, ReplayOutcome
from decisiontrail.domain.placement import Placed, Recording
from decisiontrail.domain.recording import Review
from decisiontrail.graphdb.database import Transaction, lock_holder
from decisiontrail.graphdb.decisions import creation_params
from decisiontrail.graphdb.outbox import Announcement, announce_param
from decisiontrail.graphdb.records import (
    attempt_from_properties,
    attempt_properties,
    decision_from_record,
    impacted_from_row,
    review_from_record,
)


@dataclass(frozen=True)
class Placing:
    """What placing a correction decision is judged by (decision/read_placements' facts for it),
    read by the correction's reads for the id it is to have."""

    correction_id: str
    next_sequence: int
    automation_edit_code: float | None
    automation_execute_command: float | None
    current_root_id: str | None
    correction_exists: bool
    parents: Mapping[str, tuple[str, bool]]
    """The decision it hangs under, the corrected decision's parent (none for a root): plan id, superseded."""


@dataclass(frozen=True)
class CorrectionFacts:
    """What a correction reads first, under the decision's and its plan's locks and those of the
    plans its downstream touched: the decision, its chain, and its downstream read whole."""

    decision: Decision
    superseded_by: str | None
    plan_phase: str
    first_in_chain: str
    attempts_before: int
    locked_plan_ids: tuple[str, ...]
    downstream: Downstream
    """Read under the locks of ``locked_plan_ids``; it may reach a plan beyond them (recorded between the walks)."""
    pending_reviews: tuple[Review, ...]
    """Pending in the locked plans, oldest first."""
    waiting: tuple[tuple[str, tuple[str, ...]], ...]
    """(plan id, dependency ids) of each review pending outside the locked plans whose proposal has dependencies."""
    placing: Placing
    """What placing the correction decision is judged by, read with the rest (``placement_of``)."""

    def placement_of(self, recording: Recording, phase: Phase) -> dict[str, Any]:
        """The facts ``domain.placement.place_all`` judges the correction decision by, in
        decision/read_placements' shape, judged in ``phase``: the reads took them for the id it
        was to have, under the corrected decision's parent, with no dependency or key; a recording
        other than that is refused here (read_placements would read its facts)."""
        draft, placing = recording.draft, self.placing
        parent = draft.parent_decision_id
        if (
            draft.decision_id != placing.correction_id
            or draft.corrects_decision_id != self.decision.decision_id
            or (parent is not None and parent not in placing.parents)
            or draft.depends_on
            or recording.infer_parent
            or recording.key_to_look_up is not None
        ):
            raise ValueError(f"the correction's reads took no placement facts for decision {draft.decision_id}")
        parent_plan_id, parent_superseded = placing.parents[parent] if parent is not None else (None, False)
        return {
            "plan_exists": True,  # the decision's plan, locked
            "sequence_number": placing.next_sequence,
            "plan_phase": phase.value,
            "automation_edit_code": placing.automation_edit_code,
            "automation_execute_command": placing.automation_execute_command,
            "current_root_id": placing.current_root_id,
            "decision_exists": placing.correction_exists,
            "latest_of_parent_types": None,
            "latest_of_parent_types_in_run": None,
            "parent_exists": parent is not None,
            "parent_plan_id": parent_plan_id,
            "parent_superseded": parent_superseded,
            "missing_dependencies": [],
            "superseded_dependencies": [],
            "corrected_exists": True,  # the decision read, locked
            "existing_decision": None,
            "existing_review": None,
            "lapsed_reviews": [],  # a correction decision has no proposal: never held
        }


def begin(tx: Transaction, decision_id: str, correction_id: str, *, also_lock: Sequence[str] = ()) -> CorrectionFacts | None:
    """Lock the decision, its plan, the plans its downstream touches and ``also_lock``, then read
    the decision whole, its chain, its downstream and what else the rules need, and what placing
    the correction decision, ``correction_id``, is judged by."""
    facts = tx.run(
        query("correction/begin_correction"),
        holder=lock_holder(tx),
        decision_id=decision_id,
        correction_id=correction_id,
        also_lock=list(dict.fromkeys(also_lock)),
    ).single()
    if facts is None:
        return None
    first_id, hops = facts["chain"]
    return CorrectionFacts(
        decision=decision_from_record(facts),
        superseded_by=facts["superseded_by"],
        plan_phase=facts["plan_phase"],
        first_in_chain=first_id,
        attempts_before=int(hops),
        locked_plan_ids=tuple(facts["locked_plan_ids"]),
        downstream=_downstream(facts),
        pending_reviews=tuple(_reviews(facts["pending_reviews"])),
        waiting=tuple((plan_id, tuple(ids)) for plan_id, ids in facts["waiting"]),
        placing=Placing(
            correction_id=correction_id,
            next_sequence=facts["next_sequence"],
            automation_edit_code=facts["automation_edit_code"],
            automation_execute_command=facts["automation_execute_command"],
            current_root_id=facts["current_root_id"],
            correction_exists=facts["correction_exists"],
            parents={parent_id: (plan_id, superseded) for parent_id, plan_id, superseded in facts["parents"]},
        ),
    )


def lock_decision(tx: Transaction, decision_id: str) -> bool:
    """Lock the decision and its plan (recordings into the plan wait); False for an unknown id."""
    return tx.run(query("correction/read_correction_facts"), decision_id=decision_id, holder=lock_holder(tx)).single() is not None


def downstream(tx: Transaction, decision_id: str) -> Impact:
    """Everything correcting ``decision_id`` would invalidate (the decision itself not included)."""
    return _impact(tx.run(query("correction/downstream"), decision_id=decision_id).single(strict=True))


def downstream_with_origin(tx: Transaction, decision_id: str) -> tuple[ImpactedDecision, str | None, Impact] | None:
    """In one statement: the decision (None when it does not exist), what supersedes it, and
    everything correcting it would invalidate (itself not included)."""
    record = tx.run(query("correction/downstream"), decision_id=decision_id).single(strict=True)
    if record["decision_id"] is None:
        return None
    return impacted_from_row(record["origin"]), record["superseded_by"], _impact(record)


def downstream_as_of(tx: Transaction, decision_id: str, as_of: datetime) -> Impact:
    """What correcting ``decision_id`` at ``as_of`` would have invalidated (the decision itself not included)."""
    return _impact(tx.run(query("correction/downstream_as_of"), decision_id=decision_id, as_of=as_of).single(strict=True))


def edges_from(tx: Transaction, ids: list[str]) -> list[tuple[str, str, str]]:
    """The (from id, relationship, to id) edges leaving the given decisions and plans."""
    rows = tx.run(query("correction/downstream_edges"), ids=ids)
    return [(r["from_id"], r["relationship"], r["to_id"]) for r in rows]


@dataclass(frozen=True)
class PhaseMove:
    """The corrected plan's phase after the correction (a change is recorded only if it is one)."""

    plan_id: str
    phase: Phase
    by: str | None


def supersede_downstream(
    tx: Transaction,
    placed: Placed,
    attempt: CorrectionAttempt,
    cancelled_review_ids: list[str],
    at: datetime,
    move: PhaseMove,
    announce: Announcement | None = None,
) -> Superseded:
    """Write the correction decision as ``placed``, then walk the corrected decision's
    downstream again (under the locks the reads took) and
    supersede what it reaches by the attempt's correction, invalidate the plans spawned in it,
    cancel the reviews it made moot, lapse the approvals resolved as a superseded decision other
    than the corrected one, store the attempt (its superseded ids as the walk found
    them), move the corrected plan to its phase, and add ``announce`` to the outbox (the
    statement carries it: see ``outbox.Announcement``). The ids do not travel back to Neo4j: what
    the walk reached is counted back instead, for the caller to compare with what it judged."""
    attempt_props = attempt_properties(attempt)
    del attempt_props["invalidated_decision_ids"]  # the walk's, set in the statement
    row = tx.run(
        query("correction/supersede_downstream"),
        **creation_params(placed.decisions, placed.sequences),
        plan_id=move.plan_id,
        to_phase=move.phase.value,
        phase_reason=f"correction of {attempt.corrected_decision_id} ({attempt.mode.value})",
        by=move.by,
        correction_id=attempt.correction_decision_id,
        original_id=attempt.corrected_decision_id,
        cancelled_review_ids=cancelled_review_ids,
        attempt=attempt_props,
        at=at,
        announce=announce_param(announce),
    ).single(strict=True)
    return Superseded(
        decisions=int(row["superseded_count"]),
        plan_ids=tuple(sorted(row["invalidated_plan_ids"])),
        lapsed=tuple((review_id, plan_id) for review_id, plan_id in row["lapsed"]),
    )


@dataclass(frozen=True)
class Superseded:
    """What a supersession reached: how many decisions, which plans, and the approvals that lapsed
    with it ((review id, plan id) each: resolved as a superseded decision other than the corrected one)."""

    decisions: int
    plan_ids: tuple[str, ...]
    lapsed: tuple[tuple[str, str], ...] = ()


def attempt_by_key(tx: Transaction, plan_id: str, idempotency_key: str) -> CorrectionAttempt | None:
    """The attempt a correction under ``idempotency_key`` made in ``plan_id``, if any."""
    row = tx.run(query("correction/attempt_by_key"), plan_id=plan_id, idempotency_key=idempotency_key).single()
    return attempt_from_properties(row["attempt"]) if row is not None else None


def keep_lapsed(tx: Transaction, attempt_id: str, review_ids: Sequence[str]) -> None:
    """Keep with the attempt the approvals its correction made lapse."""
    tx.run(query("correction/keep_lapsed"), attempt_id=attempt_id, review_ids=list(review_ids)).consume()


def link_replay(
    tx: Transaction, correction_id: str, decision_ids: tuple[str, ...], corrected_id: str, replacement_id: str | None
) -> None:
    """The replay's decisions depend on the correction; ``replacement_id`` REPLACES the corrected decision."""
    tx.run(
        query("correction/link_replay"),
        correction_id=correction_id,
        decision_ids=list(decision_ids),
        corrected_id=corrected_id,
        replacement_id=replacement_id,
    ).consume()


def attempts(tx: Transaction, decision_ids: list[str]) -> list[list[CorrectionAttempt]]:
    """For each decision, in the order given, every attempt on the correction chain it belongs to, oldest first."""
    result = tx.run(query("correction/list_attempts"), decision_ids=decision_ids)
    return [[attempt_from_properties(a) for a in r["attempts"]] for r in result]


def get_attempt(tx: Transaction, attempt_id: str) -> CorrectionAttempt | None:
    record = tx.run(query("correction/get_attempt"), attempt_id=attempt_id).single()
    return None if record is None else attempt_from_properties(record["attempt"])


def set_replay_outcome(
    tx: Transaction, attempt_id: str, outcome: ReplayOutcome, detail: str | None, decision_ids: tuple[str, ...], at: datetime
) -> tuple[CorrectionAttempt | None, list[str]]:
    """Store how a replay went; (the attempt as stored or None if unknown, the named decisions that do not exist)."""
    row = tx.run(
        query("correction/set_replay_outcome"),
        attempt_id=attempt_id,
        outcome=outcome.value,
        detail=detail,
        decision_ids=list(decision_ids),
        at=at,
    ).single()
    if row is None:
        return None, []
    return attempt_from_properties(row["attempt"]), list(row["missing"])


def _reviews(rows: list[dict[str, Any]]) -> list[Review]:
    return [review_from_record({"review": review, "decision_id": None}) for review in rows]


def _downstream(record: Mapping[str, Any]) -> Downstream:
    """begin_correction's downstream, summarised from its rows ([plan, number, id, type], and for a
    decision with a checkpoint its thread, phase, checkpoint namespace and id too, in plan and
    sequence order): each plan's decision ids, the count of each type, and each actor run's
    earliest decision with a checkpoint (where its replay starts).

    >>> rows = [["P", 1, "a", "strategy_choice"], ["P", 2, "b", "tool_invocation", "t", "execute", "", "c2"],
    ...         ["P", 3, "c", "tool_invocation", "t", "execute", "", "c3"], ["Q", 0, "d", "prompt_definition"]]
    >>> summary = _downstream({"rows": rows, "plan_ids": ["Q"]})
    >>> summary.runs, summary.counts_by_type
    ((('P', ('a', 'b', 'c')), ('Q', ('d',))), {'prompt_definition': 1, 'strategy_choice': 1, 'tool_invocation': 2})
    >>> [(e.decision_id, e.checkpoint_id) for e in summary.earliest]
    [('b', 'c2')]
    """
    runs: dict[str, list[str]] = {}
    counts: Counter[str] = Counter()
    first_of_run: dict[tuple[str, str], list[Any]] = {}
    for row in record["rows"]:
        plan_id, number, decision_id, decision_type = row[:4]
        runs.setdefault(plan_id, []).append(decision_id)
        counts[decision_type] += 1
        if len(row) > 4:
            thread, phase, namespace, checkpoint_id = row[4:]
            kept = first_of_run.get((plan_id, thread))
            if kept is None or number < kept[3]:
                first_of_run[(plan_id, thread)] = [
                    decision_id,
                    decision_type,
                    plan_id,
                    number,
                    phase,
                    thread,
                    namespace,
                    checkpoint_id,
                ]
    earliest = sorted((impacted_from_row(row) for row in first_of_run.values()), key=lambda d: (d.plan_id, d.sequence_number))
    return Downstream(
        runs=tuple(sorted((plan_id, tuple(ids)) for plan_id, ids in runs.items())),
        plan_ids=tuple(sorted(record["plan_ids"])),
        counts_by_type=dict(sorted(counts.items())),
        earliest=tuple(earliest),
    )


def _impact(record: Mapping[str, Any]) -> Impact:
    decisions = sorted((impacted_from_row(row) for row in record["decisions"]), key=lambda d: (d.plan_id, d.sequence_number))
    return Impact.model_construct(
        decision_id=record["decision_id"], decisions=tuple(decisions), plan_ids=tuple(sorted(record["plan_ids"]))
    )


@dataclass(frozen=True)
class AttemptRow:
    """A correction attempt as a dataset example is built from it: the plan it was made in, the
    decision that REPLACES the one it corrected, and what of it the caller may see."""

    attempt: CorrectionAttempt
    plan_id: str
    project: str | None
    replacement_id: str | None
    replayed_ids: tuple[str, ...]
    invalidated_decision_count: int
    invalidated_plan_count: int


def example_rows(
    tx: Transaction,
    *,
    plan_id: str | None,
    project: str | None,
    hierarchy: bool,
    owner: str | None,
    scope_project: str | None,
) -> list[AttemptRow]:
    """The attempts made in ``plan_id`` (with ``hierarchy``, in the plans below it too) or in
    ``project``'s plans, oldest first; only plans of ``owner`` and ``scope_project`` when given."""
    rows = tx.run(
        query("correction/list_examples"),
        plan_id=plan_id,
        of_project=project,
        hierarchy=hierarchy,
        owner=owner,
        project=scope_project,
    )
    return [
        AttemptRow(
            attempt=attempt_from_properties(r["attempt"]),
            plan_id=r["plan_id"],
            project=r["project"],
            replacement_id=r["replacement_id"],
            replayed_ids=tuple(r["replayed_ids"]),
            invalidated_decision_count=int(r["invalidated_decision_count"]),
            invalidated_plan_count=int(r["invalidated_plan_count"]),
        )
        for r in rows
    ]
