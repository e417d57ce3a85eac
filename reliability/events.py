"""Live events across replicas: two ``decisiontrail serve`` processes on one Neo4j, writes through both,
subscribers on both, and subscribers that keep dropping and reconnecting with their cursor.

Writers record and correct decisions in a few plans through either process at random. Each plan
has a subscriber on each process that stays connected, and one that disconnects every second or
so and reconnects with the cursor of the last event it received. Once the writes are done and
the streams have gone quiet, every subscriber must have received its plan's events exactly as
the outbox committed them (the same events, the same cursors, in the same order: none missed,
none twice), and every acknowledged write must be among them.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

from decisiontrail.graphdb import Graph, outbox
from decisiontrail.graphdb.database import Database
from decisiontrail.services.relay import read_numbered
from reliability.faults import Service, _graph, _own_neo4j
from reliability.outcome import Outcome

SUBSCRIBE = "subscription($id: ID!, $after: String) { decisionEvents(planId: $id, after: $after) { kind decisionId cursor } }"
INSTANTIATE = "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
CORRECT = (
    'mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: APPEND, guidance: "reconsider"}) '
    "{ correction { id } invalidated { id } } }"
)

Event = tuple[int, str, str | None]  # (cursor, kind, decision id)


def _say(message: str) -> None:
    print(f"[events] {message}", flush=True)


@dataclass
class Subscriber:
    """One subscriber of one plan on one process; ``reconnect_every`` > 0 makes it drop and come back."""

    url: str
    plan_id: str
    reconnect_every: float = 0.0
    received: list[Event] = field(default_factory=list)
    connections: int = 0
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def cursor(self) -> int:
        return self.received[-1][0] if self.received else 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"subscriber-{self.plan_id[-6:]}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def _run(self) -> None:
        rng = random.Random(self.plan_id + self.url)
        while not self._stop.is_set():
            stay = rng.uniform(0.5, 1.5) * self.reconnect_every if self.reconnect_every else None
            try:
                self._connection(stay)
            except Exception as e:  # noqa: BLE001 - a dropped connection is reconnected; the verdict counts what arrived
                self.errors.append(f"{type(e).__name__}: {e}")
                self._stop.wait(0.2)

    def _connection(self, stay: float | None) -> None:
        ws_url = self.url.replace("http://", "ws://") + "/graphql"
        with connect(ws_url, subprotocols=["graphql-transport-ws"], open_timeout=10) as ws:  # type: ignore[list-item]
            self.connections += 1
            ws.send(json.dumps({"type": "connection_init"}))
            json.loads(ws.recv(timeout=10))
            variables = {"id": self.plan_id, "after": str(self.cursor)}
            ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIBE, "variables": variables}}))
            leave = time.monotonic() + stay if stay is not None else None
            while not self._stop.is_set() and (leave is None or time.monotonic() < leave):
                try:
                    message = json.loads(ws.recv(timeout=0.2))
                except TimeoutError:
                    continue
                if message.get("type") != "next" or message["payload"].get("errors"):
                    raise RuntimeError(f"subscription answered {message}")
                event = message["payload"]["data"]["decisionEvents"]
                self.received.append((int(event["cursor"]), event["kind"], event["decisionId"]))


@dataclass
class Writes:
    """What the writers were told was done."""

    recorded: dict[str, set[str]] = field(default_factory=dict)  # plan -> decisions acknowledged as recorded
    superseded: dict[str, set[str]] = field(default_factory=dict)  # plan -> decisions acknowledged as superseded
    requests: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _snapshot(text: str) -> dict[str, Any]:
    import hashlib

    digest = hashlib.sha256(text.encode()).hexdigest()
    return {
        "hotContextHash": digest,
        "hotContextRef": f"decisiontrail:context/{digest}",
        "hotContext": text,
        "actorStateRef": {"threadId": "events-writer", "checkpointId": text},
    }


def _writer(urls: list[str], plans: list[str], writes: Writes, until: float, seed: int) -> None:
    rng = random.Random(seed)
    clients = [httpx.Client(base_url=url, timeout=30) for url in urls]
    try:
        n = 0
        while time.monotonic() < until:
            client, plan = rng.choice(clients), rng.choice(plans)
            n += 1
            with writes.lock:
                writes.requests += 1
                current = sorted(writes.recorded[plan] - writes.superseded[plan])
            if rng.random() < 0.1 and current:
                body = client.post("/graphql", json={"query": CORRECT, "variables": {"d": rng.choice(current)}}).json()
                if body.get("errors"):
                    with writes.lock:
                        writes.refused += 1  # corrected concurrently by another writer: nothing written
                    continue
                answer = body["data"]["correctDecision"]
                with writes.lock:
                    writes.recorded[plan].add(answer["correction"]["id"])
                    writes.superseded[plan].update(d["id"] for d in answer["invalidated"])
            else:
                text = f"w{seed}-{n}"
                payload = {
                    "planId": plan,
                    "decisionType": "STRATEGY_CHOICE",
                    "question": f"Which way {text}?",
                    "chosenOption": "this way",
                    "rationale": "load",
                    "contextSnapshot": _snapshot(text),
                    "idempotencyKey": text,
                }
                body = client.post("/graphql", json={"query": RECORD, "variables": {"input": payload}}).json()
                if body.get("errors"):
                    with writes.lock:
                        writes.refused += 1
                    continue
                with writes.lock:
                    writes.recorded[plan].add(body["data"]["recordDecision"]["decision"]["id"])
    finally:
        for client in clients:
            client.close()


def replicas(
    scratch_dir: Path,
    *,
    graph: Graph | None = None,
    seconds: float = 30.0,
    plans: int = 3,
    writers: int = 4,
    seed: int = 0,
    progress: Callable[[str], None] = _say,
) -> Outcome:
    """Two service processes on one Neo4j: every subscriber sees every write of both, in commit order."""
    outcome = Outcome(
        "events_replicas",
        f"two service processes on one Neo4j, {writers} writers through both, subscribers on both (some reconnecting)",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        if graph is None:
            neo4j = stack.enter_context(_own_neo4j(scratch_dir, progress, heap_mb=512, pagecache_mb=64))
            assert neo4j.uri is not None
            graph = stack.enter_context(_graph(neo4j.uri))
        services = [Service(graph.uri, graph.database, scratch_dir / f"serve-{i}.log") for i in (1, 2)]
        for service in services:
            stack.callback(service.stop)
            service.start()
        urls = [s.url for s in services]
        progress(f"two services on {graph.uri}: {', '.join(urls)}")
        writes = Writes()
        plan_ids = []
        with httpx.Client(base_url=urls[0], timeout=30) as http:
            for i in range(plans):
                made = http.post(
                    "/graphql", json={"query": INSTANTIATE, "variables": {"input": {"description": f"replicas {i}"}}}
                )
                plan = made.json()["data"]["instantiatePlan"]
                plan_ids.append(plan["id"])
                writes.recorded[plan["id"]] = {plan["rootDecision"]["id"]}
                writes.superseded[plan["id"]] = set()
        subscribers = [
            Subscriber(url, plan_id, reconnect_every=every) for plan_id in plan_ids for url in urls for every in (0.0, 1.0)
        ]
        for subscriber in subscribers:
            subscriber.start()
            stack.callback(subscriber.stop)
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=_writer, args=(urls, plan_ids, writes, until, seed + i)) for i in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # The outbox holds kinds as the service names them; the API spells them as GraphQL enum values.
        expected = {p: [(r["seq"], r["kind"].upper(), r["decision_id"]) for r in _rows(graph, p)] for p in plan_ids}
        quiet_by = time.monotonic() + 30
        while time.monotonic() < quiet_by and any(s.cursor < expected[s.plan_id][-1][0] for s in subscribers):
            time.sleep(0.2)
        for subscriber in subscribers:
            subscriber.stop()
    _verify(outcome, subscribers, expected, writes)
    outcome.seconds = time.monotonic() - started
    return outcome


def _rows(graph: Graph, plan_id: str) -> list[dict[str, Any]]:
    """The plan's events as the outbox holds them, one row each (a stored run is read back event
    by event), those still pending numbered first."""
    return read_numbered(Database(graph), outbox.read_after, 0, 1_000_000, plan_id).rows


def _verify(outcome: Outcome, subscribers: list[Subscriber], expected: dict[str, list[Event]], writes: Writes) -> None:
    missed = duplicated = out_of_order = 0
    for s in subscribers:
        want = expected[s.plan_id]
        got = s.received
        missed += len(set(want) - set(got))
        duplicated += len(got) - len(set(got))
        out_of_order += int([e for e in got if e in set(want)] != [e for e in want if e in set(got)])
        outcome.require(
            got == want, f"a subscriber of plan {s.plan_id} on {s.url} received {len(got)} events, not the {len(want)} committed"
        )
    announced = {p: {d for _, kind, d in events if kind == "RECORDED"} for p, events in expected.items()}
    gone = {p: {d for _, kind, d in events if kind == "SUPERSEDED"} for p, events in expected.items()}
    unannounced = sum(len(writes.recorded[p] - announced[p]) + len(writes.superseded[p] - gone[p]) for p in expected)
    outcome.require(unannounced == 0, f"{unannounced} acknowledged writes have no event")
    outcome.figures.update(
        {
            "services": 2,
            "subscribers": len(subscribers),
            "reconnections": sum(max(0, s.connections - 1) for s in subscribers),
            "requests": writes.requests,
            "acknowledged": sum(len(r) for r in writes.recorded.values()) + sum(len(r) for r in writes.superseded.values()),
            "events_committed": sum(len(e) for e in expected.values()),
            "events_delivered": sum(len(s.received) for s in subscribers),
            "events_missed": missed,
            "events_duplicated": duplicated,
            "streams_out_of_order": out_of_order,
            "acknowledged_without_event": unannounced,
        }
    )
