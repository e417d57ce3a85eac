"""The recording protocol's pure rules (ADR-033): who may record what, where it hangs, when a person decides."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from decisiontrail.domain.decision import (
    PHASES_BY_TYPE,
    ArtifactRef,
    ContextSnapshot,
    Decision,
    DecisionIds,
    DecisionType,
    NonBlank,
    Phase,
    UtcDatetime,
    partial_decision,
    utc_now,
)
from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.domain.plan import AutomationProfile
from decisiontrail.exceptions import Conflict, IdempotencyKeyMismatch, RuleViolation, ValidationFailed

SYSTEM_DECISION_TYPES = frozenset({DecisionType.PROMPT_DEFINITION, DecisionType.USER_INTERVENTION})
"""Only the plan lifecycle engine creates these; actors may not record them."""

ACTOR_DECISION_TYPES = (
    DecisionType.INVARIANT_ENFORCED,
    DecisionType.STRATEGY_CHOICE,
    DecisionType.RESOURCE_SELECTION,
    DecisionType.SUBPLAN_SPAWN,
    DecisionType.SUBPLAN_PARALLEL_SPAWN,
    DecisionType.IMPLEMENTATION_CHOICE,
    DecisionType.TOOL_INVOCATION,
    DecisionType.ERROR_RECOVERY,
    DecisionType.VALIDATION_RESPONSE,
)
"""The nine types an actor records through record_decision, in ADR-033's order."""

# Parent inference: which types a decision of each type naturally hangs under (ADR-007's tree).
# The first match wins in this order; the plan's root is always the last resort.
PARENT_TYPES: dict[DecisionType, tuple[DecisionType, ...]] = {
    DecisionType.INVARIANT_ENFORCED: (),
    DecisionType.STRATEGY_CHOICE: (),
    DecisionType.SUBPLAN_SPAWN: (DecisionType.STRATEGY_CHOICE,),
    DecisionType.SUBPLAN_PARALLEL_SPAWN: (DecisionType.STRATEGY_CHOICE,),
    DecisionType.RESOURCE_SELECTION: (DecisionType.IMPLEMENTATION_CHOICE, DecisionType.STRATEGY_CHOICE),
    DecisionType.IMPLEMENTATION_CHOICE: (DecisionType.STRATEGY_CHOICE,),
    DecisionType.TOOL_INVOCATION: (DecisionType.IMPLEMENTATION_CHOICE, DecisionType.STRATEGY_CHOICE),
    DecisionType.ERROR_RECOVERY: (
        DecisionType.TOOL_INVOCATION,
        DecisionType.IMPLEMENTATION_CHOICE,
        DecisionType.STRATEGY_CHOICE,
    ),
    DecisionType.VALIDATION_RESPONSE: (
        DecisionType.TOOL_INVOCATION,
        DecisionType.IMPLEMENTATION_CHOICE,
        DecisionType.STRATEGY_CHOICE,
    ),
    DecisionType.USER_INTERVENTION: (),
    DecisionType.PROMPT_DEFINITION: (),
}


MAX_IDEMPOTENCY_KEY = 1024
"""Characters an idempotency key may have."""


