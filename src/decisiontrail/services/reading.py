"""Reads that only show data: each one statement (or one read transaction), visibility applied here.

The query side of the services (the book's CQRS chapter): nothing here judges or writes. Every
read takes the caller's ``principal``, whose role must allow reading; one that some plans are
hidden from gets None (or NotFound, or nothing) where a plan it may not see, or one of its
decisions or reviews, would be. The batch reads the GraphQL DataLoaders use for relations
(``children_of``, ``child_plans_of``, ``phase_changes_of``, ``checkpoint_groups``,
``find_contexts``, ``correction_attempts_of``) take none: they are reached only from a plan or
decision the caller was shown, its visibility judged by the read that showed it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from decisiontrail.access import Action, Principal
from decisiontrail.domain import Decision, DecisionTree, Plan
from decisiontrail.domain.correction import CorrectionAttempt, as_it_stood, visible_at
from decisiontrail.domain.as_of import existed, review_as_it_stood
from decisiontrail.domain.pages import DecisionPage, DecisionSearch, PlanPage, ReviewPage, SearchHit
from decisiontrail.domain.recording import CheckpointGroup, Review, ReviewStatus
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.graphdb import admin, contexts, corrections, decisions, plans, reviews
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_role, require_visible, visible_plans

# -- plans -------------------------------------------------------------------------------------


def ready(trail: Trail) -> None:
    """Whether the service can serve: its database takes a transaction. A Neo4j that answers but
    whose database has stopped taking them (its disk full: Neo4j then waits for a restart) is not
    ready, as one that cannot be reached; raises ``Unavailable`` either way."""
    trail.database.read(admin.ping)


def get_plans(trail: Trail, plan_ids: list[str], principal: Principal) -> list[Plan | None]:
    """One result per id, in the order given; None where no such plan exists or ``principal`` may not see it."""
    require_role(principal, Action.READ)
    return visible_plans(principal, trail.database.read(plans.get_many, plan_ids))


def get_plan(trail: Trail, plan_id: str, principal: Principal) -> Plan:
    found = get_plans(trail, [plan_id], principal)[0]
    if found is None:
        raise NotFound("plan", plan_id)
    return found


def count_plans(trail: Trail, principal: Principal) -> int:
    """How many plans there are that ``principal`` may see."""
    require_role(principal, Action.READ)
    if not principal.limited:
        return trail.database.read(plans.count)
    total, _ = page_plans(trail, PlanPage(first=1), principal)
    return total or 0


def child_plans_of(trail: Trail, plan_ids: list[str]) -> list[list[str]]:
    """For each plan, in the order given, its child plans' ids in creation order. A batch read for
    plans the caller was shown: the children are judged when they are read (``get_plans``)."""
    return trail.database.read(plans.child_plans_of, plan_ids)


def page_plans(trail: Trail, page: PlanPage, principal: Principal) -> tuple[int | None, list[str]]:
    """(how many plans match, None unless ``page.count``; the ids of one page of them), among those
    ``principal`` may see."""
    require_role(principal, Action.READ)
    if principal.project is not None and page.project is not None and page.project != principal.project:
        return (0 if page.count else None), []
    page = replace(page, owner=principal.owner_scope or page.owner, project=principal.project or page.project)
    return trail.database.read(plans.page, page)


def phase_changes(trail: Trail, plan_id: str, principal: Principal) -> list[dict[str, Any]]:
    """The plan's phase changes, oldest first: from_phase, to_phase, reason, at, by; NotFound for a
    plan ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[dict[str, Any]]:
        require_visible(tx, principal, plan_ids=[plan_id])
        return plans.phase_changes(tx, [plan_id])[0]

    return trail.database.read(work)


def phase_changes_of(trail: Trail, plan_ids: list[str]) -> list[list[dict[str, Any]]]:
    """For each plan, in the order given, its phase changes, oldest first. A batch read for plans
    the caller was shown (``Plan.phaseHistory``'s loader)."""
    return trail.database.read(plans.phase_changes, plan_ids)


