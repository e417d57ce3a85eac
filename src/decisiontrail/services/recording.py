"""Recording decisions: an actor's proposals (the LangGraph tool, the API) and the decisions the service builds.

Every recording is a batch (one recording is a batch of one) placed by one rule,
``domain.placement.place_all``, in one write transaction with one pair of statements: the facts
read under the plans' locks, the decisions written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


import jsonschema
from pydantic import ValidationError

from decisiontrail.access import Action, Principal
from decisiontrail.domain import ArtifactRef, ContextSnapshot, Decision, DecisionType
from decisiontrail.domain.decision import utc_now, with_artifacts
from decisiontrail.domain.placement import Outcome, Placed, Recording, Seen, place_all
from decisiontrail.domain.recording import (
    ACTOR_DECISION_TYPES,
    CapturedContext,
    Proposal,
    Review,
    check_actor_may_record,
    check_own_context_ref,
    check_snapshot_for_actor,
    derive_idempotency_key,
)
from decisiontrail.domain.rules import check_new_dependency
from decisiontrail.events import DecisionEvent, EventKind
from decisiontrail.exceptions import NotFound, ValidationFailed, validation_failed
from decisiontrail.graphdb import corrections, decisions, plans, reviews
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services import reading
from decisiontrail.services.trail import Audit, Touched, Trail, announcement
from decisiontrail.services.visibility import require_role, require_visible

TOOL_NAME = "record_decision"
"""ADR-033 registers the tool as ``local/record-decision``; model APIs allow no ``/`` in a tool name."""

TOOL_DESCRIPTION = (
    "Record a decision made during plan reasoning. Call this tool whenever you identify a choice "
    "point — a question where multiple valid approaches exist and a specific option must be "
    "selected to proceed."
)

# ADR-033's input and output schema, verbatim.
RECORD_DECISION_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision_type": {"type": "string", "enum": [t.value for t in ACTOR_DECISION_TYPES]},
        "question": {"type": "string", "description": "What question or ambiguity is being resolved"},
        "chosen_option": {"type": "string", "description": "The selected approach or answer"},
        "alternatives_considered": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Other options that were evaluated and rejected",
        },
        "confidence_score": {
            "type": "number",
            "minimum": 0.0,
            "maximum": 1.0,
            "description": "How confident the actor is in this choice (0.0-1.0)",
        },
        "rationale": {"type": "string", "description": "Why this option was chosen over the alternatives"},
        "parent_decision_id": {
            "type": "string",
            "description": "ULID of the parent decision in the tree structure. If omitted, the system "
            "infers the parent from the current decision context.",
        },
    },
    "required": ["decision_type", "question", "chosen_option", "rationale"],
}

RECORD_DECISION_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision_id": {"type": "string", "description": "The ULID of the created decision record"}},
}

_VALIDATOR = jsonschema.Draft202012Validator(RECORD_DECISION_INPUT_SCHEMA)


def validate_arguments(arguments: Mapping[str, Any]) -> None:
    """Refuse tool input that does not match ADR-033's schema, naming the field."""
    errors = sorted(_VALIDATOR.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    if error.validator == "required":
        field = str(error.message).split("'")[1]
        message = f"{field}: is required"
    else:
        field = ".".join(str(p) for p in error.absolute_path) or "input"
        message = f"{field}: {error.message}"
    if field == "decision_type" and isinstance(arguments.get("decision_type"), str):
        check_actor_may_record(_known_type(arguments["decision_type"]))
    raise ValidationFailed(message, field=field)


def _known_type(value: str) -> DecisionType:
    try:
        return DecisionType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in ACTOR_DECISION_TYPES)
        raise ValidationFailed(f"decision_type: {value!r} is not one of {allowed}", field="decision_type") from None