class Proposal(BaseModel):
    """What an actor asks to record: ADR-033's tool input plus what the runtime captured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: Ulid
    decision_type: DecisionType
    question: NonBlank
    chosen_option: NonBlank
    alternatives_considered: tuple[str, ...] = ()
    confidence_score: float | None = Field(default=None, ge=0.0, le=1.0)
    rationale: NonBlank
    parent_decision_id: Ulid | None = None
    depends_on: DecisionIds = ()
    context_snapshot: ContextSnapshot
    actor_reasoning: str | None = None
    artifacts_produced: tuple[ArtifactRef, ...] = ()
    # Unique-indexed: Neo4j cannot index a value of about 8 KB or more (4 bytes a character at most).
    idempotency_key: NonBlank = Field(max_length=MAX_IDEMPOTENCY_KEY)
    created_at: UtcDatetime = Field(default_factory=utc_now)

    @property
    def request_digest(self) -> str:
        """What makes two proposals the same request: the decision the actor asked to record.

        Not its key, the moment it arrived, or the context snapshot the runtime captured with it:
        a retry sends the same request later, and a run resumed from a checkpoint re-sends the
        same tool call from a forked checkpoint id.
        """
        request = self.model_dump_json(exclude={"idempotency_key", "created_at", "context_snapshot"})
        return hashlib.sha256(request.encode("utf-8")).hexdigest()

    def draft(self) -> Decision:
        """The Decision this proposal asks for, before it is placed: under the parent it names (if
        any), in its type's first phase, with a fresh id.

        Built from the proposal's fields without validating them again (a thousand per large
        batch): the proposal's validation checked each of them as the Decision's would, and the
        Decision's own rules hold for any proposal of a type an actor may record (a fresh id is
        nobody's parent or dependency, the phase is the type's). A system type is built by
        ``decision``, validated.
        """
        phase = PHASES_BY_TYPE[self.decision_type][0]
        if self.decision_type in SYSTEM_DECISION_TYPES:
            return self.decision(parent_decision_id=self.parent_decision_id, phase=phase)
        return partial_decision(**self._decision_fields(self.parent_decision_id, phase, new_ulid()))

    def decision(self, *, parent_decision_id: str | None, phase: Phase, decision_id: str | None = None) -> Decision:
        """The Decision this proposal becomes, placed under ``parent_decision_id`` in ``phase``."""
        return Decision(**self._decision_fields(parent_decision_id, phase, decision_id or new_ulid()))

    def _decision_fields(self, parent_decision_id: str | None, phase: Phase, decision_id: str) -> dict[str, Any]:
        return {
            "decision_id": decision_id,
            "plan_id": self.plan_id,
            "parent_decision_id": parent_decision_id,
            "decision_type": self.decision_type,
            "phase": phase,
            "question": self.question,
            "chosen_option": self.chosen_option,
            "alternatives_considered": self.alternatives_considered,
            "confidence_score": self.confidence_score,
            "context_snapshot": self.context_snapshot,
            "rationale": self.rationale,
            "actor_reasoning": self.actor_reasoning,
            "depends_on": self.depends_on,
            "artifacts_produced": self.artifacts_produced,
            "created_at": self.created_at,
        }


def check_actor_may_record(decision_type: DecisionType) -> None:
    """Actors record nine types; prompt_definition and user_intervention are the system's."""
    if decision_type in SYSTEM_DECISION_TYPES:
        raise RuleViolation(
            f"decision_type: {decision_type.value} decisions are created only by the plan lifecycle "
            "engine, never through record_decision",
            rule="system_created_type",
        )


def check_snapshot_for_actor(snapshot: ContextSnapshot | None) -> ContextSnapshot:
    """An actor's decision is persisted only with a whole snapshot, its checkpoint included."""
    if snapshot is None:
        raise ValidationFailed(
            "context_snapshot: a decision without a context snapshot is invalid and is not persisted",
            field="context_snapshot",
        )
    if snapshot.actor_state_ref is None:
        raise ValidationFailed(
            "context_snapshot.actor_state_ref: an actor's decision needs the LangGraph checkpoint it was made from",
            field="context_snapshot.actor_state_ref",
        )
    return snapshot


def check_type_in_phase(decision_type: DecisionType, phase: Phase) -> None:
    """A plan accepts a decision type only in the phases ADR-007 gives it; Apply accepts none."""
    if phase is Phase.APPLY:
        raise RuleViolation("the plan is in its Apply phase, which accepts no new decisions", rule="apply_accepts_no_decisions")
    allowed = PHASES_BY_TYPE[decision_type]
    if phase not in allowed:
        names = " or ".join(p.value for p in allowed)
        raise RuleViolation(
            f"decision_type: a {decision_type.value} decision is made in {names}; the plan is in {phase.value}",
            rule="type_allowed_in_phase",
        )


