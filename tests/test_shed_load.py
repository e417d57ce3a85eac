"""Too much at once: beyond its limit the service answers 503 with Retry-After at once instead of
queueing without bound; the health routes are always answered."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from decisiontrail.app import create_app
from decisiontrail.web.middleware import ShedLoad
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.connection import REQUEST_METADATA_KEY
from decisiontrail.services import Trail, reading
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.access import LOCAL
from serving import served
from test_api import RECORD, snapshot
from test_timeouts import plan_locked


class Held:
    """A downstream app whose requests wait until released (as slow queries would)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.entered += 1
        if scope["path"] == "/graphql":
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"served"})


def test_beyond_the_limit_a_request_is_refused_at_once_and_admitted_ones_are_served() -> None:
    async def scenario() -> None:
        held = Held()
        app = ShedLoad(held, limit=2, retry_after=3)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://service") as client:
            admitted = [asyncio.create_task(client.post("/graphql")) for _ in range(2)]
            while held.entered < 2:  # both admitted and held inside
                await asyncio.sleep(0.01)

            refused = await asyncio.wait_for(client.post("/graphql"), timeout=5)
            health = await asyncio.wait_for(client.get("/healthz"), timeout=5)

            assert refused.status_code == 503 and refused.headers["Retry-After"] == "3"
            error = refused.json()["errors"][0]
            assert error["extensions"] == {"code": "OVERLOADED", "retryable": True}
            assert "retry after 3 s" in error["message"]
            assert health.status_code == 200  # a busy service is not a dead one
            assert held.entered == 3  # the refused request never reached the app; the health check did

            held.release.set()
            assert [r.status_code for r in await asyncio.gather(*admitted)] == [200, 200]
            assert app.in_flight == 0
            assert (await client.post("/graphql")).status_code == 200  # room again

    asyncio.run(scenario())


class Lingering:
    """A downstream app that answers at once, then keeps its coroutine running until released
    (as a response's background work, or the unwinding of middleware, would)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.answered = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"served"})
        self.answered += 1
        await self.release.wait()


def test_a_request_answered_whole_leaves_the_count_so_one_client_after_another_is_never_refused() -> None:
    async def scenario() -> None:
        lingering = Lingering()
        app = ShedLoad(lingering, limit=1)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://service") as client:
            unwinding = []
            for _ in range(3):  # each sent once the last is answered, while the last's coroutine still runs
                call = asyncio.create_task(client.post("/graphql"))
                while lingering.answered < len(unwinding) + 1:
                    await asyncio.sleep(0.01)
                unwinding.append(call)
                assert app.in_flight == 0
            lingering.release.set()
            answers = await asyncio.gather(*unwinding)
            assert [a.status_code for a in answers] == [200, 200, 200]
            assert app.in_flight == 0

    asyncio.run(scenario())


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):  # a limit of 0 would refuse everything
        ShedLoad(Held(), limit=0)


def _requests_waiting(graph: Graph) -> int:
    """Transactions of HTTP requests running in Neo4j now (here: recordings waiting on the plan lock)."""
    records, _, _ = graph.driver.execute_query("SHOW TRANSACTIONS YIELD metaData RETURN metaData", database_=graph.database)
    return sum(1 for r in records if REQUEST_METADATA_KEY in (r["metaData"] or {}))


def test_a_served_app_refuses_a_third_request_at_once_while_two_wait_on_a_plan_lock(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "locked", principal=LOCAL)
    recordings = [
        {
            "planId": plan.plan_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": f"Which way {i}?",
            "chosenOption": "this way",
            "rationale": "because",
            "parentDecisionId": root.decision_id,
            "contextSnapshot": snapshot(f"slow {i}"),
        }
        for i in range(2)
    ]
    with served(create_app(graph=graph, max_in_flight=2)) as url, ThreadPoolExecutor(2) as pool:
        with plan_locked(graph, plan.plan_id):  # the test holds the plan's lock: both recordings wait on it
            admitted = [
                pool.submit(httpx.post, f"{url}/graphql", json={"query": RECORD, "variables": {"input": r}}, timeout=30)
                for r in recordings
            ]
            deadline = time.monotonic() + 20
            while _requests_waiting(graph) < 2:
                assert time.monotonic() < deadline, "the two recordings did not reach Neo4j"
                time.sleep(0.05)

            refused = httpx.post(f"{url}/graphql", json={"query": "{ plans(first: 1) { totalCount } }"}, timeout=10)
            health = httpx.get(f"{url}/healthz", timeout=10)
            # Answered while both admitted requests still wait: it was not queued behind them.
            waiting = [not f.done() for f in admitted]

        served_answers = [f.result(timeout=30) for f in admitted]
        room = httpx.post(f"{url}/graphql", json={"query": "{ plans(first: 1) { totalCount } }"}, timeout=10)

    assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
    assert refused.json()["errors"][0]["extensions"] == {"code": "OVERLOADED", "retryable": True}
    assert waiting == [True, True]
    assert health.status_code == 200
    assert [a.status_code for a in served_answers] == [200, 200]
    assert all("errors" not in a.json() for a in served_answers), [a.json() for a in served_answers]
    assert len(reading.list_decisions(store, plan.plan_id, principal=LOCAL)) == 3  # the root and both recordings, once each
    assert room.status_code == 200 and "errors" not in room.json()
