"""The audit trail (issue 49): every write leaves one entry, in its own transaction, with who, what,
when and the request's id; admins read it over HTTP and WebSocket, everyone else is refused; a refused
write leaves none; retention deleting a plan deletes its entries."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.retention import RetentionPolicy
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.services.retention import prune
from serving import served
from test_api import INSTANTIATE, RECORD, snapshot
from test_retention import _finished_work

AUDIT = """
query($first: Int, $after: String, $plan: ID, $principal: String, $since: DateTime, $until: DateTime, $request: String) {
  auditTrail(first: $first, after: $after, planId: $plan, principal: $principal, since: $since, until: $until, requestId: $request) {
    pageInfo { hasNextPage endCursor }
    nodes { id at principal role principalProject operation requestId planIds decisionIds reviewIds otherIds }
  }
}"""
CORRECT = """
mutation($id: ID!) { correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "use the gateway", reason: "r"}) {
  correction { id } attempt { attemptId } } }"""
RESOLVE = "mutation($id: ID!) { resolveReview(input: {reviewId: $id, action: APPROVE}) { review { id } decision { id planId } } }"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("audit") / "tokens.json"
    issued = {role.value: issue_token(path, f"{role.value}-1", role) for role in Role}
    return issued | {"alpha-admin": issue_token(path, "admin-alpha", Role.ADMIN, project="alpha"), "_file": str(path)}


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])), runtime_workers=0)) as url:
        yield url


class Client:
    def __init__(self, http: httpx.Client, tokens: dict[str, str]) -> None:
        self.http = http
        self.tokens = tokens

    def ask(self, who: str, query: str, request_id: str | None = None, **variables: Any) -> tuple[dict[str, Any], httpx.Response]:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        if request_id is not None:
            headers["X-Request-ID"] = request_id
        response = self.http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
        body: dict[str, Any] = response.json()
        return body, response

    def ok(self, who: str, query: str, request_id: str | None = None, **variables: Any) -> dict[str, Any]:
        body, response = self.ask(who, query, request_id, **variables)
        assert "errors" not in body, body
        if request_id is not None:
            assert response.headers["x-request-id"] == request_id
        data: dict[str, Any] = body["data"]
        return data

    def entries(self, **filters: Any) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = self.ok("admin", AUDIT, **filters)["auditTrail"]["nodes"]
        return nodes


@pytest.fixture
def client(base_url: str, tokens: dict[str, str]) -> Iterator[Client]:
    with httpx.Client(base_url=base_url, timeout=60) as http:
        yield Client(http, tokens)


def _record_input(plan_id: str, parent: str | None = None, **more: Any) -> dict[str, Any]:
    return {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": "Which limiter?",
        "chosenOption": "token bucket",
        "rationale": "because",
        "contextSnapshot": snapshot("ctx"),
        **({"parentDecisionId": parent} if parent else {}),
        **more,
    }


def _plan(client: Client, request_id: str, **profile: Any) -> tuple[str, str]:
    made = client.ok("actor", INSTANTIATE, request_id, input={"description": "audited", **profile})["instantiatePlan"]
    return made["id"], made["rootDecision"]["id"]


def test_a_recording_a_correction_and_a_review_resolution_each_leave_one_entry(client: Client) -> None:
    before = utc_now()
    plan_id, root_id = _plan(client, "plan-1")
    recorded = client.ok("actor", RECORD, "record-1", input=_record_input(plan_id, root_id))["recordDecision"]["decision"]
    corrected = client.ok("reviewer", CORRECT, "correct-1", id=recorded["id"])["correctDecision"]
    gated_id, gated_root = _plan(client, "plan-2", automationProfile={"editCode": 0.9})
    held = client.ok("actor", RECORD, "record-2", input=_record_input(gated_id, gated_root, confidenceScore=0.1))
    review_id = held["recordDecision"]["review"]["id"]
    resolved = client.ok("reviewer", RESOLVE, "resolve-1", id=review_id)["resolveReview"]
    after = utc_now()

    [recording] = client.entries(request="record-1")
    [correction] = _asked(client.entries(request="correct-1"))
    [resolution] = _asked(client.entries(request="resolve-1"))

    assert recording["principal"] == "actor-1" and recording["role"] == "actor" and recording["principalProject"] is None
    assert recording["operation"] == "recording.record_decisions"
    assert recording["planIds"] == [plan_id] and recording["decisionIds"] == [recorded["id"]]
    assert before <= datetime.fromisoformat(recording["at"]) <= after
    assert correction["principal"] == "reviewer-1" and correction["operation"] == "correction.correct"
    assert set(correction["decisionIds"]) == {recorded["id"], corrected["correction"]["id"]}
    assert correction["otherIds"] == [corrected["attempt"]["attemptId"]] and correction["planIds"] == [plan_id]
    assert resolution["operation"] == "reviews.resolve_review" and resolution["reviewIds"] == [review_id]
    assert resolution["decisionIds"] == [resolved["decision"]["id"]] and resolution["planIds"] == [gated_id]
    # One entry per write, newest first: the two plans, the two recordings, the correction, the resolution.
    everything = _asked(client.entries())
    assert [e["requestId"] for e in everything] == ["resolve-1", "record-2", "plan-2", "correct-1", "record-1", "plan-1"]
    assert [e["at"] for e in everything] == sorted((e["at"] for e in everything), reverse=True)


def _asked(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of what callers asked: a plan's Strategize entry also runs the reconciler, in the same
    request, whose writes are recorded as its own (``process:reconciler``)."""
    assert all(e["principal"] == "process:reconciler" for e in entries if e["principal"].startswith("process:"))
    return [e for e in entries if not e["principal"].startswith("process:")]


