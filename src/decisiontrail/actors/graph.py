"""An actor: a LangGraph loop of a chat model and its tools, checkpointed at every step."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition


class ActorState(MessagesState):
    """What an actor carries: its conversation, the plan it works in, what it works on."""

    plan_id: str
    resources: list[Any]
    depends_on: list[str]


def build_actor(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: BaseCheckpointSaver[Any] | None,
    *,
    guard: Callable[[], None] | None = None,
) -> CompiledStateGraph[Any]:
    """The agent loop: the model answers, its tool calls run, until it calls none.

    Without a checkpointer the actor cannot record decisions: there is no checkpoint to
    replay them from. ``guard``, called before and after each model call, raises to stop the
    actor there (the runtime's, once the run is no longer this worker's to drive): a model call
    that returns after its run was given up calls no tool.
    """
    bound = model.bind_tools(list(tools))
    check = guard or (lambda: None)

    def agent(state: ActorState) -> dict[str, Any]:
        check()
        answer = bound.invoke(state["messages"])
        check()
        return {"messages": [answer]}

    graph = StateGraph(ActorState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


@contextmanager
def sqlite_checkpointer(path: Path | str) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on a file (``":memory:"`` for a throwaway one)."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
