"""Mutation resolvers: the same service functions the actors and the CLI call."""

from __future__ import annotations

import asyncio
from typing import Any

import strawberry
from strawberry.types import Info

from decisiontrail.domain import AutomationProfile, ContextSnapshot, Decision as DomainDecision, Invariant
from decisiontrail.domain import Phase as DomainPhase
from decisiontrail.domain.recording import CapturedContext
from decisiontrail.domain.recording import ReviewAction as DomainReviewAction
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.resolvers.context import Context
from decisiontrail.resolvers.errors import call, client_error, require_decision, require_plan
from decisiontrail.schema.types import (
    AddGuidanceInput,
    CorrectionAttempt,
    RecordReplayInput,
    CorrectDecisionInput,
    CorrectionPayload,
    Decision,
    InstantiatePlanInput,
    Phase,
    Plan,
    RecordDecisionInput,
    RecordDecisionPayload,
    ResolveReviewInput,
    ResolveReviewPayload,
    Review,
)
from decisiontrail.services import correction, lifecycle, recording, reviews


async def instantiate_plan(info: Info[Context, None], input: InstantiatePlanInput) -> Plan:
    """Create a plan (a child plan when ``parentDecisionId`` names a spawning decision) and its root."""
    if input.parent_decision_id is not None:
        await require_decision(info.context, str(input.parent_decision_id))
    owner = info.context.principal.name if info.context.principal else None
    project = _project(info.context, input.project)

    def run() -> Any:
        profile = input.automation_profile
        arguments: Any = input.arguments or {}
        if not isinstance(arguments, dict):
            raise ValidationFailed("arguments: must be a JSON object", field="arguments")
        return lifecycle.instantiate_plan(
            info.context.store,
            input.description,
            arguments,
            automation_profile=AutomationProfile(edit_code=profile.edit_code, execute_command=profile.execute_command)
            if profile
            else None,
            invariants=[Invariant(name=i.name, statement=i.statement, scope=i.scope) for i in input.invariants or []],  # type: ignore[arg-type]
            spawned_by_decision_id=str(input.parent_decision_id) if input.parent_decision_id else None,
            owner=owner,
            project=project,
        )

    plan, _ = await call(run)
    return Plan(model=plan)


def _project(context: Context, named: str | None) -> str | None:
    """The project a new plan goes into: the one named, or the token's; a token limited to a
    project writes into no other."""
    scope = context.project_filter
    if scope is not None and named is not None and named != scope:
        raise client_error(ValidationFailed(f"project: this token records only into project {scope}", field="project"))
    return named if named is not None else scope


def _proposal(input: RecordDecisionInput) -> Any:
    s = input.context_snapshot
    snapshot = ContextSnapshot.model_validate(
        {
            "hot_context_hash": s.hot_context_hash,
            "hot_context_ref": s.hot_context_ref,
            "relevant_resources": [{"resource_id": r.resource_id, "path": r.path} for r in s.relevant_resources or []],
            "actor_state_ref": {
                "thread_id": s.actor_state_ref.thread_id,
                "checkpoint_ns": s.actor_state_ref.checkpoint_ns,
                "checkpoint_id": s.actor_state_ref.checkpoint_id,
            },
        }
    )
    arguments: dict[str, Any] = {
        "decision_type": input.decision_type.value,
        "question": input.question,
        "chosen_option": input.chosen_option,
        "rationale": input.rationale,
    }
    if input.alternatives_considered is not None:
        arguments["alternatives_considered"] = input.alternatives_considered
    if input.confidence_score is not None:
        arguments["confidence_score"] = input.confidence_score
    if input.parent_decision_id is not None:
        arguments["parent_decision_id"] = str(input.parent_decision_id)
    return recording.propose(
        arguments,
        plan_id=str(input.plan_id),
        snapshot=snapshot,
        idempotency_key=input.idempotency_key,
        depends_on=[str(d) for d in input.depends_on or []],
        actor_reasoning=input.actor_reasoning,
        artifacts_produced=[
            {"artifact_path": a.artifact_path, "artifact_type": a.artifact_type} for a in input.artifacts_produced or []
        ],
    )


def _payload(outcome: Any) -> RecordDecisionPayload:
    if isinstance(outcome, DomainDecision):
        return RecordDecisionPayload(decision=Decision(model=outcome), review=None)
    return RecordDecisionPayload(decision=None, review=Review(model=outcome))


def _context(input: RecordDecisionInput) -> CapturedContext | None:
    content = input.context_snapshot.hot_context
    return None if content is None else CapturedContext(content)


