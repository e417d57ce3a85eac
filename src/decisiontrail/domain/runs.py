"""Plan runs: the runtime's durable work, one per plan it runs, and the rules of their states."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from decisiontrail.domain.decision import UtcDatetime, utc_now
from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.exceptions import Conflict, ValidationFailed


class RunStatus(StrEnum):
    QUEUED = "queued"  # waiting for a worker: new, woken (a review resolved, a child finished) or a replay queued
    RUNNING = "running"  # claimed by one worker, whose lease keeps it
    WAITING = "waiting"  # paused: for a person (a review) or for its child plans' runs
    SUCCEEDED = "succeeded"  # the plan reached Apply
    FAILED = "failed"  # an actor or a step failed; ``error`` says which and why
    CANCELLED = "cancelled"  # cancelRun, or its plan invalidated by a correction


FINISHED = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})


class Actor(StrEnum):
    """The runtime's actors (ADR-033), each built from its role prompt and the decision-tools skill."""

    RECONCILIATION = "reconciliation"
    STRATEGY = "strategy"
    EXECUTION = "execution"


LEASE = timedelta(seconds=30)
"""How long a claim holds without a heartbeat: a worker that died loses its runs after this."""
MAX_ATTEMPTS = 3
"""Claims of one run (a crash, a restart) before it is failed instead of tried again."""


class PlanRun(BaseModel):
    """The runtime running one plan: its state, who holds it, and the corrections it must replay."""

    model_config = ConfigDict(frozen=True)

    run_id: Ulid = Field(default_factory=new_ulid)
    plan_id: Ulid
    parent_run_id: Ulid | None = None
    status: RunStatus = RunStatus.QUEUED
    actor: Actor | None = None
    """The actor running now, or the one the run waits in."""
    waiting_for: str | None = None
    """What a waiting run waits for: ``review`` or ``children``."""
    generation: int = 0
    """How many corrections the run has replayed: each replay is a new pass of the orchestrator."""
    replays: tuple[str, ...] = ()
    """Correction attempts queued for replay, oldest first (queued in each correction's transaction)."""
    replaying: str | None = None
    """The correction attempt the current generation replays (taken from ``replays``), if any."""
    claimed_by: str | None = None
    lease_until: UtcDatetime | None = None
    attempts: int = 0
    error: str | None = None
    model: str = "scripted"
    created_at: UtcDatetime = Field(default_factory=utc_now)
    updated_at: UtcDatetime = Field(default_factory=utc_now)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass(frozen=True)
class RunRequest:
    """Run the plan being instantiated in the runtime: with this chat model, under this parent run."""

    model: str = "scripted"
    parent_run_id: str | None = None

    def run_for(self, plan_id: str) -> PlanRun:
        return PlanRun(plan_id=plan_id, parent_run_id=self.parent_run_id, model=self.model)


def check_cancellable(run: PlanRun) -> None:
    """A finished run cannot be cancelled (its plan is what it is; correct it instead)."""
    if run.finished:
        raise Conflict(f"run {run.run_id} has already {run.status.value}; nothing to cancel")


def thread_id(run_id: str, generation: int, actor: Actor, round_: int) -> str:
    """The LangGraph thread of one actor's pass in a run: ``run:<run>:g<generation>:<actor>:<round>``.

    >>> thread_id("01J", 0, Actor.STRATEGY, 1)
    'run:01J:g0:strategy:1'
    """
    return f"run:{run_id}:g{generation}:{actor.value}:{round_}"


def actor_of_thread(thread: str) -> Actor | None:
    """The runtime actor a thread belongs to, or None for a thread the runtime did not start.

    >>> actor_of_thread("run:01J:g0:execution:2")
    <Actor.EXECUTION: 'execution'>
    >>> actor_of_thread("strategy-01J") is None
    True
    """
    parts = thread.split(":")
    if len(parts) != 5 or parts[0] != "run":
        return None
    try:
        return Actor(parts[3])
    except ValueError:
        return None


def child_descriptions(chosen_option: str, parallel: bool) -> list[str]:
    """The child plans a spawn decision asks for: one for a subplan_spawn (its chosen option),
    one per non-blank line for a subplan_parallel_spawn (a group).

    >>> child_descriptions("Quotas\\nAlerts\\n", parallel=True)
    ['Quotas', 'Alerts']
    """
    if not parallel:
        return [chosen_option.strip()]
    lines = [line.strip(" -*\t") for line in chosen_option.splitlines()]
    found = [line for line in lines if line]
    if not found:
        raise ValidationFailed("chosen_option: a parallel spawn names its child plans, one per line", field="chosen_option")
    return found


SCRIPTED = "scripted"


def check_model_name(name: str) -> str:
    """``scripted`` or an ``init_chat_model`` name (``provider:model``); refused naming the field otherwise.

    >>> check_model_name(" openai:gpt-4.1 ")
    'openai:gpt-4.1'
    """
    name = name.strip()
    if name == SCRIPTED or (":" in name and all(part.strip() for part in name.split(":", 1))):
        return name
    raise ValidationFailed(
        f"model: {name!r} is neither 'scripted' nor an init_chat_model name such as 'openai:gpt-4.1'", field="model"
    )


def lease_end(now: datetime, lease: timedelta = LEASE) -> datetime:
    return now + lease
