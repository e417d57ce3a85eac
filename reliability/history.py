"""A load's history held against the final graph, Jepsen style: what was acknowledged, checked against what is stored.

The history is the load generator's journal (``reliability.load``): every operation with when it
was invoked, when it completed and what it was answered. The snapshot is the final graph read
from Neo4j once (``read_snapshot``), as plain values. Each check is a pure function of the two and
returns the violations it found, each naming its invariant and the ids involved, so a check is
tested on a literal history and graph that break exactly one rule (tests/test_history.py):

- ``recorded_once``: every acknowledged decision is stored exactly once (counted: rows with its
  id, rows with its idempotency key), in the plan and under the sequence number it was
  acknowledged with, and created while its operation was in flight;
- ``correction_closure``: every correction's superseded decisions and invalidated plans (as
  answered, as linked in the graph, as its attempt lists them) are the downstream closure of the
  corrected decision at the correction's moment (ADR-007: no more, no less), computed from the
  final graph with what did not exist yet, or was gone already, left out; and that moment lies
  within the correction's operation;
- ``current_under_superseded``: no current decision has a superseded ancestor or lies in an
  invalidated plan, up the PARENT chain and across plans through the spawns that made them;
- ``active_under_superseded_spawn``: no child plan is active under a superseded spawn (or a
  spawn that hangs under one);
- ``replay_at_most_once``: no correction's replay is queued twice, queued again once reported,
  or reported twice (decisions linked as its replay that its report no longer names);
- ``review_stranded``: no review is left pending where it can never be resolved, every review a
  correction answered as cancelled is stored cancelled by it, and every review pending at a
  correction's moment that it made moot was answered cancelled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, LiteralString

from decisiontrail.graphdb import Graph

INVARIANTS = (
    "recorded_once",
    "correction_closure",
    "current_under_superseded",
    "active_under_superseded_spawn",
    "replay_at_most_once",
    "review_stranded",
)

SLACK = 0.25
"""Seconds a stored moment may fall outside its operation's [invoked, completed]: the journal's
times are rounded to the millisecond, and the service and the generator read the same host's clock."""

CORRECTING = frozenset({"correct", "correct_child", "correct_spawn", "correct_anchor", "correct_shared"})
"""The journal's operations that correct a decision (their ``ack`` names it ``corrected``)."""


@dataclass(frozen=True)
class Violation:
    """One invariant that did not hold, and the ids it concerns."""

    invariant: str
    message: str
    ids: tuple[str, ...] = ()


# -- the snapshot ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredDecision:
    """A decision as the graph holds it; times are seconds since the epoch."""

    decision_id: str
    plan_ids: tuple[str, ...]  # the plans it is IN_PLAN of (one, when it is whole)
    sequence_number: int | None
    created_at: float
    superseded_at: float | None = None
    superseded_by: str | None = None
    parent_id: str | None = None
    key: str | None = None  # its idempotency key, current or retired


@dataclass(frozen=True)
class Dependency:
    """A DEPENDS_ON edge, dated (``at``) when it was added after its decision was recorded."""

    dependent_id: str
    dependency_id: str
    at: float | None = None


@dataclass(frozen=True)
class StoredPlan:
    plan_id: str
    created_at: float
    invalidated_at: float | None = None
    spawned_by: str | None = None
    invalidated_by: str | None = None  # the correction attempt


@dataclass(frozen=True)
class StoredAttempt:
    """A CorrectionAttempt: when it was made, what it corrected and produced, what it names."""

    attempt_id: str
    at: float
    corrected_id: str
    correction_id: str
    invalidated_decision_ids: tuple[str, ...] = ()
    invalidated_plan_ids: tuple[str, ...] = ()
    replay_outcome: str = "pending"
    replayed_decision_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredReview:
    review_id: str
    plan_id: str
    status: str
    created_at: float
    parent_id: str | None = None
    depends_on: tuple[str, ...] = ()
    resolved_at: float | None = None
    cancelled_by: str | None = None