def test_a_request_without_an_id_is_given_one_and_its_entry_has_it(client: Client) -> None:
    body, response = client.ask("actor", INSTANTIATE, None, input={"description": "no id sent"})
    given = response.headers["x-request-id"]

    [entry] = client.entries(request=given)

    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", given)
    assert entry["planIds"] == [body["data"]["instantiatePlan"]["id"]]
    assert entry["operation"] == "lifecycle.instantiate_plan"


def test_a_refused_write_leaves_no_entry(client: Client) -> None:
    plan_id, root_id = _plan(client, "plan-1")
    bad, _ = client.ask("actor", RECORD, "bad-input", input=_record_input(plan_id, root_id, confidenceScore=7.0))
    missing, _ = client.ask("actor", RECORD, "no-parent", input=_record_input(plan_id, "01J00000000000000000000000"))
    forbidden, _ = client.ask("analyst", RECORD, "forbidden", input=_record_input(plan_id, root_id))

    assert bad["errors"] and missing["errors"]
    assert forbidden["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    for request in ("bad-input", "no-parent", "forbidden"):
        assert client.entries(request=request) == []
    assert [e["requestId"] for e in client.entries()] == ["plan-1"]


@pytest.mark.parametrize("who", ["actor", "reviewer", "analyst"])
def test_only_admins_read_the_trail(client: Client, who: str) -> None:
    _plan(client, "plan-1")

    body, _ = client.ask(who, AUDIT)

    assert body["data"] is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["FORBIDDEN"]


def test_without_a_token_it_is_refused(client: Client) -> None:
    body = client.http.post("/graphql", json={"query": AUDIT}).json()

    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]


def test_the_trail_is_filtered_by_plan_principal_time_and_request_and_paged(client: Client) -> None:
    first_plan, first_root = _plan(client, "plan-1")
    between = utc_now()
    second_plan, _ = _plan(client, "plan-2")
    client.ok("admin", RECORD, "record-1", input=_record_input(first_plan, first_root))

    by_plan = client.entries(plan=first_plan)
    by_actor = client.entries(principal="actor-1")
    since = client.entries(since=between.isoformat())
    until = client.entries(until=between.isoformat())
    page = client.ok("admin", AUDIT, first=2)["auditTrail"]
    rest = client.ok("admin", AUDIT, first=2, after=page["pageInfo"]["endCursor"])["auditTrail"]

    assert [e["requestId"] for e in by_plan] == ["record-1", "plan-1"]
    assert [e["requestId"] for e in by_actor] == ["plan-2", "plan-1"]
    assert [e["requestId"] for e in since] == ["record-1", "plan-2"]
    assert [e["requestId"] for e in until] == ["plan-1"]
    assert second_plan in [i for e in since for i in e["planIds"]]
    assert [e["requestId"] for e in page["nodes"]] == ["record-1", "plan-2"] and page["pageInfo"]["hasNextPage"]
    assert [e["requestId"] for e in rest["nodes"]] == ["plan-1"] and not rest["pageInfo"]["hasNextPage"]


def test_bad_pages_and_times_are_refused_by_name(client: Client) -> None:
    now = datetime.now(UTC)
    too_many, _ = client.ask("admin", AUDIT, first=101)
    foreign, _ = client.ask("admin", AUDIT, after="bm90LWEtY3Vyc29y")
    backwards, _ = client.ask("admin", AUDIT, since=now.isoformat(), until=(now - timedelta(hours=1)).isoformat())

    assert too_many["errors"][0]["extensions"] == {"code": "VALIDATION_FAILED", "field": "first"}
    assert foreign["errors"][0]["extensions"]["code"] == "VALIDATION_FAILED"
    assert backwards["errors"][0]["extensions"] == {"code": "VALIDATION_FAILED", "field": "until"}


