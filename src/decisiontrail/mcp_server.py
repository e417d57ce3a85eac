"""The decision tools over the Model Context Protocol at /mcp, for any agent runtime (docs/mcp.md).

ADR-033's ``record_decision``, and the reads of a decision's lineage and impact, a plan's tree and
its pending reviews. The official SDK's low-level ``Server`` over streamable HTTP, stateless and answered in JSON (any
replica serves any request; a 2026-07-28 client is sessionless anyway). The caller is the app's:
the same bearer token, found by the app's authentication, with the same role and project; a
request without one is refused 401 before MCP reads it. Each tool calls the same service as the
GraphQL resolver, as that caller, and a refusal is a tool error (``isError``) with GraphQL's code,
naming the field or rule: the service refused it (a role that may not, FORBIDDEN, first; else inside
its transaction), so nothing was written.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import jsonschema
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from decisiontrail.access import Principal
from decisiontrail.domain import ContextSnapshot, Decision
from decisiontrail.domain.correction import ImpactedDecision
from decisiontrail.domain.recording import CapturedContext, Review
from decisiontrail.exceptions import DecisionTrailError, ValidationFailed, validation_failed
from decisiontrail.schema.errors import client_error
from decisiontrail.services import Trail, correction, reading, recording, reviews

Caller = Callable[[HTTPConnection], Principal | None]
"""Who is calling, as the app's authentication found it (``app.caller``)."""

INSTRUCTIONS = (
    "decisiontrail records an agent's decisions as a typed lineage. Call record_decision at every choice point "
    "(a question with several valid answers) with the plan's id and your context; read a decision's lineage "
    "(where it comes from) and impact (what correcting it would invalidate), a plan's decision tree and the "
    "decisions it holds for a person (pending_reviews)."
)

# -- schemas -----------------------------------------------------------------------------------

_ID = {"type": "string", "description": "a ULID"}
_NULLABLE_ID = {"type": ["string", "null"]}

_SNAPSHOT = {
    "type": "object",
    "description": "The context the decision was made in, which ADR-033 captures from the actor's runtime: "
    "here the runtime gives it. Stored with the decision, so the decision can be replayed from it.",
    "properties": {
        "hot_context": {
            "type": "string",
            "description": "The actor's context window as text (its messages, serialised). Stored content-addressed by "
            "its SHA-256, which becomes the decision's hot_context_hash.",
        },
        "actor_state_ref": {
            "type": "object",
            "description": "Where the runtime restores the actor's state from: its thread (run or conversation) and "
            "the checkpoint (step) the decision was made at. The same thread, step, type and question are "
            "the same recording: sent again, it answers what the first call recorded.",
            "properties": {
                "thread_id": {"type": "string"},
                "checkpoint_id": {"type": "string"},
                "checkpoint_ns": {"type": "string"},
            },
            "required": ["thread_id", "checkpoint_id"],
            "additionalProperties": False,
        },
        "relevant_resources": {
            "type": "array",
            "description": "The files, symbols or entities the actor had in play.",
            "items": {
                "type": "object",
                "properties": {"resource_id": {"type": "string"}, "path": {"type": "string"}},
                "required": ["resource_id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["hot_context", "actor_state_ref"],
    "additionalProperties": False,
}

RECORD_DECISION_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        **copy.deepcopy(recording.RECORD_DECISION_INPUT_SCHEMA["properties"]),
        "plan_id": {"type": "string", "description": "The plan the decision is recorded into (its ULID)"},
        "context_snapshot": _SNAPSHOT,
        "depends_on": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Decisions this one depends on: correcting any of them supersedes this one too",
        },
        "idempotency_key": {
            "type": "string",
            "description": "Names the recording: sent again, it answers what the first call recorded. By default the "
            "thread, checkpoint, type and question name it.",
        },
        "actor_reasoning": {"type": "string", "description": "The actor's own reasoning, kept beside the rationale"},
    },
    "required": [*recording.RECORD_DECISION_INPUT_SCHEMA["required"], "plan_id", "context_snapshot"],
    "additionalProperties": False,
}
"""ADR-033's input schema, verbatim, with what its runtime would have captured: the plan and the context snapshot."""

RECORD_DECISION_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        **copy.deepcopy(recording.RECORD_DECISION_OUTPUT_SCHEMA["properties"]),
        "review_id": {
            "type": "string",
            "description": "Instead of decision_id when the plan's automation profile holds the decision for a person: "
            "once resolved, the same call answers the decision_id it became",
        },
        "reason": {"type": "string", "description": "Why the decision is held for review"},
    },
}
"""ADR-033's output schema, verbatim, with the answer of a decision held for review (no decision_id yet)."""

