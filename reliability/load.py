"""A bounded load on the API (recording, correcting, reading), its journal of what was acknowledged, and the check that the database holds exactly that.

Run as its own process, on loopback, until it stops by itself::

    python -m reliability.load --url http://127.0.0.1:8000 --seconds 60 --clients 6 --out acks.jsonl

Each client thread owns a few plans: it records single decisions and small batches into them
(each with its own idempotency key), corrects some (so subtrees are superseded) and reads
lineage, impact and trees. All clients also record concurrently into a few shared plans, so
sequence numbers are taken under contention. A write that gets no answer, or UNAVAILABLE, is
retried with the same idempotency key until it is answered: after a fault the retries must come
back as the decisions already recorded, never as second copies.

The journal (JSONL, one line per event, flushed as written) holds every acknowledged decision
(``ack``), every error with its code (``error``), every read (``read``), the plans (``plan``),
writes given up without an answer (``unresolved``) and a closing ``summary``. ``verify`` then
compares it with the database.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, LiteralString

import httpx

from decisiontrail.checks import run_checks
from decisiontrail.domain.ids import new_ulid
from decisiontrail.graphdb import Graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from reliability.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]

RETRYABLE = frozenset({"UNAVAILABLE", "UNREACHABLE", "TIMEOUT", "HTTP_5XX"})
"""Codes that leave a write's outcome unknown (or say it wrote nothing): retried with the same key."""