def propose(
    arguments: Mapping[str, Any],
    *,
    plan_id: str,
    snapshot: ContextSnapshot | None,
    idempotency_key: str | None = None,
    depends_on: Sequence[str] = (),
    actor_reasoning: str | None = None,
    step_id: str | None = None,
    artifacts_produced: Sequence[Mapping[str, str]] = (),
) -> Proposal:
    """Validate an actor's record_decision call (ADR-033's JSON input) and make it a Proposal
    (nothing is written)."""
    validate_arguments(arguments)
    return proposal(
        plan_id=plan_id,
        decision_type=DecisionType(arguments["decision_type"]),
        question=arguments["question"],
        chosen_option=arguments["chosen_option"],
        rationale=arguments["rationale"],
        alternatives_considered=arguments.get("alternatives_considered") or (),
        confidence_score=arguments.get("confidence_score"),
        parent_decision_id=arguments.get("parent_decision_id"),
        snapshot=snapshot,
        idempotency_key=idempotency_key,
        depends_on=depends_on,
        actor_reasoning=actor_reasoning,
        step_id=step_id,
        artifacts_produced=artifacts_produced,
    )


def proposal(
    *,
    plan_id: str,
    decision_type: DecisionType,
    question: str,
    chosen_option: str,
    rationale: str,
    snapshot: ContextSnapshot | None,
    alternatives_considered: Sequence[str] = (),
    confidence_score: float | None = None,
    parent_decision_id: str | None = None,
    idempotency_key: str | None = None,
    depends_on: Sequence[str] = (),
    actor_reasoning: str | None = None,
    step_id: str | None = None,
    artifacts_produced: Sequence[Mapping[str, str | None]] = (),
) -> Proposal:
    """A typed request to record (GraphQL's ``RecordDecisionInput`` arrives already typed) as a
    Proposal, by the same rules as ``propose`` after its JSON Schema check: an actor's snapshot
    with its checkpoint, a type an actor may record, the idempotency key given or derived."""
    snapshot = check_snapshot_for_actor(snapshot)
    check_actor_may_record(decision_type)
    state = snapshot.actor_state_ref
    assert state is not None  # check_snapshot_for_actor guarantees it
    key = idempotency_key or derive_idempotency_key(
        state.thread_id, state.checkpoint_ns, step_id or state.checkpoint_id, decision_type.value, question
    )
    try:
        return Proposal(
            plan_id=plan_id,
            decision_type=decision_type,
            question=question,
            chosen_option=chosen_option,
            alternatives_considered=tuple(alternatives_considered),
            confidence_score=confidence_score,
            rationale=rationale,
            parent_decision_id=parent_decision_id,
            depends_on=tuple(depends_on),
            context_snapshot=snapshot,
            actor_reasoning=actor_reasoning,
            artifacts_produced=tuple(artifacts_produced),  # validated into ArtifactRef
            idempotency_key=key,
        )
    except ValidationError as e:
        raise validation_failed(e) from e


def record_decision(
    trail: Trail,
    arguments: Mapping[str, Any],
    *,
    plan_id: str,
    snapshot: ContextSnapshot | None,
    context: CapturedContext | None = None,
    idempotency_key: str | None = None,
    depends_on: Sequence[str] = (),
    actor_reasoning: str | None = None,
    step_id: str | None = None,
    principal: Principal,
) -> Decision | Review:
    """Record what an actor decided, as ADR-033's record_decision does, for a ``principal`` that may record.

    ``arguments`` is the tool input the actor gave; the rest the runtime captured. Returns
    the persisted Decision, or the pending Review when the plan's automation profile asks a
    person first. The same idempotency key (given, or derived from the actor's thread,
    step and question; ``step_id`` names the step, by default the checkpoint) always returns
    what the first call produced.
    """
    require_role(principal, Action.RECORD)
    proposal = propose(
        arguments,
        plan_id=plan_id,
        snapshot=snapshot,
        idempotency_key=idempotency_key,
        depends_on=depends_on,
        actor_reasoning=actor_reasoning,
        step_id=step_id,
    )
    return record_proposal(trail, proposal, context, principal=principal)


def record_proposal(
    trail: Trail, proposal: Proposal, context: CapturedContext | None = None, *, principal: Principal
) -> Decision | Review:
    """One proposal (from ``propose``) with the context captured for it, if any."""
    return record_decisions(trail, [(proposal, context)], principal=principal)[0]


MAX_BATCH = 1000  # a batch of 1,000 typical decisions is well inside the 1 MiB request body


