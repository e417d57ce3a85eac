"""One event's answer made once for every subscription that would be given the same one
(``schema.sharing``): each subscriber is still told exactly what it would be told alone, with its
own operation id, as its own caller sees it, errors included."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from decisiontrail.access import Principal, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import Decision
from decisiontrail.graphdb import Graph
from decisiontrail.schema.sharing import SharedData
from decisiontrail.services import Trail, reading
from decisiontrail.web.graphql_view import DecisionTrailGraphQL
from serving import served
from subscribing import new_plan, refusal_code, waker

EVENTS = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId at } }"
WITH_DECISION = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId decision { id } } }"


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    """An admin (who makes the plan and its events), two analysts and an actor, in ``tokens.json``."""
    path = tmp_path / "tokens.json"
    return {
        "admin": issue_token(path, "admin", Role.ADMIN),
        "ann": issue_token(path, "ann", Role.ANALYST),
        "abe": issue_token(path, "abe", Role.ANALYST),
        "otto": issue_token(path, "otto", Role.ACTOR),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str], tmp_path: Path) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(tmp_path / "tokens.json"), runtime_workers=0)) as url:
        yield url


@contextmanager
def connection(base_url: str, token: str) -> Iterator[ClientConnection]:
    """A graphql-transport-ws connection as ``token``'s caller, acknowledged."""
    url = base_url.replace("http://", "ws://") + "/graphql"
    with connect(url, subprotocols=["graphql-transport-ws"], open_timeout=10) as ws:  # type: ignore[list-item]
        ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        yield ws


def subscribe(ws: ClientConnection, operation_id: str, document: str, plan_id: str) -> None:
    ws.send(json.dumps({"id": operation_id, "type": "subscribe", "payload": {"query": document, "variables": {"id": plan_id}}}))


def drain(ws: ClientConnection, seconds: float = 0.5) -> list[dict[str, Any]]:
    """Every message the connection is told until it says nothing for ``seconds``."""
    told: list[dict[str, Any]] = []
    while True:
        try:
            told.append(json.loads(ws.recv(timeout=seconds)))
        except TimeoutError:
            return told


def listening(subscriptions: list[tuple[ClientConnection, str]], wake: Callable[[], None], seconds: float = 20) -> None:
    """Wakes the plan until every (connection, operation id) has heard of it, then reads what is left."""
    heard: set[tuple[int, str]] = set()
    deadline = time.monotonic() + seconds
    while len(heard) < len(subscriptions):
        assert time.monotonic() < deadline, f"only {len(heard)} of {len(subscriptions)} subscriptions heard the plan"
        wake()
        for ws, _ in subscriptions:
            for message in drain(ws, 0.3):
                assert message["type"] == "next", message
                heard.add((id(ws), message["id"]))
    for ws, _ in subscriptions:
        drain(ws)


def told(ws: ClientConnection, count: int, seconds: float = 15) -> list[dict[str, Any]]:
    """The next ``count`` messages of the connection."""
    return [json.loads(ws.recv(timeout=seconds)) for _ in range(count)]


def test_subscribers_of_one_document_are_told_the_same_event_each_with_its_own_id(base_url: str, tokens: dict[str, str]) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    with connection(base_url, tokens["ann"]) as one, connection(base_url, tokens["ann"]) as other:
        subscribe(one, "a", EVENTS, plan_id)
        subscribe(one, "b", EVENTS, plan_id)
        subscribe(other, "c", EVENTS, plan_id)
        listening([(one, "a"), (one, "b"), (other, "c")], wake)

        wake()
        to_one, to_other = told(one, 2), told(other, 1)
        assert drain(one) == [] and drain(other) == []

    assert sorted(m["id"] for m in to_one) == ["a", "b"]
    assert [m["id"] for m in to_other] == ["c"]
    messages = to_one + to_other
    assert {m["type"] for m in messages} == {"next"}
    payloads = [m["payload"] for m in messages]
    assert payloads[0] == payloads[1] == payloads[2]
    event = payloads[0]["data"]["decisionEvents"]
    assert set(payloads[0]) == {"data"} and event["kind"] == "RECORDED" and event["at"]
    assert set(event) == {"kind", "decisionId", "at"}


