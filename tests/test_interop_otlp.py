"""Agent traces in: OTLP/HTTP (protobuf from the real OpenTelemetry SDK, and OTLP/JSON) becomes plans and decisions.

The expectations are written here from the mapping in docs/interop.md, and read back through the
GraphQL API and the store, never from the importer's own answer.
"""

from __future__ import annotations

import gzip
import json
from concurrent.futures import ThreadPoolExecutor
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

from bench.spans import json_span
from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.checks import run_checks
from decisiontrail.cli import main
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.domain.traces import ChangePhase, CreatePlan, Operation, PlaceDecisions, Span, decision_kind, import_steps
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.services import Trail
from serving import served

TRACE = "5b8efff798038103d269b633813fc60c"
T0 = 1_764_547_200_000_000_000  # 2025-12-01T00:00:00Z in ns
MS = 1_000_000


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    return {
        "actor": issue_token(path, "actor-1", Role.ACTOR),
        "analyst": issue_token(path, "analyst-1", Role.ANALYST),
        "limited": issue_token(path, "actor-p", Role.ACTOR, project="alpha"),
        "_file": str(path),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


def _graphql(base_url: str, token: str, document: str, **variables: Any) -> dict[str, Any]:
    response = httpx.post(
        f"{base_url}/graphql",
        json={"query": document, "variables": variables},
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )
    body = response.json()
    assert "errors" not in body, body
    return dict(body["data"])


PLANS = """
query { plans(first: 50) { nodes {
  id description phase project parentPlan { id } spawnedBy { id decisionType }
  phaseHistory { fromPhase toPhase }
  decisions(first: 100) { edges { node {
    id decisionType phase question chosenOption parentDecisionId sequenceNumber
    dependsOn { id } contextSnapshot { actorStateRef { threadId checkpointId } relevantResources { resourceId } }
  } } }
} } }
"""


def _plans(base_url: str, token: str) -> list[dict[str, Any]]:
    nodes = _graphql(base_url, token, PLANS)["plans"]["nodes"]
    for plan in nodes:
        plan["decisions"] = sorted((e["node"] for e in plan["decisions"]["edges"]), key=lambda d: d["sequenceNumber"])
    return list(nodes)


# --- the real OpenTelemetry SDK, exporting to the served API ----------------------------------


class RecordingExporter(OTLPSpanExporter):
    """The SDK's own OTLP/HTTP protobuf exporter, remembering what each export returned."""

    results: list[SpanExportResult]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        self.results.append(result)
        return result


def _run_agent(base_url: str, token: str) -> tuple[RecordingExporter, dict[str, str]]:
    """An instrumented agent run: a planner agent (GenAI conventions) chats with a model, calls a
    tool, retrieves documents and hands a sub-task to a researcher agent (OpenInference), which
    calls a tool of its own linked to the planner's."""
    exporter = RecordingExporter(endpoint=f"{base_url}/v1/traces", headers={"authorization": f"Bearer {token}"}, timeout=30)
    exporter.results = []
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.interop")
    ids: dict[str, str] = {}
    with tracer.start_as_current_span(
        "invoke_agent planner",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "planner",
            "input.value": "Plan a trip to Lisbon",
        },
    ) as planner:
        ids["planner"] = format(planner.get_span_context().span_id, "016x")
        with tracer.start_as_current_span("chat gpt-4o", attributes={"gen_ai.operation.name": "chat"}):
            pass
        with tracer.start_as_current_span(
            "execute_tool search_flights",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_flights",
                "gen_ai.tool.call.arguments": '{"to": "LIS"}',
            },
        ) as search:
            ids["search"] = format(search.get_span_context().span_id, "016x")
            search_context = search.get_span_context()
        with tracer.start_as_current_span(
            "retrieve guides",
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "input.value": "Lisbon guides",
                "retrieval.documents.0.document.id": "guide-7",
                "retrieval.documents.1.document.id": "guide-9",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "researcher",
            attributes={"openinference.span.kind": "AGENT", "agent.name": "researcher", "input.value": "Find hotels near Alfama"},
        ) as researcher:
            ids["researcher"] = format(researcher.get_span_context().span_id, "016x")
            with tracer.start_as_current_span(
                "book_hotel",
                links=[Link(search_context)],
                attributes={"openinference.span.kind": "TOOL", "tool.name": "book_hotel", "input.value": '{"area": "Alfama"}'},
            ) as book:
                ids["book"] = format(book.get_span_context().span_id, "016x")
    ids["trace"] = format(planner.get_span_context().trace_id, "032x")
    assert provider.force_flush(30_000)
    provider.shutdown()
    return exporter, ids


