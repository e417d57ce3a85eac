"""Recording for agent authors' own LangGraph graphs, run in their own process against a served API.

What the service's runtime does for the plans it runs, an author adds to a graph of their own:

- ``decision_tools(client)``: ADR-033's ``local/decision-tools`` skill over the API
  (``record_decision``, and ``revert_to_strategize``), for the author's agent nodes. The tool
  captures the context snapshot from the running graph (it must run with a checkpointer and a
  ``thread_id``, and the graph's state must carry ``plan_id``).
- ``role_prompt(role)``: the runtime's role prompt (strategy, execution, reconciliation), to put in
  the agent's system message.
- a checkpointer: the author's own, or ``decisiontrail.services.checkpoints``' Neo4j one.
- ``ReplayHandler``: follows the corrections of a plan through ``decisionEvents`` from its cursor,
  resumes the author's graph from each correction's replay frontier with the guidance in its
  context, and reports the outcome with ``recordReplay``.

docs/actors.md has the whole example.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, Field

from decisiontrail.actors.replay import replay_correction
from decisiontrail.actors.skills import REVERT_TOOL
from decisiontrail.actors.skills import role_prompt as _role_prompt
from decisiontrail.actors.tool import record_decision_tool
from decisiontrail.client import DecisionTrailClient
from decisiontrail.domain import CheckpointRef
from decisiontrail.domain.correction import CorrectionMode, FrontierPoint
from decisiontrail.domain.decision import DecisionType
from decisiontrail.domain.runs import Actor
from decisiontrail.exceptions import DecisionTrailError

__all__ = ["ReplayHandler", "decision_tools", "role_prompt"]

log = logging.getLogger(__name__)


def role_prompt(role: str) -> str:
    """The system prompt of a runtime role: ``strategy``, ``execution`` or ``reconciliation``."""
    return _role_prompt(Actor(role))


class _RevertInput(BaseModel):
    reason: str = Field(description="Why the strategy cannot be carried out as decided")
    plan_id: str = Field(description="The plan to return to Strategize")


def decision_tools(client: DecisionTrailClient) -> list[BaseTool]:
    """The decision-tools skill for an agent recording through the API: every agent node that makes
    decisions carries these, first, beside the author's own tools."""

    def revert(reason: str, plan_id: str) -> str:
        try:
            moved = client.advance_phase(plan_id, "STRATEGIZE", reason)
        except DecisionTrailError as e:
            raise ToolException(f"{e.code}: {e.message}") from e
        return json.dumps({"plan_id": moved["id"], "phase": moved["phase"]})

    return [
        record_decision_tool(client),
        StructuredTool.from_function(
            func=revert,
            name=REVERT_TOOL,
            description="Go back to the Strategize phase because the strategy cannot be carried out as decided; give the reason, then stop.",
            args_schema=_RevertInput,
            handle_tool_error=True,
        ),
    ]


class ReplayHandler:
    """Replays the corrections of one plan in the author's graph, as they are made.

    ``follow`` subscribes to the plan's events after ``cursor`` (keep it: a handler started again
    from it misses nothing and replays nothing twice, since an attempt already reported is skipped;
    ``"0"`` is the plan's first event, and None only what is committed once the subscription is
    live, so a correction made before that is never heard of). For each correction recorded, every frontier point of this plan on a thread the
    graph's checkpointer holds (and ``handles`` accepts) is replayed: revert resumes from just
    before the corrected choice, append from the thread's latest state, the guidance added as a
    ``Correction:`` message; the decisions the replay records are reported with ``REPLAYED``.
    A frontier with nothing of this graph's is ``NOT_NEEDED``; a failure is ``FAILED``, with why.
    """

    def __init__(
        self,
        client: DecisionTrailClient,
        graph: CompiledStateGraph[Any],
        plan_id: str,
        *,
        cursor: str | None = None,
        handles: Callable[[str], bool] = lambda thread_id: True,
    ) -> None:
        self.client = client
        self.graph = graph
        self.plan_id = plan_id
        self.cursor = cursor
        self.handles = handles
        self.replayed: list[str] = []
        """The attempts this handler replayed, oldest first."""

    def follow(self, *, stop: threading.Event | None = None, idle_timeout: float | None = None) -> None:
        """Handle the plan's events until ``stop`` is set (checked after each event) or no event came
        for ``idle_timeout`` seconds."""
        for event in self.client.events(self.plan_id, self.cursor, timeout=idle_timeout):
            self.cursor = event["cursor"]
            if event["kind"] == "RECORDED" and event.get("decisionId"):
                self.handle(event["decisionId"])
            if stop is not None and stop.is_set():
                return

    def handle(self, decision_id: str) -> str | None:
        """Replay the correction ``decision_id`` records, if it is one still pending; the outcome reported."""
        found = self.client.correction_of(decision_id)
        corrected = (found or {}).get("corrects")
        if not corrected:
            return None
        attempt = next(
            (a for a in corrected["corrections"] if a["correctionDecisionId"] == decision_id and a["replayOutcome"] == "PENDING"),
            None,
        )
        if attempt is None:
            return None
        points = [p for p in attempt["replayFrontier"] if p["planId"] == self.plan_id and self._holds(p["threadId"])]
        if not points:
            self.client.record_replay(attempt["attemptId"], "NOT_NEEDED", "no run of this graph was invalidated")
            return "NOT_NEEDED"
        try:
            recorded: list[str] = []
            for point in points:
                state = replay_correction(
                    self.graph, _point(point), attempt["guidance"], mode=CorrectionMode(attempt["mode"].lower())
                )
                recorded += _recorded_since_correction(state.get("messages") or [])
        except Exception as e:  # the author's graph failed: the attempt says so
            log.warning("replaying correction attempt %s failed: %s", attempt["attemptId"], e)
            self.client.record_replay(attempt["attemptId"], "FAILED", f"{type(e).__name__}: {e}"[:2000])
            return "FAILED"
        self.client.record_replay(
            attempt["attemptId"], "REPLAYED", f"{len(recorded)} decision(s) recorded by the author's graph", recorded
        )
        self.replayed.append(attempt["attemptId"])
        return "REPLAYED"

    def _holds(self, thread_id: str) -> bool:
        if not self.handles(thread_id):
            return False
        return bool(self.graph.get_state({"configurable": {"thread_id": thread_id}}).values)


def _point(point: Mapping[str, Any]) -> FrontierPoint:
    checkpoint = point.get("checkpoint")
    return FrontierPoint(
        plan_id=point["planId"],
        thread_id=point["threadId"],
        checkpoint=CheckpointRef(
            thread_id=checkpoint["threadId"], checkpoint_ns=checkpoint["checkpointNs"], checkpoint_id=checkpoint["checkpointId"]
        )
        if checkpoint
        else None,
        first_invalidated_decision_id=point["firstInvalidatedDecisionId"],
        decision_type=DecisionType(str(point["decisionType"]).lower()),
    )


def _recorded_since_correction(messages: list[BaseMessage]) -> list[str]:
    """The decision ids record_decision returned after the last correction message."""
    start = max(
        (i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and str(m.content).startswith("Correction:")),
        default=-1,
    )
    ids = []
    for message in messages[start + 1 :]:
        if isinstance(message, ToolMessage) and message.name == "record_decision" and message.status != "error":
            try:
                decision_id = json.loads(str(message.content)).get("decision_id")
            except (ValueError, AttributeError):
                continue
            if decision_id:
                ids.append(decision_id)
    return ids
