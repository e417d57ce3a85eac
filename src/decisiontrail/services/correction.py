"""Correcting a decision (ADR-007): the one place that decides what a correction means."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from decisiontrail.access import Action, Principal
from pydantic import JsonValue

from decisiontrail.domain import DecisionType, Phase
from decisiontrail.domain.correction import (
    CorrectionAttempt,
    CorrectionMode,
    CorrectionResult,
    Impact,
    ImpactedDecision,
    ReplayOutcome,
    check_correctable,
    check_correction_key,
    check_current_at,
    check_same_correction,
    correction_digest,
    invalidation_paths,
    PathStep,
    check_guidance,
    check_replay_outcome,
    correction_decision,
    moot_reviews,
    parse_mode,
    phase_after_correction,
    plans_waiting_on,
    replay_frontier,
)
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.placement import Recording, place_all
from decisiontrail.domain.recording import prompt_context
from decisiontrail.events import EventKind
from decisiontrail.exceptions import Conflict, NotFound, RuleViolation, TooLarge, ValidationFailed
from decisiontrail.graphdb import corrections, decisions, outbox, plans, runs
from decisiontrail.graphdb.corrections import PhaseMove
from decisiontrail.graphdb.database import Transaction
from decisiontrail.services import reading
from decisiontrail.services.trail import Audit, Touched, Trail
from decisiontrail.services.visibility import require_role, require_visible

LOCK_ROUNDS = 5
"""How often a correction locks the plans its downstream reached meanwhile before it gives up."""


def correct(
    trail: Trail,
    decision_id: str,
    mode: str,
    guidance: str,
    reason: str = "",
    *,
    principal: Principal,
    requested_by: str | None = None,
    description: str | None = None,
    arguments: Mapping[str, JsonValue] | None = None,
    idempotency_key: str | None = None,
) -> CorrectionResult:
    """Supersede ``decision_id`` and its whole downstream (across child plans) by a correction.

    A prompt correction (of the plan's prompt_definition) carries the new prompt: ``description``
    (by default the guidance) and ``arguments`` (by default the plan's); the new root records
    them, and the plan's description and arguments become them.

    ``mode`` is ``revert`` (roll back to the original's checkpoint and re-run from there) or
    ``append`` (keep the state reached and add the fix at the end of the original's branch); in
    both the correction hangs under the original's parent (``domain.correction.correction_parent``).
    Returns the correction decision, the attempt record, what was invalidated, the reviews it
    made moot and the replay frontier. Refused, with nothing written, for an unknown id (or one
    ``principal`` may not see), an unknown mode, empty guidance, or a decision already superseded
    (the error names its successor), or a ``principal`` whose role may not correct (Forbidden). Who
    asked is kept: ``requested_by`` (whom a process relays the request for, the command line's
    ``--by``), else the principal's name.
    A downstream too large for one transaction's memory in Neo4j is refused whole (``TOO_LARGE``):
    superseding only part of it would leave current decisions under superseded ones.
    With an ``idempotency_key`` (unique in the corrected decision's plan), the same request sent
    again, after the first has committed, is answered with what the first did (``repeated``; nothing
    written, announced or audited again): a client whose answer was lost can send it again. The key
    used before in that plan for another request is refused (``IdempotencyKeyMismatch``).
    """
    require_role(principal, Action.CORRECT)
    parsed, guidance, reason = parse_mode(mode), check_guidance(guidance), reason.strip()
    by = requested_by if requested_by is not None else principal.name
    prompt = NewPrompt.of(description, arguments)
    key = check_correction_key(idempotency_key)
    keyed = None
    if key is not None:
        asked = (prompt.description, prompt.arguments) if prompt is not None else (None, None)
        keyed = Keyed(key, correction_digest(decision_id, parsed, guidance, reason, by, *asked))
    try:
        result = trail.write(
            lambda tx: correct_in(tx, decision_id, parsed, guidance, reason, by, principal, prompt, keyed=keyed),
            audit=Audit(principal, "correction.correct", Touched(decisions=[decision_id]), touched_by_correction),
            conflict=f"decision {decision_id} was corrected concurrently",
        )
    except TooLarge as e:
        raise TooLarge(
            f"correcting decision {decision_id} supersedes its whole downstream in one transaction, and that "
            f"needs more memory than Neo4j allows one transaction ({e.limit}); nothing was written. Correct a "
            "decision further down (the impact query shows each one's downstream), or raise the limit: "
            "DECISIONTRAIL_NEO4J_TX_MEMORY_MB for the embedded Neo4j, db.memory.transaction.max on a server of your own",
            limit=e.limit,
        ) from e
    if not result.repeated:
        reentered(trail, result, principal)
        trail.work_queued()  # a plan the runtime runs replays it
    return result


@dataclass(frozen=True)
class Keyed:
    """A correction request's idempotency key and what it asked (``correction_digest``)."""

    key: str
    digest: str


def touched_by_correction(result: CorrectionResult) -> Touched | None:
    """What a correction's audit entry names of what it wrote: its decision, its attempt, the plans it
    invalidated and the reviews it cancelled or lapsed (the decisions it superseded are the attempt's to
    list); None (no entry) for a request answered again under its key, which wrote nothing."""
    if result.repeated:
        return None
    return Touched(
        plans=[result.correction.plan_id, *result.invalidated_plans],
        decisions=[result.correction.decision_id],
        reviews=[*result.cancelled_reviews, *result.lapsed_reviews],
        others=[result.attempt.attempt_id],
    )


def reentered(trail: Trail, result: CorrectionResult, principal: Principal) -> None:
    """After ``principal``'s correction that left its plan in Strategize (a prompt correction, a
    revert of a Strategize decision), that plan has entered Strategize again: its reconciliation
    runs, and re-records the invariants whose invariant_enforced decisions the correction superseded."""
    if result.correction.phase is Phase.STRATEGIZE:
        trail.entered_strategize(reading.get_plan(trail, result.correction.plan_id, principal))


@dataclass(frozen=True)
class NewPrompt:
    """What a prompt correction asks the plan to accomplish instead."""

    description: str | None
    arguments: dict[str, JsonValue] | None

    @classmethod
    def of(cls, description: str | None, arguments: Mapping[str, JsonValue] | None) -> NewPrompt | None:
        if description is None and arguments is None:
            return None
        if description is not None and not description.strip():
            raise ValidationFailed("description: must not be blank", field="description")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ValidationFailed("arguments: must be a JSON object", field="arguments")
        return cls(description.strip() if description is not None else None, dict(arguments) if arguments is not None else None)


def correct_in(
    tx: Transaction,
    decision_id: str,
    mode: CorrectionMode,
    guidance: str,
    reason: str,
    requested_by: str,
    principal: Principal,
    prompt: NewPrompt | None = None,
    *,
    keyed: Keyed | None = None,
) -> CorrectionResult:
    """The correction, inside a use-case's one transaction (``correct``'s, or one that corrects as part
    of more), which announces it (its events are written with the supersession: ``Trail.write``
    without ``events``).

    The decision and its plan are locked first, so of two concurrent corrections one wins and the
    other finds the decision superseded. Every plan the downstream touches is then locked before
    the downstream is read whole, so nothing recorded meanwhile escapes the supersession.
    """
    require_visible(tx, principal, decision_ids=[decision_id])
    correction_id = new_ulid()  # the reads take the facts placing it is judged by
    facts = corrections.begin(tx, decision_id, correction_id)
    if facts is None:
        raise NotFound("decision", decision_id)
    original = facts.decision
    # Under the plan's lock: a request sent again finds the attempt the first one committed.
    if keyed is not None and (seen := corrections.attempt_by_key(tx, original.plan_id, keyed.key)) is not None:
        check_same_correction(keyed.key, seen, keyed.digest)
        [made] = decisions.get_many(tx, [seen.correction_decision_id])
        assert made is not None  # an attempt's correction decision is never deleted without it
        return CorrectionResult.again(made, seen)
    check_correctable(decision_id, facts.superseded_by)
    # The plans the downstream touched are locked and the downstream read whole under those
    # locks, so nothing can be recorded into it meanwhile. A plan the read reached beyond them
    # (through something recorded between the walks) is locked in another round: the reads again,
    # the walks now made under the locks already held.
    # Reviews pending in other plans whose proposals depend on the downstream are moot too: their
    # plans are locked as well, and the reviews read there.
    rounds = 1
    while not (wanted := _plans_to_lock(decision_id, facts)) <= set(facts.locked_plan_ids):
        if rounds == LOCK_ROUNDS:
            raise Conflict(f"the downstream of {decision_id} kept changing under concurrent writes; try again")
        facts = corrections.begin(tx, decision_id, correction_id, also_lock=sorted(wanted))
        assert facts is not None  # locked since the first round
        rounds += 1
    downstream = facts.downstream
    superseded = [decision_id, *downstream.decision_ids]
    at = utc_now()
    phase = phase_after_correction(mode, original, Phase(facts.plan_phase), root_id=facts.placing.current_root_id)
    new_prompt = None
    if original.decision_type is DecisionType.PROMPT_DEFINITION:
        plan = plans.get_many(tx, [original.plan_id])[0]
        assert plan is not None  # a decision's plan exists
        description = (prompt.description if prompt else None) or guidance
        arguments = prompt.arguments if prompt is not None and prompt.arguments is not None else plan.arguments
        new_prompt = prompt_context(description, arguments)
        plans.set_prompt(tx, original.plan_id, description, arguments)
    elif prompt is not None:
        raise ValidationFailed(
            "description: only a correction of the plan's prompt_definition carries a new description or arguments",
            field="description",
        )
    draft, context = correction_decision(original, guidance, reason, at=at, prompt=new_prompt, decision_id=correction_id)
    # Placed by the facts the reads took, in the phase the correction moves the plan to; written
    # by ``supersede_downstream``, which records the move.
    recording = Recording(draft, context=context)
    placed = place_all([recording], [facts.placement_of(recording, phase)], at=at)
    correction = placed.decisions[0][0]
    # Reviews waiting in the plans it touches that it makes moot are cancelled with it.
    moot = moot_reviews(
        facts.pending_reviews,
        superseded=superseded,
        invalidated_plans=downstream.plan_ids,
        corrected_plan_id=original.plan_id,
        phase=phase,
    )
    origin = ImpactedDecision.of(original)
    attempt = CorrectionAttempt(
        original_decision_id=facts.first_in_chain,
        corrected_decision_id=decision_id,
        correction_decision_id=correction.decision_id,
        attempt_number=facts.attempts_before + 1,
        mode=mode,
        guidance=guidance,
        reason=reason,
        requested_by=requested_by,
        at=at,
        invalidated_decision_ids=tuple(superseded),
        invalidated_plan_ids=downstream.plan_ids,
        counts_by_type=downstream.counts_with(origin),
        replay_frontier=replay_frontier(mode, origin, downstream.earliest),
        cancelled_review_ids=tuple(r.review_id for r in moot),
        idempotency_key=keyed.key if keyed is not None else None,
        request_digest=keyed.digest if keyed is not None else None,
    )
    outcome = CorrectionResult(
        correction=correction,
        attempt=attempt,
        invalidated=tuple(superseded),
        invalidated_plans=downstream.plan_ids,
        cancelled_reviews=tuple(r.review_id for r in moot),
    )
    # What it announces: the correction recorded, each decision superseded (plan by plan, as the
    # downstream's runs hold them: no event built per decision), each review cancelled.
    announce = outbox.Announcement.of_runs(
        [
            outbox.Run(EventKind.RECORDED.value, correction.plan_id, decision_ids=[correction.decision_id]),
            outbox.Run(EventKind.SUPERSEDED.value, origin.plan_id, decision_ids=[origin.decision_id]),
            *(outbox.Run(EventKind.SUPERSEDED.value, plan_id, decision_ids=ids) for plan_id, ids in downstream.runs),
            *(outbox.Run(EventKind.REVIEW_CANCELLED.value, r.plan_id, review_ids=[r.review_id]) for r in moot),
        ],
        at,
    )
    # Superseded where the walk finds it, under the same locks: the same downstream, or refused.
    # The statement announces the correction too.
    found = corrections.supersede_downstream(
        tx, placed, attempt, [r.review_id for r in moot], at, PhaseMove(original.plan_id, phase, by=requested_by), announce
    )
    if found.decisions != len(superseded) or found.plan_ids != downstream.plan_ids:
        raise Conflict(f"the downstream of {decision_id} changed while it was corrected; nothing was written; try again")
    if found.lapsed:  # approvals resting on what it superseded: rare, so announced on their own
        lapsed = [
            outbox.Run(EventKind.REVIEW_LAPSED.value, plan_id, review_ids=[review_id]) for review_id, plan_id in found.lapsed
        ]
        outbox.append(tx, outbox.Announcement.of_runs(lapsed, at))
        lapsed_ids = tuple(review_id for review_id, _ in found.lapsed)
        corrections.keep_lapsed(tx, attempt.attempt_id, lapsed_ids)
        attempt = attempt.model_copy(update={"lapsed_review_ids": lapsed_ids})
        outcome = outcome.model_copy(update={"lapsed_reviews": lapsed_ids, "attempt": attempt})
    # A plan the runtime runs replays the correction itself: queued here, with the correction.
    runs.queue_replay(tx, original.plan_id, attempt.attempt_id, downstream.plan_ids, at)
    return outcome


def _plans_to_lock(decision_id: str, facts: corrections.CorrectionFacts) -> set[str]:
    """The plans the downstream touches and those where a review waits on it."""
    if not facts.waiting:  # usually: then no set of the whole downstream's ids is built
        return facts.downstream.touched_plan_ids
    superseded = {decision_id, *facts.downstream.decision_ids}
    return facts.downstream.touched_plan_ids | plans_waiting_on(superseded, facts.waiting)


def preview(trail: Trail, decision_id: str, *, principal: Principal, as_of: datetime | None = None) -> Impact:
    """What correcting ``decision_id`` would invalidate (the decision itself first): decisions,
    plans, counts by type; with ``as_of``, what correcting it then would have invalidated, the
    decision current at that moment. Writes nothing; NotFound for a decision ``principal`` may not see."""
    require_role(principal, Action.READ)

    def work(tx: Transaction) -> Impact:
        require_visible(tx, principal, decision_ids=[decision_id])
        if as_of is None:
            found = corrections.downstream_with_origin(tx, decision_id)
            if found is None:
                raise NotFound("decision", decision_id)
            origin, superseded_by, impact = found
            check_correctable(decision_id, superseded_by)
            return impact.with_origin(origin)
        original = decisions.get_many(tx, [decision_id])[0]
        if original is None:
            raise NotFound("decision", decision_id)
        check_current_at(original, as_of)
        return corrections.downstream_as_of(tx, decision_id, as_of).with_origin(ImpactedDecision.of(original))

    return trail.database.read(work)


def explain(trail: Trail, origin_id: str, reached_ids: Sequence[str]) -> dict[str, tuple[PathStep, ...]]:
    """Why each of ``reached_ids`` (decisions and plans an impact or a correction reached from
    ``origin_id``) is downstream of it: a shortest chain of PARENT, DEPENDS_ON, SPAWNED_BY and
    IN_PLAN edges, walked from the origin. One read of the edges leaving them, for an impact or a
    correction the caller was shown (what it may not see of them is left out by whoever shows it)."""
    reached = [i for i in dict.fromkeys(reached_ids) if i != origin_id]
    edges = trail.database.read(corrections.edges_from, reached)
    return invalidation_paths(origin_id, reached, edges)


def history(trail: Trail, decision_id: str, principal: Principal) -> list[CorrectionAttempt]:
    """Every correction attempt on the chain ``decision_id`` belongs to, oldest first."""
    return reading.correction_attempts(trail, decision_id, principal)


def record_replay(
    trail: Trail,
    attempt_id: str,
    outcome: ReplayOutcome,
    detail: str | None = None,
    decision_ids: Sequence[str] = (),
    *,
    principal: Principal,
) -> CorrectionAttempt:
    """Record how the actors' replay of a correction went and which decisions it recorded, for a
    ``principal`` that may record; an attempt on a decision it may not see is NotFound, as are
    decisions it may not see.

    The decisions the replay recorded depend on the correction decision (the guidance they
    follow), so correcting the guidance later invalidates them; the first of them of the corrected
    decision's type, in its plan, replaces it, so a correction of that replacement continues the
    attempt numbering of the same chain. A replayed decision must be current.
    """
    require_role(principal, Action.RECORD)
    outcome = check_replay_outcome(outcome)
    named = tuple(dict.fromkeys(decision_ids))

    def work(tx: Transaction) -> CorrectionAttempt:
        found = corrections.get_attempt(tx, attempt_id)
        if found is None:
            raise NotFound("correction attempt", attempt_id)
        try:
            require_visible(tx, principal, decision_ids=[found.corrected_decision_id])
        except NotFound:
            raise NotFound("correction attempt", attempt_id) from None
        require_visible(tx, principal, decision_ids=named)
        stored, missing = corrections.set_replay_outcome(tx, attempt_id, outcome, detail, named, utc_now())
        if stored is None:
            raise NotFound("correction attempt", attempt_id)
        if missing:
            raise NotFound("decision", missing[0])  # rolls the outcome back too
        corrected, *named_found = decisions.get_many(tx, [found.corrected_decision_id, *named])
        assert corrected is not None  # an attempt's decision stays while its attempt does
        replayed = [d for d in named_found if d is not None]
        superseded = [d.decision_id for d in replayed if d.superseded_by is not None]
        if superseded:
            raise RuleViolation(
                f"decision_ids: decision {superseded[0]} has been superseded; a replay records current decisions",
                rule="decision_is_current",
            )
        replacement = next(
            (d for d in replayed if d.decision_type is corrected.decision_type and d.plan_id == corrected.plan_id), None
        )
        corrections.link_replay(
            tx,
            found.correction_decision_id,
            tuple(d.decision_id for d in replayed),
            corrected.decision_id,
            replacement.decision_id if replacement is not None else None,
        )
        return stored

    return trail.write(
        work,
        audit=Audit(
            principal,
            "correction.record_replay",
            Touched(decisions=named, others=[attempt_id]),
            lambda stored: Touched(decisions=[stored.corrected_decision_id, stored.correction_decision_id]),
        ),
    )


def attempt(trail: Trail, attempt_id: str, principal: Principal) -> CorrectionAttempt:
    """One correction attempt by its id."""
    return reading.get_attempt(trail, attempt_id, principal)


def _if_written(written: bool) -> Touched | None:
    return Touched() if written else None


def supersede(trail: Trail, decision_id: str, superseded_by: str, at: datetime | None = None, *, principal: Principal) -> None:
    """Mark ``decision_id`` as replaced by ``superseded_by`` alone (no downstream, no attempt);
    refused if it already was. For repairs and tests, by a ``principal`` that may correct and see
    both; corrections go through ``correct``."""
    require_role(principal, Action.CORRECT)

    def work(tx: Transaction) -> bool:
        require_visible(tx, principal, decision_ids=[decision_id, superseded_by])
        return decisions.supersede(tx, decision_id, superseded_by, at or utc_now())

    # Nothing written when it was refused (the reason read below): no audit entry either.
    audited = Audit(principal, "correction.supersede", Touched(decisions=[decision_id, superseded_by]), _if_written)
    if trail.write(work, audit=audited):
        return
    original = reading.get_decision(trail, decision_id, principal)  # NotFound if it does not exist
    if original.superseded_by is not None:
        raise Conflict(f"decision {decision_id} is already superseded by {original.superseded_by}")
    raise NotFound("decision", superseded_by)
