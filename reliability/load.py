"""A bounded load on the API (recording, correcting, reading), its journal of what was acknowledged, and the check that the database holds exactly that.

Run as its own process, on loopback, until it stops by itself::

    python -m reliability.load --url http://127.0.0.1:8000 --seconds 60 --clients 6 --out acks.jsonl

Each client thread owns a few plans: it records single decisions and small batches into them
(each with its own idempotency key), corrects some (so subtrees are superseded) and reads
lineage, impact and trees. All clients also record concurrently into a few shared plans, so
sequence numbers are taken under contention. A write that gets no answer, or UNAVAILABLE, is
retried with the same idempotency key until it is answered: after a fault the retries must come
back as the decisions already recorded, never as second copies.

Clients also race each other on shared hierarchies (``Arena``): they instantiate child plans from
the spawn decisions of plans in Execute and record into them while others correct those spawns
(APPEND or REVERT; after a revert the corrector spawns anew and executes again), and they propose
decisions that are held for review, resolve reviews, and correct the decisions reviews wait under;
in the shared plans they record under, and correct, each other's decisions.
A racing write may be refused for what the race explains (``RACE_REFUSALS``: a spawn superseded
meanwhile, a review already resolved or cancelled, ...): journalled as an error, never as an
acknowledgement.

The journal (JSONL, one line per event, flushed as written) holds every acknowledged decision
(``ack``, with a child plan's spawn, a resolution's review, a correction's invalidated plans and
cancelled reviews), every error with its code and rule (``error``), every read (``read``), the
plans (``plan``), reviews held (``review``), phase changes (``phase``), writes given up without an
answer (``unresolved``) and a closing ``summary``. Each operation's line carries when it was
invoked (its first sending) and completed (``invoked``, ``completed``: wall clock, as the service
stamps what it stores) and what it was answered (a correction's attempt, and what it superseded,
invalidated, cancelled and made lapse). ``verify`` then compares it with the database, and holds
it as a history against the final graph (``reliability.history``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, LiteralString

import httpx

from decisiontrail.checks import run_checks
from decisiontrail.domain.ids import new_ulid
from decisiontrail.graphdb import Graph, database
from decisiontrail.graphdb.database import SILENT_CONNECTION, SILENT_CONNECTION_MESSAGE
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from reliability import history
from reliability.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]

RETRYABLE = frozenset({"UNAVAILABLE", "UNREACHABLE", "TIMEOUT", "HTTP_5XX", "IDEMPOTENCY_KEY_IN_USE"})
"""Codes that leave a write's outcome unknown (or say it wrote nothing, or that its first sending
still runs): retried with the same key."""

SPAWNING_PLANS, SPAWNS = 2, 3  # plans in Execute every client instantiates child plans from, and spawns each
ANCHORS, REVIEW_THRESHOLD = 3, 0.5  # decisions proposals are held for review under, and the threshold they fall below
RACE_SHARE = 0.6  # of each client's operations, those on the shared hierarchies
RACES = {
    "spawn_child": 0.22,
    "record_child": 0.14,
    "correct_spawn": 0.10,
    "correct_child": 0.04,
    "propose": 0.20,
    "resolve": 0.14,
    "correct_anchor": 0.08,
    "record_or_correct_shared": 0.08,
}
"""The racing operations (``Client`` methods) and how often each is drawn."""
OPENINGS = (
    ("spawn_child", "record_child", "correct_spawn"),
    ("spawn_child", "spawn_child", "record_child"),
    ("propose", "resolve", "propose"),
    ("propose", "propose", "propose", "correct_anchor"),
)
"""Each client's first races, so that even a short run has children added under a spawn being
corrected and reviews resolved, and made moot, under decisions being corrected."""

_RECORDING_RACES = frozenset({"VALIDATION_FAILED/parent_is_current", "VALIDATION_FAILED/dependency_is_current"})
_CORRECTION_RACES = frozenset({"CONFLICT"})
RACE_REFUSALS: dict[str, frozenset[str]] = {
    # CONFLICT: a subplan_spawn that has its one child already (a parallel spawn takes many).
    "child": frozenset({"VALIDATION_FAILED/spawn_by_current_decision", "PHASE_VIOLATION/spawn_in_execute", "CONFLICT"}),
    "record_child": _RECORDING_RACES,
    "correct_child": _CORRECTION_RACES,
    "correct_spawn": _CORRECTION_RACES,
    "respawn": frozenset({"PHASE_VIOLATION/type_allowed_in_phase"}),
    "advance": frozenset({"PHASE_VIOLATION/phase_transition"}),
    "propose": _RECORDING_RACES,
    "resolve": frozenset({"VALIDATION_FAILED/review_is_pending"}),
    "correct_anchor": _CORRECTION_RACES,
    "record_shared": _RECORDING_RACES,
    "correct_shared": _CORRECTION_RACES,
}
"""What a racing operation may be refused, because another client changed what it acted on
first: by operation, codes and the rules they name. Any other refusal is an error."""

_DECISION = "id planId sequenceNumber"
INSTANTIATE = (
    "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { " + _DECISION + " } } }"
)
ADVANCE = "mutation($planId: ID!, $phase: Phase!) { advancePhase(planId: $planId, phase: $phase) { id phase } }"
RESOLVE = (
    "mutation($input: ResolveReviewInput!) { resolveReview(input: $input) { review { id status } decision { "
    + _DECISION
    + " } } }"
)
RECORD = (
    "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { " + _DECISION + " } review { id } } }"
)
RECORD_MANY = (
    "mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { "
    + _DECISION
    + " } review { id } } }"
)
CORRECT = (
    "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { "
    + _DECISION
    + " } attempt { attemptId } invalidated { id } invalidatedPlans { id } cancelledReviews { id } lapsedApprovals { id } } }"
)
LINEAGE = "query($id: ID!) { lineage(decisionId: $id) { decisions { id } plans { id } } }"
IMPACT = "query($id: ID!) { impact(decisionId: $id) { decisions { id } plans { id } } }"
TREE = "query($id: ID!) { plan(id: $id) { tree { depth decision { id decisionType } } } }"


# -- the generator ---------------------------------------------------------------------------


class Journal:
    """The JSONL the clients append to, one flushed line per event, and the counts progress shows."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def write(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"type": kind, "at": round(time.time(), 3), **fields}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            self.counts[kind] += 1
            if kind == "error":
                self.counts["error:" + str(fields.get("code"))] += 1

    def close(self) -> None:
        self._file.close()


@dataclass
class Answer:
    """One HTTP request: its data, or the code of what went wrong, and how long it took."""

    data: dict[str, Any] | None
    code: str | None
    message: str
    ms: float
    rule: str | None = None  # the rule a VALIDATION_FAILED or PHASE_VIOLATION names
    # When the operation was invoked (its first sending, for a write sent again) and when this
    # answer completed it: wall clock (time.time), the clock the service stamps what it stores with.
    invoked: float = 0.0
    completed: float = 0.0

    @property
    def times(self) -> dict[str, float]:
        """The operation's invocation and completion, as the journal keeps them (reliability.history reads them)."""
        return {"invoked": round(self.invoked, 3), "completed": round(self.completed, 3)}


