"""Where work's time goes in Neo4j (graphdb/timing.py), and the served ``Server-Timing`` header."""

from __future__ import annotations

import re
from typing import Any

import httpx

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph, timing
from decisiontrail.graphdb.database import Database
from decisiontrail.services import Trail
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.access import LOCAL
from serving import served
from test_api import snapshot

# A statement that keeps Neo4j busy for a while (tens of milliseconds here) and answers one row.
BUSY = "UNWIND range(1, 2000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS n"


def test_nothing_is_timed_outside_a_timing(graph: Graph) -> None:
    seen: list[Any] = []
    Database(graph).read(lambda tx: seen.append(tx) or tx.run("RETURN 1 AS one").single())
    assert timing.current() is None
    assert type(seen[0]).__name__ == "Statements"  # the statements ran as ever, not watched


def test_a_read_counts_its_statements_and_takes_what_neo4j_reports_they_took(graph: Graph) -> None:
    def work(tx: Any) -> int:
        tx.run("RETURN 1 AS one").single()
        n: int = tx.run(BUSY).single()["n"]
        return n

    with timing.timing() as spent:
        n = Database(graph).read(work)

    assert n == 2_000_000 // 7
    assert (spent.transactions, spent.statements, spent.commit_s) == (1, 2, 0.0)
    assert spent.neo4j_ms > 0  # the busy statement's time, as Neo4j reported it
    assert spent.neo4j_ms <= spent.database_s * 1000 + 2  # within what the read took here (whole ms each)


def test_a_write_counts_every_statement_and_its_commit(graph: Graph, store: Trail) -> None:
    def work(tx: Any) -> None:
        tx.run("CREATE (:TimingProbe {n: 1})").consume()
        tx.run("MATCH (p:TimingProbe) SET p.n = 2").consume()
        tx.run(BUSY).single()

    try:
        with timing.timing() as spent:
            Database(graph).write(work)
            Database(graph).read(lambda tx: tx.run("MATCH (p:TimingProbe) RETURN p.n AS n").single())
    finally:
        Database(graph).write(lambda tx: tx.run("MATCH (p:TimingProbe) DELETE p").consume())

    assert (spent.transactions, spent.statements) == (2, 4)
    assert spent.commit_s > 0
    assert spent.neo4j_ms > 0
    assert spent.database_s * 1000 >= spent.neo4j_ms - 3
    assert spent.as_json()["statements"] == 4


def _parts(header: str) -> dict[str, tuple[float, str]]:
    parts = {}
    for metric in header.split(", "):
        found = re.fullmatch(r'(\w+);dur=([\d.]+)(?:;desc="([^"]*)")?', metric)
        assert found, f"not a Server-Timing metric: {metric!r}"
        parts[found[1]] = (float(found[2]), found[3] or "")
    return parts


def test_served_responses_say_where_their_time_went_when_asked(graph: Graph, store: Trail) -> None:
    plan, _ = instantiate_plan(store, "timed", principal=LOCAL)
    query = """query($id: ID!) { plan(id: $id) { id decisions { nodes { id } } } }"""
    with served(create_app(graph=graph, server_timing=True)) as url, httpx.Client(base_url=url, timeout=30) as client:
        read = client.post("/graphql", json={"query": query, "variables": {"id": plan.plan_id}})
        nothing = client.post("/graphql", json={"query": "{ __typename }"})
    with served(create_app(graph=graph)) as url:
        untimed = httpx.post(f"{url}/graphql", json={"query": "{ __typename }"}, timeout=30)

    assert read.json()["data"]["plan"]["id"] == plan.plan_id, read.json()
    parts = _parts(read.headers["server-timing"])
    assert set(parts) == {"app", "db", "neo4j", "commit"}
    transactions, statements = map(int, re.findall(r"\d+", parts["db"][1]))
    assert transactions >= 1 and statements >= transactions
    assert parts["app"][0] >= parts["db"][0] > 0
    assert parts["commit"][0] == 0  # a read commits nothing
    assert _parts(nothing.headers["server-timing"])["db"] == (0.0, "0 transactions and 0 statements")
    assert "server-timing" not in untimed.headers


WRITES = {
    "instantiatePlan": 'mutation { instantiatePlan(input: {description: "timed writes"}) { id rootDecision { id } } }',
    "recordDecision": "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }",
    "recordDecisions": "mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { id } } }",
    "advancePhase": "mutation($plan: ID!) { advancePhase(planId: $plan, phase: EXECUTE) { phase } }",
    "correctDecision": """mutation($id: ID!) {
        correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "narrower"}) { invalidated { id } } }""",
}


def _decision(plan_id: str, parent_id: str, n: int) -> dict[str, Any]:
    return {
        "planId": plan_id,
        "parentDecisionId": parent_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": f"which way ({n})?",
        "chosenOption": "this way",
        "rationale": "because",
        "contextSnapshot": snapshot(f"timed {n}"),
    }


def test_every_kind_of_write_is_served_with_server_timing(graph: Graph, store: Trail) -> None:
    """Timed, a write's transaction is watched (``timing._Watched``); the plan locks it takes are
    marked with a token of the transaction's own (``database.lock_holder``), so the watched
    transaction must be able to hold one: each write answers as it does untimed, commit counted."""
    answers: dict[str, httpx.Response] = {}
    with served(create_app(graph=graph, server_timing=True)) as url, httpx.Client(base_url=url, timeout=30) as client:

        def write(name: str, **variables: Any) -> Any:
            answers[name] = response = client.post("/graphql", json={"query": WRITES[name], "variables": variables})
            body = response.json()
            assert response.status_code == 200 and "errors" not in body, (name, body)
            return body["data"][name]

        plan = write("instantiatePlan")
        strategy = write("recordDecision", input=_decision(plan["id"], plan["rootDecision"]["id"], 1))["decision"]
        batch = write("recordDecisions", inputs=[_decision(plan["id"], strategy["id"], n) for n in (2, 3)])
        write("advancePhase", plan=plan["id"])
        invalidated = write("correctDecision", id=strategy["id"])["invalidated"]

    assert {d["id"] for d in invalidated} == {strategy["id"], *(b["decision"]["id"] for b in batch)}
    for name, response in answers.items():
        parts = _parts(response.headers["server-timing"])
        assert parts["commit"][0] > 0, (name, parts)  # each wrote, and its commit was counted
