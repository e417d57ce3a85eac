"""GraphQL types of a corrections dataset, as ``Plan.correctionExamples`` and ``correctionDataset`` answer it."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome
from decisiontrail.domain.dataset import SOURCE
from decisiontrail.domain.dataset import CorrectionExample as DomainCorrectionExample
from decisiontrail.domain.decision import Decision as DomainDecision
from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.schema.common import CheckpointRef


@strawberry.type(description="Where a decision's context is: the full context's reference and hash, and the actor's checkpoint.")
class ExampleContext:
    hot_context_ref: str
    hot_context_hash: str
    actor_state_ref: CheckpointRef | None


@strawberry.type(description="A decision as a dataset example carries it: the choice, its reasons and its context.")
class ExampleDecision:
    decision_id: strawberry.ID
    plan_id: strawberry.ID
    decision_type: DecisionType
    phase: Phase
    question: str
    chosen_option: str
    alternatives_considered: list[str]
    confidence_score: float | None
    rationale: str
    context_snapshot: ExampleContext

    @classmethod
    def of(cls, d: DomainDecision) -> ExampleDecision:
        snapshot = d.context_snapshot
        state = snapshot.actor_state_ref
        return cls(
            decision_id=strawberry.ID(d.decision_id),
            plan_id=strawberry.ID(d.plan_id),
            decision_type=d.decision_type,
            phase=d.phase,
            question=d.question,
            chosen_option=d.chosen_option,
            alternatives_considered=list(d.alternatives_considered),
            confidence_score=d.confidence_score,
            rationale=d.rationale,
            context_snapshot=ExampleContext(
                hot_context_ref=snapshot.hot_context_ref,
                hot_context_hash=snapshot.hot_context_hash,
                actor_state_ref=None
                if state is None
                else CheckpointRef(
                    thread_id=state.thread_id, checkpoint_ns=state.checkpoint_ns, checkpoint_id=state.checkpoint_id
                ),
            ),
        )


@strawberry.type(description="What the user wanted instead: the guidance, the correction decision and what a replay recorded.")
class ExampleExpectedOutput:
    guidance: str
    reason: str
    correction: ExampleDecision = strawberry.field(description="The correction decision the guidance was recorded as.")
    replacement: ExampleDecision | None = strawberry.field(
        description="The decision a replay recorded in the corrected one's place (it REPLACES it); null before a replay."
    )
    replayed: list[ExampleDecision] = strawberry.field(description="Every decision the replay recorded that you may see.")


@strawberry.type(description="About the correction: the attempt, its replay, who asked and when, and what it invalidated.")
class ExampleMetadata:
    source: str
    attempt_id: strawberry.ID
    attempt_number: int
    mode: CorrectionMode
    replay_outcome: ReplayOutcome
    replay_detail: str | None
    corrected_at: datetime
    requested_by: str
    plan_id: strawberry.ID
    project: str | None
    decision_type: DecisionType
    original_decision_id: strawberry.ID
    corrected_decision_id: strawberry.ID
    correction_decision_id: strawberry.ID
    invalidated_decision_count: int = strawberry.field(description="Decisions it invalidated (itself included) that you may see.")
    invalidated_plan_count: int = strawberry.field(description="Child plans it invalidated that you may see.")


@strawberry.type(
    description="One correction as an evaluation example for LangSmith, Langfuse or Phoenix: input (the decision as "
    "the actor made it), expectedOutput (the user's guidance and what replaced the decision) and metadata."
)
class CorrectionExample:
    model: strawberry.Private[DomainCorrectionExample]
    input: ExampleDecision
    expected_output: ExampleExpectedOutput
    metadata: ExampleMetadata
    record: JSON = strawberry.field(
        description="The same example as one JSON object with the keys input, expected_output and metadata (snake_case "
        "inside): a line of `decisiontrail export corrections --format jsonl`."
    )

    @classmethod
    def of(cls, example: DomainCorrectionExample) -> CorrectionExample:
        a = example.attempt
        replacement = example.replacement
        return cls(
            model=example,
            record=JSON(example.record()),
            input=ExampleDecision.of(example.corrected),
            expected_output=ExampleExpectedOutput(
                guidance=a.guidance,
                reason=a.reason,
                correction=ExampleDecision.of(example.correction),
                replacement=ExampleDecision.of(replacement) if replacement is not None else None,
                replayed=[ExampleDecision.of(d) for d in example.replayed],
            ),
            metadata=ExampleMetadata(
                source=SOURCE,
                attempt_id=strawberry.ID(a.attempt_id),
                attempt_number=a.attempt_number,
                mode=a.mode,
                replay_outcome=a.replay_outcome,
                replay_detail=a.replay_detail,
                corrected_at=a.at,
                requested_by=a.requested_by,
                plan_id=strawberry.ID(example.plan_id),
                project=example.project,
                decision_type=example.corrected.decision_type,
                original_decision_id=strawberry.ID(a.original_decision_id),
                corrected_decision_id=strawberry.ID(a.corrected_decision_id),
                correction_decision_id=strawberry.ID(a.correction_decision_id),
                invalidated_decision_count=example.invalidated_decision_count,
                invalidated_plan_count=example.invalidated_plan_count,
            ),
        )
