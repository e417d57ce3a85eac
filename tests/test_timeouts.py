"""Runaway queries are stopped: a time limit per transaction, a request whose client left stops its
query, and the service and the embedded Neo4j shut down within a bound with a query running.

The slow statements here are real: a query that counts through billions of rows, and writes that
wait on a plan lock this test holds open in its own transaction.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import httpx
import neo4j
import pytest

from decisiontrail.app import create_app
from decisiontrail.domain import DecisionType
from decisiontrail.exceptions import TimedOut
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.connection import REQUEST_METADATA_KEY, create_driver, request_tag
from decisiontrail.graphdb.database import Database, Transaction
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, free_port
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.settings import Neo4jSettings
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import decision
from test_api import RECORD, snapshot
from serving import served

SLOW_READ = "UNWIND range(1, 10000000000) AS i WITH i WHERE i = -1 RETURN count(i) AS n"


def _slow_read(tx: Transaction) -> None:
    tx.run(SLOW_READ).consume()


def _running(graph: Graph, where: Callable[[neo4j.Record], bool]) -> list[neo4j.Record]:
    records, _, _ = graph.driver.execute_query(
        "SHOW TRANSACTIONS YIELD transactionId, currentQuery, metaData RETURN transactionId, currentQuery, metaData",
        database_=graph.database,
    )
    return [r for r in records if where(r)]


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g}s: {what}")
        time.sleep(0.1)


def _from_a_request(record: neo4j.Record) -> bool:
    return REQUEST_METADATA_KEY in (record["metaData"] or {})


@contextmanager
def plan_locked(graph: Graph, plan_id: str) -> Iterator[None]:
    """Hold the plan's write lock (its :PlanLock) in an open transaction until the block ends."""
    with graph.driver.session(database=graph.database) as session, session.begin_transaction() as tx:
        tx.run("MATCH (lock:PlanLock {plan_id: $plan_id}) SET lock.writes = lock.writes + 1", plan_id=plan_id).consume()
        yield
        tx.rollback()


def _payload(plan_id: str, context: str) -> dict[str, object]:
    """A recordDecision input for the plan."""
    return {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": "Which way?",
        "chosenOption": "this way",
        "rationale": "because",
        "contextSnapshot": snapshot(context),
    }


def _decision_count(store: Trail, plan_id: str) -> int:
    return len(reading.list_decisions(store, plan_id, principal=LOCAL))


def test_a_read_past_its_time_limit_is_stopped_and_answered_timeout(graph: Graph) -> None:
    limited = replace(graph, query_timeout=1.0)
    with pytest.raises(TimedOut, match="time limit of 1s"):
        Database(limited).read(_slow_read)
    _wait_for(lambda: not _running(graph, lambda r: "range(1, 10000000000)" in r["currentQuery"]), 5, "the query stopped")


def test_a_read_of_several_statements_shares_one_time_limit(graph: Graph) -> None:
    # A read's statements are transactions of their own (Statements); the limit is the read's.
    ran: list[int] = []

    def two_statements(tx: Transaction) -> None:
        ran.append(tx.run("RETURN 1 AS n").single(strict=True)["n"])
        time.sleep(1.2)  # past the read's limit, though neither statement is slow
        ran.append(tx.run("RETURN 2 AS n").single(strict=True)["n"])

    with pytest.raises(TimedOut, match="time limit of 1s"):
        Database(replace(graph, query_timeout=1.0)).read(two_statements)
    assert ran == [1]


def test_every_statement_of_a_read_carries_its_request_tag(graph: Graph) -> None:
    # What terminate_request finds a request's statements by, once its client has gone.
    def tags(tx: Transaction) -> list[object]:
        return [
            tx.run("CALL tx.getMetaData() YIELD metadata RETURN metadata")
            .single(strict=True)["metadata"]
            .get(REQUEST_METADATA_KEY)
            for _ in range(2)
        ]

    token = request_tag.set("request-42")
    try:
        assert Database(graph).read(tags) == ["request-42", "request-42"]
    finally:
        request_tag.reset(token)


def test_a_write_waiting_past_its_time_limit_writes_nothing(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "locked", principal=LOCAL)
    limited = Trail.on(replace(graph, query_timeout=1.0))
    with plan_locked(graph, plan.plan_id):
        with pytest.raises(TimedOut):
            recording_service.record(
                limited, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
            )
    assert _decision_count(store, plan.plan_id) == 1


