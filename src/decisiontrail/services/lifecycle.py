"""The plan lifecycle engine: instantiating plans, moving phases, and the decisions only it creates."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from pydantic import JsonValue, ValidationError

from decisiontrail.domain import AutomationProfile, ContextSnapshot, Decision, DecisionType, Invariant, Phase, Plan
from decisiontrail.access import Action, Principal
from decisiontrail.domain.correction import check_guidance
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.placement import Recording

from decisiontrail.domain.recording import PROMPT_QUESTION, CapturedContext, check_phase_transition, prompt_context
from decisiontrail.domain.rules import check_spawn_link
from decisiontrail.events import DecisionEvent, EventKind
from decisiontrail.exceptions import NotFound, ValidationFailed, validation_failed
from decisiontrail.domain.invariants import gather, reconcile, unenforced
from decisiontrail.domain.runs import RunRequest
from decisiontrail.graphdb import decisions, invariants as invariant_sets, plans, runs
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services import reading, recording
from decisiontrail.services.recording import place
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role, require_visible


def create_plan(trail: Trail, plan: Plan, *, principal: Principal) -> Plan:
    """Store a plan without its root (the root is recorded next); a child plan is linked to its
    parent plan and its spawning decision, which must be a current spawn of that plan. The plan
    is stored as given, its owner included: for ``principal``s that may record."""
    require_role(principal, Action.RECORD)
    trail.write(
        lambda tx: store_plan(tx, plan),
        audit=Audit(principal, "lifecycle.create_plan", Touched(plans=[plan.plan_id])),
        conflict=f"plan {plan.plan_id} already exists",
    )
    return plan


def store_plan(tx: Transaction, plan: Plan) -> None:
    """Inside a use-case's transaction: store ``plan`` (without its root), its spawn link judged first."""
    check_spawn_link(plan, plans.read_spawn_link(tx, plan))
    plans.create(tx, plan)


def instantiate_plan(
    trail: Trail,
    description: str,
    arguments: Mapping[str, JsonValue] | None = None,
    *,
    automation_profile: AutomationProfile | None = None,
    invariants: Sequence[Invariant] = (),
    spawned_by_decision_id: str | None = None,
    project: str | None = None,
    principal: Principal,
    owner: str | None = None,
    run: RunRequest | None = None,
) -> tuple[Plan, Decision]:
    """Create a plan from an action and its root prompt_definition, in one transaction.

    With ``spawned_by_decision_id`` (a subplan_spawn or subplan_parallel_spawn decision), the
    plan becomes that decision's child plan, in the spawning decision's plan's hierarchy, and
    in its parent plan's project: a child plan inherits it, and naming another is refused. The
    plan's owner is the principal, or ``owner``, whom a process instantiates it for (the runtime
    a child plan for its parent plan's owner), except that an actor owns what it instantiates; a
    principal limited to a project records only into it, and spawns only from decisions it may see.

    The plan declares the global invariants, its project's, its parent plan's (a child inherits
    them) and its own (``invariants``, at action or plan scope). Once it is stored, it has entered
    Strategize: the trail's reconciler records the invariants it enforces.

    With ``run``, the plan's run is queued in the same transaction: the runtime runs it
    (``services.runs``, ``actors.runtime``), its reconciliation first, as the run's first step.
    """
    require_role(principal, Action.RECORD)
    arguments = dict(arguments or {})
    if owner is None or principal.owner_scope is not None:
        owner = principal.name
    if principal.project is not None and project is not None and project != principal.project:
        raise ValidationFailed(f"project: this token records only into project {principal.project}", field="project")
    project = project if project is not None else principal.project
    context = prompt_context(description, arguments)

    def work(tx: Transaction) -> tuple[Plan, Decision]:
        parent_plan_id = None
        inherited = project
        inherited_invariants: tuple[Invariant, ...] = ()
        if spawned_by_decision_id is not None:
            require_visible(tx, principal, decision_ids=[spawned_by_decision_id])
            spawning = decisions.get_many(tx, [spawned_by_decision_id])[0]
            if spawning is None:
                raise NotFound("decision", spawned_by_decision_id)
            parent_plan_id = spawning.plan_id
            parent = plans.get_many(tx, [parent_plan_id])[0]
            assert parent is not None  # a decision's plan exists
            if project is not None and project != parent.project:
                raise ValidationFailed(
                    f"project: a child plan belongs to its parent plan's project ({parent.project or 'none'}), not {project}",
                    field="project",
                )
            inherited = parent.project
            inherited_invariants = parent.invariants
        global_set, project_set = invariant_sets.get_sets(tx, inherited)
        declared = gather(
            global_set.invariants if global_set else (),
            project_set.invariants if project_set else (),
            inherited_invariants,
            invariants,
        )
        reconcile(declared)  # refuses a conflict no scope settles, before anything is written
        plan, root = _plan_and_root(
            description,
            arguments,
            context,
            automation_profile,
            declared,
            parent_plan_id,
            spawned_by_decision_id,
            owner,
            inherited,
        )
        store_plan(tx, plan)
        placed = place(tx, [Recording(root, context=context)]).decisions[0][0]
        if run is not None:
            runs.create(tx, run.run_for(plan.plan_id))
        return plan, placed

    plan, root = trail.write(
        work,
        lambda made: [
            DecisionEvent(EventKind.RECORDED, made[0].plan_id, decision_id=made[1].decision_id),
            *([DecisionEvent(EventKind.RUN_UPDATED, made[0].plan_id)] if run is not None else []),
        ],
        audit=Audit(
            principal,
            "lifecycle.instantiate_plan",
            Touched(decisions=[spawned_by_decision_id] if spawned_by_decision_id is not None else []),
            lambda made: Touched.of(made),
        ),
        conflict="the plan already exists",
    )
    if run is None:
        trail.entered_strategize(plan)
    else:  # its run reconciles first (actors.runtime), so nothing it records comes before the invariants
        trail.work_queued()
    return plan, root


