"""Small builders of valid records, so each test states only what it is about."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

from decisiontrail.domain import ContextSnapshot, Decision, DecisionType, Plan
from decisiontrail.domain.decision import CheckpointRef
from decisiontrail.domain.ids import new_ulid
from decisiontrail.services import lifecycle as lifecycle_service
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL


def snapshot(text: str = "context", *, checkpoint: bool = True) -> ContextSnapshot:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return ContextSnapshot(
        hot_context_hash=digest,
        hot_context_ref=f"context://sha256/{digest}",
        actor_state_ref=CheckpointRef(thread_id="thread-1", checkpoint_id=new_ulid()) if checkpoint else None,
    )


def decision(plan_id: str, decision_type: DecisionType, parent: str | None = None, **fields: Any) -> Decision:
    """A valid decision of the given type with the least a test has to say."""
    values: dict[str, Any] = {
        "plan_id": plan_id,
        "parent_decision_id": parent,
        "decision_type": decision_type,
        "question": f"which {decision_type.value}?",
        "chosen_option": "this one",
        "context_snapshot": snapshot(decision_type.value),
    }
    values.update(fields)
    return Decision(**values)


def new_plan(store: Trail, **fields: Any) -> tuple[Plan, Decision]:
    """A stored plan and its stored prompt_definition root."""
    plan = lifecycle_service.create_plan(store, Plan(description=fields.pop("description", "a plan"), **fields), principal=LOCAL)
    root = recording_service.record(
        store, decision(plan.plan_id, DecisionType.PROMPT_DEFINITION, chosen_option="do it"), principal=LOCAL
    )
    return plan, root


def actor_snapshot(thread_id: str = "actor-1", text: str = "context", **fields: Any) -> ContextSnapshot:
    """A snapshot as record_decision captures it for an actor: with a checkpoint reference."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return ContextSnapshot(
        hot_context_hash=digest,
        hot_context_ref=f"context://sha256/{digest}",  # not the service's own store, so no context need come with it
        actor_state_ref=CheckpointRef(thread_id=thread_id, checkpoint_id=new_ulid()),
        **fields,
    )


def tool_input(decision_type: str, **fields: Any) -> dict[str, Any]:
    """record_decision's input with the required fields filled."""
    values: dict[str, Any] = {
        "decision_type": decision_type,
        "question": f"which {decision_type}?",
        "chosen_option": "this one",
        "rationale": "because",
    }
    values.update(fields)
    return values


def to_execute(store: Trail, plan_id: str) -> Decision:
    """Move a plan in Strategize to Execute as ADR-007 lets it: with a strategy_choice (recorded here,
    under the current root, unless it has one), the decision its Execute decisions hang under."""
    from decisiontrail.domain import Phase
    from decisiontrail.services import reading

    current = reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)
    strategy = next((d for d in current if d.decision_type is DecisionType.STRATEGY_CHOICE), None)
    if strategy is None:
        root = next(d for d in current if d.decision_type is DecisionType.PROMPT_DEFINITION)
        strategy = recording_service.record(
            store, decision(plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
        )
    lifecycle_service.advance_phase(store, plan_id, Phase.EXECUTE, principal=LOCAL)
    return strategy


def at_once(*calls: Callable[[], Any], timeout: float = 120) -> list[Any]:
    """Each call in a thread of its own, all released together: what each returned, or the
    exception it raised, in the order given (a thread's exception is otherwise lost)."""
    together = threading.Barrier(len(calls))
    outcomes: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        together.wait()
        try:
            outcomes[i] = calls[i]()
        except BaseException as e:
            outcomes[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"a call still ran after {timeout} s")
    return outcomes


def db_hits(profile: dict[str, Any]) -> int:
    """The database hits of a statement's PROFILE, every operator's summed."""
    return int(profile.get("dbHits", 0)) + sum(db_hits(child) for child in profile.get("children", []))
