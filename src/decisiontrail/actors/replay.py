"""Restoring an actor to the checkpoint a decision was made from, and running it on from there."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from decisiontrail.domain import CheckpointRef
from decisiontrail.domain.correction import CorrectionMode, FrontierPoint


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


def replay_correction(
    actor: CompiledStateGraph[Any], point: FrontierPoint, guidance: str, *, mode: CorrectionMode
) -> dict[str, Any]:
    """Re-run one actor after a correction, with the user's guidance in its context.

    revert: back to just before the model made the corrected choice (the parent of the
    checkpoint its recording step started from), the guidance added there, and on from it.
    append: the guidance added to the thread's latest state, and on from there.
    The actor's new record_decision calls land in the current tree.
    """
    if mode is CorrectionMode.REVERT:
        if point.checkpoint is None:
            raise ValueError("a revert replay needs the checkpoint to return to")
        snapshot = actor.get_state(checkpoint_config(point.checkpoint))
        base = snapshot.parent_config or checkpoint_config(point.checkpoint)
    else:
        base = {"configurable": {"thread_id": point.thread_id, "plan_id": point.plan_id}}
    forked = actor.update_state(base, {"messages": [HumanMessage(f"Correction: {guidance}")]}, as_node="tools")
    result: dict[str, Any] = actor.invoke(None, forked)
    return result