def test_a_request_past_its_time_limit_is_answered_timeout_over_http(store: Trail, graph: Graph) -> None:
    plan, _ = instantiate_plan(store, "locked", principal=LOCAL)
    payload = _payload(plan.plan_id, "slow")
    with served(create_app(graph=replace(graph, query_timeout=1.0))) as url, plan_locked(graph, plan.plan_id):
        answer = httpx.post(f"{url}/graphql", json={"query": RECORD, "variables": {"input": payload}}, timeout=30).json()
    assert answer["errors"][0]["extensions"]["code"] == "TIMEOUT"
    assert "time limit" in answer["errors"][0]["message"]
    assert _decision_count(store, plan.plan_id) == 1


def _send_raw(url: str, body: dict[str, object]) -> socket.socket:
    """Send a GraphQL POST on a raw socket and return it unread, so the test decides when to hang up."""
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    connection = socket.create_connection((host, int(port)))
    connection.sendall(
        b"POST /graphql HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    return connection


def test_a_request_whose_client_goes_away_stops_its_query(store: Trail, graph: Graph) -> None:
    plan, _ = instantiate_plan(store, "locked", principal=LOCAL)
    payload = _payload(plan.plan_id, "abandoned")
    # A time limit far beyond the waits below: only the disconnect can stop the write in time.
    with served(create_app(graph=replace(graph, query_timeout=120.0))) as url, plan_locked(graph, plan.plan_id):
        client = _send_raw(url, {"query": RECORD, "variables": {"input": payload}})
        _wait_for(lambda: bool(_running(graph, _from_a_request)), 10, "the request's write began waiting on the lock")
        client.close()
        _wait_for(lambda: not _running(graph, _from_a_request), 10, "the abandoned request's transaction was stopped")
    assert _decision_count(store, plan.plan_id) == 1


def test_the_embedded_neo4j_stops_within_its_bound_with_a_query_running(tmp_path: Path) -> None:
    defaults = Neo4jSettings.from_env()
    server = EmbeddedNeo4j(tmp_path / "neo4j", cache_dir=defaults.cache_dir, heap_mb=512, pagecache_mb=32, shutdown_timeout=2.0)
    uri = server.start()
    errors: list[BaseException] = []
    with create_driver(uri, None, None) as driver:  # no retries: the query's end is what we watch

        def run_forever() -> None:
            try:
                driver.execute_query(neo4j.Query(SLOW_READ, timeout=0))  # no limit at all
            except BaseException as e:  # the server ends it while stopping
                errors.append(e)

        runner = threading.Thread(target=run_forever, daemon=True)
        runner.start()
        _wait_for(
            lambda: bool(
                driver.execute_query(
                    "SHOW TRANSACTIONS YIELD currentQuery WHERE currentQuery CONTAINS 'range(1, 1000' RETURN 1"
                ).records
            ),
            10,
            "the query ran",
        )
        process = server._process
        assert process is not None
        server.stop(timeout=30)
    # A clean stop (SIGTERM's exit code), not the kill that stop() falls back to when shutdown hangs.
    assert process.returncode in (0, 143), process.returncode
    runner.join(10)
    assert errors, "the query was not ended by the shutdown"


def test_serve_stops_within_its_bound_with_a_request_waiting(store: Trail, graph: Graph, tmp_path: Path) -> None:
    plan, _ = instantiate_plan(store, "locked", principal=LOCAL)
    port = free_port()
    env = {
        **os.environ,
        "NEO4J_URI": graph.uri,
        "DECISIONTRAIL_QUERY_TIMEOUT": "0",  # no time limit: only the shutdown bound ends the request
        "DECISIONTRAIL_DATA_DIR": str(tmp_path),
    }
    env.pop("DECISIONTRAIL_TOKENS_FILE", None)
    with open(tmp_path / "serve.log", "wb") as output:
        service = subprocess.Popen(
            [sys.executable, "-m", "decisiontrail", "serve", "--port", str(port)], env=env, stdout=output, stderr=output
        )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for(lambda: _answers(url), 60, "the service answered")
        payload = _payload(plan.plan_id, "at shutdown")
        with plan_locked(graph, plan.plan_id):
            client = _send_raw(url, {"query": RECORD, "variables": {"input": payload}})
            _wait_for(lambda: bool(_running(graph, _from_a_request)), 10, "the request's write began waiting on the lock")
            service.send_signal(signal.SIGTERM)
            try:
                service.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail("serve did not stop within 30 s of SIGTERM with a request waiting")
            client.close()
            _wait_for(lambda: not _running(graph, _from_a_request), 10, "the request's transaction ended with the service")
        assert _decision_count(store, plan.plan_id) == 1
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