# -- decisions ---------------------------------------------------------------------------------


def get_decisions(trail: Trail, decision_ids: list[str], principal: Principal) -> list[Decision | None]:
    """One result per id, in the order given; None where no such decision exists or ``principal`` may not see its plan."""
    require_role(principal, Action.READ)
    found = trail.database.read(decisions.get_many, decision_ids)
    if not principal.limited:
        return found
    plan_ids = sorted({d.plan_id for d in found if d is not None})
    seen = {p.plan_id for p in get_plans(trail, plan_ids, principal) if p is not None}
    return [d if d is not None and d.plan_id in seen else None for d in found]


def get_decision(trail: Trail, decision_id: str, principal: Principal) -> Decision:
    found = get_decisions(trail, [decision_id], principal)[0]
    if found is None:
        raise NotFound("decision", decision_id)
    return found


def children_of(trail: Trail, decision_ids: list[str]) -> list[list[str]]:
    """For each decision, in the order given, its children's ids in sequence order. A batch read for
    decisions the caller was shown (children lie in their parent's plan)."""
    return trail.database.read(decisions.children_of, decision_ids)


def list_decisions(
    trail: Trail, plan_id: str, principal: Principal, *, current_only: bool = False, as_of: datetime | None = None
) -> list[Decision]:
    """A plan's decisions in sequence order; NotFound if the plan does not exist or ``principal``
    may not see it.

    ``current_only`` keeps those no correction has superseded; ``as_of`` those that were current
    at that moment (the tree as it stood then), each as it stood then: current, with no successor
    (``as_it_stood``).
    """
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[Decision]:
        require_visible(tx, principal, plan_ids=[plan_id])
        return _of_existing_plan(tx, plan_id, decisions.in_plan(tx, plan_id))

    found = trail.database.read(work)
    if as_of is not None:  # each as it stood then: superseded only by what came before
        return [as_it_stood(d, as_of) for d in found if visible_at(d.created_at, d.superseded_at, as_of)]
    return [d for d in found if d.is_current] if current_only else found


def _of_existing_plan(tx: Transaction, plan_id: str, found: list[Decision]) -> list[Decision]:
    """``found``, a plan's decisions; NotFound when there are none because the plan does not exist."""
    if not found and plans.get_many(tx, [plan_id])[0] is None:
        raise NotFound("plan", plan_id)
    return found


def get_tree(
    trail: Trail, plan_id: str, principal: Principal, *, as_of: datetime | None = None, history: bool = False
) -> DecisionTree | None:
    """The plan's current tree (its decisions no correction superseded), or with ``as_of`` the tree
    as it stood at that moment, or with ``history`` everything ever recorded in it (see
    ``DecisionTree.history``). None when that tree is empty: a plan invalidated by a correction
    has no current decisions. NotFound for an unknown plan, or one ``principal`` may not see."""
    found = list_decisions(trail, plan_id, principal, current_only=as_of is None and not history, as_of=as_of)
    if not found:
        return None
    return DecisionTree.history(plan_id, found) if history else DecisionTree.build(plan_id, found)


def get_tree_outline(
    trail: Trail, plan_id: str, principal: Principal, *, as_of: datetime | None = None
) -> tuple[DecisionTree | None, list[Decision]]:
    """``get_tree`` built from outlines in one statement, and every decision of the plan as an
    outline, in sequence order (the list keeps those the tree leaves out), each as it stood
    ``as_of`` (``as_it_stood``)."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[Decision]:
        require_visible(tx, principal, plan_ids=[plan_id])
        return _of_existing_plan(tx, plan_id, decisions.outlines_in_plan(tx, plan_id, as_of))

    outlines = [as_it_stood(d, as_of) for d in trail.database.read(work)]
    if as_of is None:
        in_tree = [d for d in outlines if d.is_current]
    else:
        in_tree = [d for d in outlines if visible_at(d.created_at, d.superseded_at, as_of)]
    return (DecisionTree.build(plan_id, in_tree) if in_tree else None), outlines


def page_decisions(trail: Trail, plan_id: str, page: DecisionPage, principal: Principal) -> tuple[int | None, list[str]]:
    """(how many of the plan's decisions match, None unless ``page.count``; the ids of one page of
    them after ``page.after``); NotFound for a plan ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> tuple[int | None, list[str]]:
        require_visible(tx, principal, plan_ids=[plan_id])
        return decisions.page(tx, plan_id, page)

    return trail.database.read(work)


