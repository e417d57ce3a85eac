"""GraphQL over HTTP as its specification has it: media types, status codes, GET, and graphql-http's audit."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

AUDIT = Path(__file__).parent / "graphql_http_audit"
"""graphql-http, pinned by its package-lock.json, and the script that runs its server audit (``make install`` installs it)."""

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
TWO_MUTATIONS = """
mutation First { instantiatePlan(input: {description: "first"}) { id } }
mutation Second { instantiatePlan(input: {description: "second"}) { id } }
"""
REQUEST_ERRORS = {
    "parse": ("{ plans { totalCount }", {}, "Syntax Error"),
    "validation": ("{ plans { noSuchField } }", {}, "Cannot query field 'noSuchField'"),
    "two operations without a name": (TWO_MUTATIONS, {}, "Must provide operation name if query contains multiple operations."),
    "variable coercion": ("query($id: ID!) { decision(id: $id) { id } }", {"id": None}, "Variable '$id'"),
    "a limit": ("{ " + " ".join(f"a{i}: __typename" for i in range(31)) + " }", {}, "31 aliases found"),
}


def post(api: httpx.Client, accept: str | None, query: str, **variables: Any) -> httpx.Response:
    headers = {"accept": accept} if accept is not None else {}
    return api.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def media(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0]


def plan_count(api: httpx.Client) -> int:
    count: int = post(api, JSON, "{ plans { totalCount } }").json()["data"]["plans"]["totalCount"]
    return count


def audit_results(base_url: str) -> list[dict[str, Any]]:
    """graphql-http's server audits of the service at ``base_url``, each with its id, name and status.

    Never skipped: without Node.js or the package, the test fails and says what to install.
    """
    node = shutil.which("node")
    if node is None:
        pytest.fail("graphql-http's audit needs Node.js 20+ on PATH (see README.md)")
    if not (AUDIT / "node_modules" / "graphql-http").is_dir():
        pytest.fail("graphql-http is not installed in tests/graphql_http_audit: run `make install`")
    ran = subprocess.run(
        [node, "audit.mjs", f"{base_url}/graphql"],
        cwd=AUDIT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, f"the audit failed to run:\n{ran.stderr}"
    results: list[dict[str, Any]] = json.loads(ran.stdout)
    return results


def test_graphql_http_audits_the_server_without_an_error_or_a_warning(base_url: str) -> None:
    results = audit_results(base_url)

    counts = {status: sum(r["status"] == status for r in results) for status in ("ok", "notice", "warn", "error")}
    failed = [r for r in results if r["status"] != "ok"]  # a notice (a MAY) is shown, not failed
    assert len(results) >= 60, counts  # every audit ran, not a few
    assert counts["error"] == counts["warn"] == 0, f"{counts}\n" + "\n".join(
        f"{r['status']} {r['id']} {r['name']}: {r['reason']}; answered {r['response']}" for r in failed
    )


@pytest.mark.parametrize(("query", "variables", "says"), REQUEST_ERRORS.values(), ids=REQUEST_ERRORS.keys())
def test_a_request_error_is_a_400_without_data_for_a_client_that_takes_graphql_responses(
    api: httpx.Client, query: str, variables: dict[str, Any], says: str
) -> None:
    response = post(api, GRAPHQL_RESPONSE, query, **variables)

    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == f"{GRAPHQL_RESPONSE}; charset=utf-8"
    body = response.json()
    assert "data" not in body and says in body["errors"][0]["message"], body
    assert plan_count(api) == 0  # nothing ran


@pytest.mark.parametrize(("query", "variables", "says"), REQUEST_ERRORS.values(), ids=REQUEST_ERRORS.keys())
@pytest.mark.parametrize("accept", [JSON, "*/*", None])
def test_a_request_error_is_a_200_with_errors_for_a_legacy_client(
    api: httpx.Client, accept: str | None, query: str, variables: dict[str, Any], says: str
) -> None:
    # httpx sends Accept: */* unless told otherwise; None leaves the header out altogether.
    if accept is None:
        api.headers.pop("accept")
    response = post(api, accept, query, **variables)

    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == f"{JSON}; charset=utf-8"
    body = response.json()
    assert body["data"] is None and says in body["errors"][0]["message"], body
    assert plan_count(api) == 0


@pytest.mark.parametrize("accept", [GRAPHQL_RESPONSE, JSON])
def test_a_field_error_is_an_executed_result_200_with_its_data(api: httpx.Client, accept: str) -> None:
    response = post(
        api, accept, "query($id: ID!) { plan(id: $id) { id } impact(decisionId: $id) { decisions { id } } }", id="nope"
    )

    assert response.status_code == 200 and media(response) == accept, response.text
    body = response.json()
    assert "data" in body and body["data"] is None  # impact is non-null: its error nulls the whole answer
    assert body["errors"][0]["path"] == ["impact"] and body["errors"][0]["extensions"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("accept", "answered_in"),
    [
        (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE}, {JSON};q=0.9", GRAPHQL_RESPONSE),
        (f"{JSON}, {GRAPHQL_RESPONSE}", GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE};q=0.5, {JSON}", JSON),
        (JSON, JSON),
        ("*/*", JSON),
        ("application/*", JSON),
        ("text/html, */*;q=0.8", JSON),
    ],
)
def test_the_answer_is_in_the_media_type_the_client_weighs_highest(api: httpx.Client, accept: str, answered_in: str) -> None:
    response = post(api, accept, "{ __typename }")

    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == f"{answered_in}; charset=utf-8"
    assert response.headers["vary"] == "Accept"
    assert response.json() == {"data": {"__typename": "Query"}}


def test_a_client_that_accepts_neither_media_type_is_refused_406(api: httpx.Client) -> None:
    response = post(api, "text/html", "{ __typename }")

    assert response.status_code == 406, response.text
    assert GRAPHQL_RESPONSE in response.json()["errors"][0]["message"]
    # A browser opening /graphql still gets GraphiQL.
    assert "graphiql" in api.get("/graphql", headers={"accept": "text/html"}).text.lower()


@pytest.mark.parametrize("accept", [GRAPHQL_RESPONSE, JSON])
def test_a_query_runs_over_get(api: httpx.Client, accept: str) -> None:
    response = api.get(
        "/graphql",
        params={"query": "query Kind($name: String!) { __type(name: $name) { name } }", "variables": '{"name": "Plan"}'},
        headers={"accept": accept},
    )

    assert response.status_code == 200 and media(response) == accept, response.text
    assert response.json() == {"data": {"__type": {"name": "Plan"}}}


def test_empty_optional_parameters_over_get_are_parameters_not_given(api: httpx.Client) -> None:
    response = api.get("/graphql", params={"query": "{ __typename }", "operationName": "", "variables": "", "extensions": ""})

    assert response.status_code == 200 and response.json() == {"data": {"__typename": "Query"}}, response.text


@pytest.mark.parametrize("accept", [GRAPHQL_RESPONSE, JSON])
@pytest.mark.parametrize("operation_name", [None, "Second"])
def test_a_mutation_over_get_is_refused_405_and_runs_nothing(api: httpx.Client, accept: str, operation_name: str | None) -> None:
    query = TWO_MUTATIONS if operation_name else 'mutation { instantiatePlan(input: {description: "over GET"}) { id } }'
    params = {"query": query, **({"operationName": operation_name} if operation_name else {})}

    response = api.get("/graphql", params=params, headers={"accept": accept})

    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "POST"
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert plan_count(api) == 0


def test_a_method_other_than_get_and_post_is_refused_405_with_the_methods_allowed(api: httpx.Client) -> None:
    response = api.put("/graphql", json={"query": "{ __typename }"})

    assert response.status_code == 405 and response.headers["allow"] == "GET, POST"
    assert response.json()["errors"][0]["extensions"]["code"] == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/graphql", "application/x-www-form-urlencoded", f"{JSON}; charset=latin-1"]
)
def test_a_body_that_is_not_utf8_json_is_refused_415(api: httpx.Client, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}

    response = api.post("/graphql", content=b'{"query": "{ __typename }"}', headers=headers)

    assert response.status_code == 415, response.text
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("content_type", [JSON, "Application/JSON", f"{JSON}; charset=UTF-8"])
def test_json_is_json_however_its_type_is_written(api: httpx.Client, content_type: str) -> None:
    response = api.post("/graphql", content=b'{"query": "{ __typename }"}', headers={"content-type": content_type})

    assert response.status_code == 200 and response.json() == {"data": {"__typename": "Query"}}, response.text


@pytest.mark.parametrize(
    "body",
    [
        b'{"query": ',
        b'{"query": 5}',
        b'{"query": "{ __typename }", "variables": [1]}',
        b'{"query": "{ __typename }", "variables": "x"}',
        b'{"query": "{ __typename }", "extensions": "x"}',
        b'{"query": "{ __typename }", "operationName": {"obj": "ect"}}',
        b'{"variables": {}}',
    ],
    ids=[
        "not JSON",
        "query not a string",
        "variables a list",
        "variables a string",
        "extensions a string",
        "operationName an object",
        "no query",
    ],
)
@pytest.mark.parametrize("accept", [GRAPHQL_RESPONSE, JSON])
def test_a_request_that_is_not_graphql_over_http_is_a_400_in_json(api: httpx.Client, body: bytes, accept: str) -> None:
    response = api.post("/graphql", content=body, headers={"content-type": JSON, "accept": accept})

    assert response.status_code == 400, response.text
    # Not a GraphQL response, whatever the client asked for.
    assert response.headers["content-type"] == f"{JSON}; charset=utf-8"
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_subscription_over_http_is_refused_with_where_to_subscribe(api: httpx.Client, method: str) -> None:
    # Was a 200 with a masked internal error: strawberry ran it as a query, and its resolver failed.
    query = 'subscription { decisionEvents(planId: "p") { cursor } }'
    if method == "GET":
        response = api.get("/graphql", params={"query": query}, headers={"accept": GRAPHQL_RESPONSE})
    else:
        response = api.post("/graphql", json={"query": query}, headers={"accept": GRAPHQL_RESPONSE})

    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_REQUEST" and "WebSocket" in error["message"]
