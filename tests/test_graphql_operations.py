"""Which operation of a document runs, over HTTP (GraphQL, Executing Requests: GetOperation)."""

from __future__ import annotations

import httpx

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail

TWO = """
mutation Instantiate { instantiatePlan(input: {description: "first"}) { id } }
mutation Another { instantiatePlan(input: {description: "second"}) { id } }
"""


def test_a_document_of_two_operations_without_a_name_is_refused_and_runs_neither(
    api: httpx.Client, store: Trail, graph: Graph
) -> None:
    # Was: 200 with the first operation's data, so "Attach" then "Apply" sent together did half.
    before = count_graph(graph)

    response = api.post("/graphql", json={"query": TWO})

    body = response.json()
    assert "data" not in body or body["data"] is None, body
    assert [e["message"] for e in body["errors"]] == ["Must provide operation name if query contains multiple operations."]
    assert count_graph(graph) == before


def test_the_operation_named_runs_alone(api: httpx.Client, store: Trail, graph: Graph) -> None:
    response = api.post("/graphql", json={"query": TWO, "operationName": "Another"})

    body = response.json()
    assert "errors" not in body, body
    plans = api.post("/graphql", json={"query": "{ plans { nodes { description } } }"}).json()["data"]["plans"]["nodes"]
    assert [p["description"] for p in plans] == ["second"]


def test_a_document_of_one_operation_needs_no_name(api: httpx.Client, store: Trail) -> None:
    body = api.post("/graphql", json={"query": "query Only { __typename }"}).json()

    assert body == {"data": {"__typename": "Query"}}


def test_a_name_that_names_no_operation_is_refused(api: httpx.Client, store: Trail) -> None:
    body = api.post("/graphql", json={"query": TWO, "operationName": "Missing"}).json()

    assert body.get("data") is None and "Missing" in body["errors"][0]["message"], body
