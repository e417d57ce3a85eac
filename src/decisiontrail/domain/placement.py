"""Placing recordings: where each decision of a batch goes, judged from facts read under the plans' locks.

Every recording is a batch: an actor's proposals, a system decision (a plan's root, a correction,
a user's guidance), a review's resolution. The service reads the facts of the whole batch in one
statement, ``place_all`` judges them here, and the service writes what it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from decisiontrail.domain.decision import Decision, DecisionType, Phase, partial_copy
from decisiontrail.domain.plan import AutomationProfile
from decisiontrail.domain.recording import (
    PARENT_TYPES,
    CapturedContext,
    Proposal,
    Review,
    check_same_request,
    check_type_in_phase,
    needs_review,
    review_threshold,
)
from decisiontrail.domain.rules import DecisionPlacement, check_decision_placement
from decisiontrail.exceptions import RuleViolation


@dataclass(frozen=True)
class Recording:
    """One decision to place: an actor's proposal, or a decision the service built whole."""

    draft: Decision
    proposal: Proposal | None = None
    """An actor's: its parent may be inferred, it may be held for review, its key and digest count."""
    context: CapturedContext | None = None
    idempotency_key: str | None = None
    request_digest: str | None = None
    resolves_review_id: str | None = None
    """The review this decision resolves: it keeps the review's key, which is not looked up again."""

    @classmethod
    def of(cls, proposal: Proposal, context: CapturedContext | None = None) -> Recording:
        return cls(proposal.draft(), proposal, context, proposal.idempotency_key, proposal.request_digest)

    @property
    def infer_parent(self) -> bool:
        return self.proposal is not None and self.proposal.parent_decision_id is None

    @property
    def thread(self) -> str | None:
        """The actor run it comes from: parents are inferred within the same run first."""
        state = self.draft.context_snapshot.actor_state_ref
        return state.thread_id if state else None

    @property
    def id_to_look_up(self) -> str | None:
        """The id to check no stored decision has: none for an actor's proposal, whose draft has a
        fresh ULID (the unique constraint still refuses the impossible collision)."""
        return None if self.proposal is not None else self.draft.decision_id

    @property
    def key_to_look_up(self) -> str | None:
        return None if self.resolves_review_id is not None else self.idempotency_key

    @property
    def stamped_when_placed(self) -> bool:
        """Its creation time is the moment it is placed (under the lock), not the one it was built at."""
        return self.proposal is not None or self.resolves_review_id is not None


@dataclass(frozen=True)
class Seen:
    """The idempotency key was seen before in the plan: what it recorded then."""

    decision_id: str | None
    review_id: str | None


Outcome = Decision | Review | Seen


@dataclass
class Placed:
    """What a batch writes: its decisions (in order), held reviews, and the plans' next sequence numbers."""

    outcomes: list[Outcome] = field(default_factory=list)
    decisions: list[tuple[Decision, Recording]] = field(default_factory=list)
    reviews: list[tuple[Review, CapturedContext | None]] = field(default_factory=list)
    sequences: dict[str, int] = field(default_factory=dict)


def place_all(recordings: Sequence[Recording], facts: Sequence[Mapping[str, Any]], *, at: datetime) -> Placed:
    """Judge a batch in order, each recording as if the ones before it were already written.

    ``facts`` holds one row per recording (``decision/read_placements``); ``at`` is the moment of
    placing. Raises on the first recording refused, so a batch is written whole or not at all.
    """
    batch = _Batch()
    placed = Placed()
    for recording, row in zip(recordings, facts, strict=True):
        earlier = batch.outcome_for(recording)
        if earlier is not None:
            placed.outcomes.append(earlier)
            continue
        if row["existing_decision"] or row["existing_review"]:
            placed.outcomes.append(_seen(recording, row))
            continue
        draft = recording.draft
        phase = Phase(row["plan_phase"]) if row["plan_exists"] else draft.phase
        parent_id, parent = batch.parent_for(recording, row)
        # The draft placed: pydantic's model_copy(update=...), in one step (a thousand per large batch).
        decision = partial_copy(
            draft,
            {
                "parent_decision_id": parent_id,
                "sequence_number": batch.next_sequence(draft.plan_id, row["sequence_number"]),
                "phase": phase,
                "created_at": at if recording.stamped_when_placed else draft.created_at,
            },
        )
        check_decision_placement(
            decision,
            DecisionPlacement(
                plan_exists=row["plan_exists"],
                decision_exists=row["decision_exists"] or batch.holds(decision.decision_id),
                current_root_id=row["current_root_id"],
                parent_plan_id=parent[0],
                parent_exists=parent[1],
                parent_superseded=parent[2],
                missing_dependencies=tuple(d for d in row["missing_dependencies"] if not batch.holds(d)),
                superseded_dependencies=tuple(row["superseded_dependencies"]),
                corrected_exists=row["corrected_exists"],
            ),
        )
        check_type_in_phase(decision.decision_type, phase)
        check_under_strategy(decision, phase, row["current_root_id"])
        outcome: Decision | Review = decision
        proposal = recording.proposal
        profile = batch.profile(row["automation_edit_code"], row["automation_execute_command"])
        # A question whose approval lapsed is asked of a person again, whatever the confidence.
        reopens = batch.lapsed_asked_by(proposal, row.get("lapsed_reviews") or ()) if proposal is not None else None
        if proposal is not None and (reopens is not None or needs_review(profile, phase, proposal.confidence_score)):
            outcome = Review(
                plan_id=proposal.plan_id,
                proposal=proposal,
                parent_decision_id=decision.parent_decision_id,
                phase=phase,
                threshold=review_threshold(profile, phase),
                reopens=reopens,
            )
            placed.reviews.append((outcome, recording.context))
        else:
            batch.add(decision, recording)
            placed.decisions.append((decision, recording))
        batch.remember(recording, outcome)
        placed.outcomes.append(outcome)
    placed.sequences = batch.sequences
    return placed