def test_an_admin_limited_to_a_project_reads_only_that_projects_entries(client: Client) -> None:
    alpha = client.ok("actor", INSTANTIATE, "alpha-plan", input={"description": "a", "project": "alpha"})["instantiatePlan"]
    client.ok("actor", INSTANTIATE, "beta-plan", input={"description": "b", "project": "beta"})

    seen = client.ok("alpha-admin", AUDIT)["auditTrail"]["nodes"]

    assert [(e["requestId"], e["planIds"]) for e in seen] == [("alpha-plan", [alpha["id"]])]


def _ws(base_url: str, token: str, *operations: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Send each (id, document, variables) over one graphql-transport-ws connection; the messages answering them."""
    url = base_url.replace("http://", "ws://") + "/graphql"
    answers = []
    with connect(
        url, subprotocols=["graphql-transport-ws"], additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10
    ) as ws:  # type: ignore[list-item]
        ws.send(json.dumps({"type": "connection_init"}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        for operation_id, query, variables in operations:
            ws.send(json.dumps({"id": operation_id, "type": "subscribe", "payload": {"query": query, "variables": variables}}))
            while True:
                message = json.loads(ws.recv(timeout=30))
                if message["type"] in ("next", "error"):
                    answers.append(message)
                if message["type"] in ("complete", "error"):
                    break
    return answers


def test_a_mutation_over_websocket_is_audited_with_its_connection_and_operation(
    client: Client, base_url: str, tokens: dict[str, str]
) -> None:
    [made] = _ws(base_url, tokens["actor"], ("op-1", INSTANTIATE, {"input": {"description": "over a websocket"}}))
    plan_id = made["payload"]["data"]["instantiatePlan"]["id"]

    [entry] = client.entries(plan=plan_id)

    assert re.fullmatch(r"ws:[0-9A-HJKMNP-TV-Z]{26}:op-1", entry["requestId"])
    assert entry["principal"] == "actor-1" and entry["operation"] == "lifecycle.instantiate_plan"


def test_over_websocket_an_admin_reads_the_trail_and_others_are_refused(
    client: Client, base_url: str, tokens: dict[str, str]
) -> None:
    plan_id, _ = _plan(client, "plan-1")

    [admin] = _ws(base_url, tokens["admin"], ("1", AUDIT, {"plan": plan_id}))
    [analyst] = _ws(base_url, tokens["analyst"], ("1", AUDIT, {"plan": plan_id}))

    assert [e["requestId"] for e in admin["payload"]["data"]["auditTrail"]["nodes"]] == ["plan-1"]
    errors = analyst["payload"] if analyst["type"] == "error" else analyst["payload"]["errors"]
    assert [e["extensions"]["code"] for e in errors] == ["FORBIDDEN"]


def test_the_security_pages_example_runs(client: Client) -> None:
    plan_id, _ = _plan(client, "plan-1")
    page = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    [example] = [b for b in re.findall(r"```graphql\n(.*?)```", page, re.DOTALL) if "auditTrail(" in b]
    example = example.replace('planId: "01M8..."', f'planId: "{plan_id}"')

    found = client.ok("admin", example)["auditTrail"]["nodes"]

    assert [(e["principal"], e["operation"], e["requestId"]) for e in found] == [
        ("actor-1", "lifecycle.instantiate_plan", "plan-1")
    ]


def _entries_in_process(graph: Graph) -> list[dict[str, Any]]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (e:AuditEntry) RETURN e.plan_ids AS plans, e.operation AS operation", database_=graph.database, routing_="r"
    )
    return [dict(r) for r in records]


def test_retention_deleting_a_plan_deletes_the_entries_about_it_alone(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    child, parent = work["child"].plan_id, work["plan"].plan_id
    before = _entries_in_process(graph)
    about_the_child_alone = [e for e in before if e["plans"] == [child]]
    shared = [e for e in before if child in e["plans"] and e["plans"] != [child]]

    pruned = prune(store, RetentionPolicy.parse("30d"), dry_run=False, now=utc_now() + timedelta(days=40), principal=LOCAL)

    after = _entries_in_process(graph)
    assert child in pruned.plan_ids
    assert len(about_the_child_alone) >= 3  # the review recorded, resolved, the child moved to Execute
    assert shared and all(parent in e["plans"] for e in shared)  # its instantiation, the correction that invalidated it
    assert not [e for e in after if e["plans"] == [child]]
    assert len(after) == len(before) - len(about_the_child_alone)
