"""Live events: the delay from a committed correction to its ``decisionEvents`` delivery, with
100 subscribers connected over WebSocket (graphql-transport-ws), as clients of ``serve`` see it.

Each event is stamped with the moment its change was written, in the writing transaction just
before its commit (the event outbox, ``services.relay``); a subscriber's delay is its receive
time minus that stamp, both read from this machine's clock (the service runs on it too): the
commit, the relay's numbering and read of the outbox and the delivery.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from datetime import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from bench.harness import Row, Stats

if TYPE_CHECKING:
    from bench.scenarios import Sizes

SUBSCRIBERS = 100
SUBSCRIBE = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId at } }"
INSTANTIATE = 'mutation { instantiatePlan(input: {description: "bench: live events"}) { id rootDecision { id } } }'
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
CORRECT = """
mutation($id: ID!) { correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "another way"}) { correction { id } } }"""


WARMUP = 2
"""Corrections delivered first, to every subscriber, and not measured."""


def delivery(api: str, corrections: int, subscribers: int = SUBSCRIBERS) -> tuple[Stats, int]:
    """Per (subscriber, correction) delays in ms from publish to receipt of the correction's
    SUPERSEDED event, after ``WARMUP`` corrections delivered the same way, and how many
    subscribers were connected."""
    return asyncio.run(_delivery(api, corrections, subscribers))


async def _delivery(api: str, corrections: int, subscribers: int) -> tuple[Stats, int]:
    async with httpx.AsyncClient(base_url=api, timeout=60) as client:
        plan = (await _ok(client, INSTANTIATE))["instantiatePlan"]
        root = plan["rootDecision"]["id"]
        strategies = [await _record(client, plan["id"], root, i) for i in range(WARMUP + corrections)]
        url = api.replace("http://", "ws://") + "/graphql"
        sockets = [await _subscribe(url, plan["id"]) for _ in range(subscribers)]
        try:
            await asyncio.sleep(1.0)  # every subscription registered before the first write
            delays: list[float] = []
            for i, strategy in enumerate(strategies):
                waiting = [asyncio.create_task(_superseded(ws, strategy)) for ws in sockets]
                await _ok(client, CORRECT, id=strategy)
                delivered = await asyncio.gather(*waiting)
                if i >= WARMUP:
                    delays += delivered
        finally:
            for ws in sockets:
                await ws.close()
    return Stats(tuple(delays)), len(sockets)


async def _subscribe(url: str, plan_id: str) -> ClientConnection:
    ws = await connect(url, subprotocols=["graphql-transport-ws"], open_timeout=30, max_queue=None)  # type: ignore[list-item]
    await ws.send(json.dumps({"type": "connection_init"}))
    ack = json.loads(await ws.recv())
    if ack["type"] != "connection_ack":
        raise RuntimeError(f"subscription refused: {ack}")
    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIBE, "variables": {"id": plan_id}}}))
    return ws


async def _superseded(ws: ClientConnection, decision_id: str) -> float:
    """Wait for this subscriber's SUPERSEDED event of ``decision_id``; its delay in ms."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
        received = time.time()
        if message["type"] != "next":
            raise RuntimeError(f"unexpected subscription message: {message}")
        event = message["payload"]["data"]["decisionEvents"]
        if event["kind"] == "SUPERSEDED" and event["decisionId"] == decision_id:
            return (received - datetime.fromisoformat(event["at"]).timestamp()) * 1000


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


def live_events(api: str, sizes: Sizes, progress: Callable[[str], None]) -> list[Row]:
    progress(f"events: {sizes.events} corrections with {SUBSCRIBERS} decisionEvents subscribers over WebSocket")
    stats, connected = delivery(api, sizes.events)
    return [
        Row(
            "events",
            f"a correction's SUPERSEDED event, from commit to each of {connected} subscribers",
            stats,
            None,
            "",
            target="p95 < 100 ms",
            met=stats.p95_ms is not None and stats.p95_ms < 100,
            note=f"{len(stats.samples_ms):,} deliveries: {sizes.events} corrections x {connected} subscribers, "
            f"after {WARMUP} corrections delivered to all of them and not measured",
        )
    ]
