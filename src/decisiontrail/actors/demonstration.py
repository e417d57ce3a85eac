"""The demonstration: scripted actors record a two-level plan hierarchy for real, then it is read back.

A strategy actor and an execution actor (LangGraph graphs whose model is a deterministic
script) work a parent plan and the child plan it spawns; invariants are reconciled at
Strategize entry, one low-confidence decision waits for a (scripted) reviewer, and Execute
decisions are recorded with checkpoint groups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from decisiontrail.actors.graph import build_actor
from decisiontrail.actors.reconciliation import Reconciler
from decisiontrail.actors.replay import replay_correction
from decisiontrail.actors.scripted import ScriptedChatModel, decide, recorded_ids
from decisiontrail.actors.tool import record_decision_tool
from decisiontrail.domain import AutomationProfile, Invariant, Phase, Plan, Scope
from decisiontrail.domain.correction import CorrectionMode, CorrectionResult, ReplayOutcome
from decisiontrail.domain.recording import ReviewAction
from decisiontrail.domain.tree import render_hierarchy

from decisiontrail.services.invariants import set_invariants
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services.correction import correct, record_replay
from decisiontrail.services.reviews import resolve_review
from decisiontrail.services import reading
from decisiontrail.services import Trail

Log = Callable[[str], None]


@dataclass
class Demonstration:
    root_plan: Plan
    child_plan: Plan
    correction: CorrectionResult
    replayed: list[str]
    reviews_resolved: list[str] = field(default_factory=list)
    checkpoint_groups: int = 0


def run_actor(
    store: Trail,
    checkpointer: BaseCheckpointSaver[Any],
    plan: Plan,
    thread_id: str,
    script: Sequence[AIMessage | Callable[[Sequence[BaseMessage]], AIMessage]],
    *,
    brief: str,
    resources: Sequence[Any] = (),
    depends_on: Sequence[str] = (),
    reviewer: Callable[[dict[str, Any]], tuple[ReviewAction, str | None]] | None = None,
    log: Log = lambda _: None,
) -> tuple[CompiledStateGraph[Any], dict[str, Any]]:
    """Run one scripted actor to the end, answering any review it pauses for with ``reviewer``."""
    actor = build_actor(ScriptedChatModel(script=list(script)), [record_decision_tool(store)], checkpointer)
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id, "plan_id": plan.plan_id}
    }  # checkpoints kept with their plan
    state: dict[str, Any] = actor.invoke(
        {
            "messages": [HumanMessage(brief)],
            "plan_id": plan.plan_id,
            "resources": list(resources),
            "depends_on": list(depends_on),
        },
        config,
    )
    while state.get("__interrupt__"):
        if reviewer is None:
            raise RuntimeError("the actor is waiting for a review and no reviewer was given")
        request = state["__interrupt__"][0].value
        action, option = reviewer(request)
        log(f"review {request['review_id']}: {request['reason']}; reviewer chose {action.value} {option or ''}".rstrip())
        resolve_review(store, request["review_id"], action, option)
        state = actor.invoke(Command(resume={"review_id": request["review_id"]}), config)
    return actor, state


def _corrected(messages: Sequence[BaseMessage]) -> bool:
    return any(isinstance(m, HumanMessage) and str(m.content).startswith("Correction:") for m in messages)


def unless_corrected(original: AIMessage, replacement: AIMessage) -> Callable[[Sequence[BaseMessage]], AIMessage]:
    """A script step that makes the original choice, or the replacement once the actor has
    been given a correction (as a replay after ``correct`` does)."""
    return lambda messages: replacement if _corrected(messages) else original


DEMO_PROJECT = "billing"


def record_demonstration(store: Trail, checkpointer: BaseCheckpointSaver[Any], log: Log = lambda _: None) -> Demonstration:
    """Record the whole hierarchy; every decision goes through record_decision or the lifecycle engine.

    The global and the billing project's invariants are set first (plans instantiated later gather
    them); the Invariant Reconciliation Actor runs at each plan's Strategize entry.
    """
    if store.reconciler is None:
        store = replace(store, reconciler=Reconciler(checkpointer))
    set_invariants(store, Scope.GLOBAL, None, [Invariant(name="coverage", statement="Test coverage stays at or above 80%")])
    set_invariants(
        store,
        Scope.PROJECT,
        DEMO_PROJECT,
        [Invariant(name="compatibility", statement="No breaking changes to public endpoints")],
    )
    plan, _ = instantiate_plan(
        store,
        "Add rate limiting to the public billing API",
        {"service": "billing-api", "limit_per_minute": 600},
        automation_profile=AutomationProfile(edit_code=0.8, execute_command=0.5),
        invariants=[Invariant(name="coverage", statement="New code is covered at 95% or more", scope=Scope.PLAN)],
        project=DEMO_PROJECT,
    )
    log(f"instantiated plan {plan.plan_id} in project {DEMO_PROJECT}; its invariants reconciled at Strategize entry")

    strategy_thread = f"strategy-{plan.plan_id}"
    run_actor(
        store,
        checkpointer,
        plan,
        strategy_thread,
        [
            decide(
                decision_type="strategy_choice",
                question="Where should requests be limited?",
                chosen_option="Token bucket in the API gateway",
                alternatives_considered=["Middleware in each service", "Limits at the load balancer"],
                confidence_score=0.86,
                rationale="One enforcement point; services stay unchanged.",
            ),
            decide(
                decision_type="resource_selection",
                question="Which files will change?",
                chosen_option="gateway/config.yaml and gateway/limits.py",
                confidence_score=0.9,
                rationale="The gateway owns request admission.",
            ),
            decide(
                decision_type="subplan_spawn",
                question="How should per-client quotas be delivered?",
                chosen_option="Fold quotas into this plan",
                alternatives_considered=["Spawn a child plan for per-client quotas"],
                confidence_score=0.55,
                rationale="Quotas look small.",
            ),
        ],
        brief="Plan how to add rate limiting to the billing API.",
        resources=["gateway/config.yaml"],
        reviewer=lambda request: (ReviewAction.SELECT_ALTERNATIVE, request["alternatives_considered"][0]),
        log=log,
    )
    spawn = next(d for d in reading.list_decisions(store, plan.plan_id) if d.decision_type.value == "subplan_spawn")
    advance_phase(store, plan.plan_id, Phase.EXECUTE, "strategy complete")  # ADR-007: the child runs once its parent executes
    child, _ = instantiate_plan(
        store,
        "Add per-client quotas to the billing API gateway",
        {"quota_store": "gateway"},
        automation_profile=AutomationProfile(edit_code=0.5, execute_command=0.5),
        spawned_by_decision_id=spawn.decision_id,
    )
    log(f"spawned child plan {child.plan_id} from decision {spawn.decision_id}")
    run_actor(
        store,
        checkpointer,
        child,
        f"strategy-{child.plan_id}",
        [
            decide(
                decision_type="strategy_choice",
                question="Where are quotas kept?",
                chosen_option="A quota table beside the gateway's bucket store",
                alternatives_considered=["Quotas in the billing database"],
                confidence_score=0.71,
                rationale="Follows the parent plan's gateway-side enforcement.",
            ),
        ],
        brief="Plan per-client quotas.",
        depends_on=[spawn.decision_id],
        log=log,
    )

    advance_phase(store, child.plan_id, Phase.EXECUTE, "strategy complete")
    execution, _ = run_actor(
        store,
        checkpointer,
        plan,
        f"execution-{plan.plan_id}",
        [
            unless_corrected(
                decide(
                    decision_type="implementation_choice",
                    question="How is the bucket stored?",
                    chosen_option="In-process buckets refilled by a monotonic clock",
                    alternatives_considered=["Redis counters"],
                    confidence_score=0.68,
                    rationale="A single gateway instance serves the API today.",
                ),
                decide(
                    decision_type="implementation_choice",
                    question="How is the bucket stored?",
                    chosen_option="Redis counters shared by every gateway replica",
                    alternatives_considered=["In-process buckets refilled by a monotonic clock"],
                    confidence_score=0.9,
                    rationale="The gateway runs several replicas; buckets must be shared.",
                ),
            ),
            unless_corrected(
                decide(
                    decision_type="tool_invocation",
                    question="Which tool applies the change?",
                    chosen_option="edit_file(gateway/limits.py)",
                    confidence_score=0.95,
                    rationale="A local edit; no generator needed.",
                ),
                decide(
                    decision_type="tool_invocation",
                    question="Which tool applies the change?",
                    chosen_option="edit_file(gateway/limits.py) with a Redis client",
                    confidence_score=0.9,
                    rationale="The limiter now talks to Redis.",
                ),
            ),
            unless_corrected(
                decide(
                    decision_type="error_recovery",
                    question="The limits test failed on clock skew; what now?",
                    chosen_option="Inject the clock and freeze it in tests",
                    alternatives_considered=["Widen the test's tolerance"],
                    confidence_score=0.83,
                    rationale="Deterministic tests beat looser ones.",
                ),
                AIMessage(content="done"),  # with Redis time there is no clock skew to recover from
            ),
        ],
        brief="Execute the rate limiting strategy.",
        resources=[{"resource_id": "repo:billing", "path": "gateway/limits.py"}],
        log=log,
    )

    def quota_tool_call(messages: Sequence[BaseMessage]) -> AIMessage:
        # Hangs the tool invocation explicitly under the implementation choice just recorded.
        return decide(
            decision_type="tool_invocation",
            question="Which tool creates the quota table?",
            chosen_option="run_migration(0007_client_quotas)",
            confidence_score=0.9,
            rationale="Schema changes go through migrations.",
            parent_decision_id=recorded_ids(messages)[-1],
        )

    run_actor(
        store,
        checkpointer,
        child,
        f"execution-{child.plan_id}",
        [
            decide(
                decision_type="implementation_choice",
                question="How is the quota table created?",
                chosen_option="A migration adding client_quota",
                confidence_score=0.8,
                rationale="Reversible and reviewed like code.",
            ),
            quota_tool_call,
        ],
        brief="Execute the quota strategy.",
        resources=[{"resource_id": "repo:billing", "path": "gateway/quotas.py"}],
        log=log,
    )

    # The in-process buckets were wrong: the gateway runs three replicas. Correct the choice,
    # then replay the execution actor from the checkpoint it was made from.
    implementation = next(
        d
        for d in reading.list_decisions(store, plan.plan_id, current_only=True)
        if d.decision_type.value == "implementation_choice"
    )
    guidance = "Use Redis counters shared by every gateway replica"
    result = correct(
        store, implementation.decision_id, "revert", guidance, "the gateway runs three replicas", requested_by="demo"
    )
    log(f"corrected {implementation.decision_id}: invalidated {len(result.invalidated)} decision(s); replaying")
    replayed: list[str] = []
    for point in result.replay_frontier:
        before = {d.decision_id for d in reading.list_decisions(store, point.plan_id)}
        replay_correction(execution, point, guidance, mode=CorrectionMode.REVERT)
        replayed += [d.decision_id for d in reading.list_decisions(store, point.plan_id) if d.decision_id not in before]
    record_replay(store, result.attempt.attempt_id, ReplayOutcome.REPLAYED, f"{len(replayed)} decision(s) recorded anew")

    demo = Demonstration(
        root_plan=reading.get_plan(store, plan.plan_id),
        child_plan=reading.get_plan(store, child.plan_id),
        correction=result,
        replayed=replayed,
    )
    demo.reviews_resolved = [r.review_id for r in reading.list_reviews(store, plan.plan_id) if r.decision_id]
    demo.checkpoint_groups = sum(
        1
        for p in (plan, child)
        for d in reading.list_decisions(store, p.plan_id)
        if reading.checkpoint_group(store, d.decision_id) is not None
    )
    return demo


def render_demonstration(store: Trail, demo: Demonstration) -> str:
    """The hierarchy as text, every line read back from the store."""
    plans = [reading.get_plan(store, demo.root_plan.plan_id), reading.get_plan(store, demo.child_plan.plan_id)]
    # Its whole history, superseded decisions marked, so the correction shows.
    trees = {p.plan_id: tree for p in plans if (tree := reading.get_tree(store, p.plan_id, history=True)) is not None}
    return render_hierarchy(demo.root_plan.plan_id, trees, {p.plan_id: p.description for p in plans})
