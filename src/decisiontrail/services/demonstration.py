"""A small demonstration plan hierarchy, recorded for real and read back from Neo4j."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from decisiontrail.domain import CheckpointRef, ContextSnapshot, Decision, DecisionType, Phase, Plan, ResourceRef
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.tree import render_hierarchy
from decisiontrail.graphdb import DecisionStore


@dataclass(frozen=True)
class Demonstration:
    root_plan: Plan
    child_plan: Plan
    decisions: tuple[Decision, ...]


def _snapshot(context: str, thread_id: str | None, *resources: str) -> ContextSnapshot:
    digest = hashlib.sha256(context.encode()).hexdigest()
    return ContextSnapshot(
        hot_context_hash=digest,
        hot_context_ref=f"context://sha256/{digest}",
        relevant_resources=tuple(ResourceRef(resource_id=r) for r in resources),
        actor_state_ref=CheckpointRef(thread_id=thread_id, checkpoint_id=new_ulid()) if thread_id else None,
    )


def _prompt(plan: Plan) -> Decision:
    """The root prompt_definition the lifecycle engine creates for a plan."""
    chosen = json.dumps({"description": plan.description, "arguments": plan.arguments}, sort_keys=True)
    return Decision(
        plan_id=plan.plan_id,
        decision_type=DecisionType.PROMPT_DEFINITION,
        question="What is this plan to accomplish?",
        chosen_option=chosen,
        rationale="Instantiated from the action's description and the user's arguments.",
        context_snapshot=_snapshot(chosen, None),
    )


def record_demonstration(store: DecisionStore) -> Demonstration:
    """Record a parent plan that spawns one child plan, with decisions of most types."""
    recorded: list[Decision] = []

    def record(decision: Decision) -> Decision:
        stored = store.record_decision(decision)
        recorded.append(stored)
        return stored

    strategy_thread, execution_thread = f"strategy-{new_ulid()}", f"execution-{new_ulid()}"
    plan = store.create_plan(
        Plan(
            description="Add rate limiting to the public billing API",
            arguments={"service": "billing-api", "limit_per_minute": 600},
            invariants=("No breaking changes to public endpoints",),
        )
    )
    root = record(_prompt(plan))
    record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=root.decision_id,
            decision_type=DecisionType.INVARIANT_ENFORCED,
            question="Should this invariant apply to this plan?",
            chosen_option="No breaking changes to public endpoints",
            rationale="Project-scope invariant; no plan-scope invariant overrides it.",
            context_snapshot=_snapshot("invariants: project", f"reconcile-{new_ulid()}"),
        )
    )
    strategy = record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=root.decision_id,
            decision_type=DecisionType.STRATEGY_CHOICE,
            question="Where should requests be limited?",
            chosen_option="Token bucket in the API gateway",
            alternatives_considered=("Middleware in each service", "Limits at the load balancer"),
            confidence_score=0.82,
            rationale="One enforcement point; services stay unchanged.",
            context_snapshot=_snapshot("strategy: where to limit", strategy_thread, "gateway/config.yaml"),
        )
    )
    resources = record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=strategy.decision_id,
            decision_type=DecisionType.RESOURCE_SELECTION,
            question="Which files will change?",
            chosen_option="gateway/config.yaml and gateway/limits.py",
            confidence_score=0.9,
            rationale="The gateway owns request admission.",
            context_snapshot=_snapshot("strategy: files", strategy_thread, "gateway/config.yaml", "gateway/limits.py"),
        )
    )
    spawn = record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=strategy.decision_id,
            decision_type=DecisionType.SUBPLAN_SPAWN,
            question="Should per-client quotas be planned separately?",
            chosen_option="Spawn a child plan for per-client quotas",
            alternatives_considered=("Fold quotas into this plan",),
            confidence_score=0.74,
            rationale="Quotas need their own storage decision.",
            depends_on=(resources.decision_id,),
            context_snapshot=_snapshot("strategy: decompose", strategy_thread),
        )
    )
    implementation = record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=strategy.decision_id,
            decision_type=DecisionType.IMPLEMENTATION_CHOICE,
            question="How is the bucket stored?",
            chosen_option="In-process buckets refilled by a monotonic clock",
            alternatives_considered=("Redis counters",),
            confidence_score=0.68,
            rationale="A single gateway instance serves the API today.",
            depends_on=(resources.decision_id,),
            context_snapshot=_snapshot("execute: storage", execution_thread, "gateway/limits.py"),
        )
    )
    record(
        Decision(
            plan_id=plan.plan_id,
            parent_decision_id=implementation.decision_id,
            decision_type=DecisionType.TOOL_INVOCATION,
            question="Which tool applies the change?",
            chosen_option="edit_file(gateway/limits.py)",
            confidence_score=0.95,
            rationale="A local edit; no generator needed.",
            context_snapshot=_snapshot("execute: edit", execution_thread, "gateway/limits.py"),
        )
    )

    child = store.create_plan(
        Plan(
            description="Add per-client quotas to the billing API gateway",
            arguments={"quota_store": "gateway"},
            parent_plan_id=plan.plan_id,
            spawned_by_decision_id=spawn.decision_id,
        )
    )
    child_root = record(_prompt(child))
    child_strategy = record(
        Decision(
            plan_id=child.plan_id,
            parent_decision_id=child_root.decision_id,
            decision_type=DecisionType.STRATEGY_CHOICE,
            question="Where are quotas kept?",
            chosen_option="A quota table beside the gateway's bucket store",
            alternatives_considered=("Quotas in the billing database",),
            confidence_score=0.71,
            rationale="Follows the parent plan's in-process bucket store.",
            depends_on=(implementation.decision_id,),
            context_snapshot=_snapshot("child strategy", f"strategy-{new_ulid()}", "gateway/quotas.py"),
        )
    )
    record(
        Decision(
            plan_id=child.plan_id,
            parent_decision_id=child_strategy.decision_id,
            decision_type=DecisionType.ERROR_RECOVERY,
            phase=Phase.EXECUTE,
            question="The quota migration failed on an existing column; what now?",
            chosen_option="Rename the new column to client_quota and rerun",
            alternatives_considered=("Drop the existing column",),
            confidence_score=0.88,
            rationale="Renaming is reversible; dropping is not.",
            context_snapshot=_snapshot("child execute: migration error", f"execution-{new_ulid()}"),
        )
    )
    return Demonstration(root_plan=plan, child_plan=child, decisions=tuple(recorded))


def render_demonstration(store: DecisionStore, demo: Demonstration) -> str:
    """The demonstration hierarchy as text, every line read back from the store."""
    plans = [store.get_plan(demo.root_plan.plan_id), store.get_plan(demo.child_plan.plan_id)]
    trees = {p.plan_id: store.get_tree(p.plan_id) for p in plans}
    return render_hierarchy(demo.root_plan.plan_id, trees, {p.plan_id: p.description for p in plans})
