"""Invariants at work (ADR-033, ADR-007): the global and project sets, and a plan's invariants added or removed.

Reconciliation itself, at Strategize entry, is the Invariant Reconciliation Actor's: the lifecycle
runs the trail's reconciler (``Trail.entered_strategize``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import ValidationError

from decisiontrail.access import Action, Principal
from decisiontrail.domain import ContextSnapshot, Decision, DecisionType, Invariant, Phase, Plan
from decisiontrail.domain.correction import CorrectionMode, CorrectionResult, check_guidance
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.invariants import (
    ENFORCEMENT_QUESTION,
    InvariantSet,
    Scope,
    enforces_name,
    for_set,
    gather,
    reconcile,
    regather,
)
from decisiontrail.domain.placement import Placed, Recording
from decisiontrail.domain.recording import CapturedContext, check_type_in_phase
from decisiontrail.exceptions import Conflict, NotFound, ValidationFailed, validation_failed
from decisiontrail.graphdb import decisions, invariants as invariant_sets, plans
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.correction import correct_in, reentered, touched_by_correction
from decisiontrail.services.recording import events_of, place
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role, require_visible


def set_invariants(
    trail: Trail, scope: Scope, project: str | None, invariants: Sequence[Invariant], *, principal: Principal
) -> InvariantSet:
    """Replace the global set (``project`` None) or ``project``'s: what plans instantiated from now
    on gather. Plans already instantiated keep what they declared. Only for a principal that may
    configure; one limited to a project sets only that project's."""
    require_role(principal, Action.CONFIGURE)
    if scope is Scope.GLOBAL and project is not None:
        raise ValidationFailed("project: the global set belongs to no project", field="project")
    if scope is Scope.PROJECT and not (project or "").strip():
        raise ValidationFailed("project: a project's set names its project", field="project")
    if principal.project is not None and (scope is Scope.GLOBAL or project != principal.project):
        raise ValidationFailed(f"project: this token sets only project {principal.project}'s invariants", field="project")
    placed = for_set(scope, invariants)
    reconcile(placed)
    wanted = InvariantSet(scope, project, placed, utc_now(), principal.name)
    return trail.write(
        lambda tx: invariant_sets.put_set(tx, wanted),
        audit=Audit(principal, "invariants.set_invariants", Touched(others=[wanted.key])),
    )


def invariant_set(trail: Trail, scope: Scope, project: str | None, principal: Principal) -> InvariantSet | None:
    """The global set, or ``project``'s; None when it was never set, and for a principal limited to
    another project (as if it were never set: the global one is everyone's)."""
    require_role(principal, Action.READ)
    if scope is Scope.PROJECT and principal.project not in (None, project):
        return None
    global_set, project_set = trail.database.read(invariant_sets.get_sets, project)
    return global_set if scope is Scope.GLOBAL else project_set


def add_invariant(
    trail: Trail,
    plan_id: str,
    name: str,
    statement: str,
    scope: Scope = Scope.PLAN,
    reason: str = "",
    *,
    principal: Principal,
    added_by: str | None = None,
) -> Decision:
    """A missing constraint added (ADR-007): the plan declares it, and an invariant_enforced records
    it, in one transaction. Only in Strategize, where invariant_enforced decisions are made; a name
    the plan already enforces is a conflict (remove that one first). Only for a principal that may
    correct; who added it is ``added_by`` (whom the command line relays it for), else its name."""
    require_role(principal, Action.CORRECT)
    try:
        added = Invariant(name=name, statement=statement, scope=scope)
    except ValidationError as e:
        raise validation_failed(e) from e
    gather((), (), (), [added])  # refuses global and project scope: those are sets
    who = added_by if added_by is not None else principal.name

    def work(tx: Transaction) -> Placed:
        require_visible(tx, principal, plan_ids=[plan_id])
        locked = plans.lock_and_read_phase(tx, plan_id)
        if locked is None:
            raise NotFound("plan", plan_id)
        check_type_in_phase(DecisionType.INVARIANT_ENFORCED, locked.phase)
        plan = plans.get_many(tx, [plan_id])[0]
        assert plan is not None
        current = [d for d in decisions.in_plan(tx, plan_id) if d.is_current]
        enforcing = [d for d in current if _enforces_name(d, name)]
        if enforcing:
            raise Conflict(
                f"invariant {name!r} is already enforced in plan {plan_id} by decision {enforcing[0].decision_id}; "
                "remove it first (removeInvariant), then add the new statement"
            )
        declared = (*[i for i in plan.invariants if i.name != name], added)
        [enforced] = [e for e in reconcile(declared) if e.invariant.name == name]
        root = next((d for d in current if d.decision_type is DecisionType.PROMPT_DEFINITION), None)
        if root is None:
            raise ValidationFailed(f"plan_id: plan {plan_id} has no current decisions to constrain", field="plan_id")
        context = CapturedContext(
            json.dumps({"invariant": added.model_dump(mode="json"), "reason": reason, "added_by": who}, sort_keys=True)
        )
        decision = Decision(
            plan_id=plan_id,
            parent_decision_id=root.decision_id,
            decision_type=DecisionType.INVARIANT_ENFORCED,
            phase=Phase.STRATEGIZE,
            question=ENFORCEMENT_QUESTION,
            chosen_option=statement,
            alternatives_considered=tuple(o.statement for o in enforced.overridden),
            confidence_score=1.0,
            rationale=f"{name}: added by {who or 'the user'}" + (f" ({reason})" if reason else "") + f"; {enforced.rationale}",
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
        )
        placed = place(tx, [Recording(decision, context=context)])
        invariant_sets.set_plan_invariants(tx, plan_id, declared)
        return placed

    placed = trail.write(
        work,
        events_of,
        audit=Audit(principal, "invariants.add_invariant", Touched(plans=[plan_id]), lambda placed: Touched.of(placed.outcomes)),
    )
    return placed.decisions[0][0]