def test_sdk_traces_become_the_plans_and_decisions_of_the_mapping(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    exporter, ids = _run_agent(base_url, tokens["actor"])

    assert exporter.results and all(r is SpanExportResult.SUCCESS for r in exporter.results)
    plans = {p["description"]: p for p in _plans(base_url, tokens["actor"])}
    assert set(plans) == {"Plan a trip to Lisbon", "Find hotels near Alfama"}
    planner, researcher = plans["Plan a trip to Lisbon"], plans["Find hotels near Alfama"]

    # The planner: its prompt, its strategy (the agent), then the spawn of the researcher, then
    # Execute for its tool, its retrieval (resource_selection) and the spawned plan.
    assert [d["decisionType"] for d in planner["decisions"]] == [
        "PROMPT_DEFINITION",
        "STRATEGY_CHOICE",
        "TOOL_INVOCATION",
        "RESOURCE_SELECTION",
        "SUBPLAN_SPAWN",
    ]
    root, strategy, tool, retrieval, spawn = planner["decisions"]
    assert strategy["chosenOption"] == "planner" and strategy["parentDecisionId"] == root["id"]
    assert tool["chosenOption"] == 'search_flights({"to": "LIS"})'
    assert tool["parentDecisionId"] == strategy["id"] and tool["phase"] == "EXECUTE"
    assert tool["contextSnapshot"]["actorStateRef"] == {"threadId": f"otlp:{ids['trace']}", "checkpointId": ids["search"]}
    assert [r["resourceId"] for r in retrieval["contextSnapshot"]["relevantResources"]] == ["guide-7", "guide-9"]
    assert spawn["chosenOption"] == "researcher" and spawn["phase"] == "STRATEGIZE"
    # The spawn needed Strategize after the tool call, and the child plan Execute again.
    assert [(c["fromPhase"], c["toPhase"]) for c in planner["phaseHistory"]] == [
        ("STRATEGIZE", "EXECUTE"),
        ("EXECUTE", "STRATEGIZE"),
        ("STRATEGIZE", "EXECUTE"),
    ]
    assert planner["phase"] == "EXECUTE"

    # The researcher is the child plan the spawn started; its tool depends on the planner's (a span link).
    assert researcher["parentPlan"] == {"id": planner["id"]}
    assert researcher["spawnedBy"] == {"id": spawn["id"], "decisionType": "SUBPLAN_SPAWN"}
    assert [d["decisionType"] for d in researcher["decisions"]] == ["PROMPT_DEFINITION", "STRATEGY_CHOICE", "TOOL_INVOCATION"]
    booked = researcher["decisions"][2]
    assert booked["chosenOption"] == 'book_hotel({"area": "Alfama"})'
    assert booked["dependsOn"] == [{"id": tool["id"]}]
    # No decision came from the chat span.
    assert not any("gpt-4o" in d["question"] + d["chosenOption"] for p in plans.values() for d in p["decisions"])


def test_an_imported_trace_passes_every_check(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    _run_agent(base_url, tokens["actor"])

    report = run_checks(load_graph(graph, LoadScope.ALL))

    assert report.plans == 2 and report.decisions == 8
    assert [v.message for v in report.violations] == []


# --- OpenTelemetry's GenAI conventions as they are now: workflows, plans, retrieval, memory ---


def _messages(role: str, text: str) -> str:
    """GenAI messages as the conventions' JSON schema has them, a JSON string as the SDK records it."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


PLANNED = "1. Search flights to LIS\n2. Book a hotel in Alfama"


def _run_crew() -> list[ReadableSpan]:
    """A crew (``invoke_workflow``) of two agents, instrumented as the GenAI conventions say: the
    planner searches its memory, plans (the model call that writes the plan inside the plan span),
    calls a tool, names one memory update a decision and stores another memory; the booker retrieves
    hotels. The spans in the order the SDK ends them, the workflow's last."""
    finished = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "trip-crew"}))
    provider.add_span_processor(SimpleSpanProcessor(finished))
    tracer = provider.get_tracer("tests.interop.genai")

    def op(name: str, **attributes: Any) -> dict[str, Any]:
        return {"gen_ai.operation.name": name, **{k.replace("__", "."): v for k, v in attributes.items()}}

    with tracer.start_as_current_span(
        "invoke_workflow trip-crew",
        attributes=op(
            "invoke_workflow",
            gen_ai__workflow__name="trip-crew",
            gen_ai__input__messages=_messages("user", "Plan a trip to Lisbon"),
        ),
    ):
        with tracer.start_as_current_span(
            "invoke_agent planner",
            attributes=op(
                "invoke_agent",
                gen_ai__agent__name="planner",
                gen_ai__input__messages=_messages("user", "Find flights and a hotel"),
            ),
        ):
            with tracer.start_as_current_span("search_memory", attributes=op("search_memory", gen_ai__memory__store__id="prefs")):
                pass
            with tracer.start_as_current_span("plan planner", attributes=op("plan", gen_ai__agent__name="planner")):
                with tracer.start_as_current_span(
                    "chat gpt-4o", attributes=op("chat", gen_ai__output__messages=_messages("assistant", PLANNED))
                ):
                    pass
            with tracer.start_as_current_span(
                "execute_tool search_flights",
                attributes=op("execute_tool", gen_ai__tool__name="search_flights", gen_ai__tool__call__arguments='{"to": "LIS"}'),
            ):
                pass
            with tracer.start_as_current_span(
                "update_memory",
                attributes=op(
                    "update_memory",
                    decisiontrail__decision__type="implementation_choice",
                    decisiontrail__decision__question="Which seat preference to remember?",
                    decisiontrail__decision__chosen_option="window seats",
                ),
            ):
                pass
            with tracer.start_as_current_span("create_memory", attributes=op("create_memory", gen_ai__memory__record__count=1)):
                pass
        with tracer.start_as_current_span(
            "invoke_agent booker", attributes=op("invoke_agent", gen_ai__agent__name="booker", input__value="Book a hotel")
        ):
            with tracer.start_as_current_span(
                "retrieval hotels",
                attributes=op(
                    "retrieval",
                    gen_ai__retrieval__query__text="hotels in Alfama",
                    gen_ai__retrieval__documents=json.dumps([{"id": "hotel-3", "score": 0.9}, {"id": "hotel-8", "score": 0.7}]),
                ),
            ):
                pass
    provider.shutdown()
    return list(finished.get_finished_spans())