@dataclass
class Snapshot:
    """The final graph as plain values: what the checks read, never Neo4j itself.

    ``decisions`` and ``reviews`` are lists: a row stored twice is two entries, which is what
    ``recorded_once`` counts. ``queued_replays`` is each PlanRun's queue of attempts to replay,
    ``replay_links`` each correction decision's dated dependents (what a replay's report linked).
    """

    decisions: list[StoredDecision] = field(default_factory=list)
    dependencies: list[Dependency] = field(default_factory=list)
    plans: list[StoredPlan] = field(default_factory=list)
    attempts: list[StoredAttempt] = field(default_factory=list)
    reviews: list[StoredReview] = field(default_factory=list)
    queued_replays: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.decision = {d.decision_id: d for d in self.decisions}
        self.plan = {p.plan_id: p for p in self.plans}
        self.children: dict[str, list[str]] = defaultdict(list)
        self.members: dict[str, list[str]] = defaultdict(list)
        for d in self.decisions:
            if d.parent_id is not None:
                self.children[d.parent_id].append(d.decision_id)
            for plan_id in d.plan_ids:
                self.members[plan_id].append(d.decision_id)
        self.dependents: dict[str, list[Dependency]] = defaultdict(list)
        for e in self.dependencies:
            self.dependents[e.dependency_id].append(e)
        self.spawned: dict[str, list[str]] = defaultdict(list)
        for p in self.plans:
            if p.spawned_by is not None:
                self.spawned[p.spawned_by].append(p.plan_id)
        self.closures: dict[tuple[str, float], tuple[frozenset[str], frozenset[str]]] = {}  # downstream_at's, once each


_SNAPSHOT_DECISIONS: LiteralString = """
MATCH (d:Decision)
RETURN d.decision_id AS id, [(d)-[:IN_PLAN]->(p:Plan) | p.plan_id] AS plan_ids, d.sequence_number AS sequence_number,
       d.created_at AS created_at, d.superseded_at AS superseded_at,
       [(d)-[:SUPERSEDED_BY]->(s:Decision) | s.decision_id][0] AS superseded_by,
       [(d)-[:PARENT]->(p:Decision) | p.decision_id][0] AS parent_id,
       coalesce(d.idempotency_key, d.retired_idempotency_key) AS key,
       [(d)-[r:DEPENDS_ON]->(x:Decision) | [x.decision_id, r.at]] AS depends_on
"""
_SNAPSHOT_PLANS: LiteralString = """
MATCH (p:Plan)
RETURN p.plan_id AS id, p.created_at AS created_at, p.invalidated_at AS invalidated_at,
       [(p)-[:SPAWNED_BY]->(s:Decision) | s.decision_id][0] AS spawned_by,
       [(p)-[:INVALIDATED_BY]->(a:CorrectionAttempt) | a.attempt_id][0] AS invalidated_by
"""
_SNAPSHOT_ATTEMPTS: LiteralString = """
MATCH (a:CorrectionAttempt)
RETURN a.attempt_id AS id, a.at AS at, a.corrected_decision_id AS corrected_id, a.correction_decision_id AS correction_id,
       a.invalidated_decision_ids AS invalidated_decision_ids, a.invalidated_plan_ids AS invalidated_plan_ids,
       a.replay_outcome AS replay_outcome, a.replayed_decision_ids AS replayed_decision_ids
"""
_SNAPSHOT_REVIEWS: LiteralString = """
MATCH (r:Review)
RETURN r.review_id AS id, coalesce(r.plan_id, [(r)-[:FOR_PLAN]->(p:Plan) | p.plan_id][0]) AS plan_id, r.status AS status,
       r.created_at AS created_at, r.parent_decision_id AS parent_id, r.depends_on_ids AS depends_on,
       r.resolved_at AS resolved_at, r.cancelled_by AS cancelled_by
"""
_SNAPSHOT_RUNS: LiteralString = """
MATCH (run:PlanRun) WHERE size(coalesce(run.replays, [])) > 0
RETURN run.run_id AS id, run.replays AS replays
"""