class Api:
    """The GraphQL endpoint, every failure turned into a code instead of an exception."""

    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def post(self, document: str, **variables: Any) -> Answer:
        start = time.perf_counter()
        try:
            response = self._http.post("/graphql", json={"query": document, "variables": variables})
            ms = (time.perf_counter() - start) * 1000
        except httpx.TimeoutException as e:
            return Answer(None, "TIMEOUT", str(e), (time.perf_counter() - start) * 1000)
        except httpx.TransportError as e:
            return Answer(None, "UNREACHABLE", type(e).__name__, (time.perf_counter() - start) * 1000)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            code = "HTTP_5XX" if response.status_code >= 500 else f"HTTP_{response.status_code}"
            return Answer(None, code, response.text[:200], ms)
        if body.get("errors"):
            error = body["errors"][0]
            extensions = error.get("extensions") or {}
            rule = extensions.get("rule")
            return Answer(
                None, str(extensions.get("code") or "UNEXPECTED"), str(error.get("message", ""))[:200], ms, rule and str(rule)
            )
        data = body.get("data")
        if not isinstance(data, dict):
            return Answer(None, "UNEXPECTED", "no data", ms)
        return Answer(data, None, "", ms)

    def close(self) -> None:
        self._http.close()


@dataclass
class PlanState:
    """What a client knows of a plan: the current decisions recordings may hang under."""

    plan_id: str
    current: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    stale: bool = False  # a correction went unanswered: read the tree before trusting ``current``


@dataclass
class Child:
    """A child plan instantiated from a spawn decision, and what clients record into it."""

    plan: PlanState
    spawn_id: str


@dataclass
class Arena:
    """The hierarchies every client works on at once, so corrections race the writes under them.

    Plans in Execute whose spawn decisions every client instantiates child plans from (and records
    into), while others correct those spawns; and a plan whose automation profile holds proposals
    for review, which clients propose, resolve and correct the decisions they hang under. What a
    client learns (a spawn superseded, a review resolved) it shares here; what it does not know
    yet, it learns from a refusal.
    """

    lock: threading.Lock = field(default_factory=threading.Lock)
    spawns: dict[str, str] = field(default_factory=dict)  # current spawn decision -> its plan
    strategies: dict[str, str] = field(default_factory=dict)  # spawning plan -> the strategy its spawns hang under
    children: list[Child] = field(default_factory=list)
    reviewed: PlanState | None = None  # ``current``: the decisions proposals hang under
    reviewed_strategy: str = ""
    pending: dict[str, tuple[str, str]] = field(default_factory=dict)  # review held -> (its idempotency key, its parent)
    building: bool = False  # a client is building a new spawning plan: the others need not


class Stop:
    """When clients stop starting work, and until when a started write may still retry.

    The clock starts once every client has its plans (``start``), so a slow start-up does not eat the run.
    """

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self._end = math.inf
        self._event = threading.Event()

    def start(self, seconds: float) -> None:
        self._end = min(self._end, time.monotonic() + seconds)

    def now(self) -> None:
        self._end = min(self._end, time.monotonic())
        self._event.set()

    @property
    def stopping(self) -> bool:
        return self._event.is_set() or time.monotonic() >= self._end

    @property
    def interrupted(self) -> bool:
        """Stopped by a signal, not by the clock."""
        return self._event.is_set()

    @property
    def may_retry(self) -> bool:
        return time.monotonic() < self._end + self.grace

    def wait(self, seconds: float) -> bool:
        return self._event.wait(min(seconds, max(0.0, self._end - time.monotonic())))