def _export(base_url: str, token: str, spans: Sequence[ReadableSpan]) -> ExportTraceServiceResponse:
    """Send spans as the SDK's OTLP/HTTP exporter does (its own encoder, protobuf), and read the answer."""
    response = _post(base_url, token, encode_spans(spans).SerializePartialToString(), content_type="application/x-protobuf")
    assert response.status_code == 200, response.text
    return ExportTraceServiceResponse.FromString(response.content)


def test_genai_workflows_plans_retrieval_and_memory_from_the_sdk(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    *inner, workflow = _run_crew()
    assert workflow.name == "invoke_workflow trip-crew"

    early = _export(base_url, tokens["actor"], inner)
    _export(base_url, tokens["actor"], [workflow])

    # The memory operations and the model call carry no decision: kept out, counted by operation;
    # the memory update that names its decision is one.
    assert early.partial_success.rejected_spans == 3
    assert early.partial_success.error_message == (
        "3 of 9 spans carry no decision and were kept out (chat 1, create_memory 1, search_memory 1); "
        "9 spans wait for their trace's root span"
    )
    plans = {p["description"]: p for p in _plans(base_url, tokens["actor"])}
    assert set(plans) == {"Plan a trip to Lisbon", "Find flights and a hotel", "Book a hotel"}
    crew, planner, booker = plans["Plan a trip to Lisbon"], plans["Find flights and a hotel"], plans["Book a hotel"]

    # The workflow is a plan whose agents are child plans, each spawned by a decision of it.
    assert [(d["decisionType"], d["chosenOption"]) for d in crew["decisions"][1:]] == [
        ("STRATEGY_CHOICE", "trip-crew"),
        ("SUBPLAN_SPAWN", "planner"),
        ("SUBPLAN_SPAWN", "booker"),
    ]
    assert crew["decisions"][1]["question"] == "Which workflow takes this task on?"
    spawned = {d["chosenOption"]: d["id"] for d in crew["decisions"] if d["decisionType"] == "SUBPLAN_SPAWN"}
    assert planner["parentPlan"] == booker["parentPlan"] == {"id": crew["id"]}
    assert planner["spawnedBy"]["id"] == spawned["planner"] and booker["spawnedBy"]["id"] == spawned["booker"]

    # The plan span is the planner's strategy, its plan what the model call inside it wrote; the
    # tool call and the decision after it hang under it, in Execute.
    root, strategy, plan, tool, remembered = planner["decisions"]
    assert (plan["decisionType"], plan["phase"], plan["parentDecisionId"]) == ("STRATEGY_CHOICE", "STRATEGIZE", strategy["id"])
    assert plan["question"] == "How does planner go about: Find flights and a hotel?"
    assert plan["chosenOption"] == PLANNED
    assert (tool["decisionType"], tool["chosenOption"], tool["phase"]) == (
        "TOOL_INVOCATION",
        'search_flights({"to": "LIS"})',
        "EXECUTE",
    )
    assert (remembered["decisionType"], remembered["chosenOption"]) == ("IMPLEMENTATION_CHOICE", "window seats")
    assert tool["parentDecisionId"] == remembered["parentDecisionId"] == plan["id"]

    # GenAI's retrieval is a resource_selection of the documents it returned.
    retrieval = booker["decisions"][2]
    assert (retrieval["decisionType"], retrieval["question"], retrieval["chosenOption"]) == (
        "RESOURCE_SELECTION",
        "Which documents to use for: hotels in Alfama?",
        "hotel-3, hotel-8",
    )
    assert [r["resourceId"] for r in retrieval["contextSnapshot"]["relevantResources"]] == ["hotel-3", "hotel-8"]


def test_a_genai_workflow_trace_passes_every_check(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    _export(base_url, tokens["actor"], _run_crew())

    report = run_checks(load_graph(graph, LoadScope.ALL))

    assert report.plans == 3 and report.decisions == 12
    assert [v.message for v in report.violations] == []


GENAI_OPERATIONS = {
    # gen_ai.operation.name's well-known values (open-telemetry/semantic-conventions-genai,
    # model/gen-ai/registry.yaml) and what docs/interop.md says each becomes.
    "invoke_agent": "plan",
    "invoke_workflow": "plan",
    "plan": DecisionType.STRATEGY_CHOICE,
    "execute_tool": DecisionType.TOOL_INVOCATION,
    "retrieval": DecisionType.RESOURCE_SELECTION,
    "chat": None,
    "text_completion": None,
    "generate_content": None,
    "embeddings": None,
    "create_agent": None,
    "search_memory": None,
    "create_memory": None,
    "update_memory": None,
    "upsert_memory": None,
    "delete_memory": None,
    "create_memory_store": None,
    "delete_memory_store": None,
}


def test_the_vocabulary_holds_every_well_known_operation() -> None:
    assert {o.value for o in Operation} == set(GENAI_OPERATIONS)


@pytest.mark.parametrize(("operation", "becomes"), GENAI_OPERATIONS.items())
def test_every_well_known_genai_operation_becomes_what_the_mapping_says(operation: str, becomes: object) -> None:
    kind = decision_kind(_span("0000000000000002", 10, "0000000000000001", gen_ai__operation__name=operation))

    assert ("plan" if kind == "agent" else kind) == becomes


def test_what_an_agent_does_after_its_plan_hangs_under_the_plan_and_a_new_plan_reverts_to_strategize() -> None:
    agent = "0000000000000001"
    spans = [
        _span(agent, 0, end=1000, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner"),
        _span("0000000000000002", 10, agent, end=100, gen_ai__operation__name="plan", output__value="first plan"),
        _span(
            "0000000000000003", 20, "0000000000000002", end=30, gen_ai__operation__name="execute_tool", gen_ai__tool__name="look"
        ),
        _span("0000000000000004", 50, agent, end=60, gen_ai__operation__name="execute_tool", gen_ai__tool__name="alongside"),
        _span("0000000000000005", 200, agent, gen_ai__operation__name="execute_tool", gen_ai__tool__name="act"),
        _span("0000000000000006", 400, agent, end=450, gen_ai__operation__name="plan", output__value="second plan"),
        _span("0000000000000007", 500, agent, gen_ai__operation__name="execute_tool", gen_ai__tool__name="act again"),
    ]

    steps = import_steps(spans, owner=None, project=None)

    placed = {
        d.context_snapshot.actor_state_ref.checkpoint_id: d
        for s in steps
        if isinstance(s, PlaceDecisions)
        for d, _ in s.decisions
        if d.context_snapshot.actor_state_ref
    }
    strategy, first, second = placed[agent], placed["0000000000000002"], placed["0000000000000006"]
    assert (first.decision_type, first.chosen_option, first.parent_decision_id) == (
        DecisionType.STRATEGY_CHOICE,
        "first plan",
        strategy.decision_id,
    )
    assert placed["0000000000000003"].parent_decision_id == first.decision_id  # inside the plan span
    assert placed["0000000000000004"].parent_decision_id == strategy.decision_id  # ran while it was planning
    assert placed["0000000000000005"].parent_decision_id == first.decision_id  # after the plan
    assert second.parent_decision_id == first.decision_id and second.phase is Phase.STRATEGIZE
    assert placed["0000000000000007"].parent_decision_id == second.decision_id
    assert [(s.current, s.target) for s in steps if isinstance(s, ChangePhase)] == [
        (Phase.STRATEGIZE, Phase.EXECUTE),
        (Phase.EXECUTE, Phase.STRATEGIZE),
        (Phase.STRATEGIZE, Phase.EXECUTE),
    ]


def _otlp_json(spans: list[dict[str, Any]], resource: dict[str, str] | None = None) -> dict[str, Any]:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in (resource or {"service.name": "agent"}).items()]
    return {"resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}


def _json_span(span_id: str, name: str, start_ms: int, parent: str | None = None, **attributes: Any) -> dict[str, Any]:
    """A span of the test's trace, ``start_ms`` after T0 and 50 ms long; ``a__b`` names attribute ``a.b``."""
    named = {k.replace("__", "."): v for k, v in attributes.items()}
    return json_span(TRACE, span_id, name, T0 + start_ms * MS, parent, named, duration=50 * MS)


AGENT_SPAN = _json_span("a000000000000001", "agent", 0, openinference__span__kind="AGENT", input__value="Summarise the report")
LLM_SPAN = _json_span("a000000000000002", "llm", 1, "a000000000000001", openinference__span__kind="LLM")
DECISION_SPAN = _json_span(
    "a000000000000003",
    "choose format",
    2,
    "a000000000000001",
    openinference__span__kind="DECISION",
    decisiontrail__decision__type="implementation_choice",
    decisiontrail__decision__question="Which format?",
    decisiontrail__decision__chosen_option="bullet points",
    decisiontrail__decision__alternatives=["prose", "table"],
    decisiontrail__decision__confidence=0.8,
)


def _post(
    base_url: str, token: str | None, body: bytes, content_type: str = "application/json", **headers: str
) -> httpx.Response:
    sent = {"content-type": content_type, **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return httpx.post(f"{base_url}/v1/traces", content=body, headers=sent, timeout=30)


def test_otlp_json_is_imported_once_however_often_it_is_sent(
    base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]
) -> None:
    body = json.dumps(_otlp_json([AGENT_SPAN, LLM_SPAN, DECISION_SPAN])).encode()

    first = _post(base_url, tokens["actor"], body)
    after_first = count_graph(graph)
    again = _post(base_url, tokens["actor"], gzip.compress(body), **{"content-encoding": "gzip"})

    assert first.status_code == 200, first.text
    assert first.json() == {
        "partialSuccess": {"rejectedSpans": "1", "errorMessage": "1 of 3 spans carry no decision and were kept out (LLM 1)"}
    }
    assert again.status_code == 200
    assert "imported before; nothing was recorded twice" in again.json()["partialSuccess"]["errorMessage"]
    assert count_graph(graph) == after_first
    (plan,) = _plans(base_url, tokens["actor"])
    choice = plan["decisions"][-1]
    assert (choice["decisionType"], choice["question"], choice["chosenOption"]) == (
        "IMPLEMENTATION_CHOICE",
        "Which format?",
        "bullet points",
    )


def test_spans_sent_before_their_root_wait_for_it(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    # An exporter sends spans as they end: the children first, the agent (the root) last.
    early = _post(base_url, tokens["actor"], json.dumps(_otlp_json([LLM_SPAN, DECISION_SPAN])).encode())

    assert early.status_code == 200
    assert "2 spans wait for their trace's root span" in early.json()["partialSuccess"]["errorMessage"]
    assert _plans(base_url, tokens["actor"]) == []

    late = _post(base_url, tokens["actor"], json.dumps(_otlp_json([AGENT_SPAN])).encode())

    assert late.status_code == 200
    (plan,) = _plans(base_url, tokens["actor"])
    assert [d["decisionType"] for d in plan["decisions"]] == ["PROMPT_DEFINITION", "STRATEGY_CHOICE", "IMPLEMENTATION_CHOICE"]


def test_a_trace_whose_root_comes_is_imported_from_what_came_without_keeping_it(
    base_url: str, store: Trail, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spans are kept only while their trace waits for its root: a trace sent whole is imported from
    # the request itself (keeping its spans would write, read back and drop each in one transaction),
    # and a root arriving with more of its trace imports those beside the ones kept before.
    from decisiontrail.graphdb import traces

    kept: list[str] = []
    keep = traces.keep
    monkeypatch.setattr(traces, "keep", lambda tx, spans, at: (kept.extend(s.span_id for s in spans), keep(tx, spans, at)))
    late_decision = _json_span(
        "a000000000000004",
        "choose length",
        3,
        "a000000000000001",
        openinference__span__kind="DECISION",
        decisiontrail__decision__type="implementation_choice",
        decisiontrail__decision__question="How long?",
        decisiontrail__decision__chosen_option="short",
    )

    assert _post(base_url, tokens["actor"], json.dumps(_otlp_json([LLM_SPAN, DECISION_SPAN])).encode()).status_code == 200
    assert _post(base_url, tokens["actor"], json.dumps(_otlp_json([AGENT_SPAN, late_decision])).encode()).status_code == 200

    assert sorted(kept) == ["a000000000000002", "a000000000000003"]  # only the spans that waited
    (plan,) = _plans(base_url, tokens["actor"])
    assert [d["decisionType"] for d in plan["decisions"]] == [
        "PROMPT_DEFINITION",
        "STRATEGY_CHOICE",
        "IMPLEMENTATION_CHOICE",
        "IMPLEMENTATION_CHOICE",
    ]


@pytest.mark.parametrize(
    ("spans", "field"),
    [
        ([{**AGENT_SPAN, "traceId": "not-hex"}], "resourceSpans[0].scopeSpans[0].spans[0].traceId"),
        ([{**AGENT_SPAN, "spanId": "00" * 8}], "resourceSpans[0].scopeSpans[0].spans[0].spanId"),
        (
            [AGENT_SPAN, _json_span("a000000000000009", "d", 3, "a000000000000001", decisiontrail__decision__type="nonsense")],
            "decisiontrail.decision.type",
        ),
        (
            [
                AGENT_SPAN,
                _json_span(
                    "a000000000000009",
                    "d",
                    3,
                    "a000000000000001",
                    decisiontrail__decision__type="strategy_choice",
                    decisiontrail__decision__confidence=1.5,
                ),
            ],
            "decisiontrail.decision.confidence",
        ),
        (
            [AGENT_SPAN, _json_span("a000000000000009", "d", 3, "a000000000000001", decisiontrail__decision__question="Q?")],
            "decisiontrail.decision.type: is required",
        ),
    ],
)
def test_a_malformed_request_is_refused_whole_and_writes_nothing(
    base_url: str, store: Trail, graph: Graph, tokens: dict[str, str], spans: list[dict[str, Any]], field: str
) -> None:
    before = count_graph(graph)

    response = _post(base_url, tokens["actor"], json.dumps(_otlp_json(spans)).encode())

    assert response.status_code == 400
    status = response.json()
    assert status["code"] == 3  # google.rpc.Code INVALID_ARGUMENT
    assert field in status["message"]
    assert count_graph(graph) == before


def test_refusals_over_http(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    body = json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN])).encode()
    before = count_graph(graph)

    assert _post(base_url, None, body).status_code == 401
    assert _post(base_url, tokens["analyst"], body).status_code == 403  # may read, not record
    assert _post(base_url, tokens["actor"], body, content_type="text/plain").status_code == 415
    assert _post(base_url, tokens["actor"], b"\x0a\xff\xff", content_type="application/x-protobuf").status_code == 400
    assert _post(base_url, tokens["actor"], b"{", content_type="application/json").status_code == 400
    other_project = json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN], {"decisiontrail.project": "beta"})).encode()
    refused = _post(base_url, tokens["limited"], other_project)
    assert refused.status_code == 400 and "only into project alpha" in refused.json()["message"]
    assert count_graph(graph) == before