def seconds(value: Any) -> float | None:
    """A stored time (the driver's DateTime, a datetime, ISO text) as seconds since the epoch; None stays None.

    >>> seconds("2026-01-01T00:00:01+00:00") - seconds("2026-01-01T00:00:00Z")
    1.0
    """
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return datetime.fromisoformat(value).timestamp()
    native = value.to_native() if hasattr(value, "to_native") else value
    assert isinstance(native, datetime), f"not a time: {value!r}"
    return native.timestamp()


def read_snapshot(graph: Graph) -> Snapshot:
    """The final graph, read-only, in a handful of statements over the whole database."""

    def rows(statement: LiteralString) -> list[dict[str, Any]]:
        records, _, _ = graph.driver.execute_query(statement, database_=graph.database, routing_="r")
        return [dict(r) for r in records]

    decisions, dependencies = [], []
    for r in rows(_SNAPSHOT_DECISIONS):
        decisions.append(
            StoredDecision(
                r["id"],
                tuple(r["plan_ids"]),
                r["sequence_number"],
                seconds(r["created_at"]) or 0.0,
                seconds(r["superseded_at"]),
                r["superseded_by"],
                r["parent_id"],
                r["key"],
            )
        )
        dependencies += [Dependency(r["id"], target, seconds(at)) for target, at in r["depends_on"]]
    plans = [
        StoredPlan(r["id"], seconds(r["created_at"]) or 0.0, seconds(r["invalidated_at"]), r["spawned_by"], r["invalidated_by"])
        for r in rows(_SNAPSHOT_PLANS)
    ]
    attempts = [
        StoredAttempt(
            r["id"],
            seconds(r["at"]) or 0.0,
            r["corrected_id"],
            r["correction_id"],
            tuple(r["invalidated_decision_ids"] or ()),
            tuple(r["invalidated_plan_ids"] or ()),
            r["replay_outcome"] or "pending",
            tuple(r["replayed_decision_ids"] or ()),
        )
        for r in rows(_SNAPSHOT_ATTEMPTS)
    ]
    reviews = [
        StoredReview(
            r["id"],
            r["plan_id"],
            r["status"],
            seconds(r["created_at"]) or 0.0,
            r["parent_id"],
            tuple(r["depends_on"] or ()),
            seconds(r["resolved_at"]),
            r["cancelled_by"],
        )
        for r in rows(_SNAPSHOT_REVIEWS)
    ]
    queued = {r["id"]: tuple(r["replays"]) for r in rows(_SNAPSHOT_RUNS)}
    return Snapshot(decisions, dependencies, plans, attempts, reviews, queued)


# -- the closure at a moment -------------------------------------------------------------------


def downstream_at(snapshot: Snapshot, decision_id: str, moment: float) -> tuple[set[str], set[str]]:
    """The decisions and plans a correction of ``decision_id`` at ``moment`` supersedes and
    invalidates, the decision itself excluded: ``cypher/correction/downstream_as_of.cypher`` on
    plain values. It walks PARENT children, DEPENDS_ON dependents (a dated dependency only if added
    before), plans SPAWNED_BY what it reached and their decisions, through what existed before
    ``moment`` and was not superseded or invalidated before it.

    >>> s = Snapshot(decisions=[StoredDecision("R", ("P",), 0, 1.0), StoredDecision("S", ("P",), 1, 2.0, parent_id="R"),
    ...     StoredDecision("T", ("C",), 0, 3.0), StoredDecision("U", ("P",), 2, 9.0, parent_id="S")],
    ...     plans=[StoredPlan("P", 1.0), StoredPlan("C", 3.0, spawned_by="S")])
    >>> [sorted(x) for x in downstream_at(s, "R", 5.0)]
    [['S', 'T'], ['C']]
    """

    known = snapshot.closures.get((decision_id, moment))
    if known is not None:
        return set(known[0]), set(known[1])

    def alive(created: float, gone: float | None) -> bool:
        return created < moment and (gone is None or gone >= moment)

    decisions: set[str] = set()
    plans: set[str] = set()
    frontier = [decision_id]
    while frontier:
        x = frontier.pop()
        reached = list(snapshot.children.get(x, ()))
        reached += [e.dependent_id for e in snapshot.dependents.get(x, ()) if e.at is None or e.at < moment]
        for plan_id in snapshot.spawned.get(x, ()):
            plan = snapshot.plan[plan_id]
            if plan_id not in plans and alive(plan.created_at, plan.invalidated_at):
                plans.add(plan_id)
                reached += snapshot.members.get(plan_id, ())
        for y in reached:
            d = snapshot.decision.get(y)
            if d is not None and y != decision_id and y not in decisions and alive(d.created_at, d.superseded_at):
                decisions.add(y)
                frontier.append(y)
    snapshot.closures[(decision_id, moment)] = (frozenset(decisions), frozenset(plans))
    return decisions, plans


