"""The minimal HTTP endpoint answers what the driver answers, writes in one transaction of the
statement's access mode, and refuses what it cannot run rather than answer a failure as rows."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from bench.anchor import Statement, call, running_anchor
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail

STATEMENTS = {
    "probes": Statement(
        "MATCH (p:AnchorProbe) WHERE p.n >= $from RETURN p.id AS id, p.n AS n, p.tags AS tags, p.at AS at, p AS node ORDER BY p.n",
        "read",
    ),
    "record": Statement("UNWIND $ids AS id CREATE (p:AnchorProbe {id: id}) RETURN p.id AS id ORDER BY id", "write"),
    "record_then_fail": Statement(
        "UNWIND $ids AS id CREATE (p:AnchorProbe {id: id}) WITH count(p) AS made RETURN made / 0 AS never", "write"
    ),
    "record_as_read": Statement("CREATE (p:AnchorProbe {id: $id}) RETURN p.id AS id", "read"),
}


@pytest.fixture(scope="module")
def anchor_url(graph: Graph) -> Iterator[str]:
    """One anchor for the module: it holds nothing but a driver, so each test's wipe (``store``) is safe under it."""
    with running_anchor(graph.uri, graph.database, STATEMENTS) as url:
        yield url


@pytest.fixture
def anchor(anchor_url: str, store: Trail) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=anchor_url, timeout=30) as client:
        yield client


def _probe_ids(graph: Graph) -> list[str]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (p:AnchorProbe) RETURN p.id AS id ORDER BY id", database_=graph.database, routing_="r"
    )
    return [r["id"] for r in records]


def test_a_read_answers_the_rows_the_driver_answers(graph: Graph, anchor: httpx.Client) -> None:
    graph.driver.execute_query(
        "UNWIND range(1, 3) AS n CREATE (:AnchorProbe {id: 'p' + n, n: n, tags: ['t', toString(n)], "
        "at: datetime({year: 2026, month: 12, day: n, hour: 9, minute: 30, timezone: 'Z'})})",
        database_=graph.database,
    )
    records, _, _ = graph.driver.execute_query(STATEMENTS["probes"].text, {"from": 2}, database_=graph.database, routing_="r")
    expected = [record.data() for record in records]
    for row in expected:  # JSON has no datetime: the anchor says it in ISO 8601
        row["at"] = row["node"]["at"] = row["at"].iso_format()

    rows = call(anchor, "probes", **{"from": 2})

    assert rows == expected
    assert [row["id"] for row in rows] == ["p2", "p3"]
    assert rows[0]["at"] == "2026-12-02T09:30:00.000000000+00:00"
    assert rows[0]["node"] == {"id": "p2", "n": 2, "tags": ["t", "2"], "at": "2026-12-02T09:30:00.000000000+00:00"}


def test_a_write_writes_all_its_rows_in_one_transaction(graph: Graph, anchor: httpx.Client) -> None:
    rows = call(anchor, "record", ids=["b", "a", "c"])

    assert rows == [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    assert _probe_ids(graph) == ["a", "b", "c"]


def test_a_failing_statement_answers_400_and_writes_nothing(graph: Graph, anchor: httpx.Client) -> None:
    response = anchor.post("/record_then_fail", json={"ids": ["a", "b"]})

    assert response.status_code == 400
    assert "by zero" in response.json()["error"]
    assert _probe_ids(graph) == []  # the two created before the failure were rolled back with it
    with pytest.raises(RuntimeError, match="400"):
        call(anchor, "record_then_fail", ids=["a"])


def test_a_read_statement_runs_in_a_read_transaction(graph: Graph, anchor: httpx.Client) -> None:
    response = anchor.post("/record_as_read", json={"id": "a"})

    assert response.status_code == 400, response.text
    assert "read access mode" in response.json()["error"]
    assert _probe_ids(graph) == []


def test_an_unknown_name_answers_404(anchor: httpx.Client) -> None:
    response = anchor.post("/nothing", json={})

    assert response.status_code == 404
    assert response.json() == {"error": "no statement named 'nothing'"}
    with pytest.raises(RuntimeError, match="404"):
        call(anchor, "nothing")