def record_decisions(
    trail: Trail, items: Sequence[tuple[Proposal, CapturedContext | None]], *, principal: Principal
) -> list[Decision | Review]:
    """A batch of proposals (from ``propose``), each with its captured context if any, in one
    transaction, in order: all are recorded (or held for review, or found already recorded), or,
    if one is refused, none. Everything a proposal names must be ``principal``'s to see. A key a
    request of this process still being processed holds refuses the batch at once
    (``IdempotencyKeyInUse``); a key used before in its plan for a different request refuses it
    too (``IdempotencyKeyMismatch``). Refused (Forbidden) for a ``principal`` that may not record."""
    require_role(principal, Action.RECORD)
    if len(items) > MAX_BATCH:
        raise ValidationFailed(f"inputs: at most {MAX_BATCH} decisions per batch, got {len(items)}", field="inputs")
    for proposal, context in items:
        check_own_context_ref(proposal.context_snapshot.hot_context_ref, context)
        if context is not None and context.context_hash != proposal.context_snapshot.hot_context_hash:
            raise ValidationFailed(
                "context_snapshot.hot_context_hash: does not match the SHA-256 of the captured context",
                field="context_snapshot.hot_context_hash",
            )
    recordings = [Recording.of(proposal, context) for proposal, context in items]

    def work(tx: Transaction) -> Placed:
        require_visible(
            tx,
            principal,
            plan_ids=[r.draft.plan_id for r in recordings],
            decision_ids=[d for p, _ in items for d in (p.parent_decision_id, *p.depends_on) if d is not None],
        )
        return place(tx, recordings, announce=True)

    with trail.keys_in_flight.holding({(p.plan_id, p.idempotency_key) for p, _ in items}):
        placed = trail.write(
            work,
            audit=Audit(
                principal,
                "recording.record_decisions",
                Touched(plans=[r.draft.plan_id for r in recordings]),
                written,
            ),
            conflict="a decision with one of these idempotency keys was recorded concurrently",
        )
    return _answers(trail, placed.outcomes, principal)


def record(
    trail: Trail,
    decision: Decision,
    *,
    idempotency_key: str | None = None,
    context: CapturedContext | None = None,
    principal: Principal,
    needs: Action = Action.RECORD,
    operation: str = "recording.record",
) -> Decision:
    """Store a decision the service built whole (a user's guidance, say) under the next sequence
    number of its plan, in the plan's current phase, which must allow its type. With an
    ``idempotency_key`` seen before in the plan, the decision recorded then is returned instead.
    ``principal`` must be allowed what the use-case building it ``needs`` (a user's guidance is a
    correction's), and the plan, the parent and the dependencies must be its to see. Its audit
    entry names ``operation``, the use-case that built the decision."""
    require_role(principal, needs)
    recording = Recording(decision, context=context, idempotency_key=idempotency_key)

    def work(tx: Transaction) -> Placed:
        named = [d for d in (decision.parent_decision_id, *decision.depends_on) if d is not None]
        require_visible(tx, principal, plan_ids=[decision.plan_id], decision_ids=named)
        return place(tx, [recording], announce=True)

    keys = {(decision.plan_id, idempotency_key)} if idempotency_key is not None else set()
    with trail.keys_in_flight.holding(keys):
        placed = trail.write(
            work,
            audit=Audit(principal, operation, Touched(plans=[decision.plan_id]), written),
            conflict=f"decision {decision.decision_id} is already recorded",
        )
    outcome = placed.outcomes[0]
    [found] = _answers(trail, [outcome], principal)
    assert isinstance(found, Decision)  # only an actor's proposal is ever held for review
    return found


def written(placed: Placed) -> Touched | None:
    """What a placement's audit entry names: its decisions and reviews; None (no entry) when every one
    was found already recorded under its idempotency key, and the request wrote nothing."""
    if all(isinstance(o, Seen) for o in placed.outcomes):
        return None
    return Touched.of(placed.outcomes)


def place(tx: Transaction, recordings: Sequence[Recording], *, announce: bool = False) -> Placed:
    """Inside a use-case's transaction: lock the plans, read the facts, judge, write. Decisions
    placed now are stamped now, under the locks, so creation times follow sequence numbers.
    ``announce``: the write carries the batch's events (``events_of``), for a use-case that writes
    nothing after it (``Trail.write`` without ``events``). (A correction judges its decision by
    the same rule on facts its own reads take, and writes it with its supersession.)"""
    facts = decisions.read_placements(tx, recordings)
    at = utc_now()
    placed = place_all(recordings, facts, at=at)
    decisions.create_all(tx, placed.decisions, placed.sequences, announcement(events_of(placed), at) if announce else None)
    reviews.create_all(tx, placed.reviews)
    return placed