def search_decisions(trail: Trail, search: DecisionSearch, principal: Principal) -> tuple[int | None, list[SearchHit]]:
    """(how many decisions are found, None unless ``search.count``; one page of the hits, best first)
    across the plans ``principal`` may see, judged in the search's statement; a token limited to a
    project asking for another finds none."""
    require_role(principal, Action.READ)
    if principal.project is not None and search.project is not None and search.project != principal.project:
        return (0 if search.count else None), []
    search = replace(search, owner=principal.owner_scope, project=principal.project or search.project)
    return trail.database.read(decisions.search, search)


def lineage(
    trail: Trail, decision_id: str, principal: Principal, *, as_of: datetime | None = None
) -> tuple[list[str], list[str]]:
    """Where a decision comes from: its ancestors (through parent plans too) and what it depends
    on, transitively; as (decision ids, plan ids). NotFound for an unknown decision.

    Everything a decision comes from is older than it but a dependency added later (a replay's
    report, ``add_dependency``), which is dated: as of a moment before it, it is not followed.
    ``as_of`` before the decision was recorded is refused.
    """
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> tuple[list[str], list[str]]:
        # A caller some plans are hidden from walks only through the plans it sees, in the same
        # statement (a decision it may not see is answered as one that does not exist).
        if principal.limited:
            found = decisions.lineage_seen(tx, decision_id, owner=principal.owner_scope, project=principal.project, as_of=as_of)
        else:
            found = decisions.lineage(tx, decision_id, as_of=as_of)
        if found is None:
            raise NotFound("decision", decision_id)
        if as_of is not None and found.created_at > as_of:
            raise ValidationFailed(
                f"asOf: decision {decision_id} was recorded after {as_of.isoformat()}; it had no lineage then",
                field="asOf",
            )
        return found.decision_ids, found.plan_ids

    return trail.database.read(work)


def checkpoint_group(trail: Trail, decision_id: str, principal: Principal) -> CheckpointGroup | None:
    """The checkpoint group an Execute-phase decision was recorded with, if any; NotFound for a
    decision ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> CheckpointGroup | None:
        require_visible(tx, principal, decision_ids=[decision_id])
        return decisions.checkpoint_groups(tx, [decision_id])[0]

    return trail.database.read(work)


def checkpoint_groups(trail: Trail, decision_ids: list[str]) -> list[CheckpointGroup | None]:
    """For each decision, in the order given, its checkpoint group, if any. A batch read for
    decisions the caller was shown."""
    return trail.database.read(decisions.checkpoint_groups, decision_ids)


def find_context(trail: Trail, context_hash: str, principal: Principal) -> str | None:
    """The full context stored under ``context_hash``, or None when the service holds none.

    A context is content-addressed and may be shared by decisions of several plans: asking by
    its hash (the SHA-256 of the content) needs a decision or review naming it, or the content."""
    require_role(principal, Action.READ)
    return find_contexts(trail, [context_hash])[0]


def find_contexts(trail: Trail, context_hashes: list[str]) -> list[str | None]:
    """For each hash, in the order given, the full context stored under it, or None. A batch
    read for the hashes of decisions the caller was shown."""
    return trail.database.read(contexts.find, context_hashes)


def read_context(trail: Trail, context_hash: str, principal: Principal) -> str:
    """The full context stored under ``context_hash``; NotFound when the service holds none."""
    found = find_context(trail, context_hash, principal)
    if found is None:
        raise NotFound("context", context_hash)
    return found


# -- reviews -----------------------------------------------------------------------------------


def get_reviews(trail: Trail, review_ids: list[str], principal: Principal, *, as_of: datetime | None = None) -> list[Review]:
    """The reviews with these ids that exist and lie in plans ``principal`` may see, in the order
    given; as of a moment, those that existed then, each as it stood then (``review_as_it_stood``)."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[Review]:
        found = [r for r in reviews.get_many(tx, review_ids) if r is not None and existed(r.created_at, as_of)]
        if principal.limited and found:
            scopes = plans.scopes(tx, [("review", r.review_id) for r in found])
            found = [r for r, (_, owner, project) in zip(found, scopes, strict=True) if principal.sees(owner, project)]
        return [review_as_it_stood(r, as_of) for r in found]

    return trail.database.read(work)


