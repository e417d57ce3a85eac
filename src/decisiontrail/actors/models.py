"""The runtime's chat models: any LangChain chat model named in settings, or the deterministic scripted one.

``DECISIONTRAIL_CHAT_MODEL`` names the model: ``scripted`` (the default: no network, the same
decisions every run) or an ``init_chat_model`` string such as ``openai:gpt-4.1`` or
``anthropic:claude-sonnet-4-5``, whose credentials come from the provider's own environment
variables (``OPENAI_API_KEY``, ...). A real model needs ``langchain`` and the provider's package
installed (``pip install langchain langchain-openai``).

The scripted model plays a playbook derived from the plan (its description and arguments) and,
after a correction, re-decides the corrected question as the correction says. ``scripted:<name>``
plays a named playbook instead (``PLAYBOOKS``): ``scripted:demonstration`` is the demonstration's
(``actors.demonstration``). The name is the run's, and child runs inherit it, so every worker that
claims one of its runs plays the same script.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from decisiontrail.actors.scripted import ScriptedChatModel
from decisiontrail.domain.runs import SCRIPTED, Actor, check_model_name
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.settings import RuntimeSettings

CORRECTION_PREFIX = "Correction: "
ONCE_CORRECTED = "once_corrected"
"""A playbook step's key for what the actor decides at its turn instead, after a correction."""

__all__ = [
    "CORRECTION_PREFIX",
    "DEMONSTRATION",
    "ONCE_CORRECTED",
    "PLAYBOOKS",
    "SCRIPTED",
    "Brief",
    "ModelFactory",
    "Playbook",
    "chat_model",
    "check_model_name",
    "demonstration_playbook",
    "playbook",
]


@dataclass(frozen=True)
class Brief:
    """What the runtime tells an actor about its plan."""

    plan_id: str
    description: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    invariants: Sequence[str] = ()
    strategy: str = ""
    """The Strategize tree, read-only (the execution actor's)."""
    note: str = ""
    """Why the actor runs again (a reversion's reason), if it does."""

    def text(self, actor: Actor) -> str:
        lines = [f"Plan {self.plan_id}: {self.description}"]
        if self.arguments:
            lines.append("Arguments: " + json.dumps(dict(self.arguments), sort_keys=True))
        if self.invariants:
            lines += ["Enforced invariants:", *(f"- {i}" for i in self.invariants)]
        if actor is Actor.EXECUTION and self.strategy:
            lines += ["The strategy (read-only):", self.strategy]
        if self.note:
            lines.append(f"Note: {self.note}")
        return "\n".join(lines)


ModelFactory = Callable[[str, Actor, "Brief", RuntimeSettings], BaseChatModel]
"""What builds an actor's model: the run's model name, the actor, its brief, the runtime's settings."""
Playbook = Callable[[Actor, "Brief"], list[dict[str, Any]]]
"""The scripted decisions of an actor for a plan, in order (``playbook``)."""


def chat_model(name: str, actor: Actor, brief: Brief, settings: RuntimeSettings | None = None) -> BaseChatModel:
    """The model ``name`` names, for ``actor`` working on ``brief``'s plan."""
    name = check_model_name(name)
    if name == SCRIPTED or name.startswith(f"{SCRIPTED}:"):
        pace = settings.scripted_pace if settings is not None else 0.0
        return ScriptedChatModel(every_turn=_Playbook(_plays(name)(actor, brief), pace))
    try:
        from langchain.chat_models import init_chat_model  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ValidationFailed(
            f"DECISIONTRAIL_CHAT_MODEL: {name!r} needs langchain and its provider's package "
            "(pip install langchain langchain-<provider>); 'scripted' needs neither",
            field="DECISIONTRAIL_CHAT_MODEL",
        ) from None
    try:
        model: BaseChatModel = init_chat_model(name)
    except (ValueError, ImportError) as e:
        raise ValidationFailed(f"DECISIONTRAIL_CHAT_MODEL: {e}", field="DECISIONTRAIL_CHAT_MODEL") from None
    return model


def _plays(name: str) -> Playbook:
    """The playbook a scripted model's name names: ``scripted``, the one derived from the plan;
    ``scripted:<name>``, a named one."""
    if name == SCRIPTED:
        return playbook  # looked up when called: a test may put another in its place
    found = PLAYBOOKS.get(name.removeprefix(f"{SCRIPTED}:"))
    if found is None:
        known = ", ".join([SCRIPTED, *(f"{SCRIPTED}:{playbook_name}" for playbook_name in sorted(PLAYBOOKS))])
        raise ValidationFailed(f"model: {name!r} names no scripted playbook (there are: {known})", field="model")
    return found