def events_of(placed: Placed) -> list[DecisionEvent]:
    """What a placed batch announces: each decision recorded, each review held."""
    return [
        *(DecisionEvent(EventKind.RECORDED, d.plan_id, decision_id=d.decision_id) for d, _ in placed.decisions),
        *(DecisionEvent(EventKind.REVIEW_PENDING, r.plan_id, review_id=r.review_id) for r, _ in placed.reviews),
    ]


def _answers(trail: Trail, outcomes: Sequence[Outcome], principal: Principal) -> list[Decision | Review]:
    """Each outcome as the caller is answered: a key seen before by what it recorded then, read
    after the commit, every such decision in one read and every such review in another."""
    seen = [o for o in outcomes if isinstance(o, Seen)]
    decision_ids = [s.decision_id for s in seen if s.decision_id is not None]
    review_ids = [s.review_id for s in seen if s.decision_id is None and s.review_id is not None]
    decisions_found = (
        dict(zip(decision_ids, reading.get_decisions(trail, decision_ids, principal), strict=True)) if decision_ids else {}
    )
    reviews_found = {r.review_id: r for r in reading.get_reviews(trail, review_ids, principal)} if review_ids else {}
    answers: list[Decision | Review] = []
    for outcome in outcomes:
        if not isinstance(outcome, Seen):
            answers.append(outcome)
        elif outcome.decision_id is not None:
            decision = decisions_found[outcome.decision_id]
            if decision is None:
                raise NotFound("decision", outcome.decision_id)
            answers.append(decision)
        else:
            assert outcome.review_id is not None
            review = reviews_found.get(outcome.review_id)
            if review is None:
                raise NotFound("review", outcome.review_id)
            answers.append(review)
    return answers


def add_dependency(trail: Trail, decision_id: str, depends_on_id: str, *, principal: Principal) -> Decision:
    """Record that ``decision_id`` was influenced by ``depends_on_id`` (a DEPENDS_ON edge).

    Both must be current, and the dependency must not lie downstream of the decision: that would
    make the decision depend on itself. ``principal`` must be allowed to record, and see both.
    """
    require_role(principal, Action.RECORD)

    def work(tx: Transaction) -> None:
        require_visible(tx, principal, decision_ids=[decision_id, depends_on_id])
        # Both plans: a correction superseding either one holds its plan until it commits.
        if decision_id not in decisions.lock_plans_of(tx, [decision_id, depends_on_id]):
            raise NotFound("decision", decision_id)
        decision, dependency = decisions.get_many(tx, [decision_id, depends_on_id])
        if decision is None:
            raise NotFound("decision", decision_id)
        if dependency is None:
            raise NotFound("decision", depends_on_id)
        check_new_dependency(decision, dependency, corrections.downstream(tx, decision_id).decision_ids)
        decisions.add_dependency(tx, decision_id, depends_on_id)

    trail.write(work, audit=Audit(principal, "recording.add_dependency", Touched(decisions=[decision_id, depends_on_id])))
    return reading.get_decision(trail, decision_id, principal)


def attach_artifacts(trail: Trail, decision_id: str, artifacts: Sequence[ArtifactRef], *, principal: Principal) -> Decision:
    """Add artifacts a decision produced after it was recorded (during Execute), without changing
    anything else about it; an artifact it already names is not added twice. ``principal`` must be
    allowed to record, and see the decision."""
    require_role(principal, Action.RECORD)

    def work(tx: Transaction) -> None:
        require_visible(tx, principal, decision_ids=[decision_id])
        if not corrections.lock_decision(tx, decision_id):  # the decision and its plan
            raise NotFound("decision", decision_id)
        decision = decisions.get_many(tx, [decision_id])[0]
        assert decision is not None
        locked = plans.lock_and_read_phase(tx, decision.plan_id)
        assert locked is not None  # a decision's plan exists
        decisions.set_artifacts(tx, decision_id, with_artifacts(decision, locked.phase, artifacts, utc_now()))

    trail.write(work, audit=Audit(principal, "recording.attach_artifacts", Touched(decisions=[decision_id])))
    return reading.get_decision(trail, decision_id, principal)
