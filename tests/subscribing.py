"""A subscription to a served API over a real WebSocket, its caller's token in the handshake's header or in
``connection_init`` (as a browser sends it), and what the subscriber is then told: an event, a refusal, a close."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

EVENTS = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId } }"


def graphql(base_url: str, token: str | None, document: str, **variables: Any) -> dict[str, Any]:
    """A GraphQL request as ``token``'s caller: the response's body."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.post(f"{base_url}/graphql", json={"query": document, "variables": variables}, headers=headers, timeout=30)
    body: dict[str, Any] = response.json()
    return body


def code(body: dict[str, Any]) -> str | None:
    """The code of a response's first error, None if it has none."""
    errors = body.get("errors") or []
    return str(errors[0]["extensions"]["code"]) if errors else None


def new_plan(base_url: str, token: str | None, project: str | None = None) -> tuple[str, str]:
    """A plan instantiated as ``token``'s caller: its id and its root decision's."""
    body = graphql(
        base_url,
        token,
        'mutation($project: String) { instantiatePlan(input: {description: "p", project: $project}) { id rootDecision { id } } }',
        project=project,
    )
    assert not body.get("errors"), body
    plan = body["data"]["instantiatePlan"]
    return plan["id"], plan["rootDecision"]["id"]


def waker(base_url: str, token: str | None, plan_id: str, root_id: str) -> Callable[[], None]:
    """Something happening in the plan each call (guidance under its root, as ``token``'s caller)."""
    counter = iter(range(10_000))

    def wake() -> None:
        body = graphql(
            base_url,
            token,
            "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }",
            input={"planId": plan_id, "parentDecisionId": root_id, "guidance": f"note {next(counter)}"},
        )
        assert not body.get("errors"), body

    return wake


@contextmanager
def subscribed(base_url: str, plan_id: str, *, header: str | None = None, init: str | None = None) -> Iterator[ClientConnection]:
    """A graphql-transport-ws connection, acknowledged, with one subscription (id ``"1"``) to the plan's events
    sent; its token ``header`` in the handshake's ``Authorization`` or ``init`` in ``connection_init``'s payload."""
    url = base_url.replace("http://", "ws://") + "/graphql"
    headers = {"Authorization": f"Bearer {header}"} if header else {}
    payload = {"Authorization": f"Bearer {init}"} if init else {}
    with connect(url, subprotocols=["graphql-transport-ws"], additional_headers=headers, open_timeout=10) as ws:  # type: ignore[list-item]
        ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": EVENTS, "variables": {"id": plan_id}}}))
        yield ws


def first_answer(ws: ClientConnection, wake: Callable[[], None], seconds: float = 15) -> dict[str, Any]:
    """What the subscriber is told first once the plan has events: an event (``next``) or a refusal."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        wake()
        try:
            message: dict[str, Any] = json.loads(ws.recv(timeout=0.5))
            return message
        except TimeoutError:
            continue
    raise AssertionError(f"the subscription neither answered nor refused within {seconds} s")


def refusal_code(message: dict[str, Any]) -> str | None:
    """The code a subscription was refused with (an ``error``, or a result without data), None for an event."""
    if message["type"] == "error":
        return str(message["payload"][0]["extensions"]["code"])
    if message["type"] == "next" and message["payload"].get("data") is None:
        return str(message["payload"]["errors"][0]["extensions"]["code"])
    return None


def closed(ws: ClientConnection, seconds: float = 20) -> ConnectionClosed:
    """How the service closed the connection (events before it read past); fails if it stays open ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            ws.recv(timeout=0.5)
        except TimeoutError:
            continue
        except ConnectionClosed as e:
            return e
    raise AssertionError(f"the connection was still open after {seconds} s")


def still_open(ws: ClientConnection, wake: Callable[[], None]) -> bool:
    """Whether the subscription still delivers: an event arrives after ``wake`` (what came before read past first)."""
    try:
        while True:
            ws.recv(timeout=0.2)
    except TimeoutError:
        pass
    except ConnectionClosed:
        return False
    try:
        return bool(first_answer(ws, wake)["type"] == "next")
    except ConnectionClosed:
        return False