def review_threshold(profile: AutomationProfile, phase: Phase) -> float:
    """The confidence a decision needs to be persisted without a person: edit_code in
    Strategize, execute_command in Execute."""
    return profile.edit_code if phase is Phase.STRATEGIZE else profile.execute_command


def needs_review(profile: AutomationProfile, phase: Phase, confidence: float | None) -> bool:
    """True when a person must decide: always at threshold 1.0, never at 0.0, and in between
    when the confidence is below the threshold (a missing score counts as below).

    >>> needs_review(AutomationProfile(edit_code=0.8), Phase.STRATEGIZE, 0.8)
    False
    >>> needs_review(AutomationProfile(edit_code=0.8), Phase.STRATEGIZE, 0.72)
    True
    """
    threshold = review_threshold(profile, phase)
    if threshold <= 0.0:
        return False
    if threshold >= 1.0:
        return True
    return confidence is None or confidence < threshold


class ReviewStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    ALTERNATIVE_SELECTED = "alternative_selected"
    CUSTOM = "custom"
    CANCELLED = "cancelled"  # a correction made it moot (see domain.correction.moot_reviews)
    LAPSED = "lapsed"  # resolved, then a correction superseded a decision the approval rested on


class ReviewAction(StrEnum):
    APPROVE = "approve"
    SELECT_ALTERNATIVE = "select_alternative"
    CUSTOM = "custom"


class Review(BaseModel):
    """A decision held for a person because its confidence was below the plan's threshold.

    Not part of the tree until resolved; then ``decision_id`` names the decision it became.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    review_id: Ulid = Field(default_factory=new_ulid)
    plan_id: Ulid
    proposal: Proposal
    parent_decision_id: Ulid | None
    phase: Phase
    threshold: float
    status: ReviewStatus = ReviewStatus.PENDING
    created_at: UtcDatetime = Field(default_factory=utc_now)
    resolved_at: UtcDatetime | None = None
    resolved_option: str | None = None
    decision_id: Ulid | None = None
    cancelled_by: Ulid | None = Field(default=None, description="the correction decision that made this review moot")
    resolved_by: str | None = Field(default=None, description="who resolved it: the caller's principal")
    approved_digest: str | None = Field(
        default=None, description="the action_digest of the decision it resolved as: what the person authorised"
    )
    lapsed_by: Ulid | None = Field(
        default=None, description="the correction that superseded what its approval rested on (status LAPSED)"
    )
    lapsed_at: UtcDatetime | None = None
    lapsed_from: ReviewStatus | None = Field(default=None, description="how it had been resolved before it lapsed")
    reopens: Ulid | None = Field(
        default=None, description="the lapsed review this one asks again: the same question, proposed after the correction"
    )
    reopened_by: Ulid | None = Field(default=None, description="the review that asks this lapsed one's question again")

    @property
    def reason(self) -> str:
        if self.reopens is not None:
            return (
                f"it asks again what review {self.reopens} approved before a correction superseded what that approval rested on"
            )
        score = (
            "no confidence score" if self.proposal.confidence_score is None else f"confidence {self.proposal.confidence_score:g}"
        )
        return f"{score} is below the {self.phase.value} threshold {self.threshold:g}"

    @property
    def digest(self) -> str:
        """The action_digest of what approving it records: the proposal under its parent, in its phase."""
        return self.proposal.decision(parent_decision_id=self.parent_decision_id, phase=self.phase).action_digest


def resolution(
    review: Review, action: ReviewAction, option: str | None, digest: str | None = None
) -> tuple[Decision, ReviewStatus]:
    """The decision a reviewer's answer makes of a pending review.

    An override puts the actor's original choice into alternatives_considered. ``digest``, when
    given, is the review's ``digest`` as the reviewer saw it: the answer is refused unless the
    review still proposes exactly that action.
    """
    if review.status is not ReviewStatus.PENDING:
        raise RuleViolation(f"review {review.review_id} was already resolved ({review.status.value})", rule="review_is_pending")
    if digest is not None and digest.strip() != review.digest:
        raise Conflict(
            f"digest: review {review.review_id} proposes the action {review.digest}, not {digest.strip()}: "
            "read the review again and answer what it proposes now"
        )
    proposal = review.proposal
    decision = proposal.decision(parent_decision_id=review.parent_decision_id, phase=review.phase)
    if action is ReviewAction.APPROVE:
        return decision, ReviewStatus.APPROVED
    if option is None or not option.strip():
        raise ValidationFailed(f"option: {action.value} needs the option the reviewer chose", field="option")
    if action is ReviewAction.SELECT_ALTERNATIVE and option not in proposal.alternatives_considered:
        listed = ", ".join(repr(a) for a in proposal.alternatives_considered) or "none"
        raise ValidationFailed(f"option: {option!r} is not one of the alternatives considered ({listed})", field="option")
    option = option.strip()
    others = tuple(a for a in proposal.alternatives_considered if a != option)
    original = () if option == proposal.chosen_option else (proposal.chosen_option,)
    overridden = decision.model_copy(update={"chosen_option": option, "alternatives_considered": (*original, *others)})
    status = ReviewStatus.ALTERNATIVE_SELECTED if action is ReviewAction.SELECT_ALTERNATIVE else ReviewStatus.CUSTOM
    return overridden, status


@dataclass(frozen=True)
class CheckpointGroup:
    """What an Execute-phase recording checkpoints: the actor's checkpoint and the resources in play."""

    group_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    resources: tuple[str, ...]