def check_under_strategy(decision: Decision, phase: Phase, root_id: str | None) -> None:
    """Decisions made during Execute are constrained by Strategize decisions (ADR-007): none hangs
    directly under the plan's prompt_definition.

    >>> from decisiontrail.domain.decision import ContextSnapshot, DecisionType
    >>> d = Decision(plan_id="01M8Q9T3CH0JJC3RE3HDQHJZJS", parent_decision_id="01M8Q9T3CH0JJC3RE3HDQHJZJR",
    ...              decision_type=DecisionType.TOOL_INVOCATION, question="q", chosen_option="o", rationale="r",
    ...              context_snapshot=ContextSnapshot(hot_context_hash="0" * 64, hot_context_ref="r"))
    >>> check_under_strategy(d, Phase.EXECUTE, "01M8Q9T3CH0JJC3RE3HDQHJZJR")
    Traceback (most recent call last):
    decisiontrail.exceptions.RuleViolation: parent_decision_id: ...
    """
    if phase is Phase.EXECUTE and root_id is not None and decision.parent_decision_id == root_id:
        raise RuleViolation(
            f"parent_decision_id: a {decision.decision_type.value} made during execute hangs under a Strategize "
            f"decision (a strategy_choice, say) or an earlier execute decision, not directly under the plan's "
            f"prompt_definition {root_id}",
            rule="execute_under_strategize",
        )


def _seen(recording: Recording, row: Mapping[str, Any]) -> Seen:
    decision, review = row["existing_decision"], row["existing_review"]
    seen = Seen(decision[0] if decision else None, review[0] if review else None)
    seen_id, seen_digest = decision or review
    if recording.idempotency_key is not None and recording.request_digest is not None:
        check_same_request(
            recording.idempotency_key, recording.request_digest, seen_id, seen_digest, held=seen.decision_id is None
        )
    return seen