def test_an_actor_sees_only_the_plans_it_imported(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    _post(base_url, tokens["limited"], json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN])).encode())

    (plan,) = _plans(base_url, tokens["limited"])
    assert plan["project"] == "alpha"
    assert _plans(base_url, tokens["actor"]) == []


def test_import_otlp_from_a_file(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    path = tmp_path / "traces.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_otlp_json([AGENT_SPAN, LLM_SPAN, DECISION_SPAN])).encode()))

    assert main(["import", "otlp", str(path)]) == 0
    out = capsys.readouterr().out
    assert main(["import", "otlp", str(path)]) == 0
    again = capsys.readouterr().out

    assert "imported 1 trace(s) into 1 plan(s) and 3 decision(s)" in out
    assert "1 of 3 spans carry no decision" in out
    assert "imported 0 trace(s)" in again and "nothing was recorded twice" in again


# --- the mapping itself, pure -----------------------------------------------------------------


def _span(span_id: str, start: int, parent: str | None = None, end: int | None = None, **attributes: Any) -> Span:
    return Span(
        TRACE,
        span_id,
        span_id,
        T0 + start * MS,
        T0 + (end if end is not None else start + 100) * MS,
        parent,
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
    )


def test_parallel_sub_agents_are_parallel_spawns_each_with_its_plan() -> None:
    spans = [
        _span("0000000000000001", 0, end=1000, openinference__span__kind="AGENT"),
        _span("0000000000000002", 10, "0000000000000001", end=500, openinference__span__kind="AGENT"),
        _span("0000000000000003", 20, "0000000000000001", end=400, openinference__span__kind="AGENT"),
        _span("0000000000000004", 600, "0000000000000001", end=700, openinference__span__kind="AGENT"),
    ]

    steps = import_steps(spans, owner="me", project=None)

    created = [s for s in steps if isinstance(s, CreatePlan)]
    spawns = [
        d for s in steps if isinstance(s, PlaceDecisions) for d, _ in s.decisions if d.decision_type.value.startswith("subplan")
    ]
    assert len(created) == 4
    assert [d.decision_type for d in spawns] == [
        DecisionType.SUBPLAN_PARALLEL_SPAWN,
        DecisionType.SUBPLAN_PARALLEL_SPAWN,
        DecisionType.SUBPLAN_SPAWN,
    ]
    assert [c.plan.spawned_by_decision_id for c in created[1:]] == [d.decision_id for d in spawns]
    assert all(c.plan.owner == "me" for c in created)


def test_the_graph_node_parent_names_the_decision_parent() -> None:
    spans = [
        _span("0000000000000001", 0, openinference__span__kind="AGENT"),
        _span("0000000000000002", 10, "0000000000000001", openinference__span__kind="TOOL", graph__node__id="fetch"),
        _span("0000000000000003", 20, "0000000000000001", openinference__span__kind="TOOL", graph__node__id="parse"),
        _span("0000000000000004", 30, "0000000000000001", openinference__span__kind="TOOL", graph__node__parent_id="fetch"),
    ]

    placed = [d for s in import_steps(spans, owner=None, project=None) if isinstance(s, PlaceDecisions) for d, _ in s.decisions]

    by_span = {d.context_snapshot.actor_state_ref.checkpoint_id: d for d in placed if d.context_snapshot.actor_state_ref}
    assert by_span["0000000000000004"].parent_decision_id == by_span["0000000000000002"].decision_id
    assert by_span["0000000000000003"].parent_decision_id == by_span["0000000000000001"].decision_id  # the strategy


def test_decisions_outside_every_agent_hang_in_a_plan_of_the_root_span() -> None:
    spans = [
        _span("0000000000000001", 0, openinference__span__kind="CHAIN", input__value="LangGraph run"),
        _span("0000000000000002", 10, "0000000000000001", openinference__span__kind="TOOL", tool__name="grep"),
    ]

    steps = import_steps(spans, owner=None, project=None)

    (created,) = [s for s in steps if isinstance(s, CreatePlan)]
    assert created.plan.description == "LangGraph run"
    assert [type(s) for s in steps] == [CreatePlan, PlaceDecisions, ChangePhase, PlaceDecisions]
    assert [s.target for s in steps if isinstance(s, ChangePhase)] == [Phase.EXECUTE]


def test_a_trace_without_decisions_becomes_nothing() -> None:
    spans = [_span("0000000000000001", 0, openinference__span__kind="LLM"), _span("0000000000000002", 5, "0000000000000001")]

    assert import_steps(spans, owner=None, project=None) == []


def test_the_documented_example_imports_as_docs_interop_says(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    docs = Path(__file__).resolve().parents[1] / "docs"
    page = (docs / "interop.md").read_text(encoding="utf-8")

    assert main(["import", "otlp", str(docs / "examples" / "otlp-trace.json")]) == 0
    imported = capsys.readouterr().out
    plan_id = re.findall(r"^  plan (\w{26})$", imported, flags=re.MULTILINE)[0]
    assert main(["tree", plan_id]) == 0
    tree = capsys.readouterr().out

    shown = page.splitlines()
    for line in imported.splitlines():
        assert line in shown
    for line in tree.splitlines():  # the page shows each line whole, or cut short with "..."
        assert line in shown or any(s.endswith("...") and line.startswith(s.removesuffix("...")) for s in shown), line


# --- what a real exporter sends that a tidy example does not --------------------------------


def test_spans_of_a_called_service_wait_for_the_callers_root_and_become_its_child_plan(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    # The called service exports first: its local root's parent (the caller's tool span) is remote.
    called_agent = _json_span("b000000000000001", "helper", 20, "a000000000000004", openinference__span__kind="AGENT")
    called_agent["flags"] = 0x300  # SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE | IS_REMOTE, as the SDK sets them
    called_tool = _json_span("b000000000000002", "lookup", 25, "b000000000000001", openinference__span__kind="TOOL")
    caller_tool = _json_span("a000000000000004", "call helper", 10, "a000000000000001", openinference__span__kind="TOOL")

    first = _post(base_url, tokens["actor"], json.dumps(_otlp_json([called_agent, called_tool])).encode())
    assert "2 spans wait for their trace's root span" in first.json()["partialSuccess"]["errorMessage"]
    assert _plans(base_url, tokens["actor"]) == []
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([caller_tool, AGENT_SPAN])).encode())

    plans = {p["description"]: p for p in _plans(base_url, tokens["actor"])}
    caller, called = plans["Summarise the report"], plans["helper"]
    assert called["parentPlan"] == {"id": caller["id"]}
    assert [d["decisionType"] for d in called["decisions"]] == ["PROMPT_DEFINITION", "STRATEGY_CHOICE", "TOOL_INVOCATION"]
    spawn = next(d for d in caller["decisions"] if d["decisionType"] == "SUBPLAN_SPAWN")
    tool = next(d for d in caller["decisions"] if d["decisionType"] == "TOOL_INVOCATION")
    assert spawn["parentDecisionId"] == tool["id"]  # the agent was called from inside the tool span


def test_spans_arriving_after_their_trace_was_imported_are_rejected_and_said_so(
    base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]
) -> None:
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN])).encode())
    before = count_graph(graph)
    late = _json_span("a000000000000007", "late tool", 30, "a000000000000001", openinference__span__kind="TOOL")

    answer = _post(base_url, tokens["actor"], json.dumps(_otlp_json([DECISION_SPAN, late])).encode()).json()

    assert answer["partialSuccess"]["rejectedSpans"] == "1"
    message = answer["partialSuccess"]["errorMessage"]
    assert "1 spans arrived after their trace was imported and were not recorded" in message
    assert "1 spans belong to traces imported before" in message  # DECISION_SPAN, sent again
    assert count_graph(graph) == before


