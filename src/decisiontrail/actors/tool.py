"""The record_decision tool (ADR-033) for LangGraph actors.

The model sees ADR-033's input schema; the tool adds what the runtime knows (the plan, the
context snapshot, the checkpoint) and calls the same service the API calls. A decision held
for review pauses the actor with a LangGraph ``interrupt`` until a person resolves it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Protocol

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, StructuredTool, ToolException
from langgraph.prebuilt import InjectedState
from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict

from decisiontrail.access import Principal
from decisiontrail.client import Recorded
from decisiontrail.domain import ContextSnapshot
from decisiontrail.domain.recording import CapturedContext, Review
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.services import Trail
from decisiontrail.services.recording import (
    RECORD_DECISION_INPUT_SCHEMA,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    record_decision,
)
from decisiontrail.actors.snapshot import capture


class _ToolInput(BaseModel):
    """Loose on purpose: the service validates against ADR-033's schema and names the field."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    decision_type: Any = None
    question: Any = None
    chosen_option: Any = None
    alternatives_considered: Any = None
    confidence_score: Any = None
    rationale: Any = None
    parent_decision_id: Any = None
    state: Annotated[dict[str, Any], InjectedState]
    tool_call_id: Annotated[str, InjectedToolCallId]


class RecordDecisionTool(StructuredTool):
    """A StructuredTool whose model-facing schema is ADR-033's, verbatim."""

    @property
    def tool_call_schema(self) -> dict[str, Any]:
        return {**RECORD_DECISION_INPUT_SCHEMA, "title": TOOL_NAME, "description": self.description}


def review_request(review: Review) -> dict[str, Any]:
    """What the interrupt shows the person asked to decide."""
    proposal = review.proposal
    return {
        "review_id": review.review_id,
        "plan_id": review.plan_id,
        "decision_type": proposal.decision_type.value,
        "question": proposal.question,
        "chosen_option": proposal.chosen_option,
        "alternatives_considered": list(proposal.alternatives_considered),
        "confidence_score": proposal.confidence_score,
        "rationale": proposal.rationale,
        "reason": review.reason,
    }


class Recorder(Protocol):
    """Where the tool records: the services in this process (``LocalRecorder``), or the API
    through ``DecisionTrailClient``."""

    def record(
        self,
        arguments: Mapping[str, Any],
        *,
        plan_id: str,
        snapshot: ContextSnapshot,
        context: CapturedContext | None = None,
        depends_on: Sequence[str] = (),
        step_id: str | None = None,
    ) -> Recorded: ...


class LocalRecorder:
    """Records through the recording service in this process, as the API would, as ``principal``
    (the runtime's or the reconciler's process principal, say)."""

    def __init__(self, trail: Trail, principal: Principal) -> None:
        self.trail = trail
        self.principal = principal

    def record(
        self,
        arguments: Mapping[str, Any],
        *,
        plan_id: str,
        snapshot: ContextSnapshot,
        context: CapturedContext | None = None,
        depends_on: Sequence[str] = (),
        step_id: str | None = None,
    ) -> Recorded:
        outcome = record_decision(
            self.trail,
            arguments,
            plan_id=plan_id,
            snapshot=snapshot,
            context=context,
            depends_on=depends_on,
            step_id=step_id,
            principal=self.principal,
        )
        if isinstance(outcome, Review):
            return Recorded(decision_id=None, review=review_request(outcome))
        return Recorded(decision_id=outcome.decision_id)


def record_decision_tool(recorder: Recorder, *, pause_for_review: bool = True) -> StructuredTool:
    """The tool, bound to a recorder: the services in this process (``LocalRecorder``, as a
    principal of its own) or a client (an actor in another process, as its token).

    The actor's state must carry ``plan_id``; it may carry ``resources`` (captured into the
    snapshot) and ``depends_on`` (decision ids the runtime put into the actor's context as
    constraints). Snapshot capture and idempotency are the same either way.

    A decision held for review pauses the actor until it is resolved (a LangGraph interrupt);
    without ``pause_for_review`` the tool answers at once with the review's id (no decision id)
    and the actor goes on: the reconciliation actor proposes every invariant, each its own review.
    """

    def run(config: RunnableConfig, **kwargs: Any) -> str:
        state: dict[str, Any] = kwargs.pop("state")
        tool_call_id: str = kwargs.pop("tool_call_id")
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        try:
            snapshot, context = capture(state, config)
            outcome = _record(recorder, state, arguments, snapshot, context, tool_call_id)
            if outcome.review is not None and not pause_for_review:
                return json.dumps({"decision_id": None, "review_id": outcome.review["review_id"]})
            if outcome.review is not None:
                # Pause for a person. On resume LangGraph runs this tool again from the top;
                # the same idempotency key then finds the decision the review became.
                interrupt(outcome.review)
                outcome = _record(recorder, state, arguments, snapshot, context, tool_call_id)
                if outcome.review is not None:
                    raise ToolException(f"decision is still waiting for review {outcome.review['review_id']}")
        except DecisionTrailError as e:
            raise ToolException(f"{e.code}: {e.message}") from e
        return json.dumps({"decision_id": outcome.decision_id})

    return RecordDecisionTool.from_function(
        func=run,
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION,
        args_schema=_ToolInput,
        handle_tool_error=True,
    )


def _record(
    recorder: Recorder,
    state: dict[str, Any],
    arguments: dict[str, Any],
    snapshot: ContextSnapshot,
    context: CapturedContext,
    tool_call_id: str,
) -> Recorded:
    plan_id = state.get("plan_id")
    if not plan_id:
        raise ToolException("the actor's state has no plan_id; decisions are recorded into a plan")
    depends_on = tuple(state.get("depends_on") or ())
    # The tool call's id, not the checkpoint's: replaying from a checkpoint forks its id,
    # but the restored conversation holds the same tool call.
    step_id = f"tool_call:{tool_call_id}"
    return recorder.record(
        arguments, plan_id=str(plan_id), snapshot=snapshot, context=context, depends_on=depends_on, step_id=step_id
    )