class Client:
    """One simulated actor: a thread doing one request at a time, retrying writes by key."""

    def __init__(self, index: int, api: Api, journal: Journal, stop: Stop, run_id: str, rng: random.Random) -> None:
        self.index = index
        self.api = api
        self.journal = journal
        self.stop = stop
        self.run_id = run_id
        self.rng = rng
        self.requests = 0
        self.plans: list[PlanState] = []
        self.shared: list[PlanState] = []
        self.arena: Arena | None = None
        self.opening = list(OPENINGS[index % len(OPENINGS)])  # the first races, before the random mix
        self._n = 0

    # -- requests ------------------------------------------------------------------------

    def _request(
        self, op: str, document: str, *, retry: bool, keys: list[str] | None = None, about: str | None = None, **variables: Any
    ) -> Answer:
        """Send until answered; with ``retry``, unknown outcomes are sent again (same keys) while the run allows.
        ``about`` (the spawn or review a racing write acts on) goes into the journal with an error."""
        delay, attempts, first, invoked = 0.1, 0, time.perf_counter(), time.time()
        while True:
            attempts += 1
            self.requests += 1
            sent = time.time()
            answer = self.api.post(document, **variables)
            answer.invoked, answer.completed = invoked, time.time()
            if answer.code is None:
                answer.ms = round(answer.ms, 2)
                if attempts > 1:
                    self.journal.write(
                        "retried", op=op, attempts=attempts, elapsed_ms=round((time.perf_counter() - first) * 1000, 1)
                    )
                return answer
            again = retry and answer.code in RETRYABLE and self.stop.may_retry
            self.journal.write(
                "error",
                op=op,
                code=answer.code,
                rule=answer.rule,
                about=about,
                ms=round(answer.ms, 2),
                invoked=round(sent, 3),
                completed=round(answer.completed, 3),
                retry=again,
                message=answer.message,
                client=self.index,
            )
            if not again:
                if answer.code in RETRYABLE and keys:
                    self.journal.write("unresolved", op=op, keys=keys, client=self.index)
                return answer
            time.sleep(delay * self.rng.uniform(0.5, 1.5))
            delay = min(delay * 2, 1.0)

    def _key(self) -> str:
        self._n += 1
        return f"{self.run_id}/{self.index}/{self._n}"

    def _input(self, plan: PlanState, parent_id: str, key: str, decision_type: str = "RESOURCE_SELECTION") -> dict[str, Any]:
        digest = hashlib.sha256(key.encode()).hexdigest()
        depends = [d for d in plan.current if d != parent_id]
        return {
            "planId": plan.plan_id,
            "decisionType": decision_type,
            "question": f"Which part comes next ({key})?",
            "chosenOption": f"part {self.rng.randrange(1000)}",
            "alternativesConsidered": ["another part"],
            "confidenceScore": 0.9,
            "rationale": "The load generator chose it.",
            "parentDecisionId": parent_id,
            "dependsOn": [self.rng.choice(depends)] if depends and self.rng.random() < 0.2 else [],
            "idempotencyKey": key,
            "contextSnapshot": {
                "hotContextHash": digest,
                "hotContextRef": f"load://context/{digest}",
                "actorStateRef": {"threadId": f"load-{self.run_id}-{self.index}", "checkpointId": new_ulid()},
            },
        }

    def _ack(self, op: str, decision: dict[str, Any], answer: Answer, key: str | None, **extra: Any) -> None:
        self.journal.write(
            "ack",
            op=op,
            decision_id=decision["id"],
            plan_id=decision["planId"],
            sequence_number=decision["sequenceNumber"],
            idempotency_key=key,
            ms=answer.ms,
            **answer.times,
            client=self.index,
            request=self.requests,
            **extra,
        )

    # -- operations ----------------------------------------------------------------------

    def instantiate(self, label: str, threshold: float = 0.0) -> PlanState | None:
        """A plan with a strategy to record under; it holds decisions below ``threshold`` for review (none at 0)."""
        answer = self._request(
            "instantiate",
            INSTANTIATE,
            retry=False,
            input={
                "description": f"load {self.run_id} {label}",
                "automationProfile": {"editCode": threshold, "executeCommand": threshold},
            },
        )
        if answer.data is None:
            return None
        created = answer.data["instantiatePlan"]
        plan = PlanState(created["id"])
        self.journal.write("plan", plan_id=plan.plan_id, client=self.index)
        self._ack("instantiate", created["rootDecision"], answer, None)
        key = self._key()
        answer = self._request(
            "record",
            RECORD,
            retry=True,
            keys=[key],
            input=self._input(plan, created["rootDecision"]["id"], key, "STRATEGY_CHOICE"),
        )
        if answer.data is None or answer.data["recordDecision"]["decision"] is None:
            return None
        strategy = answer.data["recordDecision"]["decision"]
        self._ack("record", strategy, answer, key)
        plan.current.append(strategy["id"])
        plan.recorded.append(strategy["id"])
        return plan

    def record(self, plan: PlanState, *, grows: bool = True) -> None:
        key = self._key()
        parent = self.rng.choice(plan.current) if grows else plan.current[0]
        variables = self._input(plan, parent, key)
        if not grows:
            variables["dependsOn"] = []
        answer = self._request("record", RECORD, retry=True, keys=[key], input=variables)
        if answer.data is not None:
            decision = answer.data["recordDecision"]["decision"]
            self._ack("record", decision, answer, key)
            plan.recorded.append(decision["id"])
            if grows:
                plan.current.append(decision["id"])

    def record_batch(self, plan: PlanState) -> None:
        keys = [self._key() for _ in range(self.rng.randint(2, 5))]
        inputs = [self._input(plan, self.rng.choice(plan.current), key) for key in keys]
        answer = self._request("batch", RECORD_MANY, retry=True, keys=keys, inputs=inputs)
        if answer.data is not None:
            for key, payload in zip(keys, answer.data["recordDecisions"], strict=True):
                decision = payload["decision"]
                self._ack("batch", decision, answer, key, size=len(keys))
                plan.recorded.append(decision["id"])
                plan.current.append(decision["id"])

    def correct(self, plan: PlanState) -> None:
        target = self.rng.choice(plan.current)
        result = self._correct("correct", target)
        if result is None:
            plan.stale = True
            return
        gone = {d["id"] for d in result["invalidated"]}
        plan.current = [d for d in plan.current if d not in gone] + [result["correction"]["id"]]
        plan.recorded.append(result["correction"]["id"])

    def _correct(self, op: str, target: str, mode: str | None = None) -> dict[str, Any] | None:
        """Correct ``target`` (APPEND or REVERT, by default at random) and journal what it superseded, invalidated and cancelled."""
        mode = mode or self.rng.choice(["APPEND", "REVERT"])
        # No idempotency key for corrections: an unanswered one is not sent again; the tree is re-read.
        answer = self._request(op, CORRECT, retry=False, input={"decisionId": target, "mode": mode, "guidance": "redo it"})
        if answer.data is None:
            return None
        result: dict[str, Any] = answer.data["correctDecision"]
        self._ack(
            op,
            result["correction"],
            answer,
            None,
            corrected=target,
            mode=mode,
            invalidated=[d["id"] for d in result["invalidated"]],
            invalidated_plans=[p["id"] for p in result["invalidatedPlans"]],
            cancelled_reviews=[r["id"] for r in result["cancelledReviews"]],
            lapsed_reviews=[r["id"] for r in result["lapsedApprovals"]],
            attempt_id=result["attempt"]["attemptId"],
        )
        return result

    def resync(self, plan: PlanState) -> None:
        answer = self._request("tree", TREE, retry=False, id=plan.plan_id)
        if answer.data is None or answer.data["plan"] is None:
            return
        self.journal.write("read", op="tree", ms=round(answer.ms, 2), **answer.times)
        entries = answer.data["plan"]["tree"]
        plan.current = [e["decision"]["id"] for e in entries if e["decision"]["decisionType"] != "PROMPT_DEFINITION"]
        plan.stale = not plan.current

    def read(self, plan: PlanState) -> None:
        op = self.rng.choice(["lineage", "impact", "tree"])
        if op == "tree":
            answer = self._request(op, TREE, retry=False, id=plan.plan_id)
        elif op == "lineage":
            answer = self._request(op, LINEAGE, retry=False, id=self.rng.choice(plan.recorded))
        else:
            answer = self._request(op, IMPACT, retry=False, id=self.rng.choice(plan.current))
        if answer.data is not None:
            self.journal.write("read", op=op, ms=answer.ms, **answer.times)

    # -- races: the shared hierarchies ---------------------------------------------------

    def build_arena(self, arena: Arena) -> None:
        """At setup: the spawning plans and the reviewed plan every client will work on."""
        self.arena = arena
        for i in range(SPAWNING_PLANS):
            self.build_spawning_plan(f"spawning {i}")
        reviewed = self.instantiate("reviewed", threshold=REVIEW_THRESHOLD)
        if reviewed is not None:
            arena.reviewed, arena.reviewed_strategy = reviewed, reviewed.current[0]
            reviewed.current = []
            for _ in range(ANCHORS):
                self.replace_anchor()

    def build_spawning_plan(self, label: str) -> None:
        """A plan whose strategy has SPAWNS spawn decisions, moved to Execute so child plans may be instantiated."""
        assert self.arena is not None
        plan = self.instantiate(label)
        if plan is None:
            return
        spawns = self.record_spawns(plan.plan_id, plan.current[0], SPAWNS, op="spawn")
        self.advance(plan.plan_id)
        with self.arena.lock:
            self.arena.strategies[plan.plan_id] = plan.current[0]
            self.arena.spawns.update(dict.fromkeys(spawns, plan.plan_id))

    def record_spawns(self, plan_id: str, strategy: str, n: int, *, op: str) -> list[str]:
        keys = [self._key() for _ in range(n)]
        plan = PlanState(plan_id)
        kinds = ["SUBPLAN_SPAWN", "SUBPLAN_PARALLEL_SPAWN"]
        inputs = [self._input(plan, strategy, key, kinds[i % 2]) for i, key in enumerate(keys)]
        answer = self._request(op, RECORD_MANY, retry=True, keys=keys, inputs=inputs)
        if answer.data is None:
            return []
        spawns = []
        for key, payload in zip(keys, answer.data["recordDecisions"], strict=True):
            self._ack(op, payload["decision"], answer, key, size=n)
            spawns.append(payload["decision"]["id"])
        return spawns

    def advance(self, plan_id: str) -> bool:
        """Move a spawning plan (back) to Execute; a client that finds it done already is refused, and that is fine."""
        answer = self._request("advance", ADVANCE, retry=False, planId=plan_id, phase="EXECUTE")
        if answer.data is not None:
            self.journal.write(
                "phase", op="advance", plan_id=plan_id, phase="EXECUTE", ms=answer.ms, **answer.times, client=self.index
            )
        return answer.data is not None

    def race(self) -> None:
        """One write on the shared hierarchies, racing what the other clients do there."""
        arena = self.arena
        assert arena is not None
        with arena.lock:
            build = len(arena.spawns) < 2 and not arena.building
            arena.building = arena.building or build
        if build:  # corrections used the spawns up: another plan to spawn from
            try:
                self.build_spawning_plan(f"spawning {self._key()}")
            finally:
                with arena.lock:
                    arena.building = False
            return
        name = self.opening.pop(0) if self.opening else self.rng.choices(list(RACES), weights=list(RACES.values()))[0]
        getattr(self, name)()

    def spawn_child(self) -> None:
        """Instantiate a child plan from a spawn another client may be correcting, then record its strategy."""
        assert self.arena is not None
        with self.arena.lock:
            if not self.arena.spawns:
                return
            # Half the time another child of a spawn that has some (a parallel spawn runs several).
            parents = sorted({c.spawn_id for c in self.arena.children} & self.arena.spawns.keys())
            spawn = self.rng.choice(parents if parents and self.rng.random() < 0.5 else sorted(self.arena.spawns))
            parent_plan = self.arena.spawns[spawn]
        answer = self._request(
            "child",
            INSTANTIATE,
            retry=False,  # no idempotency key: a child plan created unanswered stays unacknowledged
            about=spawn,
            input={
                "description": f"load {self.run_id} child of {spawn}",
                "parentDecisionId": spawn,
                # Its recordings are confident enough; proposals are held (``propose``).
                "automationProfile": {"editCode": REVIEW_THRESHOLD, "executeCommand": REVIEW_THRESHOLD},
            },
        )
        if answer.data is None:
            if answer.rule == "spawn_in_execute":  # a correction reverted it to Strategize: execute it again
                self.advance(parent_plan)
            elif answer.rule == "spawn_by_current_decision" or answer.code == "CONFLICT":  # superseded, or its one child made
                with self.arena.lock:
                    self.arena.spawns.pop(spawn, None)
            return
        created = answer.data["instantiatePlan"]
        child = PlanState(created["id"])
        self.journal.write("plan", plan_id=child.plan_id, client=self.index, spawned_by=spawn)
        if created["rootDecision"] is None:
            # The answer reads the plan's current root after the commit: a correction of its spawn
            # that committed in between superseded it (and invalidated the plan). Nothing to grow.
            self.journal.write("child_invalidated_before_answer", plan_id=child.plan_id, spawned_by=spawn, client=self.index)
            return
        self._ack("child", created["rootDecision"], answer, None, spawned_by=spawn, parent_plan_id=parent_plan)
        key = self._key()
        variables = self._input(child, created["rootDecision"]["id"], key, "STRATEGY_CHOICE")
        answer = self._request("record_child", RECORD, retry=True, keys=[key], input=variables)
        if answer.data is not None:
            strategy = answer.data["recordDecision"]["decision"]
            self._ack("record_child", strategy, answer, key)
            child.current.append(strategy["id"])
            with self.arena.lock:
                self.arena.children.append(Child(child, spawn))

    def record_child(self) -> None:
        """Record into a child plan whose spawn (or a decision above) another client may be correcting."""
        assert self.arena is not None
        with self.arena.lock:
            live = [c for c in self.arena.children if c.plan.current]
            if not live:
                return
            child = self.rng.choice(live)
            parent = self.rng.choice(child.plan.current)
        key = self._key()
        variables = self._input(child.plan, parent, key)
        answer = self._request("record_child", RECORD, retry=True, keys=[key], input=variables)
        with self.arena.lock:
            if answer.data is not None:
                decision = answer.data["recordDecision"]["decision"]
                self._ack("record_child", decision, answer, key)
                child.plan.current.append(decision["id"])
            elif answer.rule in ("parent_is_current", "dependency_is_current"):
                gone = {parent, *variables["dependsOn"]}  # one of them was superseded meanwhile
                child.plan.current = [d for d in child.plan.current if d not in gone]

    def correct_child(self) -> None:
        """Correct a decision of a child plan, racing recordings into it."""
        assert self.arena is not None
        with self.arena.lock:
            live = [c for c in self.arena.children if c.plan.current]
            if not live:
                return
            child = self.rng.choice(live)
            target = self.rng.choice(child.plan.current)
        result = self._correct("correct_child", target)
        with self.arena.lock:
            gone = {target} | ({d["id"] for d in result["invalidated"]} if result else set())
            child.plan.current = [d for d in child.plan.current if d not in gone]
            if result is not None:
                child.plan.current.append(result["correction"]["id"])

    def correct_spawn(self) -> None:
        """Correct a spawn while others instantiate and record under it; after a revert, spawn anew and execute again."""
        assert self.arena is not None
        with self.arena.lock:
            if not self.arena.spawns:
                return
            # A spawn others have instantiated children from (and may be adding more under), if any.
            parents = sorted({c.spawn_id for c in self.arena.children} & self.arena.spawns.keys())
            spawn = self.rng.choice(parents or sorted(self.arena.spawns))
            plan_id = self.arena.spawns[spawn]
            strategy = self.arena.strategies[plan_id]
        mode = self.rng.choice(["APPEND", "REVERT"])
        result = self._correct("correct_spawn", spawn, mode)
        with self.arena.lock:
            self.arena.spawns.pop(spawn, None)  # corrected now, or by another client already
            if result is None:
                return
            gone = {d["id"] for d in result["invalidated"]}
            invalidated = {p["id"] for p in result["invalidatedPlans"]}
            for d in gone:
                self.arena.spawns.pop(d, None)
            self.arena.children = [c for c in self.arena.children if c.plan.plan_id not in invalidated]
        if mode == "REVERT":
            spawns = self.record_spawns(plan_id, strategy, 1, op="respawn")
            with self.arena.lock:
                self.arena.spawns.update(dict.fromkeys(spawns, plan_id))
            self.advance(plan_id)

    def propose(self) -> None:
        """Record a proposal below its plan's threshold, held for review under a decision others may correct: in the
        reviewed plan, or in a child plan (whose spawn others may correct)."""
        assert self.arena is not None
        with self.arena.lock:
            live = [c.plan for c in self.arena.children if c.plan.current]
            reviewed = self.rng.choice(live) if live and self.rng.random() < 0.4 else self.arena.reviewed
            if reviewed is None or not reviewed.current:
                return
            anchor = self.rng.choice(reviewed.current)
        key = self._key()
        variables = {**self._input(reviewed, anchor, key), "confidenceScore": 0.2, "dependsOn": []}
        answer = self._request("propose", RECORD, retry=True, keys=[key], input=variables)
        if answer.data is None:
            if answer.rule == "parent_is_current":
                with self.arena.lock:
                    reviewed.current = [d for d in reviewed.current if d != anchor]
            return
        payload = answer.data["recordDecision"]
        if payload["review"] is None:  # not held after all: a decision like any other
            self._ack("propose", payload["decision"], answer, key)
            return
        review_id = payload["review"]["id"]
        self.journal.write(
            "review",
            op="propose",
            review_id=review_id,
            plan_id=reviewed.plan_id,
            parent=anchor,
            idempotency_key=key,
            ms=answer.ms,
            **answer.times,
            client=self.index,
        )
        with self.arena.lock:
            self.arena.pending[review_id] = (key, anchor)

    def resolve(self) -> None:
        """Resolve a held review (approve, select its alternative, or a custom choice) while others may correct its parent."""
        assert self.arena is not None
        with self.arena.lock:
            if not self.arena.pending:
                return
            review_id = self.rng.choice(sorted(self.arena.pending))
            key = self.arena.pending[review_id][0]
        action, option = self.rng.choice(
            [("APPROVE", None), ("SELECT_ALTERNATIVE", "another part"), ("CUSTOM", "a part of my own")]
        )
        answer = self._request(
            "resolve", RESOLVE, retry=False, about=review_id, input={"reviewId": review_id, "action": action, "option": option}
        )
        with self.arena.lock:
            self.arena.pending.pop(review_id, None)  # resolved now, or cancelled or resolved by another client
        if answer.data is not None:
            resolved = answer.data["resolveReview"]
            self._ack("resolve", resolved["decision"], answer, key, review_id=review_id, status=resolved["review"]["status"])

    def correct_anchor(self) -> None:
        """Correct a decision proposals hang under (its pending reviews become moot), then record one in its place."""
        assert self.arena is not None
        reviewed = self.arena.reviewed
        with self.arena.lock:
            if reviewed is None or not reviewed.current:
                return
            # One with reviews pending under it, which others may be resolving, if any.
            waited_on = sorted({parent for _, parent in self.arena.pending.values()} & set(reviewed.current))
            anchor = self.rng.choice(waited_on or reviewed.current)
        result = self._correct("correct_anchor", anchor)
        with self.arena.lock:
            reviewed.current = [d for d in reviewed.current if d != anchor]
            if result is None:
                return
            for r in result["cancelledReviews"]:
                self.arena.pending.pop(r["id"], None)
        self.replace_anchor()

    def replace_anchor(self) -> None:
        """A decision under the reviewed plan's strategy, confident enough to be recorded at once, for proposals to hang under."""
        assert self.arena is not None and self.arena.reviewed is not None
        reviewed = self.arena.reviewed
        key = self._key()
        variables = {**self._input(reviewed, self.arena.reviewed_strategy, key), "dependsOn": []}
        answer = self._request("anchor", RECORD, retry=True, keys=[key], input=variables)
        if answer.data is not None:
            decision = answer.data["recordDecision"]["decision"]
            self._ack("anchor", decision, answer, key)
            with self.arena.lock:
                reviewed.current.append(decision["id"])

    def record_or_correct_shared(self) -> None:
        """Record under a recent decision of a shared plan, or correct one, racing the other clients there."""
        if not self.shared:
            return
        plan = self.rng.choice(self.shared)
        recent = plan.recorded[1:][-8:]  # never the strategy: the other clients' recordings hang under it
        if not recent:
            return
        target = self.rng.choice(recent)
        if self.rng.random() < 0.3:
            result = self._correct("correct_shared", target)
            if result is not None:
                plan.recorded.append(result["correction"]["id"])
            return
        key = self._key()
        variables = {**self._input(plan, target, key), "dependsOn": []}
        answer = self._request("record_shared", RECORD, retry=True, keys=[key], input=variables)
        if answer.data is not None:
            decision = answer.data["recordDecision"]["decision"]
            self._ack("record_shared", decision, answer, key)
            plan.recorded.append(decision["id"])

    def setup(self, plans: int, attempts: int = 5) -> None:
        for i in range(plans):
            for _ in range(attempts):
                if self.stop.stopping:
                    return
                plan = self.instantiate(f"client {self.index} plan {i}")
                if plan is not None:
                    self.plans.append(plan)
                    break

    def run(self) -> None:
        # A client's opening races run to their end whatever the clock says (a slow start must not
        # skip them); only a signal cuts them short.
        while self.plans and not self.stop.interrupted and (self.opening or not self.stop.stopping):
            if self.arena is not None and (self.opening or self.rng.random() < RACE_SHARE):
                self.race()
                continue
            plan = self.rng.choice(self.plans)
            if plan.stale:
                self.resync(plan)
                continue
            roll = self.rng.random()
            if roll < 0.15 and self.shared:
                self.record(self.rng.choice(self.shared), grows=False)
            elif roll < 0.45:
                self.record(plan)
            elif roll < 0.60:
                self.record_batch(plan)
            elif roll < 0.68 and len(plan.recorded) > 3:
                self.correct(plan)
            else:
                self.read(plan)


