"""Mutation resolvers: the same service functions the actors and the CLI call."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from decisiontrail.domain import ArtifactRef as DomainArtifactRef
from decisiontrail.domain import AutomationProfile, ContextSnapshot, Decision as DomainDecision
from decisiontrail.domain import DecisionType as DomainDecisionType
from decisiontrail.domain import Phase as DomainPhase
from decisiontrail.domain.recording import CapturedContext, Proposal
from decisiontrail.domain.invariants import Scope
from decisiontrail.domain.recording import ReviewAction as DomainReviewAction
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.schema.context import Context
from decisiontrail.schema.errors import call
from decisiontrail.domain.decision import Phase
from decisiontrail.schema.correction import CorrectionAttempt, CorrectionPayload
from decisiontrail.schema.decision import Decision
from decisiontrail.schema.inputs import (
    AddGuidanceInput,
    AddInvariantInput,
    ArtifactInput,
    CorrectDecisionInput,
    InstantiatePlanInput,
    InvariantInput,
    RecordDecisionInput,
    RecordReplayInput,
    ResolveReviewInput,
)
from decisiontrail.schema.payloads import RecordDecisionPayload, ResolveReviewPayload
from decisiontrail.schema.plan import InvariantSet, Plan
from decisiontrail.schema.review import Review
from decisiontrail.domain.runs import RunRequest, check_model_name
from decisiontrail.schema.runs import PlanRun, RunPlanInput
from decisiontrail.services import correction, lifecycle, recording, reviews, runs
from decisiontrail.settings import RuntimeSettings
from decisiontrail.services import invariants as invariants_service


def _instantiating(info: Info[Context, None], input: InstantiatePlanInput | RunPlanInput, **more: Any) -> Any:
    """``lifecycle.instantiate_plan`` with what the input gives (``more``: the spawning decision, the run)."""
    profile = input.automation_profile
    arguments: Any = input.arguments or {}
    if not isinstance(arguments, dict):
        raise ValidationFailed("arguments: must be a JSON object", field="arguments")
    return lifecycle.instantiate_plan(
        info.context.trail,
        input.description,
        arguments,
        automation_profile=AutomationProfile(edit_code=profile.edit_code, execute_command=profile.execute_command)
        if profile
        else None,
        invariants=[i.model() for i in input.invariants or []],
        project=input.project,
        principal=info.context.caller,
        **more,
    )


async def instantiate_plan(info: Info[Context, None], input: InstantiatePlanInput) -> Plan:
    """Create a plan (a child plan when ``parentDecisionId`` names a spawning decision) and its root."""
    spawning = str(input.parent_decision_id) if input.parent_decision_id else None
    plan, _ = await call(_instantiating, info, input, spawned_by_decision_id=spawning)
    return Plan(model=plan)


async def run_plan(info: Info[Context, None], input: RunPlanInput) -> Plan:
    """Instantiate a plan and queue its run: the runtime's workers run it (ADR-033's actors)."""

    def run() -> Any:
        model = check_model_name(input.model) if input.model is not None else RuntimeSettings.from_env().chat_model
        return _instantiating(info, input, run=RunRequest(model=model))

    plan, _ = await call(run)
    return Plan(model=plan)


async def cancel_run(info: Info[Context, None], run_id: strawberry.ID, reason: str = "") -> PlanRun:
    """Stop a run that has not finished; its plan stays as far as it got."""
    cancelled = await call(runs.cancel_run, info.context.trail, str(run_id), reason, principal=info.context.caller)
    return PlanRun.of(cancelled)


def _proposal(input: RecordDecisionInput) -> Proposal:
    """The typed input as a Proposal, without a detour through the tool's JSON: GraphQL has
    checked its types, the Proposal checks the rest."""
    s = input.context_snapshot
    state = s.actor_state_ref
    snapshot = ContextSnapshot.model_validate(
        {
            "hot_context_hash": s.hot_context_hash,
            "hot_context_ref": s.hot_context_ref,
            "relevant_resources": [{"resource_id": r.resource_id, "path": r.path} for r in s.relevant_resources or []],
            "actor_state_ref": {
                "thread_id": state.thread_id,
                "checkpoint_ns": state.checkpoint_ns,
                "checkpoint_id": state.checkpoint_id,
            },
        }
    )
    return recording.proposal(
        plan_id=str(input.plan_id),
        decision_type=DomainDecisionType(input.decision_type.value),
        question=input.question,
        chosen_option=input.chosen_option,
        rationale=input.rationale,
        alternatives_considered=input.alternatives_considered or (),
        confidence_score=input.confidence_score,
        parent_decision_id=str(input.parent_decision_id) if input.parent_decision_id is not None else None,
        snapshot=snapshot,
        idempotency_key=input.idempotency_key,
        depends_on=[str(d) for d in input.depends_on or []],
        actor_reasoning=input.actor_reasoning,
        artifacts_produced=[_artifact(a) for a in input.artifacts_produced or []],
    )


def _artifact(artifact: ArtifactInput) -> dict[str, str]:
    fields = {"artifact_path": artifact.artifact_path, "artifact_type": artifact.artifact_type}
    return fields | ({"digest": artifact.digest} if artifact.digest is not None else {})


def _payload(outcome: Any) -> RecordDecisionPayload:
    if isinstance(outcome, DomainDecision):
        return RecordDecisionPayload(decision=Decision(model=outcome), review=None)
    return RecordDecisionPayload(decision=None, review=Review(model=outcome))


def _context(input: RecordDecisionInput) -> CapturedContext | None:
    content = input.context_snapshot.hot_context
    return None if content is None else CapturedContext(content)


async def record_decision(info: Info[Context, None], input: RecordDecisionInput) -> RecordDecisionPayload:
    """Record an actor's decision through ADR-033's protocol (validation, gating, idempotency)."""
    context = info.context
    outcome = await call(
        lambda: recording.record_proposal(context.trail, _proposal(input), _context(input), principal=context.caller)
    )
    return _payload(outcome)


async def record_decisions(info: Info[Context, None], inputs: list[RecordDecisionInput]) -> list[RecordDecisionPayload]:
    """A batch in one transaction: every decision is recorded (or held for review), or none."""
    context = info.context
    outcomes = await call(
        lambda: recording.record_decisions(context.trail, [(_proposal(i), _context(i)) for i in inputs], principal=context.caller)
    )
    return [_payload(o) for o in outcomes]


async def add_dependency(info: Info[Context, None], decision_id: strawberry.ID, depends_on_id: strawberry.ID) -> Decision:
    """Record that a decision was influenced by another (DEPENDS_ON)."""
    context = info.context
    found = await call(recording.add_dependency, context.trail, str(decision_id), str(depends_on_id), principal=context.caller)
    return Decision(model=found)


async def resolve_review(info: Info[Context, None], input: ResolveReviewInput) -> ResolveReviewPayload:
    review, decision = await call(
        reviews.resolve_review,
        info.context.trail,
        str(input.review_id),
        DomainReviewAction(input.action.value),
        input.option,
        principal=info.context.caller,
        digest=input.digest,
    )
    return ResolveReviewPayload(review=Review(model=review), decision=Decision(model=decision))


async def correct_decision(info: Info[Context, None], input: CorrectDecisionInput) -> CorrectionPayload:
    result = await call(
        correction.correct,
        info.context.trail,
        str(input.decision_id),
        input.mode.value,
        input.guidance,
        input.reason,
        principal=info.context.caller,
        description=input.description,
        arguments=input.arguments,
        idempotency_key=input.idempotency_key,
    )
    return CorrectionPayload(model=result)


async def record_replay(info: Info[Context, None], input: RecordReplayInput) -> CorrectionAttempt:
    """Report a correction's replay; an attempt on a decision the caller may not see is NOT_FOUND."""
    updated = await call(
        correction.record_replay,
        info.context.trail,
        str(input.attempt_id),
        input.outcome,
        input.detail,
        [str(d) for d in input.decision_ids],
        principal=info.context.caller,
    )
    return CorrectionAttempt.of(updated)


