"""The service served by uvicorn in a thread, for tests over real HTTP (the harness's own helper),
and a subscription to it over a real WebSocket."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from websockets.sync.client import ClientConnection, connect

from reliability.serving import served

__all__ = ["served", "subscribed"]


@contextmanager
def subscribed(base_url: str, query: str, variables: dict[str, Any], *, token: str | None = None) -> Iterator[ClientConnection]:
    """A graphql-transport-ws connection to the service at ``base_url`` (as ``token``'s caller,
    if given), acknowledged, with one subscription (id ``"1"``) to ``query`` sent: what comes
    back is the caller's to read."""
    url = base_url.replace("http://", "ws://") + "/graphql"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with connect(url, subprotocols=["graphql-transport-ws"], additional_headers=headers, open_timeout=10) as ws:  # type: ignore[list-item]
        ws.send(json.dumps({"type": "connection_init"}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query, "variables": variables}}))
        yield ws
