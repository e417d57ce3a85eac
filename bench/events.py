"""Live events: the delay from a committed correction to its ``decisionEvents`` delivery, with
1,000 subscribers connected over WebSocket (graphql-transport-ws), as clients of ``serve`` see it.

Each event is stamped with the moment its change was written, in the writing transaction just
before its commit (the event outbox, ``services.relay``); a subscriber's delay is its receive
time minus that stamp, both read from this machine's clock (the service runs on it too): the
commit, the relay's numbering and read of the outbox and the delivery, to every subscriber in
turn: the service's one event loop runs each subscription's selection for the event and writes it
to that subscriber's WebSocket, one subscriber after the other, so the p95 is close to the time it
takes to reach 95% of them. A correction announces two events, its own RECORDED and then the
SUPERSEDED measured here, and each subscriber is sent both in turn: the delay of the SUPERSEDED
event at the k-th subscriber includes both events' deliveries to the k - 1 before it.

The subscribers are one process's, on one event loop (``asyncio``), as many sockets as subscribers,
connected in batches of ``CONNECT_BATCH``. A message is stamped as the loop reads its frame off the
socket (``_Stamped.process_event``, before any task of this client runs), so the client's own work
(parsing the messages, matching them) is not in the delay. What could still bias it:

- the client shares the machine's two cores with the service and Neo4j: when all three want a core,
  a frame may wait in the socket for this client's loop, which reads the ready sockets one after the
  other (each read and stamp is a few microseconds; 1,000 of them at once would be a few milliseconds
  for the last), and the service waits for a core the same way;
- the clients offer permessage-deflate, as browsers and the websockets library do, so the service
  compresses each event once per subscriber: part of its cost, as it is for real clients;
- ``at`` is taken before the commit, so the commit and the relay's wake-up are in every delay (as
  they are for a subscriber), and the clock is the same one on both sides (no skew to correct);
- the subscribers all follow one plan and ask for the event's own fields only: a selection of
  ``decision`` would cost a read of Neo4j per subscriber and event, which this does not measure.

The subscriptions are known to be registered before the first correction (each has heard an event
of the plan: a decision recorded under its root, written again until all have), and the warm-up
corrections are delivered to all of them first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import resource
import statistics
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.frames import Frame, Opcode
from websockets.typing import Subprotocol

from bench.harness import Row, Stats

if TYPE_CHECKING:
    from websockets.protocol import Event

    from bench.scenarios import Sizes

SUBSCRIBERS = 1000
SUBSCRIBE = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId at } }"
INSTANTIATE = 'mutation { instantiatePlan(input: {description: "bench: live events"}) { id rootDecision { id } } }'
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
CORRECT = """
mutation($id: ID!) { correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "another way"}) { correction { id } } }"""


WARMUP = 2
"""Corrections delivered first, to every subscriber, and not measured."""
CONNECT_BATCH = 50
"""Subscribers connecting at once: the handshakes and ``connection_init``s of a batch overlap."""
WAIT_S = 60.0
"""How long a correction's event may take to reach every subscriber before the run fails."""


def delivery(api: str, corrections: int, subscribers: int = SUBSCRIBERS) -> tuple[Stats, int, dict[str, float]]:
    """Per (subscriber, correction) delays in ms from publish to receipt of the correction's
    SUPERSEDED event, after ``WARMUP`` corrections delivered the same way; how many subscribers
    were connected; and the fan-out, the medians over the corrections of the delay at the first
    subscriber told and at the last (what one event's delivery to every subscriber takes is the
    difference)."""
    _room_for(subscribers + 64)
    return asyncio.run(_delivery(api, corrections, subscribers))