def test_a_root_that_stands_in_for_its_agent_keeps_its_input_and_a_root_tool_stays_a_decision(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    chain_root = _json_span(
        "c000000000000001", "RunnableSequence", 0, openinference__span__kind="CHAIN", input__value="LangGraph run"
    )
    tool = _json_span("c000000000000002", "grep", 5, "c000000000000001", openinference__span__kind="TOOL", tool__name="grep")
    orphan = _json_span("c000000000000003", "decide", 6, "c0000000000000ff", decisiontrail__decision__type="strategy_choice")
    # The tool first (kept until the root arrives), then the root: the root is read back from what was kept.
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([tool, orphan], {"service.name": "indexer"})).encode())
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([chain_root], {"service.name": "indexer"})).encode())
    other_trace = {**_json_span("d000000000000001", "search", 0, openinference__span__kind="TOOL", tool__name="search")}
    other_trace["traceId"] = "6c8efff798038103d269b633813fc60d"
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([other_trace], {"service.name": "searcher"})).encode())

    plans = {p["description"]: p for p in _plans(base_url, tokens["actor"])}
    run = plans["LangGraph run"]
    assert [d["chosenOption"] for d in run["decisions"][1:2]] == ["indexer"]  # the service stands in for the agent
    # the orphan (its parent span never came) lies in the root's plan rather than nowhere
    assert sorted(d["decisionType"] for d in run["decisions"][2:]) == ["STRATEGY_CHOICE", "TOOL_INVOCATION"]
    searched = plans["search"]
    assert [d["decisionType"] for d in searched["decisions"]] == ["PROMPT_DEFINITION", "STRATEGY_CHOICE", "TOOL_INVOCATION"]
    assert searched["decisions"][2]["chosenOption"] == "search"