class _Playbook:
    """The scripted model's every turn, as a function of the conversation."""

    def __init__(self, steps: Sequence[Mapping[str, Any]], pace: float = 0.0) -> None:
        self.steps = steps
        self.pace = pace

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        if self.pace:
            time.sleep(self.pace)
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        correction = _last_correction(messages)
        just_corrected = correction is not None and bool(messages) and messages[-1] is correction
        if turn < len(self.steps):
            step = dict(self.steps[turn])
        elif just_corrected and self.steps:
            step = dict(self.steps[0])  # appended after the end: the first question again
        else:
            return AIMessage(content="done")
        if ONCE_CORRECTED in step:
            instead = step.pop(ONCE_CORRECTED)
            if correction is not None and not just_corrected:  # a turn after the corrected one
                if instead is None:
                    return AIMessage(content="done")
                step = dict(instead)
        if just_corrected and correction is not None:
            guidance = str(correction.content).removeprefix(CORRECTION_PREFIX).strip()
            step["alternatives_considered"] = [step["chosen_option"], *step.get("alternatives_considered", [])]
            step["chosen_option"] = guidance
            step["confidence_score"] = 0.95
            step["rationale"] = f"Corrected: {guidance}"
        return _decide(messages, step)


def _last_correction(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and str(message.content).startswith(CORRECTION_PREFIX):
            return message
    return None


def _decide(messages: Sequence[BaseMessage], arguments: Mapping[str, Any]) -> AIMessage:
    """A record_decision call whose id is a function of the conversation and the arguments: the
    same on a resumed run (the decision is not recorded twice), new after a correction."""
    seen = json.dumps([[m.type, str(m.content)] for m in messages], sort_keys=True)
    digest = hashlib.sha256((seen + json.dumps(dict(arguments), sort_keys=True)).encode()).hexdigest()[:16]
    return AIMessage(content="", tool_calls=[{"name": "record_decision", "args": dict(arguments), "id": f"call_{digest}"}])


def playbook(actor: Actor, brief: Brief) -> list[dict[str, Any]]:
    """The scripted decisions of ``actor`` for ``brief``'s plan, in order.

    Strategy: an approach, the resources, and, while the plan's ``depth`` argument (default 2:
    the plan and one level of child plans) allows, a spawn: one child plan, or a parallel group
    when the arguments name ``parallel`` children. Execution: an implementation choice and the
    tool that applies it.

    Each step is record_decision's arguments. A step may also hold, under ``ONCE_CORRECTED``, what
    the actor decides at its turn instead once a correction came earlier in its conversation (None:
    it stops there); the corrected turn itself re-decides its question as the guidance says.
    """
    args = dict(brief.arguments)
    subject = brief.description.rstrip(".")
    if actor is Actor.STRATEGY:
        steps: list[dict[str, Any]] = [
            {
                "decision_type": "strategy_choice",
                "question": f"How should this be approached: {subject}?",
                "chosen_option": str(args.get("approach") or "One enforcement point, changed behind a feature flag"),
                "alternatives_considered": ["Change every caller separately"],
                "confidence_score": 0.9,
                "rationale": "One place to change and to test; callers stay unchanged.",
            },
            {
                "decision_type": "resource_selection",
                "question": "Which resources will the work touch?",
                "chosen_option": str(args.get("resources") or f"The module that owns: {subject}"),
                "confidence_score": 0.9,
                "rationale": "The owner of the behaviour is where it changes.",
            },
        ]
        depth = _depth(args)
        parallel = args.get("parallel")
        if depth > 1 and isinstance(parallel, list) and parallel:
            steps.append(
                {
                    "decision_type": "subplan_parallel_spawn",
                    "question": "Which parts run as child plans at the same time?",
                    "chosen_option": "\n".join(str(p) for p in parallel),
                    "confidence_score": 0.9,
                    "rationale": "The parts are independent of each other.",
                }
            )
        elif depth > 1:
            steps.append(
                {
                    "decision_type": "subplan_spawn",
                    "question": "Which part is delivered as a child plan?",
                    "chosen_option": f"Tests and monitoring for: {subject}",
                    "alternatives_considered": ["Fold it into this plan"],
                    "confidence_score": 0.9,
                    "rationale": "It can be reviewed and applied on its own.",
                }
            )
        return steps
    if actor is Actor.EXECUTION:
        return [
            {
                "decision_type": "implementation_choice",
                "question": "How is the strategy implemented?",
                "chosen_option": f"Implement it as the strategy says: {_first_line(brief.strategy) or subject}",
                "confidence_score": 0.9,
                "rationale": "The strategy decided the approach; this follows it.",
            },
            {
                "decision_type": "tool_invocation",
                "question": "Which tool applies the change?",
                "chosen_option": "edit_file",
                "alternatives_considered": ["a code generator"],
                "confidence_score": 0.9,
                "rationale": "A local edit is enough.",
            },
        ]
    return []


DEMONSTRATION = "demonstration"
"""The demonstration's playbook: ``scripted:demonstration``."""
DEMONSTRATION_PLAN = "Add rate limiting to the public billing API"
DEMONSTRATION_CHILD_PLAN = "Add per-client quotas to the billing API gateway"

_DEMONSTRATION: dict[str, dict[Actor, list[dict[str, Any]]]] = {
    DEMONSTRATION_PLAN: {
        Actor.STRATEGY: [
            {
                "decision_type": "strategy_choice",
                "question": "Where should requests be limited?",
                "chosen_option": "Token bucket in the API gateway",
                "alternatives_considered": ["Middleware in each service", "Limits at the load balancer"],
                "confidence_score": 0.86,
                "rationale": "One enforcement point; services stay unchanged.",
            },
            {
                "decision_type": "resource_selection",
                "question": "Which files will change?",
                "chosen_option": "gateway/config.yaml and gateway/limits.py",
                "confidence_score": 0.9,
                "rationale": "The gateway owns request admission.",
            },
            {  # below the plan's Strategize threshold: it waits for a person
                "decision_type": "subplan_spawn",
                "question": "Which part is delivered as a child plan?",
                "chosen_option": "Add per-client quotas to the billing service",
                "alternatives_considered": [DEMONSTRATION_CHILD_PLAN],
                "confidence_score": 0.55,
                "rationale": "Quotas are kept with the client accounts.",
            },
        ],
        Actor.EXECUTION: [
            {
                "decision_type": "implementation_choice",
                "question": "How is the bucket stored?",
                "chosen_option": "In-process buckets refilled by a monotonic clock",
                "alternatives_considered": ["Redis counters"],
                "confidence_score": 0.68,
                "rationale": "A single gateway instance serves the API today.",
            },
            {
                "decision_type": "tool_invocation",
                "question": "Which tool applies the change?",
                "chosen_option": "edit_file(gateway/limits.py)",
                "confidence_score": 0.95,
                "rationale": "A local edit; no generator needed.",
                ONCE_CORRECTED: {
                    "decision_type": "tool_invocation",
                    "question": "Which tool applies the change?",
                    "chosen_option": "edit_file(gateway/limits.py) with a Redis client",
                    "confidence_score": 0.9,
                    "rationale": "The limiter now talks to Redis.",
                },
            },
            {
                "decision_type": "error_recovery",
                "question": "The limits test failed on clock skew; what now?",
                "chosen_option": "Inject the clock and freeze it in tests",
                "alternatives_considered": ["Widen the test's tolerance"],
                "confidence_score": 0.83,
                "rationale": "Deterministic tests beat looser ones.",
                ONCE_CORRECTED: None,  # with Redis's clock there is no skew to recover from
            },
        ],
    },
    DEMONSTRATION_CHILD_PLAN: {
        Actor.STRATEGY: [
            {
                "decision_type": "strategy_choice",
                "question": "Where are quotas kept?",
                "chosen_option": "A quota table beside the gateway's bucket store",
                "alternatives_considered": ["Quotas in the billing database"],
                "confidence_score": 0.85,
                "rationale": "Follows the parent plan's gateway-side enforcement.",
            },
        ],
        Actor.EXECUTION: [
            {
                "decision_type": "implementation_choice",
                "question": "How is the quota table created?",
                "chosen_option": "A migration adding client_quota",
                "confidence_score": 0.8,
                "rationale": "Reversible and reviewed like code.",
            },
            {
                "decision_type": "tool_invocation",
                "question": "Which tool creates the quota table?",
                "chosen_option": "run_migration(0007_client_quotas)",
                "confidence_score": 0.9,
                "rationale": "Schema changes go through migrations.",
            },
        ],
    },
}


def demonstration_playbook(actor: Actor, brief: Brief) -> list[dict[str, Any]]:
    """The demonstration's decisions (``actors.demonstration``): rate limiting for the billing API,
    whose spawn waits for a reviewer, and the child plan for per-client quotas the reviewer chooses;
    the execution actor's storage choice is the one the demonstration corrects. A plan it does not
    know by its description plays ``playbook``."""
    plays = _DEMONSTRATION.get(brief.description)
    if plays is None:
        return playbook(actor, brief)
    return copy.deepcopy(plays.get(actor, []))


PLAYBOOKS: dict[str, Playbook] = {DEMONSTRATION: demonstration_playbook}
"""The named playbooks, each played by the model ``scripted:<name>``."""


def _depth(arguments: Mapping[str, Any]) -> int:
    value = arguments.get("depth", 2)
    return value if isinstance(value, int) and not isinstance(value, bool) else 2


def _first_line(text: str) -> str:
    return next((line.strip(" -") for line in text.splitlines() if line.strip(" -")), "")