async def add_guidance(info: Info[Context, None], input: AddGuidanceInput) -> Decision:
    """Record a user's guidance in a plan the caller may see, under a decision of that plan."""
    decision = await call(
        lifecycle.add_guidance,
        info.context.trail,
        str(input.plan_id),
        input.guidance,
        parent_decision_id=str(input.parent_decision_id),
        reason=input.reason,
        principal=info.context.caller,
    )
    return Decision(model=decision)


async def advance_phase(info: Info[Context, None], plan_id: strawberry.ID, phase: Phase, reason: str = "") -> Plan:
    plan = await call(
        lifecycle.advance_phase,
        info.context.trail,
        str(plan_id),
        DomainPhase(phase.value),
        reason,
        principal=info.context.caller,
    )
    return Plan(model=plan)


async def set_invariants(
    info: Info[Context, None], scope: Scope, invariants: list[InvariantInput], project: str | None = None
) -> InvariantSet:
    """Replace the global set of invariants or a project's (plans instantiated afterwards gather it)."""
    context = info.context
    # The domain records are built inside ``call``: a value they refuse is a client's error, not a bug.
    stored = await call(
        lambda: invariants_service.set_invariants(
            context.trail, scope, project, [i.model() for i in invariants], principal=context.caller
        )
    )
    return InvariantSet.of(stored)


async def add_invariant(info: Info[Context, None], input: AddInvariantInput) -> Decision:
    """A missing constraint added to a plan in Strategize: declared, and enforced by an invariant_enforced decision."""
    decision = await call(
        invariants_service.add_invariant,
        info.context.trail,
        str(input.plan_id),
        input.name,
        input.statement,
        input.scope,
        input.reason,
        principal=info.context.caller,
    )
    return Decision(model=decision)


async def remove_invariant(info: Info[Context, None], plan_id: strawberry.ID, name: str, reason: str) -> CorrectionPayload:
    """An invariant that should not apply: its invariant_enforced is corrected away and the plan stops declaring it."""
    result = await call(
        invariants_service.remove_invariant, info.context.trail, str(plan_id), name, reason, principal=info.context.caller
    )
    return CorrectionPayload(model=result)


async def attach_artifacts(info: Info[Context, None], decision_id: strawberry.ID, artifacts: list[ArtifactInput]) -> Decision:
    """Artifacts a decision produced later, during Execute; the decision is otherwise unchanged."""
    context = info.context

    def attach() -> DomainDecision:
        refs = [DomainArtifactRef(**_artifact(a)) for a in artifacts]
        return recording.attach_artifacts(context.trail, str(decision_id), refs, principal=context.caller)

    found = await call(attach)
    return Decision(model=found)
