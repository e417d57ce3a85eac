"""The decision store: plans, decisions and reviews written and read as whole records, one transaction each."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, TypeVar

import neo4j
from neo4j.exceptions import IncompleteCommit

from decisiontrail.cypher import query
from decisiontrail.domain import AutomationProfile, Decision, DecisionTree, Phase, Plan
from decisiontrail.domain.correction import (
    CorrectionAttempt,
    CorrectionMode,
    CorrectionResult,
    Impact,
    ImpactedDecision,
    ReplayOutcome,
    check_correctable,
    correction_decision,
    moot_reviews,
    phase_after_correction,
    replay_frontier,
    visible_at,
)
from decisiontrail.domain.decision import PHASES_BY_TYPE, DecisionType, utc_now
from decisiontrail.domain.recording import (
    PARENT_TYPES,
    CapturedContext,
    CheckpointGroup,
    Proposal,
    Review,
    ReviewAction,
    ReviewStatus,
    check_phase_transition,
    check_same_request,
    check_type_in_phase,
    checkpoint_group_for,
    needs_review,
    resolution,
    review_threshold,
)
from decisiontrail.domain.pages import DecisionPage, PlanPage, ReviewPage
from decisiontrail.domain.rules import (
    DecisionPlacement,
    SpawnLink,
    check_decision_placement,
    check_new_dependency,
    check_spawn_link,
)
from decisiontrail.events import DecisionEvent, EventBus, EventKind
from decisiontrail.exceptions import Conflict, NotFound, Unavailable, ValidationFailed
from decisiontrail.graphdb.connection import Graph, read, translated_errors, write_transaction
from decisiontrail.graphdb.records import (
    attempt_from_properties,
    attempt_properties,
    decision_from_record,
    decision_outline_from_record,
    decision_properties,
    impacted_from_row,
    plan_from_record,
    plan_properties,
    review_from_record,
    review_properties,
)

T = TypeVar("T")
log = logging.getLogger(__name__)

CONTENTION_RETRY_TIME = 30.0
"""How long a write keeps retrying while it conflicts with concurrent writes."""


@dataclass(frozen=True)
class _Seen:
    """The idempotency key was seen before: what it produced then."""

    decision_id: str | None
    review_id: str | None


class _AlreadyRecorded(Exception):
    """Raised inside a transaction when the idempotency key was seen before (nothing to write)."""

    def __init__(self, seen: _Seen) -> None:
        self.seen = seen


class DecisionStore:
    """Plans, their decisions and the reviews that hold decisions for a person, in Neo4j.

    Every write is one managed transaction (retried by the driver on transient errors), so a
    refused or failed write leaves the database as it was. Rules are judged by the pure
    functions of ``decisiontrail.domain`` against facts read inside that same transaction,
    under the plan's write lock.
    """

    def __init__(self, graph: Graph, *, events: EventBus | None = None) -> None:
        self.graph = graph
        self._driver = graph.driver
        self._database = graph.database
        self._events = events
        self.round_trips = 0
        """Read queries and write transactions sent so far: what an N+1 would make grow."""

    # -- plans -----------------------------------------------------------------------------

    def create_plan(self, plan: Plan) -> Plan:
        """Store a plan; a child plan is linked to its parent plan and its spawning decision."""
        self._write(lambda tx: self._create_plan_in(tx, plan), conflict=f"plan {plan.plan_id} already exists")
        return plan

    def instantiate(self, plan: Plan, root: Decision, *, context: CapturedContext | None = None) -> tuple[Plan, Decision]:
        """Create a plan and its root prompt_definition together, in one transaction."""

        def work(tx: neo4j.ManagedTransaction) -> Decision:
            self._create_plan_in(tx, plan)
            return self._record_in(tx, root, idempotency_key=None, context=context)

        stored = self._write(work, conflict=f"plan {plan.plan_id} already exists")
        self._publish(EventKind.RECORDED, plan.plan_id, decision_id=stored.decision_id)
        return plan, stored

    def get_plan(self, plan_id: str) -> Plan:
        records = self._read(query("plan/get_plan"), plan_id=plan_id)
        if not records:
            raise NotFound("plan", plan_id)
        return plan_from_record(records[0])

    def get_plans(self, plan_ids: list[str]) -> list[Plan | None]:
        """One result per id, in the order given; None where no such plan exists."""
        records = self._read(query("plan/get_plans"), plan_ids=plan_ids)
        found = {p.plan_id: p for p in map(plan_from_record, records)}
        return [found.get(plan_id) for plan_id in plan_ids]

    def count_plans(self) -> int:
        return int(self._read(query("plan/count_plans"))[0]["plans"])

    def child_plans_of(self, plan_ids: list[str]) -> list[list[str]]:
        """For each plan, in the order given, its child plans' ids in creation order."""
        records = self._read(query("plan/child_plans_of"), plan_ids=plan_ids)
        found = {r["parent_id"]: list(r["child_ids"]) for r in records}
        return [found.get(plan_id, []) for plan_id in plan_ids]

    def page_plans(self, page: PlanPage) -> tuple[int, list[str]]:
        """(how many plans match, the ids of one page of them after ``page.after``)."""
        record = self._read(query("plan/page_plans"), **page.params())[0]
        return int(record["total"]), list(record["plan_ids"])

    def page_decisions(self, plan_id: str, page: DecisionPage) -> tuple[int, list[str]]:
        """(how many of the plan's decisions match, the ids of one page of them after ``page.after``)."""
        record = self._read(query("decision/page_plan_decisions"), plan_id=plan_id, **page.params())[0]
        return int(record["total"]), list(record["decision_ids"])

    def advance_phase(self, plan_id: str, target: Phase, reason: str = "", *, by: str | None = None) -> Plan:
        """Move the plan to ``target`` (Strategize -> Execute -> Apply, or Execute -> Strategize),
        recording the change with its reason and who asked; refused while reviews are pending."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            row = tx.run(query("plan/read_phase"), plan_id=plan_id).single()
            if row is None:
                raise NotFound("plan", plan_id)
            current = Phase(row["phase"])
            check_phase_transition(current, target, row["pending_reviews"])
            tx.run(
                query("plan/change_phase"),
                plan_id=plan_id,
                from_phase=current.value,
                to_phase=target.value,
                reason=reason,
                at=utc_now(),
                by=by,
            ).consume()

        self._write(work)
        return self.get_plan(plan_id)

    def phase_changes(self, plan_id: str) -> list[dict[str, Any]]:
        """The plan's phase changes, oldest first: from_phase, to_phase, reason, at, by."""
        return [dict(r) for r in self._read(query("plan/list_phase_changes"), plan_id=plan_id)]

    # -- decisions -------------------------------------------------------------------------

    def record_decision(
        self,
        decision: Decision,
        *,
        idempotency_key: str | None = None,
        context: CapturedContext | None = None,
    ) -> Decision:
        """Store a decision under the next sequence number of its plan; return it as stored.

        The decision takes the plan's current phase, which must allow its type. With an
        ``idempotency_key`` seen before, the decision recorded then is returned instead.
        """

        def work(tx: neo4j.ManagedTransaction) -> Decision:
            return self._record_in(tx, decision, idempotency_key=idempotency_key, context=context)

        try:
            stored = self._write(work, conflict=f"decision {decision.decision_id} is already recorded")
            self._publish(EventKind.RECORDED, stored.plan_id, decision_id=stored.decision_id)
            return stored
        except _AlreadyRecorded as e:
            found = self._already_recorded(e.seen)
            assert isinstance(found, Decision)  # system decisions are never held for review
            return found

    def record_proposal(self, proposal: Proposal, *, context: CapturedContext | None = None) -> Decision | Review:
        """An actor's decision: placed, phase-checked and either persisted or held for review.

        With no parent given, the parent is inferred (see ``PARENT_TYPES``): the latest current
        decision of a type the new one hangs under, the same actor run's first, else the root.
        Below the plan's confidence threshold the proposal becomes a pending ``Review`` instead.
        A proposal whose idempotency key was seen before returns what that one became.
        """
        return self.record_proposals([(proposal, context)])[0]

    def record_proposals(self, items: list[tuple[Proposal, CapturedContext | None]]) -> list[Decision | Review]:
        """Several proposals in one transaction, in order: all are recorded (or held, or found
        already recorded), or, if one is refused, none."""
        for proposal, context in items:
            if context is not None and context.context_hash != proposal.context_snapshot.hot_context_hash:
                raise ValidationFailed(
                    "context_snapshot.hot_context_hash: does not match the SHA-256 of the captured context",
                    field="context_snapshot.hot_context_hash",
                )

        def work(tx: neo4j.ManagedTransaction) -> list[Decision | Review | _Seen]:
            return self._propose_all_in(tx, items)

        outcomes = self._write(work, conflict="a decision with one of these idempotency keys was recorded concurrently")
        for outcome in outcomes:
            if isinstance(outcome, Decision):
                self._publish(EventKind.RECORDED, outcome.plan_id, decision_id=outcome.decision_id)
            elif isinstance(outcome, Review):
                self._publish(EventKind.REVIEW_PENDING, outcome.plan_id, review_id=outcome.review_id)
        return [self._already_recorded(o) if isinstance(o, _Seen) else o for o in outcomes]

    def supersede(self, decision_id: str, superseded_by: str, at: datetime | None = None) -> None:
        """Mark ``decision_id`` as replaced by ``superseded_by``; refused if it already was."""

        def work(tx: neo4j.ManagedTransaction) -> int:
            row = tx.run(
                query("decision/supersede_decision"),
                decision_id=decision_id,
                superseded_by=superseded_by,
                at=at or utc_now(),
            ).single(strict=True)
            return int(row["superseded"])

        if self._write(work) == 1:
            return
        original = self.get_decision(decision_id)  # NotFound if it does not exist
        if original.superseded_by is not None:
            raise Conflict(f"decision {decision_id} is already superseded by {original.superseded_by}")
        raise NotFound("decision", superseded_by)

    def get_decision(self, decision_id: str) -> Decision:
        records = self._read(query("decision/get_decisions"), decision_ids=[decision_id])
        if not records:
            raise NotFound("decision", decision_id)
        return decision_from_record(records[0])

    def get_decisions(self, decision_ids: list[str]) -> list[Decision | None]:
        """One result per id, in the order given; None where no such decision exists."""
        records = self._read(query("decision/get_decisions"), decision_ids=decision_ids)
        found = {d.decision_id: d for d in map(decision_from_record, records)}
        return [found.get(decision_id) for decision_id in decision_ids]

    def children_of(self, decision_ids: list[str]) -> list[list[str]]:
        """For each decision, in the order given, its children's ids in sequence order."""
        records = self._read(query("decision/children_of"), decision_ids=decision_ids)
        found = {r["parent_id"]: list(r["child_ids"]) for r in records}
        return [found.get(decision_id, []) for decision_id in decision_ids]

    def list_decisions(self, plan_id: str, *, current_only: bool = False, as_of: datetime | None = None) -> list[Decision]:
        """A plan's decisions in sequence order; NotFound if the plan does not exist.

        ``current_only`` keeps those no correction has superseded; ``as_of`` those that were
        current at that moment (the tree as it stood then).
        """
        records = self._read(query("decision/list_plan_decisions"), plan_id=plan_id)
        if not records:
            self.get_plan(plan_id)  # raises NotFound for an unknown plan
        decisions = [decision_from_record(r) for r in records]
        if as_of is not None:
            return [d for d in decisions if visible_at(d.created_at, d.superseded_at, as_of)]
        return [d for d in decisions if d.is_current] if current_only else decisions

    def get_tree(self, plan_id: str, *, as_of: datetime | None = None, history: bool = False) -> DecisionTree | None:
        """The plan's current tree (its decisions no correction superseded), or with ``as_of`` the
        tree as it stood at that moment, or with ``history`` everything ever recorded in it (see
        ``DecisionTree.history``). None when that tree is empty: a plan invalidated by a
        correction has no current decisions. NotFound for an unknown plan."""
        decisions = self.list_decisions(plan_id, current_only=as_of is None and not history, as_of=as_of)
        if not decisions:
            return None
        return DecisionTree.history(plan_id, decisions) if history else DecisionTree.build(plan_id, decisions)

    def get_tree_outline(self, plan_id: str, *, as_of: datetime | None = None) -> tuple[DecisionTree | None, list[Decision]]:
        """``get_tree`` built from outlines (``decision_outline_from_record``) in one statement,
        and every decision of the plan as an outline, in sequence order (the list keeps those
        the tree leaves out)."""
        records = self._read(query("decision/plan_outline"), plan_id=plan_id, as_of=as_of)
        if not records:
            self.get_plan(plan_id)  # raises NotFound for an unknown plan
        decisions = [decision_outline_from_record(r) for r in records]
        if as_of is None:
            in_tree = [d for d in decisions if d.is_current]
        else:
            in_tree = [d for d in decisions if visible_at(d.created_at, d.superseded_at, as_of)]
        return (DecisionTree.build(plan_id, in_tree) if in_tree else None), decisions

    def lineage(self, decision_id: str) -> tuple[list[str], list[str]]:
        """Where a decision comes from: its ancestors (through parent plans too) and what it
        depends on, transitively; as (decision ids, plan ids)."""
        self.get_decision(decision_id)  # NotFound for an unknown id
        record = self._read(query("decision/lineage"), decision_id=decision_id)[0]
        return list(record["decision_ids"]), list(record["plan_ids"])

    def add_dependency(self, decision_id: str, depends_on_id: str) -> Decision:
        """Record that ``decision_id`` was influenced by ``depends_on_id`` (a DEPENDS_ON edge).

        Both must be current, and the dependency must not lie downstream of the decision: that
        would make the decision depend on itself.
        """

        def work(tx: neo4j.ManagedTransaction) -> None:
            facts = tx.run(query("correction/read_correction_facts"), decision_id=decision_id).single()
            if facts is None:
                raise NotFound("decision", decision_id)
            dependency = tx.run(query("decision/get_decisions"), decision_ids=[depends_on_id]).single()
            if dependency is None:
                raise NotFound("decision", depends_on_id)
            decision = decision_from_record(
                tx.run(query("decision/get_decisions"), decision_ids=[decision_id]).single(strict=True)
            )
            downstream = self._impact_in(tx, decision_id).decision_ids
            check_new_dependency(decision, decision_from_record(dependency), downstream)
            tx.run(query("decision/add_dependency"), decision_id=decision_id, depends_on_id=depends_on_id).consume()

        self._write(work)
        return self.get_decision(decision_id)

    def get_checkpoint_group(self, decision_id: str) -> CheckpointGroup | None:
        """The checkpoint group an Execute-phase decision was recorded with, if any."""
        records = self._read(query("decision/get_checkpoint_group"), decision_id=decision_id)
        if not records:
            return None
        group = records[0]["checkpoint_group"]
        return CheckpointGroup(
            group["group_id"], group["thread_id"], group["checkpoint_ns"], group["checkpoint_id"], tuple(group["resources"])
        )

    def find_context(self, context_hash: str) -> str | None:
        """The full context stored under ``context_hash``, or None when the service holds none."""
        records = self._read(query("context/get_context"), context_hash=context_hash)
        return str(records[0]["content"]) if records else None

    def read_context(self, context_hash: str) -> str:
        """The full context stored under ``context_hash``."""
        records = self._read(query("context/get_context"), context_hash=context_hash)
        if not records:
            raise NotFound("context", context_hash)
        return str(records[0]["content"])

    # -- correction ------------------------------------------------------------------------

    def preview_correction(self, decision_id: str) -> Impact:
        """What correcting ``decision_id`` would invalidate (the decision itself first); writes nothing."""
        original = self.get_decision(decision_id)
        check_correctable(decision_id, original.superseded_by)
        records = self._read(query("correction/downstream"), decision_id=decision_id)
        return _impact(records[0]).with_origin(ImpactedDecision.of(original))

    def correct(self, decision_id: str, mode: CorrectionMode, guidance: str, reason: str, requested_by: str) -> CorrectionResult:
        """Supersede the decision and its whole downstream by a correction, in one transaction.

        The decision and its plan are locked first, so of two concurrent corrections one
        wins and the other finds the decision superseded. Every plan the downstream touches
        is then locked before the downstream is read whole, so nothing recorded meanwhile
        escapes the supersession.
        """

        superseded_in: list[tuple[str, str]] = []  # (plan id, decision id), for the events
        cancelled: list[tuple[str, str]] = []  # (plan id, review id)

        def work(tx: neo4j.ManagedTransaction) -> CorrectionResult:
            facts = tx.run(query("correction/begin_correction"), decision_id=decision_id).single()
            if facts is None:
                raise NotFound("decision", decision_id)
            check_correctable(decision_id, facts["superseded_by"])
            original = decision_from_record(facts)
            # Lock every plan the downstream touches, then read the downstream whole: with those
            # plans locked nothing can be recorded into it. A plan reached only after the locks
            # (recorded meanwhile) is locked in another round.
            locked: set[str] = set()
            wanted = {original.plan_id, *facts["touched_plan_ids"]}
            for _ in range(5):
                impact = _impact(
                    tx.run(
                        query("correction/lock_and_read_downstream"), decision_id=decision_id, plan_ids=sorted(wanted - locked)
                    ).single(strict=True)
                )
                locked |= wanted
                wanted = {*(d.plan_id for d in impact.decisions), *impact.plan_ids}
                if wanted <= locked:
                    break
            else:
                raise Conflict(f"the downstream of {decision_id} kept changing under concurrent writes; try again")

            superseded = [decision_id, *impact.decision_ids]
            anchor = None
            if mode is CorrectionMode.APPEND:
                row = tx.run(query("correction/latest_current"), plan_id=original.plan_id, excluded=superseded).single()
                anchor = row["decision_id"] if row else None
            at = utc_now()
            phase = phase_after_correction(mode, original, Phase(facts["plan_phase"]))
            tx.run(
                query("plan/set_phase_in_correction"),
                plan_id=original.plan_id,
                to_phase=phase.value,
                reason=f"correction of {decision_id} ({mode.value})",
                at=at,
                by=requested_by,
            ).consume()
            draft, context = correction_decision(original, mode, guidance, reason, anchor_id=anchor, at=at)
            correction = self._record_in(tx, draft, idempotency_key=None, context=context)
            # Reviews waiting in the plans it touches that it makes moot are cancelled with it.
            pending = [review_from_record(r) for r in tx.run(query("review/pending_in_plans"), plan_ids=sorted(locked)).data()]
            moot = moot_reviews(
                pending,
                superseded=superseded,
                invalidated_plans=impact.plan_ids,
                corrected_plan_id=original.plan_id,
                phase=phase,
            )
            if moot:
                tx.run(
                    query("review/cancel_reviews"),
                    review_ids=[r.review_id for r in moot],
                    correction_id=correction.decision_id,
                    at=at,
                ).consume()
            cancelled[:] = [(r.plan_id, r.review_id) for r in moot]
            first_id, hops = facts["chain"]
            origin = ImpactedDecision.of(original)
            attempt = CorrectionAttempt(
                original_decision_id=first_id,
                corrected_decision_id=decision_id,
                correction_decision_id=correction.decision_id,
                attempt_number=hops + 1,
                mode=mode,
                guidance=guidance,
                reason=reason,
                requested_by=requested_by,
                at=at,
                invalidated_decision_ids=tuple(superseded),
                invalidated_plan_ids=impact.plan_ids,
                counts_by_type=impact.with_origin(origin).counts_by_type,
                replay_frontier=replay_frontier(mode, origin, impact),
            )
            tx.run(
                query("correction/supersede_downstream"),
                correction_id=correction.decision_id,
                original_id=decision_id,
                superseded_ids=superseded,
                plan_ids=list(impact.plan_ids),
                attempt=attempt_properties(attempt),
                at=at,
            ).consume()
            superseded_in[:] = [(d.plan_id, d.decision_id) for d in (origin, *impact.decisions)]
            return CorrectionResult(
                correction=correction,
                attempt=attempt,
                invalidated=tuple(superseded),
                invalidated_plans=impact.plan_ids,
                cancelled_reviews=tuple(r.review_id for r in moot),
            )

        result = self._write(work, conflict=f"decision {decision_id} was corrected concurrently")
        self._publish(EventKind.RECORDED, result.correction.plan_id, decision_id=result.correction.decision_id)
        for plan_id, superseded_id in superseded_in:
            self._publish(EventKind.SUPERSEDED, plan_id, decision_id=superseded_id)
        for plan_id, review_id in cancelled:
            self._publish(EventKind.REVIEW_CANCELLED, plan_id, review_id=review_id)
        return result

    def correction_attempts(self, decision_id: str) -> list[CorrectionAttempt]:
        """Every attempt on the correction chain ``decision_id`` belongs to, oldest first."""
        records = self._read(query("correction/list_attempts"), decision_id=decision_id)
        return [attempt_from_properties(r["attempt"]) for r in records]

    def set_replay_outcome(
        self, attempt_id: str, outcome: ReplayOutcome, detail: str | None = None, decision_ids: tuple[str, ...] = ()
    ) -> CorrectionAttempt:
        """Record how replaying a correction's frontier went, and what it recorded; the attempt as stored."""

        def work(tx: neo4j.ManagedTransaction) -> CorrectionAttempt:
            row = tx.run(
                query("correction/set_replay_outcome"),
                attempt_id=attempt_id,
                outcome=outcome.value,
                detail=detail,
                decision_ids=list(decision_ids),
                at=utc_now(),
            ).single()
            if row is None:
                raise NotFound("correction attempt", attempt_id)
            if row["missing"]:
                raise NotFound("decision", row["missing"][0])  # rolls the outcome back too
            return attempt_from_properties(row["attempt"])

        return self._write(work)

    def get_attempt(self, attempt_id: str) -> CorrectionAttempt:
        records = self._read(query("correction/get_attempt"), attempt_id=attempt_id)
        if not records:
            raise NotFound("correction attempt", attempt_id)
        return attempt_from_properties(records[0]["attempt"])

    def _publish(self, kind: EventKind, plan_id: str, *, decision_id: str | None = None, review_id: str | None = None) -> None:
        if self._events is not None:
            self._events.publish(DecisionEvent(kind, plan_id, decision_id=decision_id, review_id=review_id))

    @staticmethod
    def _impact_in(tx: neo4j.ManagedTransaction, decision_id: str) -> Impact:
        return _impact(tx.run(query("correction/downstream"), decision_id=decision_id).single(strict=True))

    # -- reviews ---------------------------------------------------------------------------

    def get_review(self, review_id: str) -> Review:
        records = self._read(query("review/get_reviews"), review_ids=[review_id])
        if not records:
            raise NotFound("review", review_id)
        return review_from_record(records[0])

    def get_reviews(self, review_ids: list[str]) -> list[Review]:
        """The reviews with these ids that exist, in the order given."""
        found = {r.review_id: r for r in map(review_from_record, self._read(query("review/get_reviews"), review_ids=review_ids))}
        return [found[review_id] for review_id in review_ids if review_id in found]

    def page_reviews(self, page: ReviewPage) -> tuple[int, list[Review]]:
        """(how many reviews match, one page of them after ``page.after``), in one statement."""
        record = self._read(query("review/page_reviews"), **page.params())[0]
        return int(record["total"]), [review_from_record(r) for r in record["reviews"]]

    def list_reviews(self, plan_id: str, status: ReviewStatus | None = None) -> list[Review]:
        """The plan's reviews, oldest first, optionally only those with ``status``."""
        records = self._read(query("review/list_plan_reviews"), plan_id=plan_id, status=status.value if status else None)
        return [review_from_record(r) for r in records]

    def resolve_review(
        self, review_id: str, action: ReviewAction, option: str | None = None, *, resolved_by: str | None = None
    ) -> tuple[Review, Decision]:
        """Persist a pending review's decision with the reviewer's outcome (and name), in one transaction."""

        def work(tx: neo4j.ManagedTransaction) -> Decision:
            locked = tx.run(query("review/lock_review"), review_id=review_id).single()
            if locked is None:
                raise NotFound("review", review_id)
            review = review_from_record(locked)
            decision, status = resolution(review, action, option)
            row = self._placement(
                tx,
                review.plan_id,
                decision,
                review.proposal.idempotency_key,
                infer_parent=False,
                actor_thread=None,
                check_seen=False,
            )
            # Created now, under the plan's lock, not when it was proposed: decisions recorded while
            # the review waited come before it in sequence and in time.
            placed = decision.model_copy(update={"sequence_number": row["sequence_number"], "created_at": utc_now()})
            self._check_placed(placed, row)
            check_type_in_phase(placed.decision_type, Phase(row["plan_phase"]))
            self._create(
                tx,
                placed,
                idempotency_key=review.proposal.idempotency_key,
                context=None,
                review_id=review_id,
                request_digest=review.proposal.request_digest,
            )
            tx.run(
                query("review/mark_resolved"),
                review_id=review_id,
                status=status.value,
                resolved_at=utc_now(),
                resolved_option=placed.chosen_option if action is not ReviewAction.APPROVE else None,
                resolved_by=resolved_by,
            ).consume()
            return placed

        decision = self._write(work, conflict=f"review {review_id} was resolved concurrently")
        self._publish(EventKind.REVIEW_RESOLVED, decision.plan_id, decision_id=decision.decision_id, review_id=review_id)
        self._publish(EventKind.RECORDED, decision.plan_id, decision_id=decision.decision_id)
        return self.get_review(review_id), decision

    # -- transaction steps -----------------------------------------------------------------

    @staticmethod
    def _create_plan_in(tx: neo4j.ManagedTransaction, plan: Plan) -> None:
        row = tx.run(
            query("plan/read_spawn_link"),
            plan_id=plan.plan_id,
            parent_plan_id=plan.parent_plan_id,
            spawned_by_decision_id=plan.spawned_by_decision_id,
        ).single(strict=True)
        check_spawn_link(
            plan,
            SpawnLink(
                plan_exists=row["plan_exists"],
                parent_plan_exists=row["parent_plan_exists"],
                spawning_exists=row["spawning_exists"],
                spawning_plan_id=row["spawning_plan_id"],
                spawning_type=DecisionType(row["spawning_type"]) if row["spawning_type"] else None,
                spawning_superseded=row["spawning_superseded"],
            ),
        )
        tx.run(
            query("plan/create_plan"),
            props=plan_properties(plan),
            parent_plan_id=plan.parent_plan_id,
            spawned_by_decision_id=plan.spawned_by_decision_id,
        ).consume()

    def _record_in(
        self, tx: neo4j.ManagedTransaction, decision: Decision, *, idempotency_key: str | None, context: CapturedContext | None
    ) -> Decision:
        row = self._placement(tx, decision.plan_id, decision, idempotency_key, infer_parent=False, actor_thread=None)
        self._check_placed(decision, row)
        phase = Phase(row["plan_phase"])
        check_type_in_phase(decision.decision_type, phase)
        stored = decision.model_copy(update={"sequence_number": row["sequence_number"], "phase": phase})
        self._create(tx, stored, idempotency_key=idempotency_key, context=context)
        return stored

    @staticmethod
    def _placement(
        tx: neo4j.ManagedTransaction,
        plan_id: str,
        decision: Decision,
        idempotency_key: str | None,
        *,
        infer_parent: bool,
        actor_thread: str | None,
        check_seen: bool = True,
    ) -> neo4j.Record:
        """Lock the plan and read the facts for placing ``decision``; stop if the key was seen."""
        row = tx.run(
            query("decision/read_placement"),
            plan_id=plan_id,
            decision_id=decision.decision_id,
            parent_decision_id=decision.parent_decision_id,
            infer_parent=infer_parent,
            parent_types=[t.value for t in PARENT_TYPES[decision.decision_type]],
            actor_thread=actor_thread,
            depends_on=list(decision.depends_on),
            corrects_decision_id=decision.corrects_decision_id,
            idempotency_key=idempotency_key,
        ).single(strict=True)
        if check_seen and (row["existing_decision"] or row["existing_review"]):
            raise _AlreadyRecorded(_seen(row))
        return row

    @staticmethod
    def _check_placed(decision: Decision, row: neo4j.Record) -> None:
        check_decision_placement(
            decision,
            DecisionPlacement(
                plan_exists=row["plan_exists"],
                decision_exists=row["decision_exists"],
                current_root_id=row["current_root_id"],
                parent_plan_id=row["parent_plan_id"],
                parent_exists=row["parent_exists"],
                parent_superseded=row["parent_superseded"],
                missing_dependencies=tuple(row["missing_dependencies"]),
                superseded_dependencies=tuple(row["superseded_dependencies"]),
                corrected_exists=row["corrected_exists"],
            ),
        )

    @staticmethod
    def _create(
        tx: neo4j.ManagedTransaction,
        decision: Decision,
        *,
        idempotency_key: str | None,
        context: CapturedContext | None,
        review_id: str | None = None,
        request_digest: str | None = None,
    ) -> None:
        group = checkpoint_group_for(decision)
        tx.run(
            query("decision/create_decision"),
            props=decision_properties(decision, idempotency_key, request_digest),
            plan_id=decision.plan_id,
            sequence_number=decision.sequence_number,
            parent_decision_id=decision.parent_decision_id,
            depends_on=list(decision.depends_on),
            corrects_decision_id=decision.corrects_decision_id,
            context=_context_param(context),
            checkpoint_group={**asdict(group), "resources": list(group.resources)} if group else None,
            review_id=review_id,
        ).consume()

    def _already_recorded(self, seen: _Seen) -> Decision | Review:
        if seen.decision_id is not None:
            return self.get_decision(seen.decision_id)
        assert seen.review_id is not None
        return self.get_review(seen.review_id)

    def _propose_all_in(
        self, tx: neo4j.ManagedTransaction, items: list[tuple[Proposal, CapturedContext | None]]
    ) -> list[Decision | Review | _Seen]:
        """Place, judge and write a batch of proposals in two round trips, whatever its size:
        one read of every fact (under the plans' locks), one write of the decisions with their
        edges and the plans' counters (reviews, rare in a batch, one each). Each proposal is judged as if the ones before it were already
        written: their sequence numbers, parents and dependencies count."""
        drafts = [p.decision(parent_decision_id=p.parent_decision_id, phase=_any_phase(p)) for p, _ in items]
        facts = tx.run(
            query("decision/read_placements"),
            plan_ids=sorted({p.plan_id for p, _ in items}),
            items=[
                {
                    "index": i,
                    "plan_id": p.plan_id,
                    "decision_id": draft.decision_id,
                    "parent_decision_id": p.parent_decision_id,
                    "infer_parent": p.parent_decision_id is None,
                    "parent_types": [t.value for t in PARENT_TYPES[p.decision_type]],
                    "actor_thread": _thread(p),
                    "depends_on": list(draft.depends_on),
                    "idempotency_key": p.idempotency_key,
                }
                for i, ((p, _), draft) in enumerate(zip(items, drafts, strict=True))
            ],
        ).data()
        # Stamped under the plans' locks, so creation times follow the sequence numbers given here.
        recorded_at = utc_now()
        batch = _Batch()
        outcomes: list[Decision | Review | _Seen] = []
        reviews: list[tuple[Review, CapturedContext | None]] = []
        for (proposal, context), draft, row in zip(items, drafts, facts, strict=True):
            earlier = batch.outcome_for(proposal)
            if earlier is not None:
                outcomes.append(earlier)
                continue
            if row["existing_decision"] or row["existing_review"]:
                seen = _seen(row)
                seen_id, seen_digest = row["existing_decision"] or row["existing_review"]
                check_same_request(
                    proposal.idempotency_key, proposal.request_digest, seen_id, seen_digest, held=seen.decision_id is None
                )
                outcomes.append(seen)
                continue
            phase = Phase(row["plan_phase"]) if row["plan_exists"] else draft.phase
            parent_id, parent = batch.parent_for(proposal, row)
            placed = draft.model_copy(
                update={
                    "parent_decision_id": parent_id,
                    "sequence_number": batch.next_sequence(proposal.plan_id, row["sequence_number"]),
                    "phase": phase,
                    "created_at": recorded_at,
                }
            )
            check_decision_placement(
                placed,
                DecisionPlacement(
                    plan_exists=row["plan_exists"],
                    decision_exists=row["decision_exists"] or batch.holds(placed.decision_id),
                    current_root_id=row["current_root_id"],
                    parent_plan_id=parent[0],
                    parent_exists=parent[1],
                    parent_superseded=parent[2],
                    missing_dependencies=tuple(d for d in row["missing_dependencies"] if not batch.holds(d)),
                    superseded_dependencies=tuple(row["superseded_dependencies"]),
                    corrected_exists=True,  # proposals correct nothing; corrections are the lifecycle's
                ),
            )
            check_type_in_phase(proposal.decision_type, phase)
            profile = AutomationProfile(edit_code=row["automation_edit_code"], execute_command=row["automation_execute_command"])
            outcome: Decision | Review
            if needs_review(profile, phase, proposal.confidence_score):
                outcome = Review(
                    plan_id=proposal.plan_id,
                    proposal=proposal,
                    parent_decision_id=placed.parent_decision_id,
                    phase=phase,
                    threshold=review_threshold(profile, phase),
                )
                reviews.append((outcome, context))
            else:
                outcome = placed
                batch.add(placed, _thread(proposal), proposal.idempotency_key, proposal.request_digest, context)
            batch.remember(proposal, outcome)
            outcomes.append(outcome)
        self._create_all(tx, batch)
        for review, context in reviews:
            tx.run(
                query("review/create_review"),
                plan_id=review.plan_id,
                props=review_properties(review),
                context=_context_param(context),
            ).consume()
        return outcomes

    @staticmethod
    def _create_all(tx: neo4j.ManagedTransaction, batch: _Batch) -> None:
        if not batch.decisions:
            return
        rows = []
        for decision, key, digest, context in batch.decisions:
            group = checkpoint_group_for(decision)
            rows.append(
                {
                    "plan_id": decision.plan_id,
                    "props": decision_properties(decision, key, digest),
                    "context": _context_param(context),
                    "checkpoint_group": {**asdict(group), "resources": list(group.resources)} if group else None,
                    "parent_decision_id": decision.parent_decision_id,
                    "depends_on": list(decision.depends_on),
                }
            )
        tx.run(
            query("decision/create_decisions"),
            rows=rows,
            plans=[{"plan_id": plan_id, "next_sequence": n} for plan_id, n in batch.sequences.items()],
        ).consume()

    # -- plumbing --------------------------------------------------------------------------

    def _read(self, statement: Any, /, **params: Any) -> list[neo4j.Record]:
        self.round_trips += 1
        return read(self.graph, statement, params)

    def _write(self, work: Callable[[neo4j.ManagedTransaction], T], *, conflict: str = "the write conflicts with another") -> T:
        self.round_trips += 1
        # Contention (a deadlock between writers, rare now that writers queue on :PlanLock) is
        # retried up to a deadline; an unreachable server is not, so it is reported at once
        # (see connection.write_transaction).
        timeout = self.graph.query_timeout
        with translated_errors(conflict, timeout=timeout):
            try:
                return write_transaction(
                    self._driver, self._database, work, contention_seconds=CONTENTION_RETRY_TIME, timeout=timeout
                )
            except IncompleteCommit as e:
                # The commit was sent and the connection lost: it may have been written. Unlike the
                # other unavailability, this one cannot promise "wrote nothing".
                log.warning("Neo4j became unavailable during a commit: %s", e)
                raise Unavailable(
                    "Neo4j became unavailable while committing; the request may have been recorded: "
                    "retry it with the same idempotency key"
                ) from e


