"""A deterministic chat model that plays a script: the actors' model in demonstrations and tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

Step = AIMessage | Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Answers the n-th model call with the n-th step of its script, then with "done".

    A step is a message or a function of the conversation so far (to use what earlier tool
    calls returned, such as a decision id). No network, same answers every run.
    """

    script: list[Any] = []
    every_turn: Any = None
    """A function of the conversation answering every turn instead (the runtime's playbooks)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        if self.every_turn is not None:
            step = self.every_turn
        else:
            step = self.script[turn] if turn < len(self.script) else AIMessage(content="done")
        message = step(messages) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def decide(**arguments: Any) -> AIMessage:
    """A model turn that calls record_decision with ``arguments`` (a stable tool-call id)."""
    call_id = "call_" + hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()[:16]
    return AIMessage(content="", tool_calls=[{"name": "record_decision", "args": arguments, "id": call_id}])


def unless_corrected(original: AIMessage, replacement: AIMessage) -> Step:
    """A step that makes the original choice, or the replacement once the actor has been given a
    correction (a replay, after ``correct``, resumes it with a ``Correction:`` message)."""

    def step(messages: Sequence[BaseMessage]) -> AIMessage:
        corrected = any(isinstance(m, HumanMessage) and str(m.content).startswith("Correction:") for m in messages)
        return replacement if corrected else original

    return step


def recorded_ids(messages: Sequence[BaseMessage]) -> list[str]:
    """The decision ids record_decision returned so far in this conversation, oldest first."""
    ids = []
    for message in messages:
        if isinstance(message, ToolMessage) and message.status != "error":
            try:
                ids.append(json.loads(str(message.content))["decision_id"])
            except (ValueError, KeyError, TypeError):
                continue
    return ids