def test_odd_but_valid_values_are_read_and_bad_ones_refused_naming_them(
    base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]
) -> None:
    odd_status = {**AGENT_SPAN, "status": {"code": 7}, "parentSpanId": "0000000000000000"}  # unknown code, all-zero parent
    blank_document = _json_span(
        "a000000000000008",
        "r",
        3,
        "a000000000000001",
        openinference__span__kind="RETRIEVER",
        **{"retrieval.documents.0.document.id": ""},
    )
    assert _post(base_url, tokens["actor"], json.dumps(_otlp_json([odd_status, blank_document])).encode()).status_code == 200
    before = count_graph(graph)

    blank_project = _post(
        base_url, tokens["actor"], json.dumps(_otlp_json([AGENT_SPAN], {"decisiontrail.project": " "})).encode()
    )
    cut_short = _post(
        base_url,
        tokens["actor"],
        gzip.compress(json.dumps(_otlp_json([AGENT_SPAN])).encode())[:-8],
        **{"content-encoding": "gzip"},
    )

    assert blank_project.status_code == 400 and "decisiontrail.project" in blank_project.json()["message"]
    assert cut_short.status_code == 400 and "not one complete gzip stream" in cut_short.json()["message"]
    assert count_graph(graph) == before


def test_a_protobuf_request_is_refused_with_a_protobuf_status(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    from google.rpc import status_pb2
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes.fromhex(TRACE), b"\x00" * 8, "zero id"

    response = _post(base_url, tokens["actor"], request.SerializeToString(), content_type="application/x-protobuf")

    assert response.status_code == 400 and response.headers["content-type"] == "application/x-protobuf"
    status = status_pb2.Status.FromString(response.content)
    assert status.code == 3 and "spanId: must be 8 bytes, not all zero" in status.message


def test_a_trace_is_one_callers(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    _post(base_url, tokens["actor"], json.dumps(_otlp_json([LLM_SPAN])).encode())
    before = count_graph(graph)

    taken = _post(base_url, tokens["limited"], json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN])).encode())

    assert taken.status_code == 409 and "recorded by another caller" in taken.json()["message"]
    assert count_graph(graph) == before


