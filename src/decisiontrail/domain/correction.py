"""Correction (ADR-007): what a correction creates, what it invalidates, and where work re-runs."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from decisiontrail.domain.decision import (
    PHASES_BY_TYPE,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Phase,
    UtcDatetime,
    utc_now,
)
from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.domain.recording import MAX_IDEMPOTENCY_KEY, CapturedContext, Review, ReviewStatus
from decisiontrail.exceptions import Conflict, IdempotencyKeyMismatch, ValidationFailed


class CorrectionMode(StrEnum):
    """revert: roll back to the original's checkpoint and re-run from there.
    append: keep the state reached and add the fix at the end of the original's branch.

    Both hang the correction where the original stood (``correction_decision``); they differ in
    the plan's phase (``phase_after_correction``) and where replay resumes (``replay_frontier``)."""

    REVERT = "revert"
    APPEND = "append"


class ReplayOutcome(StrEnum):
    PENDING = "pending"
    REPLAYED = "replayed"
    FAILED = "failed"
    NOT_NEEDED = "not_needed"


def check_replay_outcome(outcome: ReplayOutcome) -> ReplayOutcome:
    """A replay is reported done (replayed, failed, or not needed); pending is where it starts."""
    if outcome is ReplayOutcome.PENDING:
        raise ValidationFailed(
            "outcome: report how the replay went (replayed, failed or not_needed), not pending", field="outcome"
        )
    return outcome


def parse_mode(value: str) -> CorrectionMode:
    try:
        return CorrectionMode(value.lower())
    except ValueError:
        raise ValidationFailed(f"mode: {value!r} is not a correction mode; use revert or append", field="mode") from None


def check_guidance(guidance: str) -> str:
    if not guidance or not guidance.strip():
        raise ValidationFailed("guidance: a correction needs guidance, the corrected decision in words", field="guidance")
    return guidance.strip()


def check_correctable(decision_id: str, superseded_by: str | None) -> None:
    """A superseded decision is history: correct what superseded it instead."""
    if superseded_by is not None:
        raise Conflict(f"decision {decision_id} is already superseded by {superseded_by}; correct {superseded_by} instead")


def check_correction_key(key: str | None) -> str | None:
    """A correction's idempotency key, as a recording's: not blank, at most 1,024 characters."""
    if key is None:
        return None
    if not key.strip():
        raise ValidationFailed("idempotency_key: must not be blank", field="idempotency_key")
    if len(key) > MAX_IDEMPOTENCY_KEY:
        raise ValidationFailed(
            f"idempotency_key: at most {MAX_IDEMPOTENCY_KEY} characters, got {len(key)}", field="idempotency_key"
        )
    return key


