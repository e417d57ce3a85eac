"""Role prompts and skills: what each runtime actor is told, and the tools it carries (ADR-033).

Every actor is built from its role's prompt (a versioned file in ``actors/prompts``) and its
skills. The ``local/decision-tools`` skill (``record_decision`` and ``revert_to_strategize``) is in
every actor's set, first, and no registration can remove or replace it: an actor cannot opt out
of recording its decisions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Annotated, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import InjectedState
from pydantic import BaseModel, Field

from decisiontrail.access import Principal
from decisiontrail.actors.tool import LocalRecorder, record_decision_tool
from decisiontrail.domain import Phase
from decisiontrail.domain.runs import Actor
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.services import Trail

PROMPT_VERSION = "v1"
"""The role prompts in use: ``actors/prompts/<role>.<version>.md``. A changed prompt is a new version."""

DECISION_TOOLS = "local/decision-tools"
REVERT_TOOL = "revert_to_strategize"


def role_prompt(actor: Actor, version: str = PROMPT_VERSION) -> str:
    """The system prompt of ``actor``'s role, as shipped in the package."""
    return files("decisiontrail.actors").joinpath("prompts", f"{actor.value}.{version}.md").read_text(encoding="utf-8")


@dataclass(frozen=True)
class ToolContext:
    """What a skill's tools are built with: the trail, the actor they serve, who they act as (the
    runtime's principal), how its reviews go."""

    trail: Trail
    actor: Actor
    principal: Principal
    pause_for_review: bool = True


@dataclass(frozen=True)
class Skill:
    """A named set of tools, built for each actor that carries it."""

    name: str
    tools: Callable[[ToolContext], Sequence[BaseTool]]
    roles: frozenset[Actor] = frozenset(Actor)


class _RevertInput(BaseModel):
    reason: str = Field(description="Why the strategy cannot be carried out as decided")
    state: Annotated[dict[str, Any], InjectedState]


def revert_tool(trail: Trail, principal: Principal) -> StructuredTool:
    """Ask to go back to Strategize (a phase reversion, with its reason), as ``principal``: the
    strategy is reconsidered and the runtime runs the strategy actor again."""
    from decisiontrail.services.lifecycle import advance_phase

    def run(reason: str, state: dict[str, Any]) -> str:
        try:
            plan = advance_phase(
                trail, str(state["plan_id"]), Phase.STRATEGIZE, reason, principal=principal, by="execution actor"
            )
        except DecisionTrailError as e:
            raise ToolException(f"{e.code}: {e.message}") from e
        return json.dumps({"plan_id": plan.plan_id, "phase": plan.phase.value})

    return StructuredTool.from_function(
        func=run,
        name=REVERT_TOOL,
        description=(
            "Go back to the Strategize phase because the strategy cannot be carried out as decided. Give the reason; "
            "then stop: the strategy is reconsidered before execution resumes."
        ),
        args_schema=_RevertInput,
        handle_tool_error=True,
    )


def _decision_tools(context: ToolContext) -> list[BaseTool]:
    return [
        record_decision_tool(LocalRecorder(context.trail, context.principal), pause_for_review=context.pause_for_review),
        revert_tool(context.trail, context.principal),
    ]


class Skills:
    """The skill registry: ``local/decision-tools`` always, then what is registered for a role."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}

    def register(self, skill: Skill) -> None:
        if skill.name == DECISION_TOOLS:
            raise ValueError(f"{DECISION_TOOLS} is built in and in every actor's set; it cannot be registered again")
        self._skills[skill.name] = skill

    def names(self, actor: Actor) -> list[str]:
        return [DECISION_TOOLS, *(s.name for s in self._skills.values() if actor in s.roles)]

    def tools(self, context: ToolContext) -> list[BaseTool]:
        """Every tool ``context.actor`` carries, the decision tools first; a registered tool may not
        take a decision tool's name."""
        built = _decision_tools(context)
        reserved = {t.name for t in built}
        for skill in self._skills.values():
            if context.actor not in skill.roles:
                continue
            for tool in skill.tools(context):
                if tool.name in reserved:
                    raise ValueError(f"skill {skill.name}: tool {tool.name} would replace a decision tool")
                built.append(tool)
        return built
