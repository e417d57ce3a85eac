"""Many subscribers at once: an open WebSocket is long-lived, not load, so the subscriptions a
served app holds take none of its in-flight requests (``serve --max-in-flight``, ``ShedLoad``),
and each of them still hears every event of its plan while requests are served beside them. They
are bounded apart (``serve --max-websockets``): beyond them a handshake is refused with 503.

The benchmark holds 1,000 subscribers on the default limit of 128 (bench/events.py); here ten
times the limit is enough to show that a subscription is not counted.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from serving import served
from subscribing import first_answer, new_plan, subscribed, waker

LIMIT = 2
SUBSCRIBERS = 10 * LIMIT


@pytest.fixture
def base_url(store: Trail, graph: Graph) -> Iterator[str]:
    with served(create_app(graph=graph, max_in_flight=LIMIT)) as url:
        yield url


def test_subscriptions_beyond_the_in_flight_limit_are_held_and_each_hears_the_plans_events(base_url: str) -> None:
    plan_id, root_id = new_plan(base_url, None)

    # An event in the plan each call: a subscription not registered yet misses it, and is woken by the next.
    wake = waker(base_url, None, plan_id, root_id)

    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(subscribed(base_url, plan_id)) for _ in range(SUBSCRIBERS)]
        # Requests are served beside them: the open subscriptions hold none of the two places.
        answered = [
            httpx.post(f"{base_url}/graphql", json={"query": "{ plans(first: 1) { totalCount } }"}, timeout=30)
            for _ in range(2 * LIMIT)
        ]
        heard = [first_answer(ws, wake) for ws in sockets]

    assert [a.status_code for a in answered] == [200] * (2 * LIMIT), [a.text for a in answered]
    assert all("errors" not in a.json() for a in answered)
    assert [m["type"] for m in heard] == ["next"] * SUBSCRIBERS, heard
    assert {m["payload"]["data"]["decisionEvents"]["kind"] for m in heard} == {"RECORDED"}


def test_websockets_beyond_their_limit_are_refused_at_the_handshake_until_one_closes(store: Trail, graph: Graph) -> None:
    with served(create_app(graph=graph, max_websockets=LIMIT)) as url:
        plan_id, root_id = new_plan(url, None)
        wake = waker(url, None, plan_id, root_id)

        with contextlib.ExitStack() as stack:
            held = [stack.enter_context(subscribed(url, plan_id)) for _ in range(LIMIT)]
            with pytest.raises(InvalidStatus) as handshake:
                with subscribed(url, plan_id):
                    pass
            # HTTP requests are still served: the WebSockets hold none of their places.
            answered = httpx.post(f"{url}/graphql", json={"query": "{ plans(first: 1) { totalCount } }"}, timeout=30)
            held[0].close()
            deadline = time.monotonic() + 10
            while True:  # the closed one leaves the count once the server has seen it go
                try:
                    with subscribed(url, plan_id) as room:
                        heard = first_answer(room, wake)
                    break
                except InvalidStatus:
                    assert time.monotonic() < deadline, "a closed WebSocket still counted"
                    time.sleep(0.1)

    refused = handshake.value.response
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
    assert json.loads(refused.body or b"{}")["errors"][0]["extensions"] == {"code": "OVERLOADED", "retryable": True}
    assert answered.status_code == 200 and "errors" not in answered.json()
    assert heard["type"] == "next" and heard["payload"]["data"]["decisionEvents"]["kind"] == "RECORDED", heard
