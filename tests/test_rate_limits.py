"""Per-caller rate limits over real HTTP and WebSocket: a caller past its burst is refused 429 with
``Retry-After`` (web/limits.py, counted by web/middleware.py's ``RateLimit``) on every route, /mcp
included, each caller drawing on a bucket of its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.settings import AccessSettings
from decisiontrail.web.auth import Credentials
from serving import served
from subscribing import EVENTS, new_plan, subscribed

BURST = 3


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "tokens.json"
    return {name: issue_token(path, name, Role.ADMIN) for name in ("hasty", "patient", "browser")} | {"_file": str(path)}


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("DECISIONTRAIL_RATE_LIMIT", "0.001")  # a request each 1,000 s once the burst is spent
    monkeypatch.setenv("DECISIONTRAIL_RATE_BURST", str(BURST))
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


def _post(base_url: str, token: str) -> httpx.Response:
    return httpx.post(
        f"{base_url}/graphql",
        json={"query": "{ plans { totalCount } }"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_a_caller_past_its_burst_is_refused_429_with_retry_after_over_http(base_url: str, tokens: dict[str, str]) -> None:
    bearer = {"Authorization": f"Bearer {tokens['hasty']}"}

    answers = [_post(base_url, tokens["hasty"]) for _ in range(BURST + 1)]
    exported = httpx.get(f"{base_url}/export/plans/x.json", headers=bearer, timeout=30)
    traced = httpx.post(
        f"{base_url}/v1/traces", content=b"{}", headers={**bearer, "content-type": "application/json"}, timeout=30
    )
    others = _post(base_url, tokens["patient"])
    health = httpx.get(f"{base_url}/healthz", timeout=30)

    assert [a.status_code for a in answers] == [200] * BURST + [429]
    refused = answers[-1]
    wait = int(refused.headers["retry-after"])
    assert 1 <= wait <= 1000  # a request's worth at 0.001 a second, less what came back since the burst
    assert refused.headers["content-type"].startswith("application/json")
    assert refused.json() == {
        "errors": [
            {
                "message": f"this caller is over its rate limit; retry after {wait} s",
                "extensions": {"code": "RATE_LIMITED", "retryable": True, "retryAfter": wait},
            }
        ]
    }
    assert (exported.status_code, exported.json()["errors"][0]["extensions"]["code"]) == (429, "RATE_LIMITED")
    assert traced.status_code == 429 and 1 <= int(traced.headers["retry-after"]) <= 1000
    assert "RATE_LIMITED" in traced.json()["message"]  # OTLP's own Status, as the endpoint's other refusals
    assert others.status_code == 200 and "errors" not in others.json()  # a bucket of its own
    assert health.status_code == 200


def test_a_caller_past_its_burst_is_refused_over_websocket(base_url: str, tokens: dict[str, str]) -> None:
    plan_id, _ = new_plan(base_url, tokens["patient"])

    def subscribe(ws: object, operation: str) -> None:
        ws.send(json.dumps({"id": operation, "type": "subscribe", "payload": {"query": EVENTS, "variables": {"id": plan_id}}}))  # type: ignore[attr-defined]

    # The handshake and each subscription count: with a burst of 3, the third subscription is refused.
    with subscribed(base_url, plan_id, header=tokens["hasty"]) as ws:
        subscribe(ws, "2")
        subscribe(ws, "3")
        refused = json.loads(ws.recv(timeout=10))
    with pytest.raises(InvalidStatus) as handshake:
        with connect(
            base_url.replace("http://", "ws://") + "/graphql",
            subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
            additional_headers={"Authorization": f"Bearer {tokens['hasty']}"},
            open_timeout=10,
        ):
            pass
    # A browser's token, sent in connection_init: its handshake is no caller's, its subscriptions are.
    with subscribed(base_url, plan_id, init=tokens["browser"]) as ws:
        subscribe(ws, "2")
        subscribe(ws, "3")
        subscribe(ws, "4")
        refused_in_init = json.loads(ws.recv(timeout=10))

    assert (refused["id"], refused["type"]) == ("3", "error"), refused
    assert refused["payload"][0]["extensions"]["code"] == "RATE_LIMITED"
    assert 1 <= refused["payload"][0]["extensions"]["retryAfter"] <= 1000
    assert handshake.value.response.status_code == 429
    assert 1 <= int(handshake.value.response.headers["Retry-After"]) <= 1000
    assert json.loads(handshake.value.response.body or b"{}")["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
    assert (refused_in_init["id"], refused_in_init["type"]) == ("4", "error"), refused_in_init


def _list_tools(base_url: str, token: str) -> httpx.Response:
    """A JSON-RPC ``tools/list`` posted to /mcp as an MCP client's streamable HTTP transport posts it."""
    return httpx.post(
        f"{base_url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        timeout=30,
    )


def test_mcp_is_rate_limited_like_every_other_route(base_url: str, tokens: dict[str, str]) -> None:
    answers = [_list_tools(base_url, tokens["hasty"]) for _ in range(BURST + 1)]
    others = _list_tools(base_url, tokens["patient"])

    assert [a.status_code == 429 for a in answers] == [False] * BURST + [True], [a.status_code for a in answers]
    refused = answers[-1]
    wait = int(refused.headers["retry-after"])
    assert 1 <= wait <= 1000
    assert refused.json()["errors"][0]["extensions"] == {"code": "RATE_LIMITED", "retryable": True, "retryAfter": wait}
    assert others.status_code != 429  # a bucket of its own
    assert "record_decision" in answers[0].text and "record_decision" in others.text  # /mcp answered them


def test_rate_limits_are_off_unless_configured() -> None:
    settings = AccessSettings.from_env({})

    assert settings.rate_limit == 0
    assert Credentials(TokenRegistry(), settings).limits is None
    assert Credentials(TokenRegistry(), AccessSettings.from_env({"DECISIONTRAIL_RATE_LIMIT": "5"})).limits is not None