def _plan_and_root(
    description: str,
    arguments: dict[str, JsonValue],
    context: CapturedContext,
    automation_profile: AutomationProfile | None,
    invariants: Sequence[Invariant],
    parent_plan_id: str | None,
    spawned_by_decision_id: str | None,
    owner: str | None,
    project: str | None,
) -> tuple[Plan, Decision]:
    try:
        plan = Plan(
            description=description,
            arguments=arguments,
            parent_plan_id=parent_plan_id,
            spawned_by_decision_id=spawned_by_decision_id,
            automation_profile=automation_profile or AutomationProfile(),
            invariants=tuple(invariants),
            owner=owner,
            project=project,
        )
        root = Decision(
            plan_id=plan.plan_id,
            decision_type=DecisionType.PROMPT_DEFINITION,
            question=PROMPT_QUESTION,
            chosen_option=context.content,
            rationale="Created by the plan lifecycle engine from the action's description and the user's arguments.",
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        )
    except ValidationError as e:
        raise validation_failed(e) from e
    return plan, root


def record_user_intervention(
    trail: Trail,
    plan_id: str,
    guidance: str,
    *,
    parent_decision_id: str,
    question: str = "What did the user direct?",
    reason: str = "",
    depends_on: Sequence[str] = (),
    given_by: str | None = None,
    principal: Principal,
) -> Decision:
    """A user's guidance as a user_intervention decision: the lifecycle engine's to create, never an
    actor's, for a ``principal`` that may correct. The plan, the parent and the dependencies must
    be ``principal``'s to see. Who gave it is kept in its context: ``given_by`` (whom a process
    relays it for), else the principal's name."""
    require_role(principal, Action.CORRECT)
    given_by = given_by if given_by is not None else principal.name
    said = {"guidance": guidance, "reason": reason, "given_by": given_by}
    context = CapturedContext(json.dumps(said, sort_keys=True, ensure_ascii=False))
    try:
        decision = Decision(
            plan_id=plan_id,
            parent_decision_id=parent_decision_id,
            decision_type=DecisionType.USER_INTERVENTION,
            question=question,
            chosen_option=guidance,
            rationale=reason or "Guidance given by the user.",
            depends_on=tuple(depends_on),
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        )
    except ValidationError as e:
        raise validation_failed(e) from e
    return recording.record(
        trail,
        decision,
        context=context,
        principal=principal,
        needs=Action.CORRECT,
        operation="lifecycle.record_user_intervention",
    )


def add_guidance(
    trail: Trail,
    plan_id: str,
    guidance: str,
    *,
    parent_decision_id: str,
    reason: str = "",
    principal: Principal,
    given_by: str | None = None,
) -> Decision:
    """Guidance without a correction (ADR-033's ``agents plan prompt``): a user_intervention under
    ``parent_decision_id`` that supersedes nothing; the actor's next decisions may depend on it.
    Who gave it (``given_by``, whom the command line relays it for, else the principal's name) is
    kept in its context."""
    return record_user_intervention(
        trail,
        plan_id,
        check_guidance(guidance),
        parent_decision_id=parent_decision_id,
        question="What guidance did the user give?",
        reason=reason.strip(),
        given_by=given_by,
        principal=principal,
    )


def advance_phase(
    trail: Trail, plan_id: str, target: Phase, reason: str = "", *, principal: Principal, by: str | None = None
) -> Plan:
    """Strategize -> Execute -> Apply; Execute -> Strategize is a phase reversion. Each change is
    recorded with its reason and who asked (``by``, whom a process relays it for, else the
    principal's name: ``Plan.phaseHistory``); refused while reviews are pending.

    Who may record may move a plan's phase; a reviewer may also revert it to Strategize (ADR-006's
    phase reversion, when Execute cannot proceed within the strategy)."""
    if target is not Phase.STRATEGIZE or not principal.may(Action.REVIEW):
        require_role(principal, Action.RECORD)
    who = by if by is not None else principal.name

    def work(tx: Transaction) -> None:
        require_visible(tx, principal, plan_ids=[plan_id])
        change_phase(tx, plan_id, target, reason, at=utc_now(), by=who)

    trail.write(work, audit=Audit(principal, "lifecycle.advance_phase", Touched(plans=[plan_id])))
    plan = reading.get_plan(trail, plan_id, principal)
    if target is Phase.STRATEGIZE:
        trail.entered_strategize(plan)
    return plan


def change_phase(tx: Transaction, plan_id: str, target: Phase, reason: str, *, at: datetime, by: str | None) -> None:
    """Inside a use-case's transaction: lock the plan, judge the move from its phase to ``target``, record it."""
    found = plans.lock_and_read_phase(tx, plan_id)
    if found is None:
        raise NotFound("plan", plan_id)
    missing = [e.invariant.name for e in unenforced(found.invariants, found.enforcing)]
    check_phase_transition(found.phase, target, found.pending_reviews, found.strategy_choices, missing)
    plans.change_phase(tx, plan_id, found.phase, target, reason.strip(), at, by)