class _Batch:
    """What the earlier recordings of a batch have placed, so later ones are judged with it."""

    def __init__(self) -> None:
        self.sequences: dict[str, int] = {}
        self._profiles: dict[tuple[float, float], AutomationProfile] = {}
        self._placed: dict[str, Decision] = {}
        # The latest of each type in each plan, and in each plan's actor runs, as (place in the
        # batch, id): parent inference looks a recording's parent types up here, not through
        # everything placed before it (a batch of 1,000 inferring parents scanned half a million).
        self._latest: dict[tuple[str, DecisionType], tuple[int, str]] = {}
        self._latest_in_run: dict[tuple[str, DecisionType, str], tuple[int, str]] = {}
        self._by_key: dict[tuple[str, str], tuple[Decision | Review, str | None]] = {}  # (plan, key): (outcome, digest)
        self._reopened: set[str] = set()  # lapsed reviews asked again by the batch

    def profile(self, edit_code: float, execute_command: float) -> AutomationProfile:
        """The plan's automation profile, validated once per batch for each plan's thresholds."""
        found = self._profiles.get((edit_code, execute_command))
        if found is None:
            found = self._profiles[(edit_code, execute_command)] = AutomationProfile(
                edit_code=edit_code, execute_command=execute_command
            )
        return found

    def next_sequence(self, plan_id: str, stored_next: int | None) -> int:
        return self.sequences.get(plan_id, stored_next if stored_next is not None else 0)

    def lapsed_asked_by(self, proposal: Proposal, lapsed: Sequence[Sequence[str]]) -> str | None:
        """The plan's lapsed review (``lapsed``: (review id, proposal as JSON) each, oldest first,
        none yet asked again) whose question ``proposal`` asks again, if any; each is asked once."""
        for review_id, proposal_json in lapsed:
            if review_id in self._reopened:
                continue
            earlier = Proposal.model_validate_json(proposal_json)
            if earlier.decision_type is proposal.decision_type and earlier.question.strip() == proposal.question.strip():
                self._reopened.add(review_id)
                return review_id
        return None

    def holds(self, decision_id: str) -> bool:
        return decision_id in self._placed

    def add(self, decision: Decision, recording: Recording) -> None:
        self.sequences[decision.plan_id] = (decision.sequence_number or 0) + 1
        latest = (len(self._placed), decision.decision_id)
        self._placed[decision.decision_id] = decision
        self._latest[(decision.plan_id, decision.decision_type)] = latest
        thread = recording.thread
        if thread is not None:
            self._latest_in_run[(decision.plan_id, decision.decision_type, thread)] = latest

    def remember(self, recording: Recording, outcome: Decision | Review) -> None:
        if recording.key_to_look_up is not None:
            self._by_key[(recording.draft.plan_id, recording.key_to_look_up)] = (outcome, recording.request_digest)

    def outcome_for(self, recording: Recording) -> Decision | Review | None:
        """What an earlier recording of the batch with this one's key made of it, if the same request."""
        key = recording.key_to_look_up
        found = self._by_key.get((recording.draft.plan_id, key)) if key is not None else None
        if found is None:
            return None
        outcome, digest = found
        if recording.request_digest is not None and digest is not None:
            seen_id = outcome.decision_id if isinstance(outcome, Decision) else outcome.review_id
            check_same_request(key or "", recording.request_digest, seen_id, digest, held=not isinstance(outcome, Decision))
        return outcome

    def parent_for(self, recording: Recording, row: Mapping[str, Any]) -> tuple[str | None, tuple[str | None, bool, bool]]:
        """The parent's id and its facts (plan, exists, superseded), the batch's decisions included.

        An inferred parent is ``inferred_parent``'s, over the stored candidates the read took
        (decision/read_placements) and the batch's own, which come after every stored one.
        """
        draft = recording.draft
        if not recording.infer_parent:
            if draft.parent_decision_id is None:
                return None, (None, False, False)
            given = self._placed.get(draft.parent_decision_id)
            if given is not None:
                return draft.parent_decision_id, (given.plan_id, True, False)
            return draft.parent_decision_id, (row["parent_plan_id"], row["parent_exists"], row["parent_superseded"])
        thread = recording.thread
        types = PARENT_TYPES[draft.decision_type]
        ours = _last(self._latest.get((draft.plan_id, t)) for t in types)
        ours_in_run = _last(self._latest_in_run.get((draft.plan_id, t, thread)) for t in types) if thread is not None else None
        chosen = inferred_parent(
            latest_in_run=ours_in_run or row["latest_of_parent_types_in_run"],
            latest=ours or row["latest_of_parent_types"],
            root=row["current_root_id"],
        )
        if chosen is None:
            return None, (None, False, False)
        return chosen, (draft.plan_id, True, False)


def inferred_parent(*, latest_in_run: str | None, latest: str | None, root: str | None) -> str | None:
    """Parent inference: the parent of a recording that names none (ADR-033: "the system infers the
    parent from the current decision context"), the one place it is decided.

    Among the plan's current decisions of the recording's parent types (``PARENT_TYPES``, ADR-007's
    tree), the latest its own actor run recorded (``latest_in_run``), else the latest any run
    recorded (``latest``); else the plan's current root. decision/read_placements reads the stored
    candidates, and ``place_all`` folds in its batch's own.

    >>> inferred_parent(latest_in_run="R", latest="L", root="P"), inferred_parent(latest_in_run=None, latest="L", root="P")
    ('R', 'L')
    >>> inferred_parent(latest_in_run=None, latest=None, root="P")
    'P'
    """
    return latest_in_run or latest or root


def _last(found: Iterable[tuple[int, str] | None]) -> str | None:
    """The id of the one placed last of ``found`` (each a place in the batch and an id, or None)."""
    placed = [f for f in found if f is not None]
    return max(placed)[1] if placed else None
