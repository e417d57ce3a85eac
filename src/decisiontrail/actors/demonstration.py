"""The demonstration: a run of the plan runtime with the scripted model, a review, a correction and its replay.

The demonstration plan is instantiated with a run whose model is ``scripted:demonstration`` (the
named playbook in ``actors.models``), and the runtime (``actors.runtime``) takes it through ADR-033's
actors in this process: invariants reconciled at Strategize entry, the strategy actor, whose spawn
waits for a person (a scripted reviewer resolves it), the child plan it spawns run to Apply, the
execution actor, Apply. One execution decision is then corrected; the correction queues its own
replay on the plan's run, and the runtime replays it from the actor's checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from decisiontrail.access import Principal, Role, process
from decisiontrail.actors.models import DEMONSTRATION, DEMONSTRATION_PLAN, SCRIPTED
from decisiontrail.actors.runtime import Runtime
from decisiontrail.actors.workers import Workers
from decisiontrail.domain import AutomationProfile, Invariant, Plan, Scope
from decisiontrail.domain.correction import CorrectionResult, ReplayOutcome
from decisiontrail.domain.recording import Review, ReviewAction
from decisiontrail.domain.runs import PlanRun, RunRequest, RunStatus
from decisiontrail.domain.tree import render_hierarchy
from decisiontrail.services import Trail, reading
from decisiontrail.services.correction import correct
from decisiontrail.services.invariants import set_invariants
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.reviews import resolve_review

Log = Callable[[str], None]

MODEL = f"{SCRIPTED}:{DEMONSTRATION}"
"""The demonstration's runs' model: the scripted model playing the demonstration's playbook."""
DEMO_PROJECT = "billing"
DEMONSTRATOR = process("demonstration")
"""Who sets the demonstration's invariants, instantiates its plan (and owns it) and reads it back."""
REVIEWER = Principal(name="demonstration", role=Role.REVIEWER)
"""Who resolves the demonstration's review and corrects its decision: a person's role, scripted."""
GUIDANCE = "Use Redis counters shared by every gateway replica"


@dataclass
class Demonstration:
    root_plan: Plan
    child_plan: Plan
    correction: CorrectionResult
    """The correction, its attempt as the runtime's replay left it (outcome REPLAYED)."""
    replayed: list[str]
    """The decisions the replay recorded anew."""
    run: PlanRun
    """The root plan's run, as it settled after the replay."""
    reviews_resolved: list[str] = field(default_factory=list)
    checkpoint_groups: int = 0


def record_demonstration(trail: Trail, checkpointer: BaseCheckpointSaver[Any], log: Log = lambda _: None) -> Demonstration:
    """Run the demonstration plan to Apply, correct one decision, and let the runtime replay it.

    The global and the billing project's invariants are set first (the plan gathers them). The run is
    driven here, in this thread, by a runtime whose actors keep their checkpoints in
    ``checkpointer``: give it the saver every worker on this database uses (Neo4j's,
    ``services.checkpoints``), since a serving process's workers may claim the demonstration's runs
    too; whichever does plays the same script, the model's name being the run's.
    """
    runtime = Runtime(trail, checkpointer)
    trail = runtime.trail  # with its reconciler: the run reconciles the plan's invariants first
    set_invariants(
        trail,
        Scope.GLOBAL,
        None,
        [Invariant(name="coverage", statement="Test coverage stays at or above 80%")],
        principal=DEMONSTRATOR,
    )
    set_invariants(
        trail,
        Scope.PROJECT,
        DEMO_PROJECT,
        [Invariant(name="compatibility", statement="No breaking changes to public endpoints")],
        principal=DEMONSTRATOR,
    )
    plan, _ = instantiate_plan(
        trail,
        DEMONSTRATION_PLAN,
        {"service": "billing-api", "limit_per_minute": 600},
        automation_profile=AutomationProfile(edit_code=0.8, execute_command=0.5),
        invariants=[Invariant(name="coverage", statement="New code is covered at 95% or more", scope=Scope.PLAN)],
        project=DEMO_PROJECT,
        principal=DEMONSTRATOR,
        run=RunRequest(model=MODEL),
    )
    log(f"instantiated plan {plan.plan_id} in project {DEMO_PROJECT} with a run (model {MODEL}); its invariants reconciled")

    with Workers(runtime, count=0).running():  # no worker threads: only the one keeping this runtime's leases
        run, reviewed = _settle(runtime, plan.plan_id, log)
        if run.status is not RunStatus.SUCCEEDED:
            raise RuntimeError(f"the demonstration's run {run.run_id} {run.status.value}: {run.error}")
        (child,) = _children(trail, plan.plan_id)
        log(f"run {run.run_id} succeeded: plan {plan.plan_id} and its child plan {child.plan_id} applied")

        # The in-process buckets were wrong: the gateway runs three replicas. The correction queues
        # its replay on the plan's run; the runtime resumes the execution actor from its checkpoint.
        implementation = next(
            d
            for d in reading.list_decisions(trail, plan.plan_id, DEMONSTRATOR, current_only=True)
            if d.decision_type.value == "implementation_choice"
        )
        result = correct(
            trail, implementation.decision_id, "revert", GUIDANCE, "the gateway runs three replicas", principal=REVIEWER
        )
        log(f"corrected {implementation.decision_id}: invalidated {len(result.invalidated)} decision(s); the runtime replays it")
        run, _ = _settle(runtime, plan.plan_id, log)
    attempt = reading.get_attempt(trail, result.attempt.attempt_id, DEMONSTRATOR)
    if run.status is not RunStatus.SUCCEEDED or attempt.replay_outcome is not ReplayOutcome.REPLAYED:
        raise RuntimeError(
            f"the demonstration's replay {attempt.replay_outcome.value} ({attempt.replay_detail}); its run {run.status.value}"
        )
    log(f"replayed in generation {run.generation} of run {run.run_id}: {attempt.replay_detail}")

    plans = (reading.get_plan(trail, plan.plan_id, DEMONSTRATOR), reading.get_plan(trail, child.plan_id, DEMONSTRATOR))
    decisions = [d.decision_id for p in plans for d in reading.list_decisions(trail, p.plan_id, DEMONSTRATOR)]
    return Demonstration(
        root_plan=plans[0],
        child_plan=plans[1],
        correction=result.model_copy(update={"attempt": attempt}),
        replayed=list(attempt.replayed_decision_ids),
        reviews_resolved=reviewed,
        checkpoint_groups=sum(group is not None for group in reading.checkpoint_groups(trail, decisions)),
        run=run,
    )


