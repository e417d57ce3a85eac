"""Restoring an actor to the checkpoint a decision was made from, and running it on from there."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from decisiontrail.domain import CheckpointRef


def checkpoint_config(ref: CheckpointRef) -> RunnableConfig:
    """The LangGraph config that addresses exactly this checkpoint."""
    return {"configurable": {"thread_id": ref.thread_id, "checkpoint_ns": ref.checkpoint_ns, "checkpoint_id": ref.checkpoint_id}}


def restore(actor: CompiledStateGraph[Any], ref: CheckpointRef) -> StateSnapshot:
    """The actor's state as it was when the decision's step started."""
    return actor.get_state(checkpoint_config(ref))


def resume_from(actor: CompiledStateGraph[Any], ref: CheckpointRef) -> dict[str, Any]:
    """Run the actor on from that checkpoint (a fork of its thread); returns its final state.

    The step that recorded the decision runs again; its record_decision call carries the
    same idempotency key, so the decision is not recorded twice.
    """
    result: dict[str, Any] = actor.invoke(None, checkpoint_config(ref))
    return result