def generate(
    url: str,
    out: Path,
    *,
    seconds: float,
    clients: int,
    token: str | None = None,
    seed: int = 0,
    plans_per_client: int = 2,
    shared_plans: int = 2,
    grace: float = 60.0,
    timeout: float = 90.0,
    progress_every: float = 5.0,
) -> dict[str, Any]:
    """Run the load for ``seconds`` (or until SIGTERM/SIGINT), then let started writes finish
    their retries for at most ``grace`` seconds more; returns the summary it also journals."""
    run_id = new_ulid()
    journal = Journal(out)
    stop = Stop(grace)
    started = time.monotonic()
    if threading.current_thread() is threading.main_thread():

        def interrupted(signum: int, frame: FrameType | None) -> None:
            stop.now()

        signal.signal(signal.SIGTERM, interrupted)
        signal.signal(signal.SIGINT, interrupted)
    apis = [Api(url, token, timeout) for _ in range(clients + 1)]
    workers = [Client(i, apis[i], journal, stop, run_id, random.Random(f"{seed}/{i}")) for i in range(clients)]
    # The shared hierarchies are built by a client of their own while the others set up theirs.
    builder = Client(clients, apis[clients], journal, stop, run_id, random.Random(f"{seed}/{clients}"))
    try:
        shared = [plan for i in range(shared_plans) if (plan := workers[0].instantiate(f"shared {i}")) is not None]
        arena = Arena()
        setups = [threading.Thread(target=w.setup, args=(plans_per_client,)) for w in workers]
        setups.append(threading.Thread(target=builder.build_arena, args=(arena,)))
        for t in setups:
            t.start()
        for t in setups:
            t.join()
        print(
            f"[load] {time.monotonic() - started:5.0f}s: {sum(len(w.plans) for w in workers)} plans ready; "
            f"{clients} clients run for {seconds:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        stop.start(seconds)
        journal.write("started", plans=sum(len(w.plans) for w in workers), shared_plans=len(shared))
        for worker in workers:
            worker.shared = shared
            worker.arena = arena
        threads = [threading.Thread(target=w.run, name=f"client-{w.index}") for w in workers]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            stop.wait(progress_every)
            counts = journal.counts
            errors = {k.removeprefix("error:"): v for k, v in counts.items() if k.startswith("error:")}
            print(
                f"[load] {time.monotonic() - started:5.0f}s: {counts['ack']} decisions acknowledged, {counts['read']} reads, "
                f"{counts['error']} errors {errors or ''}",
                file=sys.stderr,
                flush=True,
            )
            if stop.stopping:
                for t in threads:
                    t.join(progress_every)
        summary = {
            "run_id": run_id,
            "seconds": round(time.monotonic() - started, 1),
            "clients": clients,
            "requests": sum(w.requests for w in workers) + builder.requests,
            "acks": journal.counts["ack"],
            "reads": journal.counts["read"],
            "errors": journal.counts["error"],
        }
        journal.write("summary", **summary)
        return summary
    finally:
        for api in apis:
            api.close()
        journal.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reliability.load",
        description="A bounded load on decisiontrail's API: concurrent recording, correcting and reading; "
        "every acknowledged decision and every error is journalled as JSONL. Stops by itself after --seconds.",
    )
    parser.add_argument("--url", required=True, help="the API's base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--seconds", type=float, required=True, help="how long clients start new requests")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (threads), default 4")
    parser.add_argument("--out", type=Path, required=True, help="the JSONL journal to append to")
    parser.add_argument(
        "--token", default=os.environ.get("DECISIONTRAIL_TOKEN"), help="bearer token (default $DECISIONTRAIL_TOKEN)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed of the clients' choices")
    parser.add_argument("--plans", type=int, default=2, help="plans each client owns, default 2")
    parser.add_argument("--shared-plans", type=int, default=2, help="plans every client records into, default 2")
    parser.add_argument("--grace", type=float, default=60.0, help="seconds a started write may keep retrying after the end")
    parser.add_argument(
        "--timeout",
        type=float,
        default=90.0,
        help="seconds one request may take before it counts as TIMEOUT (default 90: beyond the service's own 30 s query limit plus its 30 s of retries under contention)",
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.clients < 1:
        parser.error("--seconds must be positive and --clients at least 1")
    summary = generate(
        args.url,
        args.out,
        seconds=args.seconds,
        clients=args.clients,
        token=args.token,
        seed=args.seed,
        plans_per_client=args.plans,
        shared_plans=args.shared_plans,
        grace=args.grace,
        timeout=args.timeout,
    )
    print(json.dumps(summary), flush=True)
    return 0


def spawn(
    url: str,
    out: Path,
    *,
    seconds: float,
    clients: int,
    token: str | None = None,
    seed: int = 0,
    grace: float = 60.0,
    timeout: float = 90.0,
) -> subprocess.Popen[bytes]:
    """The generator as a second process (``python -m reliability.load``); SIGTERM ends it early, cleanly."""
    command = [
        sys.executable,
        "-m",
        "reliability.load",
        "--url",
        url,
        "--seconds",
        str(seconds),
        "--clients",
        str(clients),
        "--out",
        str(out),
        "--seed",
        str(seed),
        "--grace",
        str(grace),
        "--timeout",
        str(timeout),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if token:
        env["DECISIONTRAIL_TOKEN"] = token  # not on the command line, where ps shows it
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def wait_started(journal: Path, process: subprocess.Popen[bytes], timeout: float = 300.0) -> None:
    """Wait until the spawned generator's clients have their plans and the timed run begins."""
    deadline = time.monotonic() + timeout
    while not (journal.exists() and '"type":"started"' in journal.read_text(encoding="utf-8")):
        if process.poll() is not None:
            raise RuntimeError(f"the load generator exited with {process.returncode} before it started")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the load generator did not start within {timeout:.0f} s")
        time.sleep(0.2)


# -- the verification ------------------------------------------------------------------------


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The journal's events; a last line cut short by a killed writer is skipped."""
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def percentiles(samples: Iterable[float]) -> dict[str, float | int]:
    """Nearest-rank p50/p95/p99 and the maximum, in milliseconds.

    >>> percentiles([float(i) for i in range(1, 101)])
    {'n': 100, 'p50_ms': 50.0, 'p95_ms': 95.0, 'p99_ms': 99.0, 'max_ms': 100.0}
    """
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}

    def rank(p: int) -> float:
        return round(ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)], 2)

    return {"n": len(ordered), "p50_ms": rank(50), "p95_ms": rank(95), "p99_ms": rank(99), "max_ms": round(ordered[-1], 2)}


