"""GraphQL types of the plan runtime: a plan's run, and the input that starts one (``runPlan``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from decisiontrail.domain.runs import Actor as DomainActor
from decisiontrail.domain.runs import PlanRun as DomainPlanRun
from decisiontrail.domain.runs import RunStatus as DomainRunStatus
from decisiontrail.schema.context import Context

if TYPE_CHECKING:
    from decisiontrail.schema.inputs import AutomationProfileInput, InvariantInput
    from decisiontrail.schema.plan import Plan

RunStatus = strawberry.enum(DomainRunStatus, name="RunStatus", description="Where the runtime's run of a plan stands.")
RunActor = strawberry.enum(DomainActor, name="RunActor", description="The runtime's actors (ADR-033).")


@strawberry.type(description="The runtime running a plan (runPlan): its state, its actor, the corrections it replays.")
class PlanRun:
    id: strawberry.ID
    plan_id: strawberry.ID
    status: RunStatus = strawberry.field(  # type: ignore[valid-type]
        description="QUEUED, RUNNING, WAITING (for a review or child plans), SUCCEEDED, FAILED, CANCELLED."
    )
    current_actor: RunActor | None = strawberry.field(  # type: ignore[valid-type]
        description="The actor running now, or the one the run waits in."
    )
    waiting_for: str | None = strawberry.field(description="What a WAITING run waits for: review or children.")
    model_name: str = strawberry.field(description="The chat model its actors use: scripted, or an init_chat_model name.")
    generation: int = strawberry.field(description="How many corrections it has replayed.")
    pending_replays: list[strawberry.ID] = strawberry.field(
        description="Correction attempts queued for it to replay, oldest first."
    )
    attempts: int = strawberry.field(description="Claims of its current turn (a worker that died is followed by another).")
    error: str | None = strawberry.field(description="Why it failed or was cancelled.")
    parent_run_id: strawberry.ID | None = strawberry.field(description="The run of the plan that spawned this one's plan.")
    created_at: datetime
    updated_at: datetime

    @strawberry.field(description="The plan it runs.")  # type: ignore[untyped-decorator]
    async def plan(self, info: Info[Context, None]) -> Annotated["Plan", strawberry.lazy("decisiontrail.schema.plan")] | None:
        from decisiontrail.schema.plan import Plan

        found = await info.context.plans.load(str(self.plan_id))
        return Plan(model=found) if found is not None else None

    @classmethod
    def of(cls, run: DomainPlanRun) -> PlanRun:
        return cls(
            id=strawberry.ID(run.run_id),
            plan_id=strawberry.ID(run.plan_id),
            status=run.status,
            current_actor=run.actor,
            waiting_for=run.waiting_for,
            model_name=run.model,
            generation=run.generation,
            pending_replays=[strawberry.ID(a) for a in run.replays],
            attempts=run.attempts,
            error=run.error,
            parent_run_id=strawberry.ID(run.parent_run_id) if run.parent_run_id else None,
            created_at=run.created_at,
            updated_at=run.updated_at,
        )


@strawberry.input(description="A plan for the runtime to run, as InstantiatePlanInput (a top-level plan).")
class RunPlanInput:
    description: str
    arguments: JSON | None = None
    automation_profile: Annotated["AutomationProfileInput", strawberry.lazy("decisiontrail.schema.inputs")] | None = None
    invariants: list[Annotated["InvariantInput", strawberry.lazy("decisiontrail.schema.inputs")]] | None = None
    project: str | None = None
    model: str | None = strawberry.field(
        default=None, description="scripted, or an init_chat_model name (provider:model); by default the service's setting"
    )