_DECISION = "id planId sequenceNumber"
INSTANTIATE = (
    "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { " + _DECISION + " } } }"
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
    + " } invalidated { id } } }"
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
            code = (error.get("extensions") or {}).get("code") or "UNEXPECTED"
            return Answer(None, str(code), str(error.get("message", ""))[:200], ms)
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
        self._n = 0

    # -- requests ------------------------------------------------------------------------

    def _request(self, op: str, document: str, *, retry: bool, keys: list[str] | None = None, **variables: Any) -> Answer:
        """Send until answered; with ``retry``, unknown outcomes are sent again (same keys) while the run allows."""
        delay, attempts, first = 0.1, 0, time.perf_counter()
        while True:
            attempts += 1
            self.requests += 1
            answer = self.api.post(document, **variables)
            if answer.code is None:
                answer.ms = round(answer.ms, 2)
                if attempts > 1:
                    self.journal.write(
                        "retried", op=op, attempts=attempts, elapsed_ms=round((time.perf_counter() - first) * 1000, 1)
                    )
                return answer
            again = retry and answer.code in RETRYABLE and self.stop.may_retry
            self.journal.write(
                "error", op=op, code=answer.code, ms=round(answer.ms, 2), retry=again, message=answer.message, client=self.index
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

    def _ack(self, op: str, decision: dict[str, Any], ms: float, key: str | None, **extra: Any) -> None:
        self.journal.write(
            "ack",
            op=op,
            decision_id=decision["id"],
            plan_id=decision["planId"],
            sequence_number=decision["sequenceNumber"],
            idempotency_key=key,
            ms=ms,
            client=self.index,
            request=self.requests,
            **extra,
        )

    # -- operations ----------------------------------------------------------------------

    def instantiate(self, label: str) -> PlanState | None:
        """A plan that never holds decisions for review, with a strategy to record under."""
        answer = self._request(
            "instantiate",
            INSTANTIATE,
            retry=False,
            input={"description": f"load {self.run_id} {label}", "automationProfile": {"editCode": 0.0, "executeCommand": 0.0}},
        )
        if answer.data is None:
            return None
        created = answer.data["instantiatePlan"]
        plan = PlanState(created["id"])
        self.journal.write("plan", plan_id=plan.plan_id, client=self.index)
        self._ack("instantiate", created["rootDecision"], answer.ms, None)
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
        self._ack("record", strategy, answer.ms, key)
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
            self._ack("record", decision, answer.ms, key)
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
                self._ack("batch", decision, answer.ms, key, size=len(keys))
                plan.recorded.append(decision["id"])
                plan.current.append(decision["id"])

    def correct(self, plan: PlanState) -> None:
        target = self.rng.choice(plan.current)
        mode = self.rng.choice(["APPEND", "REVERT"])
        # No idempotency key for corrections: an unanswered one is not sent again; the tree is re-read.
        answer = self._request("correct", CORRECT, retry=False, input={"decisionId": target, "mode": mode, "guidance": "redo it"})
        if answer.data is None:
            plan.stale = answer.code in RETRYABLE
            return
        result = answer.data["correctDecision"]
        invalidated = [d["id"] for d in result["invalidated"]]
        self._ack("correct", result["correction"], answer.ms, None, corrected=target, invalidated=invalidated)
        gone = set(invalidated)
        plan.current = [d for d in plan.current if d not in gone] + [result["correction"]["id"]]
        plan.recorded.append(result["correction"]["id"])

    def resync(self, plan: PlanState) -> None:
        answer = self._request("tree", TREE, retry=False, id=plan.plan_id)
        if answer.data is None or answer.data["plan"] is None:
            return
        self.journal.write("read", op="tree", ms=round(answer.ms, 2))
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
            self.journal.write("read", op=op, ms=answer.ms)

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
        while not self.stop.stopping and self.plans:
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
    timeout: float = 30.0,
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
    apis = [Api(url, token, timeout) for _ in range(clients)]
    workers = [Client(i, apis[i], journal, stop, run_id, random.Random(f"{seed}/{i}")) for i in range(clients)]
    try:
        shared = [plan for i in range(shared_plans) if (plan := workers[0].instantiate(f"shared {i}")) is not None]
        setups = [threading.Thread(target=w.setup, args=(plans_per_client,)) for w in workers]
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
            "requests": sum(w.requests for w in workers),
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
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one request may take before it counts as TIMEOUT")
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
    timeout: float = 30.0,
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


def _rows(graph: Graph, statement: LiteralString, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = graph.driver.execute_query(statement, params, database_=graph.database, routing_="r")
    return [dict(r) for r in records]


def verify(events: list[dict[str, Any]], graph: Graph, outcome: Outcome, *, expected_codes: Collection[str] = ()) -> None:
    """Compare the journal with the database and judge it, into ``outcome``.

    Required: every acknowledged decision is stored exactly once, in its plan, under the sequence
    number it was acknowledged with; no idempotency key (current or retired) is on two decisions;
    sequence numbers are unique per plan; no decision lacks its IN_PLAN or PARENT (the plan's root
    has none); nothing is half superseded; every check of ``run_checks`` over the whole database
    passes; no error outside ``expected_codes`` was seen.
    """
    acks = [e for e in events if e["type"] == "ack"]
    errors = [e for e in events if e["type"] == "error"]
    reads = [e for e in events if e["type"] == "read"]
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
    unexpected = {code: n for code, n in outcome.errors_by_code.items() if code not in expected_codes}
    unresolved = [k for e in events if e["type"] == "unresolved" for k in e.get("keys", [])]

    requests = Counter(e["op"] for e in events if e["type"] in ("read", "error"))
    answered = {(a["client"], a["request"]): (a["op"], a["ms"]) for a in acks}  # a batch acknowledges several in one
    latency: dict[str, list[float]] = defaultdict(list)
    for op, ms in answered.values():
        requests[op] += 1
        latency[op].append(ms)
    for e in reads:
        latency[e["op"]].append(e["ms"])
    outcome.figures.update(
        {
            "requests": sum(requests.values()),
            "requests_by_op": dict(sorted(requests.items())),
            "errors": len(errors),
            "acknowledged": len(acked),
            "acknowledged_by_op": dict(sorted(Counter(a["op"] for a in acked.values()).items())),
            "stored": len(acked) - len(lost) - len(misplaced),
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
    ``graph``'s database) for ``seconds``, then ``verify``; no error of any code is expected."""
    outcome = Outcome("load", f"{clients} clients record, correct and read concurrently for {seconds:.0f} s")
    started = time.monotonic()
    out.unlink(missing_ok=True)
    process = spawn(base_url, out, seconds=seconds, clients=clients, token=token, seed=seed)
    try:
        code = process.wait(seconds + 120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = -1
    outcome.require(code == 0, f"the load generator exited with {code}")
    verify(read_journal(out), graph, outcome)
    outcome.seconds = time.monotonic() - started
    return outcome


def iter_codes(events: Iterable[dict[str, Any]], code: str) -> Iterator[dict[str, Any]]:
    """The error events of one code."""
    return (e for e in events if e["type"] == "error" and e["code"] == code)


if __name__ == "__main__":
    sys.exit(main())