# Fixed-text queries of the harness (the service has no use for them): what the database holds
# for the journal's decisions and plans, and what would be half written.
_ACKED = """
UNWIND $ids AS id
OPTIONAL MATCH (d:Decision {decision_id: id})
RETURN id, count(d) AS copies, collect(d.plan_id) AS plan_ids, collect(d.sequence_number) AS sequence_numbers
"""
_IN_PLANS = """
MATCH (d:Decision) WHERE d.plan_id IN $plan_ids
RETURN d.decision_id AS id, d.plan_id AS plan_id, d.sequence_number AS sequence_number, d.decision_type AS decision_type,
       coalesce(d.idempotency_key, d.retired_idempotency_key) AS key,
       COUNT { (d)-[:IN_PLAN]->(:Plan {plan_id: d.plan_id}) } AS in_own_plan,
       COUNT { (d)-[:IN_PLAN]->() } AS memberships,
       COUNT { (d)-[:PARENT]->(:Decision) } AS parents
"""
_HALF_SUPERSEDED = """
MATCH (d:Decision) WHERE d.plan_id IN $plan_ids
WITH d, EXISTS { (d)-[:SUPERSEDED_BY]->(:Decision) } AS linked
WHERE (d.superseded_at IS NULL) = linked
   OR (linked AND d.idempotency_key IS NOT NULL)
   OR (linked AND EXISTS { (d)<-[:PARENT|DEPENDS_ON]-(c:Decision) WHERE NOT EXISTS { (c)-[:SUPERSEDED_BY]->() } })
RETURN d.decision_id AS id
"""