def checkpoint_group_for(decision: Decision) -> CheckpointGroup | None:
    """Execute-phase decisions recorded by an actor get a checkpoint group; Strategize ones
    do not (Strategize is read-only)."""
    state = decision.context_snapshot.actor_state_ref
    if decision.phase is not Phase.EXECUTE or state is None:
        return None
    resources = tuple(
        f"{r.resource_id}:{r.path}" if r.path else r.resource_id for r in decision.context_snapshot.relevant_resources
    )
    return CheckpointGroup(new_ulid(), state.thread_id, state.checkpoint_ns, state.checkpoint_id, resources)


PHASE_TRANSITIONS = {
    (Phase.STRATEGIZE, Phase.EXECUTE),
    (Phase.EXECUTE, Phase.APPLY),
    (Phase.EXECUTE, Phase.STRATEGIZE),  # phase reversion: Execute cannot proceed within the strategy
}


def check_phase_transition(
    current: Phase, target: Phase, pending_reviews: int, strategy_choices: int = 1, unenforced: Sequence[str] = ()
) -> None:
    """Strategize -> Execute -> Apply, and Execute -> Strategize as a reversion; a plan leaves
    Strategize with at least one current strategy_choice (ADR-033 expects them from Strategize, and
    Execute decisions hang under them) and with every invariant it declares enforced by a current
    invariant_enforced (``unenforced`` names those that are not: Execute would run unconstrained)."""
    if (current, target) not in PHASE_TRANSITIONS:
        raise RuleViolation(
            f"phase: a plan moves strategize -> execute -> apply (or reverts execute -> strategize), "
            f"not {current.value} -> {target.value}",
            rule="phase_transition",
        )
    if pending_reviews:
        raise RuleViolation(
            f"the plan has {pending_reviews} pending review(s); resolve them before leaving {current.value}",
            rule="no_pending_reviews",
        )
    if current is Phase.STRATEGIZE and target is Phase.EXECUTE and strategy_choices < 1:
        raise RuleViolation(
            "the plan has no current strategy_choice; Strategize decides the strategy that Execute decisions "
            "hang under: record one before moving to execute",
            rule="strategy_before_execute",
        )
    if current is Phase.STRATEGIZE and target is Phase.EXECUTE and unenforced:
        raise RuleViolation(
            f"the plan declares invariant(s) {', '.join(repr(n) for n in unenforced)} that no current "
            "invariant_enforced decision enforces; reconciliation records them at Strategize entry (or "
            "addInvariant, or removeInvariant for one that should not apply) before the plan moves to execute",
            rule="invariants_enforced_before_execute",
        )