def correction_digest(
    decision_id: str,
    mode: CorrectionMode,
    guidance: str,
    reason: str,
    requested_by: str,
    description: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> str:
    """What a correction request asked, as one SHA-256: the same request sent again under its
    idempotency key has the same digest; any other request under that key, another.

    >>> a = correction_digest("01ARZ3NDEKTSV4RRFFQ69G5FAV", CorrectionMode.REVERT, "use B", "", "ana")
    >>> a == correction_digest("01ARZ3NDEKTSV4RRFFQ69G5FAV", CorrectionMode.REVERT, "use B", "", "ana"), a == correction_digest(
    ...     "01ARZ3NDEKTSV4RRFFQ69G5FAV", CorrectionMode.APPEND, "use B", "", "ana")
    (True, False)
    """
    asked = [decision_id, mode.value, guidance, reason, requested_by, description, arguments]
    return "sha256:" + hashlib.sha256(json.dumps(asked, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def check_same_correction(key: str, attempt: CorrectionAttempt, digest: str) -> None:
    """A key is one request: sent again with another request, it is refused (nothing written)."""
    if attempt.request_digest != digest:
        raise IdempotencyKeyMismatch(
            f"idempotency_key: {key!r} was already used in this plan for a different correction, attempt "
            f"{attempt.attempt_id} of decision {attempt.corrected_decision_id}; send that request again to get "
            "its answer back, or use a new key for a new correction"
        )


@dataclass(frozen=True, slots=True)
class ImpactedDecision:
    """A decision a correction would invalidate, with what replaying it needs.

    A plain record, not a validated model: a correction reads one per decision of its downstream
    (a hundred thousand, for a large one), from values the store validated when it wrote them.
    """

    decision_id: str
    decision_type: DecisionType
    plan_id: str
    sequence_number: int
    phase: Phase
    thread_id: str | None = None
    """The actor run it was made in, and its checkpoint there (none for decisions the system made)."""
    checkpoint_ns: str = ""
    checkpoint_id: str | None = None

    @property
    def actor_state_ref(self) -> CheckpointRef | None:
        if self.thread_id is None or self.checkpoint_id is None:
            return None
        return CheckpointRef(thread_id=self.thread_id, checkpoint_ns=self.checkpoint_ns, checkpoint_id=self.checkpoint_id)

    @classmethod
    def of(cls, decision: Decision) -> ImpactedDecision:
        state = decision.context_snapshot.actor_state_ref
        return cls(
            decision_id=decision.decision_id,
            decision_type=decision.decision_type,
            plan_id=decision.plan_id,
            sequence_number=decision.sequence_number or 0,
            phase=decision.phase,
            thread_id=state.thread_id if state else None,
            checkpoint_ns=state.checkpoint_ns if state else "",
            checkpoint_id=state.checkpoint_id if state else None,
        )


class Impact(BaseModel):
    """What correcting a decision invalidates: the decision, its downstream and the plans spawned in it."""

    model_config = ConfigDict(frozen=True)

    decision_id: str
    decisions: tuple[ImpactedDecision, ...]
    plan_ids: tuple[str, ...]

    @property
    def decision_ids(self) -> tuple[str, ...]:
        return tuple(d.decision_id for d in self.decisions)

    @property
    def counts_by_type(self) -> dict[str, int]:
        return dict(sorted(Counter(d.decision_type.value for d in self.decisions).items()))

    def with_origin(self, origin: ImpactedDecision) -> Impact:
        """The impact including the corrected decision itself, which is superseded too."""
        return self.model_copy(update={"decisions": (origin, *self.decisions)})


@dataclass(frozen=True)
class Downstream:
    """A correction's downstream as the correction uses it, summarised where it was walked: which
    decisions it supersedes, plan by plan, how many of each type, and where replay starts; not a
    record per decision (a correction of 100,000 built 100,000 of them, only to count, sort and
    announce them).

    ``runs``: each plan's decision ids by sequence number, the plans by id (the order the
    correction lists them in). ``earliest``: at least the earliest decision of each actor run
    (plan and thread) that has a checkpoint, where ``replay_frontier`` starts. The corrected
    decision itself is in none of them.
    """

    runs: tuple[tuple[str, tuple[str, ...]], ...]
    plan_ids: tuple[str, ...]
    """The plans spawned inside it, invalidated with it."""
    counts_by_type: dict[str, int]
    earliest: tuple[ImpactedDecision, ...]

    @property
    def decision_ids(self) -> tuple[str, ...]:
        return tuple(decision_id for _, ids in self.runs for decision_id in ids)

    @property
    def touched_plan_ids(self) -> set[str]:
        """Every plan a decision of it belongs to, and every plan spawned inside it."""
        return {*(plan_id for plan_id, _ in self.runs), *self.plan_ids}

    def counts_with(self, origin: ImpactedDecision) -> dict[str, int]:
        """Decisions by type, the corrected one included, as the attempt keeps them."""
        counts = Counter(self.counts_by_type)
        counts[origin.decision_type.value] += 1
        return dict(sorted(counts.items()))


class FrontierPoint(BaseModel):
    """Where invalidated work must re-run: one actor run, from one checkpoint."""

    model_config = ConfigDict(frozen=True)

    plan_id: str
    thread_id: str
    checkpoint: CheckpointRef | None = Field(description="None in append mode: resume from the thread's latest state")
    first_invalidated_decision_id: str
    decision_type: DecisionType


def replay_frontier(
    mode: CorrectionMode, original: ImpactedDecision, invalidated: Iterable[ImpactedDecision]
) -> tuple[FrontierPoint, ...]:
    """The earliest invalidated decision of each actor run, with its checkpoint (revert), or
    the run's latest state (append); the original's own run first, then by sequence number.
    ``invalidated``: the downstream in plan and sequence order (its decisions, or at least each
    run's earliest with a checkpoint: ``Downstream.earliest``), the original not included."""
    earliest: dict[tuple[str, str], ImpactedDecision] = {}
    for d in sorted((original, *invalidated), key=lambda d: (d.plan_id != original.plan_id, d.sequence_number)):
        if d.thread_id is not None and d.checkpoint_id is not None:
            earliest.setdefault((d.plan_id, d.thread_id), d)
    return tuple(
        FrontierPoint(
            plan_id=plan_id,
            thread_id=thread_id,
            checkpoint=d.actor_state_ref if mode is CorrectionMode.REVERT else None,
            first_invalidated_decision_id=d.decision_id,
            decision_type=d.decision_type,
        )
        for (plan_id, thread_id), d in earliest.items()
    )


def correction_decision(
    original: Decision,
    guidance: str,
    reason: str,
    *,
    at: datetime,
    prompt: CapturedContext | None = None,
    decision_id: str | None = None,
) -> tuple[Decision, CapturedContext]:
    """The new decision a correction records (``decision_id``: the id it is to have, by default a new one).

    Correcting a prompt_definition gives the plan a new root with the corrected prompt
    (``prompt``: the new description and arguments, as instantiation captures them).
    Any other correction is the user's guidance as a user_intervention, hung under the original's
    parent in either mode (``correction_parent``). Its replacement decisions come from the actor's
    replay.
    """
    context = CapturedContext(
        json.dumps({"guidance": guidance, "reason": reason, "corrects": original.decision_id}, sort_keys=True)
    )
    root = original.decision_type is DecisionType.PROMPT_DEFINITION
    if root and prompt is not None:
        context = prompt
    decision = Decision(
        decision_id=decision_id or new_ulid(),
        plan_id=original.plan_id,
        parent_decision_id=correction_parent(original),
        decision_type=DecisionType.PROMPT_DEFINITION if root else DecisionType.USER_INTERVENTION,
        question=original.question if root else f"Correction of a {original.decision_type.value}: {original.question}",
        chosen_option=context.content if root and prompt is not None else guidance,
        alternatives_considered=(original.chosen_option,),
        rationale=reason or "Corrected by the user.",
        context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        is_correction=True,
        corrects_decision_id=original.decision_id,
        correction_reason=reason or None,
        created_at=at,
    )
    return decision, context


def correction_parent(original: Decision) -> str | None:
    """Where a correction of ``original`` hangs, in either mode: under ``original``'s parent (none
    for a prompt correction, the plan's new root).

    A correction rests on what the decision it replaces rested on, and on nothing else: hung there,
    it is superseded by a correction of one of those ancestors, never by a correction of another
    branch. In revert mode that is where the original stood; in append mode it is the end of the
    original's branch, the fix after everything recorded: the original and everything under it are
    superseded, so the path from the root to the original ends at its parent (an ancestor of a
    current decision is current). Hung under the plan's latest decision instead, whatever its
    branch, an appended correction fell with every later correction of that unrelated branch.
    """
    if original.decision_type is DecisionType.PROMPT_DEFINITION:
        return None
    return original.parent_decision_id


@dataclass(frozen=True)
class PathStep:
    """One edge of the walk from a corrected decision to what it invalidates: the record reached,
    and the relationship that leads from it back to the one before (it hangs on that one)."""

    relationship: str
    node_id: str


def invalidation_paths(
    origin_id: str, reached: Iterable[str], edges: Iterable[tuple[str, str, str]]
) -> dict[str, tuple[PathStep, ...]]:
    """Why each reached record is downstream of ``origin_id``: a shortest chain of edges to it.

    ``edges`` are (from, relationship, to), pointing from the dependent end; the downstream walk
    follows them backwards, breadth first, through ``reached`` only.

    >>> paths = invalidation_paths("S", ["P", "C"], [("P", "PARENT", "S"), ("C", "DEPENDS_ON", "P")])
    >>> [(s.relationship, s.node_id) for s in paths["C"]]
    [('PARENT', 'P'), ('DEPENDS_ON', 'C')]
    """
    inside = set(reached)
    dependents: dict[str, list[tuple[str, str]]] = {}
    for source, relationship, target in sorted(edges):
        if source in inside:
            dependents.setdefault(target, []).append((relationship, source))
    paths: dict[str, tuple[PathStep, ...]] = {origin_id: ()}
    frontier = [origin_id]
    while frontier:
        following = []
        for node in frontier:
            for relationship, dependent in dependents.get(node, []):
                if dependent not in paths:
                    paths[dependent] = (*paths[node], PathStep(relationship, dependent))
                    following.append(dependent)
        frontier = following
    del paths[origin_id]
    return paths


def check_current_at(decision: Decision, moment: datetime) -> None:
    """Refuse a question about ``decision`` as of ``moment`` when it was not current then."""
    if not visible_at(decision.created_at, decision.superseded_at, moment):
        when = "recorded after" if decision.created_at > moment else "superseded before"
        raise ValidationFailed(
            f"asOf: decision {decision.decision_id} was {when} {moment.isoformat()}; ask about a moment when it was current",
            field="asOf",
        )


def phase_after_correction(mode: CorrectionMode, original: Decision, plan_phase: Phase, *, root_id: str | None) -> Phase:
    """Revert re-runs from the original's phase (a Strategize decision reverts an executing
    plan to Strategize); append keeps the phase, but an applied plan goes back to Execute.

    A correction that hangs directly under the plan's prompt (``root_id``: the current root; an
    appended correction of a strategy_choice, say) is a Strategize decision whatever the mode: a
    decision made during Execute must be constrained by a Strategize decision, and ADR-007 answers
    a violation with a phase reversion, so the plan returns to Strategize with it.

    >>> from decisiontrail.domain.decision import ContextSnapshot
    >>> strategy = Decision(plan_id="01M8Q9T3CH0JJC3RE3HDQHJZJS", parent_decision_id="01M8Q9T3CH0JJC3RE3HDQHJZJR",
    ...                     decision_type=DecisionType.STRATEGY_CHOICE, question="q", chosen_option="o",
    ...                     context_snapshot=ContextSnapshot(hot_context_hash="0" * 64, hot_context_ref="r"))
    >>> phase_after_correction(CorrectionMode.APPEND, strategy, Phase.EXECUTE, root_id="01M8Q9T3CH0JJC3RE3HDQHJZJR").value
    'strategize'
    >>> phase_after_correction(CorrectionMode.APPEND, strategy, Phase.APPLY, root_id="01M8Q9T3CH0JJC3RE3HDQHJZJQ").value
    'execute'
    """
    if original.decision_type is DecisionType.PROMPT_DEFINITION:
        return Phase.STRATEGIZE
    if mode is CorrectionMode.REVERT:
        phase = original.phase if original.phase is not Phase.APPLY else Phase.EXECUTE
    else:
        phase = Phase.EXECUTE if plan_phase is Phase.APPLY else plan_phase
    if phase is Phase.EXECUTE and root_id is not None and correction_parent(original) == root_id:
        return Phase.STRATEGIZE
    return phase


class CorrectionAttempt(BaseModel):
    """One correction, kept whole: what was asked, what it invalidated, how replay went."""

    model_config = ConfigDict(frozen=True)

    attempt_id: Ulid = Field(default_factory=new_ulid)
    original_decision_id: Ulid  # the first decision of the correction chain
    corrected_decision_id: Ulid
    correction_decision_id: Ulid
    attempt_number: int = Field(ge=1)
    mode: CorrectionMode
    guidance: str
    reason: str
    requested_by: str
    at: UtcDatetime = Field(default_factory=utc_now)
    invalidated_decision_ids: tuple[str, ...]
    invalidated_plan_ids: tuple[str, ...]
    counts_by_type: dict[str, int]
    replay_frontier: tuple[FrontierPoint, ...]
    replay_outcome: ReplayOutcome = ReplayOutcome.PENDING
    replay_detail: str | None = None
    replayed_decision_ids: tuple[str, ...] = ()  # what the replay recorded, as the replaying actor reported it
    replayed_at: UtcDatetime | None = None  # when its outcome was reported (None while pending)
    cancelled_review_ids: tuple[str, ...] = ()  # pending reviews it made moot, cancelled with it
    lapsed_review_ids: tuple[str, ...] = ()  # resolved reviews whose approval lapsed with it
    idempotency_key: str | None = None  # the request's, when it named one (unique in the corrected decision's plan)
    request_digest: str | None = None  # what that request asked (``correction_digest``), kept with its key


class CorrectionResult(BaseModel):
    """What correct() did: the new decision, what it superseded, and where to re-run."""

    model_config = ConfigDict(frozen=True)

    correction: Decision
    attempt: CorrectionAttempt
    invalidated: tuple[str, ...]
    invalidated_plans: tuple[str, ...]
    cancelled_reviews: tuple[str, ...] = ()
    lapsed_reviews: tuple[str, ...] = ()
    """Resolved reviews whose approval lapsed: each resolved as a decision the correction superseded
    (other than the corrected one), so a person approved it on grounds that have changed."""

    repeated: bool = False
    """Answered from the attempt an earlier request with the same idempotency key made: nothing
    was written, announced or audited this time."""

    @property
    def replay_frontier(self) -> tuple[FrontierPoint, ...]:
        return self.attempt.replay_frontier

    @classmethod
    def again(cls, correction: Decision, attempt: CorrectionAttempt) -> CorrectionResult:
        """The answer a correction gave, from what it kept: its decision (as it stands now) and its attempt."""
        return cls(
            correction=correction,
            attempt=attempt,
            invalidated=attempt.invalidated_decision_ids,
            invalidated_plans=attempt.invalidated_plan_ids,
            cancelled_reviews=attempt.cancelled_review_ids,
            lapsed_reviews=attempt.lapsed_review_ids,
            repeated=True,
        )


def visible_at(created_at: datetime, superseded_at: datetime | None, moment: datetime) -> bool:
    """Whether a decision was part of the current tree at ``moment`` (an as-of read)."""
    return created_at <= moment and (superseded_at is None or superseded_at > moment)


def as_it_stood(decision: Decision, moment: datetime | None) -> Decision:
    """``decision`` as a read as of ``moment`` shows it: a correction made after that moment had
    not superseded it yet, so it reads current, with no successor; a dependency added or an
    artifact attached after it was not there yet (None: as it stands now).

    >>> from datetime import UTC
    >>> from decisiontrail.domain.decision import ContextSnapshot, DecisionType
    >>> snapshot = ContextSnapshot(hot_context_hash="0" * 64, hot_context_ref="r")
    >>> d = Decision(plan_id="01ARZ3NDEKTSV4RRFFQ69G5FAV", decision_type=DecisionType.PROMPT_DEFINITION,
    ...              question="q", chosen_option="o", context_snapshot=snapshot,
    ...              superseded_by="01ARZ3NDEKTSV4RRFFQ69G5FAW", superseded_at=datetime(2026, 12, 2, tzinfo=UTC))
    >>> as_it_stood(d, datetime(2026, 12, 1, tzinfo=UTC)).is_current, as_it_stood(d, datetime(2026, 12, 3, tzinfo=UTC)).is_current
    (True, False)
    """
    if moment is None:
        return decision
    update: dict[str, Any] = {}
    if decision.superseded_at is not None and decision.superseded_at > moment:
        update |= {"superseded_by": None, "superseded_at": None}
    later = {d for d, at in decision.dependencies_added if at > moment}
    if later:  # a dependency added after the moment (a replay's report) was not there yet
        update["depends_on"] = tuple(d for d in decision.depends_on if d not in later)
    attached = tuple(a for a in decision.artifacts_produced if a.attached_at is None or a.attached_at <= moment)
    if len(attached) < len(decision.artifacts_produced):
        update["artifacts_produced"] = attached
    return decision.model_copy(update=update) if update else decision


def plans_waiting_on(superseded: Collection[str], waiting: Iterable[tuple[str, Collection[str]]]) -> set[str]:
    """The plans of the reviews in ``waiting`` ((plan id, the ids its proposal depends on) each)
    whose proposals depend on a decision in ``superseded``: a correction cancels those reviews
    (``moot_reviews``), so it locks their plans and reads them there.

    >>> sorted(plans_waiting_on({"a", "b"}, [("P", ["x", "a"]), ("Q", ["y"]), ("R", ["b"])]))
    ['P', 'R']
    """
    gone = set(superseded)
    return {plan_id for plan_id, depends_on in waiting if gone.intersection(depends_on)}


def moot_reviews(
    pending: Iterable[Review],
    *,
    superseded: Collection[str],
    invalidated_plans: Collection[str],
    corrected_plan_id: str,
    phase: Phase,
) -> list[Review]:
    """The pending reviews a correction makes moot: they could never be resolved after it.

    A review is moot when its plan is invalidated, when the decision it would hang under or one
    it depends on is superseded, or when it waits in the corrected plan for a type the plan's
    new ``phase`` refuses. The correction cancels them in its own transaction.
    """
    moot = []
    for review in pending:
        if review.status is not ReviewStatus.PENDING:
            continue
        hangs_on = {review.parent_decision_id, *review.proposal.depends_on} - {None}
        if (
            review.plan_id in invalidated_plans
            or hangs_on & set(superseded)
            or (review.plan_id == corrected_plan_id and phase not in PHASES_BY_TYPE[review.proposal.decision_type])
        ):
            moot.append(review)
    return moot
