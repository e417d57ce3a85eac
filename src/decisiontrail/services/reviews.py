"""Human review of decisions held back by the automation profile (ADR-033, Automation Profile Interaction)."""

from __future__ import annotations

from decisiontrail.access import Action, Principal
from decisiontrail.domain import Decision, Phase
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.placement import Recording
from decisiontrail.domain.recording import Review, ReviewAction, resolution
from decisiontrail.events import DecisionEvent, EventKind
from decisiontrail.exceptions import NotFound
from decisiontrail.graphdb import reviews, runs
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services import reading
from decisiontrail.services.recording import place
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role, require_visible


def pending_reviews(trail: Trail, plan_id: str, *, principal: Principal) -> list[Review]:
    """The plan's decisions waiting for a person, oldest first."""
    return reading.pending_reviews(trail, plan_id, principal)


def resolve_review(
    trail: Trail,
    review_id: str,
    action: ReviewAction,
    option: str | None = None,
    *,
    principal: Principal,
    digest: str | None = None,
) -> tuple[Review, Decision]:
    """Approve the actor's choice, select one of its alternatives, or give custom guidance.

    The decision is persisted with that outcome, in one transaction with the review's
    resolution; an override moves the actor's original choice into alternatives_considered. The
    review keeps who resolved it (``principal``'s name: never a name the caller supplies) and the
    ``action_digest`` of the decision it resolved as (``approved_digest``). ``digest``, when given,
    is the review's ``digest`` as the reviewer saw it: the answer is refused (Conflict, nothing
    written) unless the review proposes exactly that action. A review in a plan ``principal`` may
    not see is NotFound, as one that does not exist; a ``principal`` whose role may not review is
    refused (Forbidden) before anything is read.
    """
    require_role(principal, Action.REVIEW)

    def work(tx: Transaction) -> tuple[Review, Decision]:
        require_visible(tx, principal, review_ids=[review_id])
        review = reviews.lock(tx, review_id)
        if review is None:
            raise NotFound("review", review_id)
        decision, status = resolution(review, action, option, digest)
        recording = Recording(
            decision,
            idempotency_key=review.proposal.idempotency_key,
            request_digest=review.proposal.request_digest,
            resolves_review_id=review_id,
        )
        # Created now, under the plan's lock, not when it was proposed: decisions recorded while
        # the review waited come before it in sequence and in time.
        placed = place(tx, [recording]).decisions[0][0]
        chosen = placed.chosen_option if action is not ReviewAction.APPROVE else None
        at = utc_now()
        reviews.mark_resolved(tx, review_id, status, at, chosen, principal.name, placed.action_digest)
        runs.wake(tx, [review.plan_id], at)  # a run waiting on it goes on
        # The review as this transaction resolved it: read back after the commit, a correction
        # committed meanwhile could already have lapsed it.
        resolved = review.model_copy(
            update={
                "status": status,
                "resolved_at": at,
                "resolved_option": chosen,
                "resolved_by": principal.name,
                "approved_digest": placed.action_digest,
                "decision_id": placed.decision_id,
            }
        )
        return resolved, placed

    review, decision = trail.write(
        work,
        lambda outcome: [
            DecisionEvent(EventKind.REVIEW_RESOLVED, outcome[1].plan_id, decision_id=outcome[1].decision_id, review_id=review_id),
            DecisionEvent(EventKind.RECORDED, outcome[1].plan_id, decision_id=outcome[1].decision_id),
        ],
        audit=Audit(
            principal,
            "reviews.resolve_review",
            Touched(reviews=[review_id]),
            lambda outcome: Touched(plans=[outcome[1].plan_id], decisions=[outcome[1].decision_id]),
        ),
        conflict=f"review {review_id} was resolved concurrently",
    )
    plan = reading.get_plan(trail, decision.plan_id, principal)
    if plan.phase is Phase.STRATEGIZE:  # the reconciliation goes on: an invariant may still be missing
        trail.entered_strategize(plan)
    trail.work_queued()  # a run waiting on the review goes on
    return review, decision
