"""The span conventions an import reads: OpenInference's span kinds, OpenTelemetry's GenAI operations, and what each becomes.

OpenTelemetry's GenAI semantic conventions (open-telemetry/semantic-conventions-genai,
``model/gen-ai/registry.yaml`` and ``spans.yaml``) name an operation in ``gen_ai.operation.name``;
OpenInference names a span's kind in ``openinference.span.kind``. A span becomes a plan, a
decision of one type, or nothing; docs/interop.md has the mapping as a table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from decisiontrail.domain.decision import DecisionType

SPAN_KIND: Final = "openinference.span.kind"
GEN_AI_OPERATION: Final = "gen_ai.operation.name"
DECISION_PREFIX: Final = "decisiontrail.decision."
"""A span may name its decision outright: ``decisiontrail.decision.type``, ``.question``, ..."""


class Operation(StrEnum):
    """The well-known values of ``gen_ai.operation.name``, as the GenAI conventions list them."""

    CHAT = "chat"
    GENERATE_CONTENT = "generate_content"
    TEXT_COMPLETION = "text_completion"
    EMBEDDINGS = "embeddings"
    RETRIEVAL = "retrieval"
    CREATE_AGENT = "create_agent"
    INVOKE_AGENT = "invoke_agent"
    EXECUTE_TOOL = "execute_tool"
    INVOKE_WORKFLOW = "invoke_workflow"
    """A coordinated process of several agents (a CrewAI crew, say): a plan, its agents child plans."""
    PLAN = "plan"
    """An agent's planning or task decomposition: the strategy it chose before acting on it."""
    SEARCH_MEMORY = "search_memory"
    CREATE_MEMORY = "create_memory"
    UPDATE_MEMORY = "update_memory"
    UPSERT_MEMORY = "upsert_memory"
    DELETE_MEMORY = "delete_memory"
    CREATE_MEMORY_STORE = "create_memory_store"
    DELETE_MEMORY_STORE = "delete_memory_store"


PLAN_KINDS: Final = frozenset({"AGENT"})
PLAN_OPERATIONS: Final[frozenset[str]] = frozenset({Operation.INVOKE_AGENT, Operation.INVOKE_WORKFLOW})
"""Spans that become a plan (a child plan inside another plan's span)."""

KIND_TYPES: Final[Mapping[str, DecisionType]] = {
    "TOOL": DecisionType.TOOL_INVOCATION,
    "RETRIEVER": DecisionType.RESOURCE_SELECTION,
}
OPERATION_TYPES: Final[Mapping[str, DecisionType]] = {
    Operation.EXECUTE_TOOL: DecisionType.TOOL_INVOCATION,
    Operation.RETRIEVAL: DecisionType.RESOURCE_SELECTION,
    Operation.PLAN: DecisionType.STRATEGY_CHOICE,
}
"""Spans that become a decision of their plan. Every other operation (model calls, embeddings,
creating an agent, the memory operations) carries no decision: what an agent made of a model's
answer or of its memory shows in the plan, tool and agent spans that follow."""

INFERENCE_KINDS: Final = frozenset({"LLM"})
INFERENCE_OPERATIONS: Final[frozenset[str]] = frozenset({Operation.CHAT, Operation.GENERATE_CONTENT, Operation.TEXT_COMPLETION})
"""A model call: no decision, but the conventions put the model call that writes a plan inside the plan span."""
INPUTS: Final = ("input.value", "gen_ai.input.messages")
"""Where a span holds what it was given (OpenInference's, then GenAI's)."""
OUTPUTS: Final = ("output.value", "gen_ai.output.messages")
"""Where a span holds what it produced (OpenInference's, then GenAI's)."""


def message_text(value: object) -> str | None:
    """The text of GenAI messages (``gen_ai.input.messages``, ``gen_ai.output.messages``: a list of
    messages, each a list of ``parts``, as a JSON string or a value), their text parts joined by
    a blank line; a value in no such shape as it is, as text.

    >>> message_text('[{"role": "assistant", "parts": [{"type": "text", "content": "1. Book flights"}]}]')
    '1. Book flights'
    >>> message_text("Fly on Tuesday")
    'Fly on Tuesday'
    >>> message_text("") is None
    True
    """
    if value is None or value == "":
        return None
    messages = value
    if isinstance(value, str):
        try:
            messages = json.loads(value)
        except ValueError:
            return value if value.strip() else None
    texts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
    text = "\n\n".join(t for t in texts if t.strip())
    if text:
        return text
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return shown if shown.strip() else None