CONTEXT_REF_PREFIX = "decisiontrail:context/"


@dataclass(frozen=True)
class CapturedContext:
    """An actor's full context, canonically serialised; stored content-addressed by its hash."""

    content: str

    @property
    def context_hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()

    @property
    def ref(self) -> str:
        return context_ref(self.context_hash)


def context_ref(context_hash: str) -> str:
    """Where the service keeps the context with this hash: ``decisiontrail:context/<sha256>``."""
    return CONTEXT_REF_PREFIX + context_hash


def check_own_context_ref(ref: str, context: CapturedContext | None) -> None:
    """A snapshot that names the service's own store (``decisiontrail:context/<sha256>``) brings
    the context it names, or the reference would point at nothing (check's context_snapshot rule).

    >>> check_own_context_ref("s3://contexts/x", None)
    >>> check_own_context_ref(context_ref("0" * 64), None)
    Traceback (most recent call last):
    ...
    decisiontrail.exceptions.ValidationFailed: context_snapshot.hot_context_ref: names the service's own context store, so the context itself (hotContext) must come with it
    """
    if not ref.startswith(CONTEXT_REF_PREFIX):
        return
    if context is None:
        raise ValidationFailed(
            "context_snapshot.hot_context_ref: names the service's own context store, so the context itself (hotContext) must come with it",
            field="context_snapshot.hot_context_ref",
        )
    if ref != context.ref:
        raise ValidationFailed(
            f"context_snapshot.hot_context_ref: names another context than the one given, which is {context.ref}",
            field="context_snapshot.hot_context_ref",
        )


def context_hash_of(ref: str) -> str:
    """The hash a context reference names, or ValidationFailed for a reference of another store."""
    if not ref.startswith(CONTEXT_REF_PREFIX):
        raise ValidationFailed(f"hot_context_ref: {ref!r} is not a decisiontrail context reference", field="hot_context_ref")
    return ref.removeprefix(CONTEXT_REF_PREFIX)


def check_same_request(key: str, digest: str, seen_id: str, seen_digest: str | None, *, held: bool) -> None:
    """A key seen before in the plan answers with what it recorded only for the same request.

    Reused for a different request, it is refused, naming what it recorded (as idempotent APIs
    such as Stripe's do). A record written before digests were kept (``seen_digest`` None) is
    taken to be the same request.
    """
    if seen_digest is None or seen_digest == digest:
        return
    what = f"review {seen_id} (pending a person)" if held else f"decision {seen_id}"
    raise IdempotencyKeyMismatch(
        f"idempotency_key: {key!r} was already used in this plan for a different request, which recorded "
        f"{what}; send that request again to get it back, or use a new key for a new request"
    )


def derive_idempotency_key(thread_id: str, checkpoint_ns: str, step_id: str, decision_type: str, question: str) -> str:
    """The key of a recording nobody named one for: the same step of the same actor run,
    asking the same question, is the same recording, however often it is retried or replayed.

    ``step_id`` identifies the step: the tool call's id inside a LangGraph run (stable when a
    run is resumed or replayed from a checkpoint, which forks the checkpoint id), else the
    checkpoint id.
    """
    material = json.dumps([thread_id, checkpoint_ns, step_id, decision_type, question])
    return "derived:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


PROMPT_QUESTION = "What is this plan to accomplish?"


def prompt_context(description: str, arguments: Mapping[str, Any]) -> CapturedContext:
    """The prompt_definition's content: the action's description and the user's arguments."""
    return CapturedContext(json.dumps({"description": description, "arguments": arguments}, sort_keys=True, ensure_ascii=False))
