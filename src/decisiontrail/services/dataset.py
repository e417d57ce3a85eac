"""Corrections as an evaluation dataset: one example per correction attempt, read in one transaction."""

from __future__ import annotations

from decisiontrail.access import Action, Principal
from decisiontrail.domain.dataset import CorrectionExample
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.graphdb import corrections, decisions, plans
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_role


def correction_examples(
    trail: Trail,
    *,
    plan_id: str | None = None,
    project: str | None = None,
    hierarchy: bool = False,
    principal: Principal,
) -> list[CorrectionExample]:
    """One example per correction made in a plan (with ``hierarchy``, in it and every plan below
    it) or in a project's plans, oldest first.

    Name a plan or a project, not both. A plan that does not exist, or that ``principal`` may not
    see, is NotFound; a project's plans ``principal`` may not see are left out, as are the
    decisions and plans of an example that lie in them (replayed decisions, invalidated counts).
    """
    require_role(principal, Action.READ)
    if (plan_id is None) == (project is None):
        raise ValidationFailed("name a plan or a project, not both", field="plan" if plan_id else "project")
    if project is not None and principal.project not in (None, project):
        return []  # another project's plans: as if it had none

    def work(tx: Transaction) -> list[CorrectionExample]:
        if plan_id is not None:
            found, owner, in_project = plans.scopes(tx, [("plan", plan_id)])[0]
            if not found or not principal.sees(owner, in_project):
                raise NotFound("plan", plan_id)
        rows = corrections.example_rows(
            tx,
            plan_id=plan_id,
            project=project,
            hierarchy=hierarchy,
            owner=principal.owner_scope,
            scope_project=principal.project,
        )
        wanted = [
            i for row in rows for i in (row.attempt.corrected_decision_id, row.attempt.correction_decision_id, *row.replayed_ids)
        ]
        found_decisions = {d.decision_id: d for d in decisions.get_many(tx, list(dict.fromkeys(wanted))) if d is not None}
        examples = []
        for row in rows:
            corrected = found_decisions.get(row.attempt.corrected_decision_id)
            correction = found_decisions.get(row.attempt.correction_decision_id)
            if corrected is None or correction is None:
                continue  # pruned meanwhile: an example needs both
            examples.append(
                CorrectionExample(
                    attempt=row.attempt,
                    plan_id=row.plan_id,
                    project=row.project,
                    corrected=corrected,
                    correction=correction,
                    replayed=tuple(found_decisions[i] for i in row.replayed_ids if i in found_decisions),
                    replacement_id=row.replacement_id,
                    invalidated_decision_count=row.invalidated_decision_count,
                    invalidated_plan_count=row.invalidated_plan_count,
                )
            )
        return examples

    return trail.database.read(work)
