"""The decision tools over the Model Context Protocol (/mcp), driven by the official SDK's own client over real HTTP.

Each test serves the app with bearer tokens and speaks to it as an agent runtime would: both eras of
the protocol (``legacy``: the 2025 initialize handshake; ``auto``: the 2026-07-28 sessionless
requests), each on its own path through the SDK's transport.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from decisiontrail.access import LOCAL, Principal, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile
from decisiontrail.domain.recording import ReviewAction
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail, reading
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.recording import RECORD_DECISION_INPUT_SCHEMA, RECORD_DECISION_OUTPUT_SCHEMA
from decisiontrail.services.reviews import resolve_review
from serving import served

T = TypeVar("T")

MODES = ["legacy", "auto"]


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    issued = {role.value: issue_token(path, f"{role.value}-1", role) for role in Role}
    return issued | {"alpha-reviewer": issue_token(path, "reviewer-alpha", Role.REVIEWER, project="alpha"), "_file": str(path)}


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


def over_mcp(
    base_url: str,
    token: str | None,
    steps: Callable[[Client], Awaitable[T]],
    *,
    mode: str = "auto",
    authorization: str | None = None,
) -> T:
    """``steps`` run by the SDK's client, connected to /mcp over HTTP as ``token``'s caller (or with that ``authorization``)."""

    async def session() -> T:
        authorization_ = authorization or (f"Bearer {token}" if token else None)
        headers = {"Authorization": authorization_} if authorization_ else {}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
            async with Client(streamable_http_client(f"{base_url}/mcp", http_client=http), mode=mode) as client:
                return await steps(client)

    return asyncio.run(session())


def call(base_url: str, token: str, tool: str, arguments: dict[str, Any], *, mode: str = "auto") -> CallToolResult:
    async def steps(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments)

    return over_mcp(base_url, token, steps, mode=mode)


def answer(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result.structured_content
    assert isinstance(result.structured_content, dict)
    found: dict[str, Any] = result.structured_content["error"]
    [text] = result.content
    assert isinstance(text, TextContent) and text.text.startswith(f"{found['code']}: ")  # what the model reads
    return found


def recording(plan_id: str, decision_type: str = "strategy_choice", *, step: str = "step-1", **fields: Any) -> dict[str, Any]:
    """record_decision's arguments as an agent runtime sends them: ADR-033's, the plan, the context."""
    return {
        "plan_id": plan_id,
        "decision_type": decision_type,
        "question": f"Which {decision_type}?",
        "chosen_option": "this one",
        "alternatives_considered": ["that one"],
        "confidence_score": 0.9,
        "rationale": "it fits the constraints",
        "context_snapshot": {
            "hot_context": f"[user] add rate limiting\n[assistant] deciding the {decision_type}",
            "actor_state_ref": {"thread_id": "agent-run-7", "checkpoint_id": step},
            "relevant_resources": [{"resource_id": "repo:gateway", "path": "gateway/limits.py"}],
        },
        **fields,
    }


def test_the_tools_are_listed_with_adr_033s_schemas(base_url: str, tokens: dict[str, str]) -> None:
    async def steps(client: Client) -> dict[str, Any]:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = over_mcp(base_url, tokens["analyst"], steps)

    assert set(tools) == {"record_decision", "lineage", "impact", "plan_tree", "pending_reviews"}
    record = tools["record_decision"]
    for name, schema in RECORD_DECISION_INPUT_SCHEMA["properties"].items():
        assert record.input_schema["properties"][name] == schema, name  # ADR-033's, verbatim
    assert set(record.input_schema["required"]) == {*RECORD_DECISION_INPUT_SCHEMA["required"], "plan_id", "context_snapshot"}
    assert record.output_schema is not None
    assert record.output_schema["properties"]["decision_id"] == RECORD_DECISION_OUTPUT_SCHEMA["properties"]["decision_id"]
    for name in ("lineage", "impact", "plan_tree", "pending_reviews"):
        assert tools[name].input_schema["required"] in (["decision_id"], ["plan_id"]), name
        assert tools[name].output_schema is not None, name


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_records_decisions_and_reads_their_lineage(
    base_url: str, store: Trail, tokens: dict[str, str], mode: str
) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", owner="actor-1", principal=LOCAL)
    strategy_input = recording(plan.plan_id)

    async def steps(client: Client) -> dict[str, Any]:
        strategy = answer(await client.call_tool("record_decision", strategy_input))
        child = answer(
            await client.call_tool(
                "record_decision",
                recording(plan.plan_id, "resource_selection", step="step-2", parent_decision_id=strategy["decision_id"]),
            )
        )
        again = answer(await client.call_tool("record_decision", strategy_input))  # a retry of the same step
        return {
            "strategy": strategy["decision_id"],
            "child": child["decision_id"],
            "again": again,
            "lineage": answer(await client.call_tool("lineage", {"decision_id": child["decision_id"]})),
            "impact": answer(await client.call_tool("impact", {"decision_id": strategy["decision_id"]})),
            "tree": answer(await client.call_tool("plan_tree", {"plan_id": plan.plan_id})),
        }

    seen = over_mcp(base_url, tokens["actor"], steps, mode=mode)

    strategy, child = seen["strategy"], seen["child"]
    assert seen["again"] == {"decision_id": strategy}  # the same recording, answered again, not a second one
    # The lineage as the service answers this caller (see test_a_lineage_names_every_ancestor for what it holds).
    decision_ids, plan_ids = reading.lineage(store, child, Principal("actor-1", Role.ACTOR))
    assert [d["decision_id"] for d in seen["lineage"]["decisions"]] == decision_ids
    assert seen["lineage"]["plan_ids"] == plan_ids
    assert [d["decision_id"] for d in seen["impact"]["decisions"]] == [strategy, child]
    assert seen["impact"]["counts_by_type"] == {"resource_selection": 1, "strategy_choice": 1}
    assert [(e["depth"], e["decision_id"]) for e in seen["tree"]["tree"]] == [(0, root.decision_id), (1, strategy), (2, child)]
    stored = reading.get_decision(store, child, principal=LOCAL)  # read back from Neo4j: the runtime's context came with it
    context = recording(plan.plan_id, "resource_selection")["context_snapshot"]["hot_context"]
    assert stored.parent_decision_id == strategy and stored.confidence_score == 0.9
    assert stored.context_snapshot.hot_context_hash == hashlib.sha256(context.encode()).hexdigest()
    assert reading.read_context(store, stored.context_snapshot.hot_context_hash, principal=LOCAL) == context
    assert stored.context_snapshot.actor_state_ref is not None
    assert stored.context_snapshot.actor_state_ref.thread_id == "agent-run-7"
    assert [r.resource_id for r in stored.context_snapshot.relevant_resources] == ["repo:gateway"]


# For the actor this was empty: lineage_seen answered nothing when nothing was hidden.
@pytest.mark.parametrize("role", ["admin", "actor"])
def test_a_lineage_names_every_ancestor(base_url: str, store: Trail, tokens: dict[str, str], role: str) -> None:
    plan, root = instantiate_plan(store, "lineage", owner="actor-1", principal=LOCAL)

    async def steps(client: Client) -> tuple[str, dict[str, Any]]:
        strategy = answer(await client.call_tool("record_decision", recording(plan.plan_id)))["decision_id"]
        child = answer(
            await client.call_tool(
                "record_decision", recording(plan.plan_id, "resource_selection", step="step-2", parent_decision_id=strategy)
            )
        )["decision_id"]
        return strategy, answer(await client.call_tool("lineage", {"decision_id": child}))

    strategy, lineage = over_mcp(base_url, tokens[role], steps)

    assert {d["decision_id"] for d in lineage["decisions"]} == {strategy, root.decision_id}
    assert lineage["plan_ids"] == [plan.plan_id]


def test_a_decision_below_the_threshold_waits_for_a_person(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    plan, root = instantiate_plan(
        store, "gated", automation_profile=AutomationProfile(edit_code=1.0), owner="actor-1", principal=LOCAL
    )
    arguments = recording(plan.plan_id)

    held = answer(call(base_url, tokens["actor"], "record_decision", arguments))
    pending = answer(call(base_url, tokens["actor"], "pending_reviews", {"plan_id": plan.plan_id}))
    tree = answer(call(base_url, tokens["actor"], "plan_tree", {"plan_id": plan.plan_id}))

    assert "decision_id" not in held and "below the strategize threshold 1" in held["reason"]
    assert [(r["review_id"], r["question"]) for r in pending["reviews"]] == [(held["review_id"], arguments["question"])]
    assert [e["decision_id"] for e in tree["tree"]] == [root.decision_id]  # nothing in the tree until a person decides
    _, decision = resolve_review(store, held["review_id"], ReviewAction.APPROVE, principal=Principal("reviewer-1", Role.REVIEWER))
    assert answer(call(base_url, tokens["actor"], "record_decision", arguments)) == {"decision_id": decision.decision_id}


REFUSALS = {
    "missing question": ({"question": None}, {"code": "VALIDATION_FAILED", "field": "question"}),
    "confidence as text": ({"confidence_score": "high"}, {"code": "VALIDATION_FAILED", "field": "confidence_score"}),
    "no checkpoint": (
        {"context_snapshot": {"hot_context": "ctx"}},
        {"code": "VALIDATION_FAILED", "field": "context_snapshot.actor_state_ref"},
    ),
    "blank thread": (
        {"context_snapshot": {"hot_context": "ctx", "actor_state_ref": {"thread_id": " ", "checkpoint_id": "c"}}},
        {"code": "VALIDATION_FAILED", "field": "context_snapshot.actor_state_ref.thread_id"},
    ),
    "no plan": ({"plan_id": None}, {"code": "VALIDATION_FAILED", "field": "plan_id"}),
    "unknown argument": ({"confidence": 0.9}, {"code": "VALIDATION_FAILED", "field": "confidence"}),
    "system-created type": (
        {"decision_type": "prompt_definition"},
        {"code": "VALIDATION_FAILED", "rule": "system_created_type"},
    ),
    "execute type in strategize": (
        {"decision_type": "tool_invocation"},
        {"code": "PHASE_VIOLATION", "rule": "type_allowed_in_phase"},
    ),
    "unknown parent": ({"parent_decision_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, {"code": "NOT_FOUND"}),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_recording_writes_nothing(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str], case: str) -> None:
    plan, root = instantiate_plan(store, "refusals", owner="actor-1", principal=LOCAL)
    changes, expected = REFUSALS[case]
    arguments = {k: v for k, v in {**recording(plan.plan_id), **changes}.items() if v is not None}
    before = count_graph(graph)

    refused = error(call(base_url, tokens["actor"], "record_decision", arguments))
    tree = answer(call(base_url, tokens["actor"], "plan_tree", {"plan_id": plan.plan_id}))

    assert {k: refused.get(k) for k in expected} == expected, refused
    assert count_graph(graph) == before
    assert [e["decision_id"] for e in tree["tree"]] == [root.decision_id]


def test_a_read_names_the_argument_it_lacks(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    async def steps(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("lineage", {}),
            await client.call_tool("plan_tree", {"plan_id": 7}),
            await client.call_tool("impact", {"decision": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}),
        ]

    refused = [error(r) for r in over_mcp(base_url, tokens["analyst"], steps)]

    assert [(r["code"], r["field"]) for r in refused] == [
        ("VALIDATION_FAILED", "decision_id"),
        ("VALIDATION_FAILED", "plan_id"),
        ("VALIDATION_FAILED", "decision"),
    ]


def test_a_refusal_carries_the_code_graphql_gives_it(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    plan, _ = instantiate_plan(store, "codes", owner="actor-1", principal=LOCAL)
    mutation = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
    graphql_input = {
        "planId": plan.plan_id,
        "decisionType": "TOOL_INVOCATION",
        "question": "Which tool?",
        "chosenOption": "edit_file",
        "rationale": "r",
        "contextSnapshot": {
            "hotContextHash": "0" * 64,
            "hotContextRef": "s3://contexts/0",
            "actorStateRef": {"threadId": "t", "checkpointId": "c"},
        },
    }

    over_graphql = httpx.post(
        f"{base_url}/graphql",
        json={"query": mutation, "variables": {"input": graphql_input}},
        headers={"Authorization": f"Bearer {tokens['actor']}"},
        timeout=30,
    ).json()["errors"][0]["extensions"]
    refused = error(call(base_url, tokens["actor"], "record_decision", recording(plan.plan_id, "tool_invocation")))

    assert (
        (refused["code"], refused["rule"])
        == (over_graphql["code"], over_graphql["rule"])
        == ("PHASE_VIOLATION", "type_allowed_in_phase")
    )


def test_each_tool_needs_its_role(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    plan, root = instantiate_plan(store, "roles", owner="actor-1", principal=LOCAL)
    before = count_graph(graph)

    refused = error(call(base_url, tokens["analyst"], "record_decision", recording(plan.plan_id)))
    read = answer(call(base_url, tokens["analyst"], "plan_tree", {"plan_id": plan.plan_id}))

    assert refused == {"code": "FORBIDDEN", "message": "the analyst role may not record"}
    assert count_graph(graph) == before
    assert [e["decision_id"] for e in read["tree"]] == [root.decision_id]


def test_a_token_limited_to_a_project_sees_no_other(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    alpha, alpha_root = instantiate_plan(store, "in alpha", project="alpha", owner="actor-1", principal=LOCAL)
    beta, beta_root = instantiate_plan(store, "in beta", project="beta", owner="actor-1", principal=LOCAL)

    async def steps(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("plan_tree", {"plan_id": alpha.plan_id}),
            await client.call_tool("plan_tree", {"plan_id": beta.plan_id}),
            await client.call_tool("lineage", {"decision_id": beta_root.decision_id}),
            await client.call_tool("impact", {"decision_id": beta_root.decision_id}),
            await client.call_tool("pending_reviews", {"plan_id": beta.plan_id}),
        ]

    seen, *hidden = over_mcp(base_url, tokens["alpha-reviewer"], steps)

    assert [e["decision_id"] for e in answer(seen)["tree"]] == [alpha_root.decision_id]
    assert [error(r)["code"] for r in hidden] == ["NOT_FOUND"] * 4


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-real-token", "Basic dXNlcjpwYXNz"])
def test_a_caller_without_a_token_is_refused(base_url: str, store: Trail, graph: Graph, authorization: str | None) -> None:
    plan, _ = instantiate_plan(store, "closed", owner="actor-1", principal=LOCAL)
    before = count_graph(graph)

    async def steps(client: Client) -> CallToolResult:
        return await client.call_tool("record_decision", recording(plan.plan_id))

    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client cannot even connect
        over_mcp(base_url, None, steps, authorization=authorization)
    raw = httpx.post(
        f"{base_url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream", **({"Authorization": authorization} if authorization else {})},
        timeout=30,
    )

    assert refused.group_contains(MCPError, match="error response")
    assert raw.status_code == 401 and raw.headers["www-authenticate"] == "Bearer"
    assert raw.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert count_graph(graph) == before


def test_an_unknown_tool_is_a_protocol_error(base_url: str, tokens: dict[str, str]) -> None:
    async def steps(client: Client) -> MCPError | CallToolResult:
        try:
            return await client.call_tool("correct_decision", {"decision_id": "x"})
        except MCPError as e:
            return e

    refused = over_mcp(base_url, tokens["admin"], steps)

    assert isinstance(refused, MCPError), refused
    assert refused.code == -32602 and "record_decision" in refused.message


def test_the_docs_example_runs(
    base_url: str, store: Trail, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting to the public billing API", owner="admin-1", principal=LOCAL)
    page = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    monkeypatch.setenv("DECISIONTRAIL_MCP_URL", f"{base_url}/mcp")
    monkeypatch.setenv("DECISIONTRAIL_TOKEN", tokens["admin"])
    monkeypatch.setattr(sys, "argv", ["record.py", plan.plan_id])

    exec(compile(example, "docs/mcp.md", "exec"), {"__name__": "__main__"})

    [recorded, *lineage] = capsys.readouterr().out.splitlines()
    [stored] = [d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_id != root.decision_id]
    assert recorded == f"recorded {stored.decision_id}" and stored.question == "Where is the rate limit enforced?"
    assert lineage == [f"comes from prompt_definition {root.decision_id}"]