# -- the checks --------------------------------------------------------------------------------


def acknowledged(history: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each acknowledged decision's first acknowledgement, by decision id."""
    acks: dict[str, Mapping[str, Any]] = {}
    for e in history:
        if e.get("type") == "ack":
            acks.setdefault(e["decision_id"], e)
    return acks


def _outside(moment: float, op: Mapping[str, Any]) -> bool:
    """Whether a stored ``moment`` lies outside the operation's [invoked, completed] (unknown: never)."""
    invoked, completed = op.get("invoked"), op.get("completed")
    if invoked is None or completed is None:
        return False
    return not float(invoked) - SLACK <= moment <= float(completed) + SLACK


def check_recorded_once(history: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> list[Violation]:
    """Every acknowledged decision is stored exactly once, in the plan and under the sequence number
    it was acknowledged with, created while its operation was in flight; its idempotency key is on
    it and on no other decision.

    >>> h = [{"type": "ack", "op": "record", "decision_id": "D", "plan_id": "P", "sequence_number": 1, "idempotency_key": "k"}]
    >>> check_recorded_once(h, Snapshot(decisions=[StoredDecision("D", ("P",), 1, 1.0, key="k")]))
    []
    >>> [v.message for v in check_recorded_once(h, Snapshot())]
    ['decision D was acknowledged (record, in plan P) but is not stored']
    """
    rows: dict[str, list[StoredDecision]] = defaultdict(list)
    by_key: dict[str, list[str]] = defaultdict(list)
    for d in snapshot.decisions:
        rows[d.decision_id].append(d)
        if d.key is not None:
            by_key[d.key].append(d.decision_id)
    found = []
    for decision_id, a in acknowledged(history).items():
        stored = rows.get(decision_id, [])
        where = f"{a.get('op')}, in plan {a['plan_id']}"
        if not stored:
            found.append(
                Violation("recorded_once", f"decision {decision_id} was acknowledged ({where}) but is not stored", (decision_id,))
            )
            continue
        if len(stored) > 1:
            found.append(Violation("recorded_once", f"decision {decision_id} is stored {len(stored)} times", (decision_id,)))
        d = stored[0]
        if d.plan_ids != (a["plan_id"],) or d.sequence_number != a.get("sequence_number", d.sequence_number):
            found.append(
                Violation(
                    "recorded_once",
                    f"decision {decision_id} was acknowledged in plan {a['plan_id']} as #{a.get('sequence_number')}, "
                    f"stored in {list(d.plan_ids)} as #{d.sequence_number}",
                    (decision_id, a["plan_id"], *d.plan_ids),
                )
            )
        if _outside(d.created_at, a):
            found.append(
                Violation(
                    "recorded_once",
                    f"decision {decision_id} was created at {d.created_at:.3f}, outside its operation "
                    f"[{a['invoked']}, {a['completed']}]: the answer was not this operation's",
                    (decision_id,),
                )
            )
        key = a.get("idempotency_key")
        if key and by_key.get(key, []) != [decision_id]:
            found.append(
                Violation(
                    "recorded_once",
                    f"idempotency key {key} (acknowledged as {decision_id}) is stored on {sorted(by_key.get(key, []))}",
                    (decision_id, *by_key.get(key, [])),
                )
            )
    return found


def stored_count(history: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> int:
    """The acknowledged decisions found in the graph exactly once, in the plan and under the number
    acknowledged: counted rows, not what is left once the lost are taken away."""
    rows = Counter(d.decision_id for d in snapshot.decisions)
    where = {d.decision_id: (d.plan_ids, d.sequence_number) for d in snapshot.decisions}
    return sum(
        1
        for d, a in acknowledged(history).items()
        if rows[d] == 1 and where[d] == ((a["plan_id"],), a.get("sequence_number", where[d][1]))
    )


def _compare(found: list[Violation], what: str, source: str, stored: set[str], expected: set[str], ids: tuple[str, ...]) -> None:
    missing, extra = sorted(expected - stored), sorted(stored - expected)
    if missing or extra:
        found.append(
            Violation(
                "correction_closure",
                f"{what}: {source} "
                + "; ".join(
                    part
                    for part in (
                        f"misses {', '.join(missing[:5])} of the downstream at its moment" if missing else "",
                        f"holds {', '.join(extra[:5])} from outside it" if extra else "",
                    )
                    if part
                ),
                (*ids, *missing, *extra),
            )
        )


def check_correction_closure(history: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> list[Violation]:
    """Each correction superseded and invalidated exactly the downstream closure of the decision it
    corrected at its moment (the attempt's ``at``): as it was answered (acknowledged corrections),
    as the graph links it (SUPERSEDED_BY the correction, INVALIDATED_BY the attempt) and as its
    attempt lists it; the moment lies within the operation that acknowledged it."""
    found: list[Violation] = []
    by_correction = {a.correction_id: a for a in snapshot.attempts}
    superseded_by: dict[str, set[str]] = defaultdict(set)
    for d in snapshot.decisions:
        if d.superseded_by is not None:
            superseded_by[d.superseded_by].add(d.decision_id)
    invalidated_by: dict[str, set[str]] = defaultdict(set)
    for p in snapshot.plans:
        if p.invalidated_by is not None:
            invalidated_by[p.invalidated_by].add(p.plan_id)
    acks = {a["decision_id"]: a for a in acknowledged(history).values() if a.get("corrected")}
    for correction_id, unmatched in acks.items():
        if correction_id not in by_correction:
            found.append(
                Violation(
                    "correction_closure",
                    f"correction {correction_id} of {unmatched['corrected']} was acknowledged but no attempt of it is stored",
                    (correction_id, unmatched["corrected"]),
                )
            )
    for attempt in snapshot.attempts:
        if attempt.corrected_id not in snapshot.decision:
            continue  # pruned since (retention): nothing to walk
        name = f"correction {attempt.correction_id} of {attempt.corrected_id} (attempt {attempt.attempt_id})"
        ids = (attempt.correction_id, attempt.corrected_id)
        decisions, plans = downstream_at(snapshot, attempt.corrected_id, attempt.at)
        expected = decisions | {attempt.corrected_id}
        _compare(found, name, "the decisions superseded by it", superseded_by[attempt.correction_id], expected, ids)
        _compare(found, name, "the plans invalidated by it", invalidated_by[attempt.attempt_id], plans, ids)
        _compare(found, name, "its attempt's decisions", set(attempt.invalidated_decision_ids), expected, ids)
        _compare(found, name, "its attempt's plans", set(attempt.invalidated_plan_ids), plans, ids)
        if (ack := acks.get(attempt.correction_id)) is None:
            continue
        if ack["corrected"] != attempt.corrected_id or ack.get("attempt_id", attempt.attempt_id) != attempt.attempt_id:
            found.append(
                Violation(
                    "correction_closure",
                    f"{name} was acknowledged as correcting {ack['corrected']} in attempt {ack.get('attempt_id')}",
                    ids,
                )
            )
        if "invalidated" in ack:
            _compare(found, name, "the decisions it was answered as superseding", set(ack["invalidated"]), expected, ids)
        if "invalidated_plans" in ack:
            _compare(found, name, "the plans it was answered as invalidating", set(ack["invalidated_plans"]), plans, ids)
        if _outside(attempt.at, ack):
            found.append(
                Violation(
                    "correction_closure",
                    f"{name} is stored at {attempt.at:.3f}, outside its operation [{ack['invoked']}, {ack['completed']}]",
                    ids,
                )
            )
    return found


def _stale(snapshot: Snapshot, decision_id: str) -> str | None:
    """The decision itself when superseded, else its plan when invalidated, else None."""
    d = snapshot.decision[decision_id]
    if d.superseded_at is not None:
        return decision_id
    return next((p for p in d.plan_ids if p in snapshot.plan and snapshot.plan[p].invalidated_at is not None), None)


def _above(snapshot: Snapshot, decision_id: str) -> str | None:
    """What a decision hangs on: its parent, or for a plan's root the spawn that made the plan."""
    d = snapshot.decision[decision_id]
    up = d.parent_id
    if up is None and len(d.plan_ids) == 1 and d.plan_ids[0] in snapshot.plan:
        up = snapshot.plan[d.plan_ids[0]].spawned_by
    return up if up in snapshot.decision else None


def _stale_ancestry(snapshot: Snapshot) -> dict[str, str | None]:
    """For each decision, the nearest superseded decision or invalidated plan above it (None: none):
    up the PARENT chain, then from a plan's root to the spawn that made the plan, and so on up."""
    memo: dict[str, str | None] = {}
    for start in snapshot.decision:
        chain: list[str] = []
        on_chain: set[str] = set()
        x = start
        while x not in memo:
            up = _above(snapshot, x)
            if up is None or up in on_chain or up == x:  # the top; or a cycle, not ours to judge (run_checks reports it)
                memo[x] = None
                break
            chain.append(x)
            on_chain.add(x)
            x = up
        for y in reversed(chain):  # each hangs on the one after it, the last on ``x``, judged already
            up = _above(snapshot, y)
            assert up is not None
            memo[y] = _stale(snapshot, up) or memo[up]
    return memo


def check_current_under_superseded(snapshot: Snapshot) -> list[Violation]:
    """No current decision lies in an invalidated plan or has a superseded ancestor: up its PARENT
    chain, and across plans, the spawn its plan was made by and that spawn's ancestors.

    >>> s = Snapshot(decisions=[StoredDecision("R", ("P",), 0, 1.0, superseded_at=5.0),
    ...     StoredDecision("S", ("P",), 1, 2.0, parent_id="R")], plans=[StoredPlan("P", 1.0)])
    >>> [v.message for v in check_current_under_superseded(s)]
    ['decision S is current, but decision R above it is superseded']
    """
    found = []
    above = _stale_ancestry(snapshot)
    for d in snapshot.decisions:
        if d.superseded_at is not None:
            continue
        own = _stale(snapshot, d.decision_id)
        if own is not None:
            found.append(
                Violation(
                    "current_under_superseded",
                    f"decision {d.decision_id} is current in plan {own}, which is invalidated",
                    (d.decision_id, own),
                )
            )
        elif (stale := above.get(d.decision_id)) is not None:
            what = (
                f"plan {stale} above it is invalidated" if stale in snapshot.plan else f"decision {stale} above it is superseded"
            )
            found.append(
                Violation("current_under_superseded", f"decision {d.decision_id} is current, but {what}", (d.decision_id, stale))
            )
    return found


def check_active_under_superseded_spawn(snapshot: Snapshot) -> list[Violation]:
    """No child plan is active (not invalidated) when the spawn that made it is superseded, or
    hangs under something superseded or invalidated.

    >>> s = Snapshot(decisions=[StoredDecision("S", ("P",), 1, 1.0, superseded_at=5.0)], plans=[StoredPlan("P", 1.0),
    ...     StoredPlan("C", 2.0, spawned_by="S")])
    >>> [v.message for v in check_active_under_superseded_spawn(s)]
    ['child plan C is active, but the spawn S that made it is superseded']
    """
    found = []
    above = _stale_ancestry(snapshot)
    for p in snapshot.plans:
        if p.invalidated_at is not None or p.spawned_by is None or p.spawned_by not in snapshot.decision:
            continue
        spawn = snapshot.decision[p.spawned_by]
        if _stale(snapshot, spawn.decision_id) == spawn.decision_id:
            found.append(
                Violation(
                    "active_under_superseded_spawn",
                    f"child plan {p.plan_id} is active, but the spawn {spawn.decision_id} that made it is superseded",
                    (p.plan_id, spawn.decision_id),
                )
            )
        elif (stale := _stale(snapshot, spawn.decision_id) or above.get(spawn.decision_id)) is not None:
            found.append(
                Violation(
                    "active_under_superseded_spawn",
                    f"child plan {p.plan_id} is active, but its spawn {spawn.decision_id} hangs under {stale}, superseded or invalidated",
                    (p.plan_id, spawn.decision_id, stale),
                )
            )
    return found


def check_replay_at_most_once(snapshot: Snapshot) -> list[Violation]:
    """No correction's replay runs twice: it is queued on one run at most once, not queued again once
    its outcome is reported, and every decision linked as its replay (a dated DEPENDS_ON on the
    correction decision) is one its report names (another report's would have been overwritten).

    >>> s = Snapshot(attempts=[StoredAttempt("A", 1.0, "D", "C")], queued_replays={"run1": ("A", "A")})
    >>> [v.message for v in check_replay_at_most_once(s)]
    ['the replay of attempt A is queued 2 times: it would run more than once']
    """
    found = []
    queued = Counter(a for replays in snapshot.queued_replays.values() for a in replays)
    for attempt_id, n in sorted(queued.items()):
        if n > 1:
            found.append(
                Violation(
                    "replay_at_most_once",
                    f"the replay of attempt {attempt_id} is queued {n} times: it would run more than once",
                    (attempt_id,),
                )
            )
    for attempt in snapshot.attempts:
        if attempt.replay_outcome != "pending" and queued[attempt.attempt_id]:
            found.append(
                Violation(
                    "replay_at_most_once",
                    f"the replay of attempt {attempt.attempt_id} is reported {attempt.replay_outcome} and queued again",
                    (attempt.attempt_id,),
                )
            )
        linked = {e.dependent_id for e in snapshot.dependents.get(attempt.correction_id, ()) if e.at is not None}
        unreported = sorted(linked - set(attempt.replayed_decision_ids))
        if unreported:
            found.append(
                Violation(
                    "replay_at_most_once",
                    f"decisions {', '.join(unreported[:5])} were linked as the replay of attempt {attempt.attempt_id}, "
                    f"whose report names {list(attempt.replayed_decision_ids)}: it was reported more than once",
                    (attempt.attempt_id, *unreported),
                )
            )
    return found


def check_review_stranded(history: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> list[Violation]:
    """No review is stranded: none pending in an invalidated plan or waiting on a superseded
    decision (its parent or a dependency); every review held (journalled ``review``) is stored once;
    every review a correction was answered as cancelling is stored cancelled by it; and every review
    pending at a correction's moment that it made moot (its plan invalidated, or what it waits on
    superseded, by that correction) is one it was answered as cancelling."""
    found = []
    copies = Counter(r.review_id for r in snapshot.reviews)
    review = {r.review_id: r for r in snapshot.reviews}
    for r in snapshot.reviews:
        if r.status != "pending":
            continue
        plan = snapshot.plan.get(r.plan_id)
        gone = [
            d for d in (r.parent_id, *r.depends_on) if d in snapshot.decision and snapshot.decision[d].superseded_at is not None
        ]
        if plan is not None and plan.invalidated_at is not None:
            found.append(
                Violation(
                    "review_stranded",
                    f"review {r.review_id} is pending in invalidated plan {r.plan_id}",
                    (r.review_id, r.plan_id),
                )
            )
        elif gone:
            found.append(
                Violation(
                    "review_stranded",
                    f"review {r.review_id} is pending, waiting on superseded {', '.join(gone)}",
                    (r.review_id, *gone),
                )
            )
    for e in history:
        if e.get("type") == "review" and copies[e["review_id"]] != 1:
            found.append(
                Violation(
                    "review_stranded",
                    f"review {e['review_id']} was held but is stored {copies[e['review_id']]} times",
                    (e["review_id"],),
                )
            )
    by_correction = {a.correction_id: a for a in snapshot.attempts}
    for correction_id, ack in acknowledged(history).items():
        if not ack.get("corrected") or "cancelled_reviews" not in ack:
            continue
        answered = set(ack["cancelled_reviews"])
        for review_id in sorted(answered):
            stored = review.get(review_id)
            if stored is None or stored.status != "cancelled" or stored.cancelled_by != correction_id:
                state = "not stored" if stored is None else f"stored {stored.status}, cancelled by {stored.cancelled_by}"
                found.append(
                    Violation(
                        "review_stranded",
                        f"review {review_id} was answered cancelled by {correction_id}, {state}",
                        (review_id, correction_id),
                    )
                )
        attempt = by_correction.get(correction_id)
        if attempt is None or attempt.corrected_id not in snapshot.decision:
            continue
        decisions, plans = downstream_at(snapshot, attempt.corrected_id, attempt.at)
        superseded = decisions | {attempt.corrected_id}
        for r in snapshot.reviews:
            pending_then = r.created_at < attempt.at and (r.resolved_at is None or r.resolved_at >= attempt.at)
            moot = r.plan_id in plans or bool({r.parent_id, *r.depends_on} & superseded)
            if pending_then and moot and r.review_id not in answered:
                found.append(
                    Violation(
                        "review_stranded",
                        f"review {r.review_id} was pending when {correction_id} made it moot, which was not answered as cancelling it",
                        (r.review_id, correction_id),
                    )
                )
    return found


# -- the verdict -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What the checker found: how much of the history it held against the graph, and every violation."""

    operations: int
    violations: tuple[Violation, ...]
    stored: int
    corrections: int
    attempts: int
    replays_reported: int

    @property
    def ok(self) -> bool:
        return not self.violations

    def by_invariant(self) -> dict[str, int]:
        counts = Counter(v.invariant for v in self.violations)
        return {name: counts[name] for name in INVARIANTS}

    def figures(self) -> dict[str, Any]:
        return {
            "operations checked": self.operations,
            "violations": len(self.violations),
            "violations by invariant": self.by_invariant(),
            "acknowledged decisions found stored once": self.stored,
            "corrections checked against the closure at their moment": self.attempts,
            "acknowledged corrections": self.corrections,
            # The load reports no replay (no runtime runs its plans): only what the graph holds is checked.
            "replays reported": self.replays_reported,
        }


OPERATIONS = frozenset({"ack", "error", "read", "review", "phase", "unresolved"})


def check_history(history: Sequence[Mapping[str, Any]], snapshot: Snapshot) -> Verdict:
    """Every invariant over one history and one snapshot."""
    violations = [
        *check_recorded_once(history, snapshot),
        *check_correction_closure(history, snapshot),
        *check_current_under_superseded(snapshot),
        *check_active_under_superseded_spawn(snapshot),
        *check_replay_at_most_once(snapshot),
        *check_review_stranded(history, snapshot),
    ]
    acks = acknowledged(history)
    return Verdict(
        operations=sum(1 for e in history if e.get("type") in OPERATIONS),
        violations=tuple(violations),
        stored=stored_count(history, snapshot),
        corrections=sum(1 for a in acks.values() if a.get("corrected")),
        attempts=sum(1 for a in snapshot.attempts if a.corrected_id in snapshot.decision),
        replays_reported=sum(1 for a in snapshot.attempts if a.replay_outcome != "pending"),
    )