_CHILD_PLANS = """
UNWIND $ids AS id
OPTIONAL MATCH (p:Plan {plan_id: id})
RETURN id, count(p) AS copies,
       collect([(p)-[:SPAWNED_BY]->(s:Decision) | s.decision_id]) AS spawned_by,
       collect([(p)-[:CHILD_OF]->(q:Plan) | q.plan_id]) AS parents
"""
_REVIEWS = """
UNWIND $ids AS id
OPTIONAL MATCH (r:Review {review_id: id})
// A resolved review whose approval lapsed (a correction superseded what it rested on) keeps how it
// was resolved in lapsed_from; it may have lapsed only with the decision it resolved as superseded.
RETURN id, count(r) AS copies, collect(coalesce(r.lapsed_from, r.status)) AS statuses,
       collect([(r)-[:RESOLVED_AS]->(d:Decision) | d.decision_id]) AS resolved_as,
       any(x IN collect(r.status = 'lapsed' AND NOT EXISTS { (r)-[:RESOLVED_AS]->(:Decision)-[:SUPERSEDED_BY]->() }) WHERE x)
         AS wrongly_lapsed
"""
# What a correction racing writes could leave behind, over the whole database.
_CURRENT_UNDER_SUPERSEDED = """
MATCH (c:Decision)-[:PARENT]->(p:Decision)
WHERE NOT EXISTS { (c)-[:SUPERSEDED_BY]->() } AND EXISTS { (p)-[:SUPERSEDED_BY]->() }
RETURN c.decision_id AS id
"""
_ACTIVE_UNDER_SUPERSEDED_SPAWN = """
MATCH (c:Plan)-[:SPAWNED_BY]->(s:Decision)
WHERE c.invalidated_at IS NULL AND EXISTS { (s)-[:SUPERSEDED_BY]->() }
RETURN c.plan_id AS id
"""
_UNRESOLVABLE_REVIEWS = """
MATCH (r:Review {status: 'pending'})-[:FOR_PLAN]->(p:Plan)
OPTIONAL MATCH (gone:Decision {decision_id: r.parent_decision_id})-[:SUPERSEDED_BY]->()
WITH r, p, gone
WHERE p.invalidated_at IS NOT NULL OR gone IS NOT NULL
RETURN DISTINCT r.review_id AS id
"""


