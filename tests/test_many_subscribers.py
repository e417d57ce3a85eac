"""Many subscribers at once: an open WebSocket is long-lived, not load, so the subscriptions a
served app holds take none of its in-flight requests (``serve --max-in-flight``, ``ShedLoad``),
and each of them still hears every event of its plan while requests are served beside them.

The benchmark holds 1,000 subscribers on the default limit of 128 (bench/events.py); here ten
times the limit is enough to show that a subscription is not counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
import pytest

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from serving import served
from subscribing import first_answer, graphql, new_plan, subscribed

LIMIT = 2
SUBSCRIBERS = 10 * LIMIT


@pytest.fixture
def base_url(store: Trail, graph: Graph) -> Iterator[str]:
    with served(create_app(graph=graph, max_in_flight=LIMIT)) as url:
        yield url


def test_subscriptions_beyond_the_in_flight_limit_are_held_and_each_hears_the_plans_events(base_url: str) -> None:
    plan_id, root_id = new_plan(base_url, None)

    def wake() -> None:
        """An event in the plan (guidance under its root): a subscription not registered yet misses
        it, and is woken by the next."""
        body = graphql(
            base_url,
            None,
            "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }",
            input={"planId": plan_id, "parentDecisionId": root_id, "guidance": "heard by all"},
        )
        assert not body.get("errors"), body

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