def remove_invariant(
    trail: Trail, plan_id: str, name: str, reason: str, *, principal: Principal, requested_by: str | None = None
) -> CorrectionResult:
    """An invariant that should not apply (ADR-007): its invariant_enforced is corrected away (what
    depends on it is invalidated with it) and the plan stops declaring it, in one transaction. Only
    for a principal that may correct; who asked is ``requested_by`` (whom the command line relays
    it for), else its name."""
    require_role(principal, Action.CORRECT)
    reason = check_guidance(reason)
    by = requested_by if requested_by is not None else principal.name

    def work(tx: Transaction) -> CorrectionResult:
        require_visible(tx, principal, plan_ids=[plan_id])
        plan = plans.get_many(tx, [plan_id])[0]
        if plan is None:
            raise NotFound("plan", plan_id)
        enforcing = [d for d in decisions.in_plan(tx, plan_id) if d.is_current and _enforces_name(d, name)]
        if not enforcing:
            raise NotFound("enforced invariant", f"{name!r} in plan {plan_id}")
        corrected = correct_in(
            tx,
            enforcing[-1].decision_id,
            CorrectionMode.REVERT,
            f"Remove invariant {name!r}: it should not apply",
            reason,
            by,
            principal,
        )
        invariant_sets.set_plan_invariants(
            tx, plan_id, [i for i in plan.invariants if i.name != name], removed=[*plan.removed_invariants, name]
        )
        return corrected

    # correct_in announces the correction.
    result = trail.write(
        work,
        audit=Audit(principal, "invariants.remove_invariant", Touched(plans=[plan_id]), touched_by_correction),
        conflict=f"invariant {name!r} of plan {plan_id} was changed concurrently",
    )
    reentered(trail, result, principal)
    return result


def regather_invariants(trail: Trail, plan_id: str, principal: Principal) -> Plan:
    """The plan, declaring again what the scopes hold now (``domain.invariants.regather``): the first
    step of its reconciliation at each Strategize entry, by a principal that may record (the
    reconciler). The global or project set may have changed since it was instantiated; what was
    removed from it stays out."""
    require_role(principal, Action.RECORD)

    changed = False

    def work(tx: Transaction) -> Plan:
        nonlocal changed
        changed = False
        require_visible(tx, principal, plan_ids=[plan_id])
        plan = plans.get_many(tx, [plan_id])[0]
        if plan is None:
            raise NotFound("plan", plan_id)
        global_set, project_set = invariant_sets.get_sets(tx, plan.project)
        now = regather(
            plan.invariants,
            plan.removed_invariants,
            global_set.invariants if global_set else (),
            project_set.invariants if project_set else (),
        )
        if now == plan.invariants:
            return plan
        invariant_sets.set_plan_invariants(tx, plan_id, now)
        changed = True
        return plan.model_copy(update={"invariants": now})

    # Unchanged (the usual case at each Strategize entry), it wrote nothing, and leaves no entry.
    def made(_: Plan) -> Touched | None:
        return Touched() if changed else None

    return trail.write(work, audit=Audit(principal, "invariants.regather_invariants", Touched(plans=[plan_id]), made))


def _enforces_name(decision: Decision, name: str) -> bool:
    return decision.decision_type is DecisionType.INVARIANT_ENFORCED and enforces_name(name, decision.rationale)