def test_subscriptions_of_one_caller_read_an_event_once(
    base_url: str, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    reads: list[list[str]] = []
    get_decisions = reading.get_decisions

    def counted(trail: Trail, ids: list[str], principal: Principal) -> list[Decision | None]:
        reads.append(list(ids))
        return get_decisions(trail, ids, principal)

    monkeypatch.setattr(reading, "get_decisions", counted)
    with connection(base_url, tokens["ann"]) as one, connection(base_url, tokens["ann"]) as other:
        subscribe(one, "1", WITH_DECISION, plan_id)
        subscribe(other, "1", WITH_DECISION, plan_id)
        listening([(one, "1"), (other, "1")], wake)

        reads.clear()
        wake()
        messages = told(one, 1) + told(other, 1)

    decision_id = messages[0]["payload"]["data"]["decisionEvents"]["decisionId"]
    assert [m["payload"] for m in messages] == [
        {"data": {"decisionEvents": {"kind": "RECORDED", "decisionId": decision_id, "decision": {"id": decision_id}}}}
    ] * 2
    assert [ids for ids in reads if decision_id in ids] == [[decision_id]]


def test_callers_who_see_differently_are_each_told_what_they_see(
    base_url: str, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    with connection(base_url, tokens["ann"]) as ann, connection(base_url, tokens["abe"]) as abe:
        subscribe(ann, "1", WITH_DECISION, plan_id)
        subscribe(abe, "1", WITH_DECISION, plan_id)
        listening([(ann, "1"), (abe, "1")], wake)

        # From now on abe may see no decision (as if it had lost sight of them): ann still sees them.
        get_decisions = reading.get_decisions

        def hidden_from_abe(trail: Trail, ids: list[str], principal: Principal) -> list[Decision | None]:
            found = get_decisions(trail, ids, principal)
            return [None] * len(ids) if principal.name == "abe" else found

        monkeypatch.setattr(reading, "get_decisions", hidden_from_abe)
        for _ in range(3):
            wake()
        to_ann, to_abe = told(ann, 3), told(abe, 3)

    for a, b in zip(to_ann, to_abe, strict=True):
        seen, unseen = a["payload"]["data"]["decisionEvents"], b["payload"]["data"]["decisionEvents"]
        assert seen["decisionId"] == unseen["decisionId"]
        assert seen["decision"] == {"id": seen["decisionId"]}
        assert unseen["decision"] is None


def test_a_caller_who_may_not_see_the_plan_is_told_nothing_of_it(base_url: str, tokens: dict[str, str]) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    with connection(base_url, tokens["ann"]) as ann, connection(base_url, tokens["otto"]) as otto:
        subscribe(ann, "1", EVENTS, plan_id)
        subscribe(otto, "1", EVENTS, plan_id)  # an actor sees the plans it instantiated, not this one
        listening([(ann, "1")], wake)
        refused = drain(otto)
        for _ in range(3):
            wake()
        heard = told(ann, 3)
        after = drain(otto)

    assert [m["type"] for m in heard] == ["next"] * 3
    assert [refusal_code(refused[0]), refused[1]] == ["NOT_FOUND", {"id": "1", "type": "complete"}], refused
    assert after == []


def test_an_execution_error_reaches_each_subscriber_with_its_own_id(
    base_url: str, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    with ExitStack() as stack:
        one = stack.enter_context(connection(base_url, tokens["ann"]))
        other = stack.enter_context(connection(base_url, tokens["ann"]))
        subscribe(one, "x", WITH_DECISION, plan_id)
        subscribe(one, "y", WITH_DECISION, plan_id)
        subscribe(other, "z", WITH_DECISION, plan_id)
        listening([(one, "x"), (one, "y"), (other, "z")], wake)

        get_decisions = reading.get_decisions

        def failing(trail: Trail, ids: list[str], principal: Principal) -> list[Decision | None]:
            if principal.name == "ann":
                raise RuntimeError("the store broke")
            return get_decisions(trail, ids, principal)

        monkeypatch.setattr(reading, "get_decisions", failing)
        wake()
        messages = told(one, 2) + told(other, 1)

    assert sorted(m["id"] for m in messages) == ["x", "y", "z"]
    for message in messages:
        assert message["type"] == "next"
        payload = message["payload"]
        assert payload["data"]["decisionEvents"]["decision"] is None
        assert payload["data"]["decisionEvents"]["kind"] == "RECORDED"
        assert [(e["message"], e["path"]) for e in payload["errors"]] == [("Unexpected error.", ["decisionEvents", "decision"])]


@pytest.mark.parametrize("operation_id", ["1", 'a"b', "\u00e9\u2028", ""])
def test_a_shared_answer_is_written_as_the_whole_message_would_be(operation_id: str) -> None:
    view = DecisionTrailGraphQL()
    data = SharedData({"decisionEvents": {"kind": "RECORDED", "decisionId": 'd"\u00e9', "at": "2026-12-05T15:00:00+00:00"}})
    for message in (
        {"id": operation_id, "type": "next", "payload": {"data": data}},
        {"id": operation_id, "type": "next", "payload": {"data": data, "errors": [{"message": "no"}]}},
    ):
        assert view.encode_json(message) == json.dumps(message, separators=(",", ":"))
    # The data's own text is written once, and each message around it carries its own id.
    assert data.json == json.dumps({"data": data}, separators=(",", ":"))