class _Batch:
    """What the earlier proposals of a batch have placed, so later ones are judged with it."""

    def __init__(self) -> None:
        self.decisions: list[tuple[Decision, str | None, str | None, CapturedContext | None]] = []
        self.sequences: dict[str, int] = {}
        self._placed: dict[str, tuple[Decision, str | None]] = {}
        self._by_key: dict[tuple[str, str], tuple[Decision | Review, str]] = {}  # (plan, key): (outcome, digest)

    def next_sequence(self, plan_id: str, stored_next: int | None) -> int:
        return self.sequences.get(plan_id, stored_next if stored_next is not None else 0)

    def holds(self, decision_id: str) -> bool:
        return decision_id in self._placed

    def add(
        self, decision: Decision, thread: str | None, key: str | None, digest: str | None, context: CapturedContext | None
    ) -> None:
        self.decisions.append((decision, key, digest, context))
        self.sequences[decision.plan_id] = (decision.sequence_number or 0) + 1
        self._placed[decision.decision_id] = (decision, thread)

    def remember(self, proposal: Proposal, outcome: Decision | Review) -> None:
        self._by_key[(proposal.plan_id, proposal.idempotency_key)] = (outcome, proposal.request_digest)

    def outcome_for(self, proposal: Proposal) -> Decision | Review | None:
        """What an earlier proposal of the batch with this one's key made of it, if the same request."""
        found = self._by_key.get((proposal.plan_id, proposal.idempotency_key))
        if found is None:
            return None
        outcome, digest = found
        seen_id = outcome.decision_id if isinstance(outcome, Decision) else outcome.review_id
        check_same_request(
            proposal.idempotency_key, proposal.request_digest, seen_id, digest, held=not isinstance(outcome, Decision)
        )
        return outcome

    def parent_for(self, proposal: Proposal, row: dict[str, Any]) -> tuple[str | None, tuple[str | None, bool, bool]]:
        """The parent's id and its facts (plan, exists, superseded), the batch's decisions included.

        Inference follows read_placement's rule over the stored candidate and the batch's own:
        the same actor run's latest first, then the latest; the batch's come after every stored one.
        """
        if proposal.parent_decision_id is not None:
            given = self._placed.get(proposal.parent_decision_id)
            if given is not None:
                return proposal.parent_decision_id, (given[0].plan_id, True, False)
            return proposal.parent_decision_id, (row["parent_plan_id"], row["parent_exists"], row["parent_superseded"])
        thread = _thread(proposal)
        types = set(PARENT_TYPES[proposal.decision_type])
        ours = [(d, t) for d, t in self._placed.values() if d.plan_id == proposal.plan_id and d.decision_type in types]
        same_run = [d for d, t in ours if thread is not None and t == thread]
        stored, stored_thread = row["inferred_parent_id"], row["inferred_parent_thread"]
        if same_run:
            chosen = same_run[-1].decision_id
        elif stored is not None and thread is not None and stored_thread == thread:
            chosen = stored
        elif ours:
            chosen = ours[-1][0].decision_id
        else:
            chosen = stored or row["current_root_id"]
        if chosen is None:
            return None, (None, False, False)
        return chosen, (proposal.plan_id, True, False)


def _seen(row: Any) -> _Seen:
    """What a key seen before in the plan recorded: a decision, or a review still holding it."""
    decision, review = row["existing_decision"], row["existing_review"]
    return _Seen(decision[0] if decision else None, review[0] if review else None)


def _thread(proposal: Proposal) -> str | None:
    state = proposal.context_snapshot.actor_state_ref
    return state.thread_id if state else None


def _impact(record: neo4j.Record) -> Impact:
    decisions = sorted((impacted_from_row(row) for row in record["decisions"]), key=lambda d: (d.plan_id, d.sequence_number))
    return Impact(decision_id=record["decision_id"], decisions=tuple(decisions), plan_ids=tuple(sorted(record["plan_ids"])))


def _any_phase(proposal: Proposal) -> Phase:
    """A phase the proposal's type allows, for building the draft; the plan's phase replaces it."""
    return PHASES_BY_TYPE[proposal.decision_type][0]


def _context_param(context: CapturedContext | None) -> dict[str, str] | None:
    return None if context is None else {"context_hash": context.context_hash, "content": context.content}