def test_two_requests_for_one_trace_at_once_import_it_once(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    body = json.dumps(_otlp_json([AGENT_SPAN, LLM_SPAN, DECISION_SPAN])).encode()
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: _post(base_url, tokens["actor"], body), range(4)))

    assert [a.status_code for a in answers] == [200] * 4
    (plan,) = _plans(base_url, tokens["actor"])
    assert len(plan["decisions"]) == 3
    assert sum("imported before" in a.json()["partialSuccess"]["errorMessage"] for a in answers) == 3


def test_import_otlp_reads_the_collectors_file_exporter_one_request_a_line(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(_otlp_json([LLM_SPAN, DECISION_SPAN])) + "\n" + json.dumps(_otlp_json([AGENT_SPAN])) + "\n")

    assert main(["import", "otlp", str(path)]) == 0

    assert "3 spans: imported 1 trace(s) into 1 plan(s) and 3 decision(s)" in capsys.readouterr().out


def test_a_trace_nested_deeper_than_pythons_stack_is_imported() -> None:
    spans = [_span("%016x" % 1, 0, openinference__span__kind="AGENT")]
    for i in range(2, 3002):
        spans.append(_span("%016x" % i, i, "%016x" % (i - 1), openinference__span__kind="CHAIN"))
    spans.append(_span("%016x" % 5000, 4000, "%016x" % 3001, openinference__span__kind="TOOL", tool__name="deep"))

    placed = [d for s in import_steps(spans, owner=None, project=None) if isinstance(s, PlaceDecisions) for d, _ in s.decisions]

    assert [d.decision_type for d in placed] == [DecisionType.STRATEGY_CHOICE, DecisionType.TOOL_INVOCATION]