async def _require_targets(context: Context, inputs: list[RecordDecisionInput]) -> None:
    """Everything a recording names must be the caller's to see, or it is NOT_FOUND.

    Only actors and tokens limited to a project see some plans alone; for everyone else the
    store's own checks, in the recording transaction, answer for what does not exist. The
    loads run together, so a batch costs one read of its plans and one of the decisions it names.
    """
    if not context.limited:
        return
    plan_ids = sorted({str(i.plan_id) for i in inputs})
    decision_ids = sorted({str(d) for i in inputs for d in (i.parent_decision_id, *(i.depends_on or ())) if d is not None})
    await asyncio.gather(*(require_plan(context, p) for p in plan_ids), *(require_decision(context, d) for d in decision_ids))


async def record_decision(info: Info[Context, None], input: RecordDecisionInput) -> RecordDecisionPayload:
    """Record an actor's decision through ADR-033's protocol (validation, gating, idempotency)."""
    await _require_targets(info.context, [input])
    outcome = await call(lambda: recording.record_proposal(info.context.store, _proposal(input), _context(input)))
    return _payload(outcome)


async def record_decisions(info: Info[Context, None], inputs: list[RecordDecisionInput]) -> list[RecordDecisionPayload]:
    """A batch in one transaction: every decision is recorded (or held for review), or none."""
    await _require_targets(info.context, inputs)
    outcomes = await call(lambda: recording.record_decisions(info.context.store, [(_proposal(i), _context(i)) for i in inputs]))
    return [_payload(o) for o in outcomes]


async def add_dependency(info: Info[Context, None], decision_id: strawberry.ID, depends_on_id: strawberry.ID) -> Decision:
    """Record that a decision was influenced by another (DEPENDS_ON)."""
    await require_decision(info.context, str(decision_id))
    await require_decision(info.context, str(depends_on_id))
    return Decision(model=await call(info.context.store.add_dependency, str(decision_id), str(depends_on_id)))


async def _require_review(context: Context, review_id: str) -> None:
    """A review of a plan the caller may not see is NOT_FOUND, exactly as one that does not exist."""
    if not context.limited:
        return  # the store answers for a review that does not exist
    review = await call(context.store.get_review, review_id)
    if await context.plans.load(review.plan_id) is None:
        raise client_error(NotFound("review", review_id))


async def resolve_review(info: Info[Context, None], input: ResolveReviewInput) -> ResolveReviewPayload:
    await _require_review(info.context, str(input.review_id))
    review, decision = await call(
        reviews.resolve_review,
        info.context.store,
        str(input.review_id),
        DomainReviewAction(input.action.value),
        input.option,
        resolved_by=info.context.caller,
    )
    return ResolveReviewPayload(review=Review(model=review), decision=Decision(model=decision))


async def correct_decision(info: Info[Context, None], input: CorrectDecisionInput) -> CorrectionPayload:
    if info.context.limited:  # as for recordings: the store answers for what does not exist
        await require_decision(info.context, str(input.decision_id))
    result = await call(
        correction.correct,
        info.context.store,
        str(input.decision_id),
        input.mode.value,
        input.guidance,
        input.reason,
        requested_by=info.context.caller,
    )
    info.context.decisions.clear_all()  # a check above cached the decision as it was before it was superseded
    return CorrectionPayload(model=result)


async def record_replay(info: Info[Context, None], input: RecordReplayInput) -> CorrectionAttempt:
    """Report a correction's replay; an attempt on a decision the caller may not see is NOT_FOUND."""
    attempt_id = str(input.attempt_id)
    decision_ids = [str(d) for d in input.decision_ids]
    if info.context.limited:
        found = await call(correction.attempt, info.context.store, attempt_id)
        if await info.context.decisions.load(found.corrected_decision_id) is None:
            raise client_error(NotFound("correction attempt", attempt_id))
        for decision_id in decision_ids:
            await require_decision(info.context, decision_id)
    updated = await call(correction.record_replay, info.context.store, attempt_id, input.outcome, input.detail, decision_ids)
    return CorrectionAttempt.of(updated)


async def add_guidance(info: Info[Context, None], input: AddGuidanceInput) -> Decision:
    """Record a user's guidance in a plan the caller may see, under a decision of that plan."""
    await require_plan(info.context, str(input.plan_id))
    decision = await call(
        lifecycle.add_guidance,
        info.context.store,
        str(input.plan_id),
        input.guidance,
        parent_decision_id=str(input.parent_decision_id),
        reason=input.reason,
        given_by=info.context.caller,
    )
    return Decision(model=decision)


async def advance_phase(info: Info[Context, None], plan_id: strawberry.ID, phase: Phase, reason: str = "") -> Plan:
    await require_plan(info.context, str(plan_id))
    plan = await call(
        lifecycle.advance_phase, info.context.store, str(plan_id), DomainPhase(phase.value), reason, by=info.context.caller
    )
    return Plan(model=plan)