def _settle(runtime: Runtime, plan_id: str, log: Log) -> tuple[PlanRun, list[str]]:
    """Drive the plan's run until it has finished, resolving each review it waits on as the scripted
    reviewer would; the run, and the reviews resolved."""
    resolved: list[str] = []
    while not (run := runtime.run_until_settled(plan_id, timeout=300)).finished:
        pending = [
            review for p in _hierarchy(runtime.trail, plan_id) for review in reading.pending_reviews(runtime.trail, p, REVIEWER)
        ]
        if not pending:
            raise RuntimeError(f"the demonstration's run {run.run_id} waits for {run.waiting_for} and no review is pending")
        for review in pending:
            action, option = _scripted_reviewer(review)
            resolve_review(runtime.trail, review.review_id, action, option, principal=REVIEWER)
            log(
                f"review {review.review_id} ({review.proposal.decision_type.value}, confidence "
                f"{review.proposal.confidence_score} below {review.threshold}): the reviewer chose {action.value}"
                + (f" {option!r}" if option else "")
            )
            resolved.append(review.review_id)
    return run, resolved


def _scripted_reviewer(review: Review) -> tuple[ReviewAction, str | None]:
    """The first alternative the actor considered, if it considered any; else its own choice."""
    alternatives = review.proposal.alternatives_considered
    return (ReviewAction.SELECT_ALTERNATIVE, alternatives[0]) if alternatives else (ReviewAction.APPROVE, None)


def _hierarchy(trail: Trail, plan_id: str) -> Iterator[str]:
    """The plan and every plan below it."""
    level = [plan_id]
    while level:
        yield from level
        level = [child for children in reading.child_plans_of(trail, level) for child in children]


def _children(trail: Trail, plan_id: str) -> list[Plan]:
    found = reading.get_plans(trail, reading.child_plans_of(trail, [plan_id])[0], DEMONSTRATOR)
    return [p for p in found if p is not None and not p.is_invalidated]


def render_demonstration(store: Trail, demo: Demonstration) -> str:
    """The hierarchy as text, every line read back from the store."""
    plans = [reading.get_plan(store, p.plan_id, DEMONSTRATOR) for p in (demo.root_plan, demo.child_plan)]
    # Its whole history, superseded decisions marked, so the correction shows.
    trees = {
        p.plan_id: tree for p in plans if (tree := reading.get_tree(store, p.plan_id, DEMONSTRATOR, history=True)) is not None
    }
    return render_hierarchy(demo.root_plan.plan_id, trees, {p.plan_id: p.description for p in plans})
