"""Who may do and see what, judged once for every entry point: an action the caller's role does not
allow is Forbidden, and a plan, decision or review the caller may not see is answered as if it did
not exist."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from decisiontrail.access import Action, Principal
from decisiontrail.domain import Plan
from decisiontrail.exceptions import Forbidden, NotFound
from decisiontrail.graphdb import plans
from decisiontrail.graphdb.database import Transaction


def require_role(principal: Principal, action: Action) -> None:
    """Forbidden unless ``principal``'s role allows ``action``: the first thing a use-case judges,
    before it reads or writes anything, so a refusal writes nothing and tells nothing."""
    if not principal.may(action):
        raise Forbidden(principal.role.value, action.value)


def require_whole_store(principal: Principal, action: Action) -> None:
    """``require_role``, for a job over the whole store (dump, restore, prune): refused too for a
    principal some plans are hidden from, since it would read or change them all."""
    require_role(principal, action)
    if principal.limited:
        raise Forbidden(
            principal.role.value, f"{action.value} the whole store from a token limited to project {principal.project}"
        )


def require_visible(
    tx: Transaction,
    principal: Principal,
    *,
    plan_ids: Iterable[str] = (),
    decision_ids: Iterable[str] = (),
    review_ids: Iterable[str] = (),
) -> None:
    """NotFound for the first target that does not exist or lies in a plan ``principal`` may not see.

    Checked only for a principal some plans are hidden from; for the others the use-case's own
    checks answer for what does not exist.
    """
    if not principal.limited:
        return
    targets = [
        *(("plan", i) for i in dict.fromkeys(plan_ids)),
        *(("decision", i) for i in dict.fromkeys(decision_ids)),
        *(("review", i) for i in dict.fromkeys(review_ids)),
    ]
    if not targets:
        return
    for (kind, target_id), (found, owner, project) in zip(targets, plans.scopes(tx, targets), strict=True):
        if not found or not principal.sees(owner, project):
            raise NotFound(kind, target_id)


def visible_plans(principal: Principal, found: Sequence[Plan | None]) -> list[Plan | None]:
    """``found`` with the plans ``principal`` may not see replaced by None."""
    if not principal.limited:
        return list(found)
    return [p if p is not None and principal.sees(p.owner, p.project) else None for p in found]