def _room_for(files: int) -> None:
    """Let this process open ``files`` files at once (a socket is one), as far as its hard limit
    allows: a soft limit of 1,024 is common, and would stop the subscribers short of 1,000."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < files:
        wanted = files if hard == resource.RLIM_INFINITY else min(files, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


class _Watch:
    """What every subscriber has been told: which of them have heard anything yet, and the delay
    of the awaited SUPERSEDED event at each of them."""

    def __init__(self, subscribers: int) -> None:
        self.subscribers = subscribers
        self.heard: set[int] = set()
        self.awaited: str | None = None
        self.delays: dict[int, float] = {}
        self.failure: str | None = None
        self.changed = asyncio.Event()

    def told(self, who: int, received: float, text: str) -> None:
        """One message to subscriber ``who``, read off its socket at ``received`` (``time.time()``)."""
        message = json.loads(text)
        if message.get("type") != "next" or not (message.get("payload") or {}).get("data"):
            # Run in the socket's protocol callback: a failure is told to the waiting run, not raised here.
            self.failure = f"subscriber {who}: unexpected subscription message: {message}"
            self.changed.set()
            return
        if who not in self.heard:
            self.heard.add(who)
            if len(self.heard) == self.subscribers:
                self.changed.set()
        event = message["payload"]["data"]["decisionEvents"]
        if event["kind"] == "SUPERSEDED" and event["decisionId"] == self.awaited and who not in self.delays:
            self.delays[who] = (received - datetime.fromisoformat(event["at"]).timestamp()) * 1000
            if len(self.delays) == self.subscribers:
                self.changed.set()

    async def until(self, done: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if self.failure is not None:
                raise RuntimeError(self.failure)
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"{what}: not within {timeout:.0f} s")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=min(left, 1.0))
            except TimeoutError:
                pass
        if self.failure is not None:
            raise RuntimeError(self.failure)


class _Stamped(ClientConnection):
    """A client connection that, once ``watching``, hands each text message to the watch with the
    time its frame was read off the socket, instead of queueing it for ``recv``."""

    watch: _Watch | None = None
    who = -1

    def process_event(self, event: Event) -> None:
        watch = self.watch
        if watch is not None and isinstance(event, Frame) and event.opcode is Opcode.TEXT:
            received = time.time()
            if not event.fin:
                watch.failure = f"subscriber {self.who}: a fragmented message"
                watch.changed.set()
                return
            watch.told(self.who, received, bytes(event.data).decode())
            return
        super().process_event(event)


async def _delivery(api: str, corrections: int, subscribers: int) -> tuple[Stats, int, dict[str, float]]:
    async with httpx.AsyncClient(base_url=api, timeout=60) as client:
        plan = (await _ok(client, INSTANTIATE))["instantiatePlan"]
        root = plan["rootDecision"]["id"]
        strategies = [await _record(client, plan["id"], root, i) for i in range(WARMUP + corrections)]
        url = api.replace("http://", "ws://") + "/graphql"
        watch = _Watch(subscribers)
        sockets: list[_Stamped] = []
        try:
            for first in range(0, subscribers, CONNECT_BATCH):
                batch = range(first, min(subscribers, first + CONNECT_BATCH))
                sockets += await asyncio.gather(*(_subscribe(url, plan["id"], watch, who) for who in batch))
            # Every subscription registered before the first correction: each has heard an event of
            # the plan (a decision recorded under its root, as often as it takes).
            probes = len(strategies)
            while len(watch.heard) < subscribers:
                if probes > len(strategies) + 30:
                    raise RuntimeError(f"only {len(watch.heard)} of {subscribers} subscriptions hear the plan's events")
                await _record(client, plan["id"], root, probes)
                probes += 1
                try:
                    await watch.until(lambda: len(watch.heard) == subscribers, "subscriptions", timeout=2.0)
                except RuntimeError:
                    if watch.failure is not None:
                        raise
            delays: list[float] = []
            spreads: list[tuple[float, float]] = []
            for i, strategy in enumerate(strategies):
                watch.awaited, watch.delays = strategy, {}
                await _ok(client, CORRECT, id=strategy)
                await watch.until(lambda: len(watch.delays) == subscribers, f"the SUPERSEDED event of {strategy}")
                if i >= WARMUP:
                    delays += watch.delays.values()
                    spreads.append((min(watch.delays.values()), max(watch.delays.values())))
        finally:
            await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    fan_out = {
        "first_subscriber_ms": round(statistics.median(first for first, _ in spreads), 1),
        "last_subscriber_ms": round(statistics.median(last for _, last in spreads), 1),
    }
    return Stats(tuple(delays)), len(sockets), fan_out


async def _subscribe(url: str, plan_id: str, watch: _Watch, who: int) -> _Stamped:
    ws = await connect(
        url,
        subprotocols=[Subprotocol("graphql-transport-ws")],
        open_timeout=60,
        proxy=None,
        create_connection=_Stamped,
    )
    assert isinstance(ws, _Stamped)
    await ws.send(json.dumps({"type": "connection_init"}))
    ack = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
    if ack["type"] != "connection_ack":
        await ws.close()
        raise RuntimeError(f"subscription refused: {ack}")
    ws.who, ws.watch = who, watch
    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIBE, "variables": {"id": plan_id}}}))
    return ws


async def _record(client: httpx.AsyncClient, plan_id: str, root_id: str, i: int) -> str:
    digest = hashlib.sha256(f"events/{plan_id}/{i}".encode()).hexdigest()
    fields = {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": f"Which way {i}?",
        "chosenOption": "this way",
        "rationale": "bench",
        "parentDecisionId": root_id,
        "contextSnapshot": {
            "hotContextHash": digest,
            "hotContextRef": f"bench://context/{digest}",
            "actorStateRef": {"threadId": "bench-events", "checkpointId": f"checkpoint-{i}"},
        },
    }
    return str((await _ok(client, RECORD, input=fields))["recordDecision"]["decision"]["id"])


async def _ok(client: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    answer = (await client.post("/graphql", json={"query": query, "variables": variables})).json()
    if answer.get("errors"):
        raise RuntimeError(f"GraphQL error: {answer['errors'][0]}")
    data: dict[str, Any] = answer["data"]
    return data


def live_events(api: str, sizes: Sizes, progress: Callable[[str], None], subscribers: int = SUBSCRIBERS) -> list[Row]:
    progress(f"events: {sizes.events} corrections with {subscribers:,} decisionEvents subscribers over WebSocket")
    stats, connected, fan_out = delivery(api, sizes.events, subscribers)
    return [
        Row(
            "events",
            f"a correction's SUPERSEDED event, from commit to each of {connected:,} subscribers",
            stats,
            None,
            "",
            target="p95 < 100 ms",
            met=stats.p95_ms is not None and stats.p95_ms < 100,
            note=f"{len(stats.samples_ms):,} deliveries: {sizes.events} corrections x {connected:,} subscribers, "
            f"after {WARMUP} corrections delivered to all of them and not measured; each correction's event reached its "
            "first subscriber and its last after (medians over the corrections):",
            extra=fan_out,
        )
    ]
