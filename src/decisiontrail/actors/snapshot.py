"""Context snapshot auto-capture: what record_decision takes from the running graph, not from the actor."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict
from langchain_core.runnables import RunnableConfig

from decisiontrail.domain import CheckpointRef, ContextSnapshot, ResourceRef
from decisiontrail.domain.recording import CapturedContext
from decisiontrail.exceptions import ValidationFailed

NS_SEP = "|"  # LangGraph's separator between nested checkpoint namespaces


def canonical_context(messages: Sequence[BaseMessage]) -> CapturedContext:
    """The actor's context window as canonical JSON: same messages, same bytes, same hash."""
    payload = messages_to_dict(list(messages))
    return CapturedContext(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


def resources_in(state: Mapping[str, Any]) -> tuple[ResourceRef, ...]:
    """Resource references in the actor's state: its ``resources`` list, of ids or
    ``{"resource_id", "path"}`` mappings."""
    found: dict[tuple[str, str | None], ResourceRef] = {}
    for item in state.get("resources") or ():
        ref = ResourceRef(resource_id=item) if isinstance(item, str) else ResourceRef(**item)
        found.setdefault((ref.resource_id, ref.path), ref)
    return tuple(found.values())


def checkpoint_of(config: RunnableConfig) -> CheckpointRef:
    """The checkpoint the running step started from, in the graph's own namespace.

    Inside a node, LangGraph's config names the task's namespace (``tools:<task id>``) and
    maps each enclosing namespace to its checkpoint; the step's checkpoint is the parent's.
    """
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    task_ns = str(configurable.get("checkpoint_ns") or "")
    graph_ns = task_ns.rpartition(NS_SEP)[0] if NS_SEP in task_ns else ""
    checkpoint_id = (configurable.get("checkpoint_map") or {}).get(graph_ns) or configurable.get("checkpoint_id")
    if not thread_id or not checkpoint_id:
        raise ValidationFailed(
            "context_snapshot.actor_state_ref: record_decision ran outside a checkpointed LangGraph run "
            "(no thread_id or checkpoint); compile the actor with a checkpointer and pass a thread_id",
            field="context_snapshot.actor_state_ref",
        )
    return CheckpointRef(thread_id=str(thread_id), checkpoint_ns=graph_ns, checkpoint_id=str(checkpoint_id))


def capture(state: Mapping[str, Any], config: RunnableConfig) -> tuple[ContextSnapshot, CapturedContext]:
    """The snapshot of the actor at this tool call, and the full context it points to."""
    context = canonical_context(state.get("messages") or ())
    snapshot = ContextSnapshot(
        hot_context_hash=context.context_hash,
        hot_context_ref=context.ref,
        relevant_resources=resources_in(state),
        actor_state_ref=checkpoint_of(config),
    )
    return snapshot, context