def _rows(graph: Graph, statement: LiteralString, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = graph.driver.execute_query(statement, params, database_=graph.database, routing_="r")
    return [dict(r) for r in records]


def verify(
    events: list[dict[str, Any]],
    graph: Graph,
    outcome: Outcome,
    *,
    expected_codes: Collection[str] = (),
    explained: Mapping[str, int] | None = None,
) -> None:
    """Compare the journal with the database and judge it, into ``outcome``.

    Required: every acknowledged decision is stored exactly once, in its plan, under the sequence
    number it was acknowledged with; no idempotency key (current or retired) is on two decisions;
    sequence numbers are unique per plan; no decision lacks its IN_PLAN or PARENT (the plan's root
    has none); nothing is half superseded; every check of ``run_checks`` over the whole database
    passes; no error outside ``expected_codes`` was seen but the refusals a race explains and, for
    each code in ``explained``, as many as the serving process saw causes for; and what
    ``verify_races`` requires of the races; and every invariant ``reliability.history`` holds the
    journal to, as a history of operations, against the final graph (``judge_history``).
    ``stored`` is counted: the acknowledged decisions found once, in their plan, under their number.
    """
    acks = [e for e in events if e["type"] == "ack"]
    errors = [e for e in events if e["type"] == "error"]
    plan_ids = sorted({e["plan_id"] for e in events if e["type"] == "plan"} | {a["plan_id"] for a in acks})
    for e in errors:
        outcome.count(e["code"])

    acked: dict[str, dict[str, Any]] = {}
    for a in acks:
        acked.setdefault(a["decision_id"], a)
    found = {r["id"]: r for r in _rows(graph, _ACKED, ids=sorted(acked))}
    lost = sorted(d for d, r in found.items() if r["copies"] == 0)
    misplaced = sorted(
        d
        for d, r in found.items()
        if r["copies"] and (r["plan_ids"] != [acked[d]["plan_id"]] or r["sequence_numbers"] != [acked[d]["sequence_number"]])
    )
    stored_once = sum(
        1
        for d, r in found.items()
        if r["copies"] == 1 and r["plan_ids"] == [acked[d]["plan_id"]] and r["sequence_numbers"] == [acked[d]["sequence_number"]]
    )
    stored = [r for r in _rows(graph, _IN_PLANS, plan_ids=plan_ids)]
    by_key: dict[str, list[str]] = defaultdict(list)
    by_sequence: dict[tuple[str, int], list[str]] = defaultdict(list)
    for r in stored:
        if r["key"] is not None:
            by_key[r["key"]].append(r["id"])
        by_sequence[(r["plan_id"], r["sequence_number"])].append(r["id"])
    acked_keys = {a["idempotency_key"] for a in acks if a.get("idempotency_key")}
    duplicated = sorted(k for k in acked_keys if len(by_key.get(k, [])) > 1)
    acked_by_key = {a["idempotency_key"]: a["decision_id"] for a in acks if a.get("idempotency_key")}
    key_moved = sorted(k for k, d in acked_by_key.items() if k in by_key and d not in by_key[k])
    sequence_clashes = sorted(f"{p}#{n}" for (p, n), ids in by_sequence.items() if len(ids) > 1)
    acked_sequences = Counter((a["plan_id"], a["sequence_number"]) for a in acked.values())
    sequence_clashes += sorted(f"{p}#{n} (acknowledged twice)" for (p, n), c in acked_sequences.items() if c > 1)
    unlinked = sorted(
        r["id"]
        for r in stored
        if r["in_own_plan"] != 1
        or r["memberships"] != 1
        or r["parents"] != (0 if r["decision_type"] == "prompt_definition" else 1)
    )
    half_superseded = sorted(r["id"] for r in _rows(graph, _HALF_SUPERSEDED, plan_ids=plan_ids))
    report = run_checks(load_graph(graph, LoadScope.ALL, progress=False), scope="the whole database")
    races = verify_races(events, graph, outcome)
    allowed = races + Counter(explained or {})
    unexpected = {
        code: n - allowed[code] for code, n in outcome.errors_by_code.items() if code not in expected_codes and n > allowed[code]
    }
    unresolved = [k for e in events if e["type"] == "unresolved" for k in e.get("keys", [])]

    requests = Counter(e["op"] for e in events if e["type"] in ("read", "error", "review", "phase"))
    answered = {(a["client"], a["request"]): (a["op"], a["ms"]) for a in acks}  # a batch acknowledges several in one
    latency: dict[str, list[float]] = defaultdict(list)
    for op, ms in answered.values():
        requests[op] += 1
        latency[op].append(ms)
    for e in events:
        if e["type"] in ("read", "review", "phase"):  # answered, but not with a decision
            latency[e["op"]].append(e["ms"])
    outcome.figures.update(
        {
            "requests": sum(requests.values()),
            "requests_by_op": dict(sorted(requests.items())),
            "errors": len(errors),
            "acknowledged": len(acked),
            "acknowledged_by_op": dict(sorted(Counter(a["op"] for a in acked.values()).items())),
            # Counted: the acknowledged decisions found once, in their plan, under their number.
            "stored": stored_once,
            "lost": len(lost),
            "misplaced": len(misplaced),
            "duplicated": len(duplicated),
            "decisions_in_plans": len(stored),
            "stored_unacknowledged": len(stored) - len(acked.keys() & {r["id"] for r in stored}),
            "unresolved_writes": len(unresolved),
            "plans": len(plan_ids),
            "sequence_clashes": len(sequence_clashes),
            "half_written": len(unlinked) + len(half_superseded),
            "check_violations": len(report.violations),
            "check_violations_by_rule": report.by_rule(),
            "decisions_checked": report.decisions,
            "latency": {op: percentiles(v) for op, v in sorted(latency.items())},
        }
    )
    outcome.require(bool(acked), "no decision was acknowledged: the load did not run")
    outcome.require(not lost, f"{len(lost)} acknowledged decision(s) are not stored: {', '.join(lost[:5])}")
    outcome.require(
        not misplaced,
        f"{len(misplaced)} acknowledged decision(s) are stored in another plan or under another sequence number: {', '.join(misplaced[:5])}",
    )
    outcome.require(
        not duplicated, f"{len(duplicated)} idempotency key(s) are on more than one decision: {', '.join(duplicated[:5])}"
    )
    outcome.require(
        not key_moved,
        f"{len(key_moved)} idempotency key(s) belong to another decision than acknowledged: {', '.join(key_moved[:5])}",
    )
    outcome.require(not sequence_clashes, f"sequence numbers held twice: {', '.join(sequence_clashes[:5])}")
    outcome.require(not unlinked, f"{len(unlinked)} decision(s) without their IN_PLAN or PARENT: {', '.join(unlinked[:5])}")
    outcome.require(not half_superseded, f"{len(half_superseded)} decision(s) half superseded: {', '.join(half_superseded[:5])}")
    outcome.require(
        report.ok,
        f"{len(report.violations)} check violation(s): {report.by_rule()}; "
        + "; ".join(v.message for v in report.violations[:3]),
    )
    outcome.require(not unexpected, f"errors that should not happen: {unexpected}")
    judge_history(events, graph, outcome)


def judge_history(events: list[dict[str, Any]], graph: Graph, outcome: Outcome) -> history.Verdict:
    """Hold the journal, as a history of operations, against the final graph (``reliability.history``):
    its verdict into ``outcome``'s figures, each invariant violated as a failed guarantee."""
    verdict = history.check_history(events, history.read_snapshot(graph))
    outcome.figures["history"] = verdict.figures()
    by_invariant: dict[str, list[history.Violation]] = defaultdict(list)
    for v in verdict.violations:
        by_invariant[v.invariant].append(v)
    for invariant, found in by_invariant.items():
        outcome.require(False, f"history: {len(found)} violation(s) of {invariant}: " + "; ".join(v.message for v in found[:3]))
    return verdict


def refusal(error: dict[str, Any]) -> str:
    """An error as a race's expected outcome is named: its code, and the rule it names if any."""
    return f"{error['code']}/{error['rule']}" if error.get("rule") else str(error["code"])


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two journalled requests were in flight at the same time (each ends at ``at``, ``ms`` after it was sent)."""
    return bool(a["at"] - a["ms"] / 1000 < b["at"] and b["at"] - b["ms"] / 1000 < a["at"])


def verify_races(events: list[dict[str, Any]], graph: Graph, outcome: Outcome) -> Counter[str]:
    """Judge what the races on the shared hierarchies left, into ``outcome``; returns the refusals
    they were expected to meet, by code (the caller does not count those as errors).

    Required: every acknowledged child plan is stored once, linked to the spawn and the plan it
    was instantiated from; every held review is stored once, and every acknowledged resolution is
    stored with its status and as the decision acknowledged; every review a correction answered as
    cancelled is stored cancelled; and, in the whole database, no current decision under a
    superseded one, no active child plan of a superseded spawn, no pending review that can never be
    resolved. A racing operation may be refused only for what its race explains (``RACE_REFUSALS``).
    """
    acks = [e for e in events if e["type"] == "ack"]
    children = {a["plan_id"]: a for a in acks if a["op"] == "child"}
    held = {e["review_id"] for e in events if e["type"] == "review"}
    resolutions = {a["review_id"]: a for a in acks if a["op"] == "resolve"}
    corrections = [a for a in acks if a.get("corrected")]
    cancelled = {r for a in corrections for r in a.get("cancelled_reviews", [])}
    refused = [e for e in events if e["type"] == "error" and e["op"] in RACE_REFUSALS]
    expected = [e for e in refused if refusal(e) in RACE_REFUSALS[e["op"]]]

    stored_children = {r["id"]: r for r in _rows(graph, _CHILD_PLANS, ids=sorted(children))}
    children_lost = sorted(p for p, r in stored_children.items() if r["copies"] != 1)
    children_mislinked = sorted(
        p
        for p, r in stored_children.items()
        if r["copies"] == 1
        and (r["spawned_by"] != [[children[p]["spawned_by"]]] or r["parents"] != [[children[p]["parent_plan_id"]]])
    )
    stored_reviews = {r["id"]: r for r in _rows(graph, _REVIEWS, ids=sorted(held | set(resolutions) | cancelled))}
    reviews_lost = sorted(r for r in held | set(resolutions) if stored_reviews[r]["copies"] != 1)
    reviews_mismatched = sorted(
        r
        for r, a in resolutions.items()
        if stored_reviews[r]["copies"] == 1
        and (
            stored_reviews[r]["statuses"] != [a["status"].lower()]
            or stored_reviews[r]["resolved_as"] != [[a["decision_id"]]]
            or stored_reviews[r]["wrongly_lapsed"]
        )
    )
    reviews_mismatched += sorted(
        r for r in cancelled if stored_reviews[r]["copies"] == 1 and stored_reviews[r]["statuses"] != ["cancelled"]
    )
    current_under_superseded = [r["id"] for r in _rows(graph, _CURRENT_UNDER_SUPERSEDED)]
    active_under_superseded = [r["id"] for r in _rows(graph, _ACTIVE_UNDER_SUPERSEDED_SPAWN)]
    unresolvable = [r["id"] for r in _rows(graph, _UNRESOLVABLE_REVIEWS)]
    spawn_corrections = [a for a in corrections if a["op"] == "correct_spawn"]
    # In flight at once: a child instantiated (or refused) under a spawn while it was being corrected,
    # a review resolved (or refused) while the decision it waits under was being corrected.
    tried = [e for e in events if e.get("op") in ("child", "resolve") and e["type"] in ("ack", "error")]
    under = {e["review_id"]: e["parent"] for e in events if e["type"] == "review"}

    def acted_on(e: dict[str, Any]) -> str | None:
        """The spawn a child was instantiated from, or the decision a resolved review waited under."""
        if e["op"] == "child":
            return e.get("spawned_by") or e.get("about")
        return under.get(e.get("review_id") or e.get("about") or "")

    raced = [
        c
        for c in corrections
        if c["op"] in ("correct_spawn", "correct_anchor") and any(acted_on(e) == c["corrected"] and _overlap(e, c) for e in tried)
    ]
    outcome.figures.update(
        {
            "child_plans_acknowledged": len(children),
            "child_plans_stored": len(children) - len(children_lost) - len(children_mislinked),
            "child_plans_refused": sum(1 for e in expected if e["op"] == "child"),
            "spawns_corrected": len(spawn_corrections),
            "spawns_corrected_with_children": sum(1 for a in spawn_corrections if a["invalidated_plans"]),
            "spawns_corrected_while_children_added": sum(1 for c in raced if c["op"] == "correct_spawn"),
            "parents_corrected_while_reviews_resolved": sum(1 for c in raced if c["op"] == "correct_anchor"),
            "child_plans_invalidated": len({p for a in corrections for p in a.get("invalidated_plans", [])}),
            "reviews_held": len(held),
            "reviews_resolved": len(resolutions),
            "reviews_made_moot": len(cancelled),
            "review_writes_lost": len(reviews_lost),
            "review_writes_mismatched": len(reviews_mismatched),
            "race_refusals": dict(sorted(Counter(f"{e['op']} {refusal(e)}" for e in expected).items())),
            "current_under_superseded": len(current_under_superseded),
            "active_child_plans_of_superseded_spawns": len(active_under_superseded),
            "unresolvable_reviews": len(unresolvable),
        }
    )
    outcome.require(
        not children_lost,
        f"{len(children_lost)} acknowledged child plan(s) not stored exactly once: {', '.join(children_lost[:5])}",
    )
    outcome.require(
        not children_mislinked,
        f"{len(children_mislinked)} child plan(s) linked to another spawn or plan than acknowledged: {', '.join(children_mislinked[:5])}",
    )
    outcome.require(
        not reviews_lost, f"{len(reviews_lost)} held review(s) not stored exactly once: {', '.join(reviews_lost[:5])}"
    )
    outcome.require(
        not reviews_mismatched,
        f"{len(reviews_mismatched)} review(s) stored otherwise than resolved (then lapsed, if what it resolved as was "
        f"superseded) or cancelled: "
        + "; ".join(
            f"{r} (acknowledged {resolutions[r]['status'] if r in resolutions else 'cancelled'}"
            f"{' as ' + str(resolutions[r]['decision_id']) if r in resolutions else ''}, stored {stored_reviews[r]})"
            for r in reviews_mismatched[:5]
        ),
    )
    outcome.require(
        not current_under_superseded,
        f"{len(current_under_superseded)} current decision(s) under a superseded one: {', '.join(current_under_superseded[:5])}",
    )
    outcome.require(
        not active_under_superseded,
        f"{len(active_under_superseded)} active child plan(s) of a superseded spawn: {', '.join(active_under_superseded[:5])}",
    )
    outcome.require(
        not unresolvable, f"{len(unresolvable)} pending review(s) that can never be resolved: {', '.join(unresolvable[:5])}"
    )
    return Counter(e["code"] for e in expected)


def run(
    base_url: str,
    graph: Graph,
    *,
    seconds: float,
    clients: int,
    out: Path,
    token: str | None = None,
    seed: int = 0,
) -> Outcome:
    """The load scenario: the generator as its own process against ``base_url`` (served on
    ``graph``'s database) for ``seconds``, then ``verify``; no error is expected but the refusals a race explains."""
    outcome = Outcome("load", f"{clients} clients record, correct and read concurrently for {seconds:.0f} s")
    started = time.monotonic()
    out.unlink(missing_ok=True)
    silent = SilentConnections()
    logging.getLogger(database.__name__).addHandler(silent)
    try:
        process = spawn(base_url, out, seconds=seconds, clients=clients, token=token, seed=seed)
        try:
            code = process.wait(seconds + 120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = -1
    finally:
        logging.getLogger(database.__name__).removeHandler(silent)
    outcome.require(code == 0, f"the load generator exited with {code}")
    # An answer lost between the service and Neo4j is given up after the read timeout and answered
    # UNAVAILABLE (the client retries with its key): as many UNAVAILABLEs as silent connections.
    outcome.figures["connections given up silent (answers lost on the way)"] = silent.count
    verify(read_journal(out), graph, outcome, explained={"UNAVAILABLE": silent.count})
    outcome.seconds = time.monotonic() - started
    return outcome


def silent_in_log(path: Path) -> int:
    """The connections a service (its log at ``path``) gave up silent: answers lost on the way."""
    return path.read_text(encoding="utf-8", errors="replace").count(SILENT_CONNECTION_MESSAGE) if path.exists() else 0


class SilentConnections(logging.Handler):
    """Counts the connections the serving process (in this process) gave up because Neo4j sent
    nothing on them for the driver's read timeout (``graphdb.database.SILENT_CONNECTION``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, SILENT_CONNECTION, False):
            self.count += 1


def iter_codes(events: Iterable[dict[str, Any]], code: str) -> Iterator[dict[str, Any]]:
    """The error events of one code."""
    return (e for e in events if e["type"] == "error" and e["code"] == code)


if __name__ == "__main__":
    sys.exit(main())