_DECISION = {
    "type": "object",
    "properties": {
        "decision_id": _ID,
        "plan_id": _ID,
        "sequence_number": {"type": "integer"},
        "decision_type": {"type": "string"},
        "phase": {"type": "string"},
        "question": {"type": "string"},
        "chosen_option": {"type": "string"},
        "alternatives_considered": {"type": "array", "items": {"type": "string"}},
        "confidence_score": {"type": ["number", "null"]},
        "rationale": {"type": "string"},
        "parent_decision_id": _NULLABLE_ID,
        "depends_on": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string", "format": "date-time"},
    },
    "required": ["decision_id", "plan_id", "decision_type", "question", "chosen_option", "parent_decision_id"],
}


def _asking(name: str, description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string", "description": description}}, "required": [name]}


def _answer(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


# -- the tools ---------------------------------------------------------------------------------


def adr_033(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The part of record_decision's arguments that is ADR-033's input."""
    return {k: v for k, v in arguments.items() if k in recording.RECORD_DECISION_INPUT_SCHEMA["properties"]}


def record_decision(trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """ADR-033's ``record_decision``: the recording service's ``record_decision``, as the LangGraph tool calls it."""
    adr = adr_033(arguments)
    given = arguments["context_snapshot"]
    context = CapturedContext(given["hot_context"])
    try:
        snapshot = ContextSnapshot.model_validate(
            {
                "hot_context_hash": context.context_hash,
                "hot_context_ref": context.ref,
                "relevant_resources": given.get("relevant_resources", ()),
                "actor_state_ref": given["actor_state_ref"],
            }
        )
    except ValidationError as e:  # what the schema lets through and the record refuses: a blank thread_id, say
        inner = validation_failed(e)
        field = f"context_snapshot.{inner.field}" if inner.field else "context_snapshot"
        raise ValidationFailed(
            f"context_snapshot.{inner.message}" if inner.field else f"{field}: {inner.message}", field=field
        ) from e
    outcome = recording.record_decision(
        trail,
        adr,
        plan_id=arguments["plan_id"],
        snapshot=snapshot,
        context=context,
        idempotency_key=arguments.get("idempotency_key"),
        depends_on=arguments.get("depends_on", ()),
        actor_reasoning=arguments.get("actor_reasoning"),
        principal=principal,
    )
    if isinstance(outcome, Review):
        return {"review_id": outcome.review_id, "reason": outcome.reason}
    return {"decision_id": outcome.decision_id}


def lineage(trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """Where a decision comes from: ``reading.lineage``, its decisions read whole."""
    decision_id = arguments["decision_id"]
    decision_ids, plan_ids = reading.lineage(trail, decision_id, principal)
    found = reading.get_decisions(trail, decision_ids, principal)
    return {"decision_id": decision_id, "decisions": [decision(d) for d in found if d is not None], "plan_ids": plan_ids}


def impact(trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """What correcting a decision would invalidate: ``correction.preview``, only what the caller may see."""
    found = correction.preview(trail, arguments["decision_id"], principal=principal)
    decisions, plan_ids = list(found.decisions), list(found.plan_ids)
    if principal.limited:  # a count must not tell of hidden plans either
        named = sorted({d.plan_id for d in decisions} | set(plan_ids))
        seen = {p.plan_id for p in reading.get_plans(trail, named, principal) if p is not None}
        decisions = [d for d in decisions if d.plan_id in seen]
        plan_ids = [p for p in plan_ids if p in seen]
    counts: dict[str, int] = {}
    for d in decisions:
        counts[d.decision_type.value] = counts.get(d.decision_type.value, 0) + 1
    return {
        "decision_id": found.decision_id,
        "decisions": [impacted(d) for d in decisions],
        "plan_ids": plan_ids,
        "counts_by_type": dict(sorted(counts.items())),
    }


def plan_tree(trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """A plan's current decision tree in pre-order with depths: ``reading.get_tree`` of a plan the caller may see."""
    plan = reading.get_plan(trail, arguments["plan_id"], principal)
    tree = reading.get_tree(trail, plan.plan_id, principal)
    entries = [] if tree is None else [{"depth": depth, **decision(node.decision)} for depth, node in tree.root.walk()]
    return {"plan_id": plan.plan_id, "description": plan.description, "phase": plan.phase.value, "tree": entries}


def pending_reviews(trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """The plan's decisions held for a person, oldest first: ``reviews.pending_reviews``."""
    plan_id = arguments["plan_id"]
    return {"plan_id": plan_id, "reviews": [review(r) for r in reviews.pending_reviews(trail, plan_id, principal=principal)]}


def decision(d: Decision) -> dict[str, Any]:
    return {
        "decision_id": d.decision_id,
        "plan_id": d.plan_id,
        "sequence_number": d.sequence_number,
        "decision_type": d.decision_type.value,
        "phase": d.phase.value,
        "question": d.question,
        "chosen_option": d.chosen_option,
        "alternatives_considered": list(d.alternatives_considered),
        "confidence_score": d.confidence_score,
        "rationale": d.rationale,
        "parent_decision_id": d.parent_decision_id,
        "depends_on": list(d.depends_on),
        "created_at": d.created_at.isoformat(),
    }


def impacted(d: ImpactedDecision) -> dict[str, Any]:
    return {
        "decision_id": d.decision_id,
        "plan_id": d.plan_id,
        "sequence_number": d.sequence_number,
        "decision_type": d.decision_type.value,
        "phase": d.phase.value,
    }


def review(r: Review) -> dict[str, Any]:
    proposal = r.proposal
    return {
        "review_id": r.review_id,
        "plan_id": r.plan_id,
        "decision_type": proposal.decision_type.value,
        "question": proposal.question,
        "chosen_option": proposal.chosen_option,
        "alternatives_considered": list(proposal.alternatives_considered),
        "confidence_score": proposal.confidence_score,
        "rationale": proposal.rationale,
        "parent_decision_id": r.parent_decision_id,
        "phase": r.phase.value,
        "threshold": r.threshold,
        "reason": r.reason,
        "digest": r.digest,
        "created_at": r.created_at.isoformat(),
    }


@dataclass(frozen=True)
class DecisionTool:
    """One tool: what MCP lists, and the use-case it runs (in a worker thread), which judges what the caller may do."""

    listed: Tool
    run: Callable[[Trail, Mapping[str, Any], Principal], dict[str, Any]]
    judge_first: Callable[[Mapping[str, Any]], None] | None = None
    """A check of the arguments before the schema's (record_decision: ADR-033's part, as the LangGraph tool's is)."""

    def __call__(self, trail: Trail, arguments: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
        if self.judge_first is not None:
            self.judge_first(arguments)
        check_arguments(self.listed.input_schema, arguments)
        return self.run(trail, arguments, principal)


_REVIEW = {
    "type": "object",
    "properties": {
        "review_id": _ID,
        "decision_type": {"type": "string"},
        "question": {"type": "string"},
        "chosen_option": {"type": "string"},
        "alternatives_considered": {"type": "array", "items": {"type": "string"}},
        "confidence_score": {"type": ["number", "null"]},
        "reason": {"type": "string"},
        "digest": {"type": "string"},
    },
    "required": ["review_id", "decision_type", "question", "chosen_option", "reason"],
}

TOOLS = {
    t.listed.name: t
    for t in (
        DecisionTool(
            Tool(
                name=recording.TOOL_NAME,
                description=recording.TOOL_DESCRIPTION
                + " Give the plan's id and your context snapshot; a decision below the plan's confidence threshold "
                "is held for a person (review_id instead of decision_id).",
                input_schema=RECORD_DECISION_INPUT,
                output_schema=RECORD_DECISION_OUTPUT,
            ),
            record_decision,
            judge_first=lambda arguments: recording.validate_arguments(adr_033(arguments)),
        ),
        DecisionTool(
            Tool(
                name="lineage",
                description="Where a decision comes from: its ancestors to its plan's root, upward through the plans "
                "that spawned its plan, and everything it depends on, transitively.",
                input_schema=_asking("decision_id", "The decision (its ULID)"),
                output_schema=_answer(
                    {"decision_id": _ID, "decisions": {"type": "array", "items": _DECISION}, "plan_ids": {"type": "array"}}
                ),
            ),
            lineage,
        ),
        DecisionTool(
            Tool(
                name="impact",
                description="What correcting a decision would invalidate (the decision first, then its downstream), "
                "the child plans with it, and how many of each type. Writes nothing.",
                input_schema=_asking("decision_id", "The decision (its ULID)"),
                output_schema=_answer(
                    {
                        "decision_id": _ID,
                        "decisions": {"type": "array", "items": {"type": "object"}},
                        "plan_ids": {"type": "array"},
                        "counts_by_type": {"type": "object", "additionalProperties": {"type": "integer"}},
                    }
                ),
            ),
            impact,
        ),
        DecisionTool(
            Tool(
                name="plan_tree",
                description="A plan's current decision tree, in pre-order, each decision with its depth (the root "
                "prompt_definition at 0).",
                input_schema=_asking("plan_id", "The plan (its ULID)"),
                output_schema=_answer(
                    {
                        "plan_id": _ID,
                        "description": {"type": "string"},
                        "phase": {"type": "string"},
                        "tree": {"type": "array", "items": {**_DECISION, "required": ["depth", *_DECISION["required"]]}},
                    }
                ),
            ),
            plan_tree,
        ),
        DecisionTool(
            Tool(
                name="pending_reviews",
                description="The plan's decisions held for a person (below its confidence threshold), oldest first.",
                input_schema=_asking("plan_id", "The plan (its ULID)"),
                output_schema=_answer({"plan_id": _ID, "reviews": {"type": "array", "items": _REVIEW}}),
            ),
            pending_reviews,
        ),
    )
}
"""Every tool by name."""


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Refuse arguments ``schema`` does not allow, naming the field, as ``recording.validate_arguments`` does ADR-033's."""
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        raise ValidationFailed(f"{unknown[0]}: is not an argument of this tool", field=unknown[0])
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        path.append(str(error.message).split("'")[1])
        message = "is required"
    elif error.validator == "additionalProperties":
        path.append(str(error.message).split("'")[1])
        message = "is not a property here"
    else:
        message = str(error.message)
    field = ".".join(path) or "arguments"
    raise ValidationFailed(f"{field}: {message}", field=field)


# -- the endpoint ------------------------------------------------------------------------------


class Endpoint:
    """``/mcp``: the ASGI app the app routes there, its caller authenticated as every request is.

    ``running()`` is the SDK's session manager, which serves requests in its task group: the app's
    lifespan holds it open.
    """

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self.server: Server[Any] = Server(
            "decisiontrail",
            version=version("decisiontrail"),
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )
        self.sessions: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's session manager, for one lifespan of the app (a manager runs once: each lifespan gets its own)."""
        # Stateless and answered in JSON: nothing held between requests, any replica serves any.
        sessions = StreamableHTTPSessionManager(self.server, stateless=True, json_response=True)
        async with sessions.run():
            self.sessions = sessions
            try:
                yield
            finally:
                self.sessions = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.caller(HTTPConnection(scope)) is None:
            # MCP's authorization: 401 with a Bearer challenge, before the transport reads anything.
            refused = JSONResponse(
                {
                    "errors": [
                        {
                            "message": "a bearer token is required (Authorization: Bearer <token>)",
                            "extensions": {"code": "UNAUTHENTICATED"},
                        }
                    ]
                },
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await refused(scope, receive, send)
            return
        if self.sessions is None:
            raise RuntimeError("/mcp is served while the app's lifespan runs Endpoint.running()")
        await self.sessions.handle_request(scope, receive, send)

    async def list_tools(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[t.listed for t in TOOLS.values()])

    async def call_tool(self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"no tool {params.name!r}: the tools are {', '.join(TOOLS)}")
        request = ctx.request
        if not isinstance(request, Request):  # the streamable HTTP transport attaches every message's request
            raise RuntimeError("the decision tools are served over HTTP, where the caller is known")
        principal = self.caller(request)
        assert principal is not None  # __call__ refused the request otherwise
        trail: Trail = request.state.trail
        try:
            answer = await run_in_threadpool(tool, trail, params.arguments or {}, principal)
        except DecisionTrailError as e:
            return refused(e)
        except ValidationError as e:
            return refused(validation_failed(e))
        return CallToolResult(content=[TextContent(text=json.dumps(answer, ensure_ascii=False))], structured_content=answer)


def refused(error: DecisionTrailError) -> CallToolResult:
    """A refusal as the tool's error, with the code (and field or rule) GraphQL gives it."""
    graphql = client_error(error)
    extensions = dict(graphql.extensions or {})
    return refusal(str(extensions.pop("code")), graphql.message, **extensions)


def refusal(code: str, message: str, **details: Any) -> CallToolResult:
    """``isError``: the model reads ``CODE: message``; a program reads ``structuredContent.error``."""
    error = {"code": code, "message": message, **details}
    return CallToolResult(content=[TextContent(text=f"{code}: {message}")], structured_content={"error": error}, is_error=True)