def get_review(trail: Trail, review_id: str, principal: Principal) -> Review:
    found = get_reviews(trail, [review_id], principal)
    if not found:
        raise NotFound("review", review_id)
    return found[0]


def list_reviews(trail: Trail, plan_id: str, principal: Principal, status: ReviewStatus | None = None) -> list[Review]:
    """The plan's reviews, oldest first, optionally only those with ``status``; NotFound for a plan
    ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[Review]:
        require_visible(tx, principal, plan_ids=[plan_id])
        return reviews.in_plan(tx, plan_id, status)

    return trail.database.read(work)


def pending_reviews(trail: Trail, plan_id: str, principal: Principal) -> list[Review]:
    """The plan's decisions waiting for a person, oldest first."""
    return list_reviews(trail, plan_id, principal, ReviewStatus.PENDING)


def page_reviews(trail: Trail, page: ReviewPage, principal: Principal) -> tuple[int | None, list[Review]]:
    """(how many reviews match, None unless ``page.count``; one page of them after ``page.after``)
    among the plans ``principal`` may see; a token limited to a project asking for another gets none.
    As of ``page.as_of``, the reviews created by then, each as it stood then."""
    require_role(principal, Action.READ)
    if principal.project is not None and page.project is not None and page.project != principal.project:
        return 0, []
    page = replace(page, owner=principal.owner_scope, project=principal.project or page.project)
    total, found = trail.database.read(reviews.page, page)
    return total, [review_as_it_stood(r, page.as_of) for r in found]


# -- corrections -------------------------------------------------------------------------------


def correction_attempts(trail: Trail, decision_id: str, principal: Principal) -> list[CorrectionAttempt]:
    """Every attempt on the correction chain ``decision_id`` belongs to, oldest first; NotFound for
    a decision ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> list[CorrectionAttempt]:
        require_visible(tx, principal, decision_ids=[decision_id])
        return corrections.attempts(tx, [decision_id])[0]

    return trail.database.read(work)


def correction_attempts_of(trail: Trail, decision_ids: list[str]) -> list[list[CorrectionAttempt]]:
    """For each decision, in the order given, the attempts on its correction chain, oldest first.
    A batch read for decisions the caller was shown (``Decision.corrections``' loader)."""
    return trail.database.read(corrections.attempts, decision_ids)


def get_attempt(trail: Trail, attempt_id: str, principal: Principal) -> CorrectionAttempt:
    """One correction attempt; NotFound for an unknown one or one on a decision ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> CorrectionAttempt:
        found = corrections.get_attempt(tx, attempt_id)
        if found is None:
            raise NotFound("correction attempt", attempt_id)
        try:
            require_visible(tx, principal, decision_ids=[found.corrected_decision_id])
        except NotFound:
            raise NotFound("correction attempt", attempt_id) from None
        return found

    return trail.database.read(work)
