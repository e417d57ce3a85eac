"""The shed-load scenario's own HTTP client (reliability.wire) and a short run of its crowd."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.embedded import free_port
from reliability.shed import Crowd, step_figures
from reliability.wire import Connection, WireError
from serving import served


async def _echo(request: Request) -> Response:
    return JSONResponse({"got": await request.json()}, headers={"x-seen": "yes"})


async def _slow(request: Request) -> Response:
    await asyncio.sleep(2)
    return JSONResponse({})


async def _closing(request: Request) -> Response:
    return JSONResponse({"bye": True}, headers={"connection": "close"})


ECHO = Starlette(
    routes=[
        Route("/echo", _echo, methods=["POST"]),
        Route("/slow", _slow, methods=["POST"]),
        Route("/closing", _closing, methods=["POST"]),
    ]
)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_a_connection_posts_json_and_reads_each_answer_whole_on_one_connection() -> None:
    async def exchange(port: int) -> list[tuple[int, str | None, object]]:
        connection = Connection("127.0.0.1", port)
        answers = []
        for payload in ({"n": 1}, {"n": "two", "list": [1, 2, 3]}, {"unicode": "é ✓"}):
            response = await connection.post_json("/echo", payload, timeout=5)
            answers.append((response.status, response.headers.get("x-seen"), response.json()))
        writer = connection._writer
        await connection.post_json("/echo", {}, timeout=5)
        assert connection._writer is writer  # kept alive, not reopened
        connection.close()
        return answers

    with served(ECHO) as url:
        answers = asyncio.run(exchange(_port(url)))

    assert answers == [
        (200, "yes", {"got": {"n": 1}}),
        (200, "yes", {"got": {"n": "two", "list": [1, 2, 3]}}),
        (200, "yes", {"got": {"unicode": "é ✓"}}),
    ]


def test_a_timeout_or_a_closed_connection_leaves_the_next_request_a_fresh_connection() -> None:
    async def exchange(port: int) -> list[object]:
        connection = Connection("127.0.0.1", port)
        seen: list[object] = []
        try:
            await connection.post_json("/slow", {}, timeout=0.2)
        except TimeoutError:
            seen.append("timeout")
        seen.append((await connection.post_json("/echo", {"after": "timeout"}, timeout=5)).json())
        seen.append((await connection.post_json("/closing", {}, timeout=5)).json())
        assert connection._writer is None  # the server said it closes
        seen.append((await connection.post_json("/echo", {"after": "close"}, timeout=5)).json())
        connection.close()
        return seen

    with served(ECHO) as url:
        seen = asyncio.run(exchange(_port(url)))

    assert seen == ["timeout", {"got": {"after": "timeout"}}, {"bye": True}, {"got": {"after": "close"}}]


def test_a_connection_the_server_closed_while_idle_is_opened_again_before_the_next_request() -> None:
    async def exchange(port: int) -> list[object]:
        connection = Connection("127.0.0.1", port)
        seen = [(await connection.post_json("/echo", {"n": 1}, timeout=5)).json()]
        first = connection._writer
        await asyncio.sleep(2.5)  # past the server's keep-alive timeout: it closes the connection
        seen.append((await connection.post_json("/echo", {"n": 2}, timeout=5)).json())
        assert connection._writer is not first
        connection.close()
        return seen

    with served(ECHO, timeout_keep_alive=1) as url:
        seen = asyncio.run(exchange(_port(url)))

    assert seen == [{"got": {"n": 1}}, {"got": {"n": 2}}]


def test_nothing_listening_is_a_wire_error() -> None:
    with pytest.raises(WireError, match="ConnectionRefusedError"):
        asyncio.run(Connection("127.0.0.1", free_port()).post_json("/graphql", {}, timeout=5))


def test_a_short_crowd_past_the_limit_is_shed_with_retry_after_and_its_own_loop_measured(graph: Graph) -> None:
    with served(create_app(graph=graph, max_in_flight=2)) as url:
        crowd = Crowd(url)
        asyncio.run(crowd.run([1, 8], 3.0, seed=0, progress=lambda message: None))

    figures = {step: step_figures([a for a in crowd.answers if a.step == step], 3.0, crowd.lags[step]) for step in (1, 8)}
    assert figures[1]["shed"] == 0 and figures[1]["admitted"] > 5
    assert figures[8]["shed"] > 0 and figures[8]["shed_without_retry_after"] == 0
    assert figures[1]["other_errors"] == figures[8]["other_errors"] == 0, [
        (a.step, a.op, a.code, a.status) for a in crowd.answers if a.code not in (None, "OVERLOADED")
    ]
    for step in (1, 8):  # the loop ticked all along, every 10 ms
        assert figures[step]["client_loop_lag_n"] > 3.0 / 0.02
        assert 0 <= figures[step]["client_loop_lag_p50_ms"] < figures[step]["client_loop_lag_max_ms"] + 1
    # Each acknowledged recording answered with its decision, in the client's plan.
    planned = {plan_id for plan_id, _ in crowd.plans[:8]}
    acks = [e for e in crowd.events if e["type"] == "ack" and e["op"] == "record"]
    assert acks and all(e["plan_id"] in planned for e in acks)
