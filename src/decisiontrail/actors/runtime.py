"""The plan runtime (issue 45): ADR-033's actors run plans end to end, and a correction replays itself.

A plan's run is durable work in Neo4j (``services.runs``). A worker claims it and drives the
orchestrator, a LangGraph graph checkpointed in the same Neo4j::

    strategize -> execute -> children -> execution -> apply
        ^                                    |
        +------------- next_round <----------+   (the execution actor reverted to Strategize)

- strategize: the plan entered Strategize and its invariants were reconciled there
  (``Trail.entered_strategize``); once no review waits, the strategy actor decides.
- execute: Strategize -> Execute (refused, and the run failed naming the rule, if the plan may not).
- children: each current spawn decision's child plans are instantiated, each with its own run (a
  parallel group's runs go concurrently); the run waits until they finish.
- execution: the execution actor, given the Strategize tree read-only, carries it out; it may ask
  to go back to Strategize (``revert_to_strategize``), and the plan is strategized again.
- apply: Execute -> Apply.

Each node is written to be run again from its start: LangGraph re-runs a node that paused
(``interrupt``: for a person's review, for child runs) when the run is resumed, and a run whose
worker died is resumed from its last checkpoint by whichever worker claims it next. Actors keep
their own threads (``domain.runs.thread_id``); their record_decision calls carry idempotency keys,
so a step run again records nothing twice.

A correction of a plan the runtime runs queues its replay on the run, in the correction's
transaction. The worker that claims it starts a new generation of the orchestrator: the actor whose
decision was corrected resumes from the checkpoint the replay frontier names, with the correction
in its context; every later step of the plan runs again where the correction invalidated it
(child plans re-spawned where the replay spawns them); at the end the attempt's outcome is set.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from decisiontrail.access import process
from decisiontrail.actors.graph import build_actor
from decisiontrail.actors import outcomes
from decisiontrail.actors.models import CORRECTION_PREFIX, Brief, ModelFactory, chat_model
from decisiontrail.actors.reconciliation import Reconciler
from decisiontrail.actors.replay import checkpoint_config
from decisiontrail.actors.skills import Skills, ToolContext, role_prompt
from decisiontrail.domain import CheckpointRef, DecisionType, Phase, Plan
from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome
from decisiontrail.domain.recording import ReviewStatus
from decisiontrail.domain.runs import MAX_ATTEMPTS, Actor, PlanRun, RunRequest, RunStatus, actor_of_thread, child_descriptions
from decisiontrail.domain.runs import thread_id as actor_thread
from decisiontrail.exceptions import DecisionTrailError, RuleViolation, TimedOut, Unavailable
from decisiontrail.services import Trail, reading, runs
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.settings import RuntimeSettings

log = logging.getLogger(__name__)

RUNTIME = process("runtime")
"""Who the runtime acts as: its workers' claims and leases, its actors' decisions, the child plans
it instantiates (for their parent plan's owner), its phase changes and replays."""
SPAWNS = (DecisionType.SUBPLAN_SPAWN, DecisionType.SUBPLAN_PARALLEL_SPAWN)
STRATEGIZE_TYPES = frozenset(
    {
        DecisionType.PROMPT_DEFINITION,
        DecisionType.INVARIANT_ENFORCED,
        DecisionType.STRATEGY_CHOICE,
        DecisionType.RESOURCE_SELECTION,
        *SPAWNS,
    }
)


class RunState(TypedDict, total=False):
    """The orchestrator's state: which run, which pass (generation) and round, what it replays."""

    run_id: str
    plan_id: str
    model: str
    generation: int
    round: int
    replay: dict[str, Any] | None
    """The correction this generation replays: attempt_id, guidance, mode, thread_id, checkpoint."""
    replayed: bool
    """Whether the corrected actor has been resumed (later rounds run afresh)."""


class Lost(Exception):
    """The run is no longer this worker's: cancelled, or claimed by another after its lease lapsed."""


class Failed(Exception):
    """A step the run cannot get past (a child plan's run failed, the model recorded no strategy)."""


@dataclass(frozen=True)
class Waiting:
    what: str
    detail: str = ""


class Runtime:
    """Runs plans: claims runs from Neo4j and drives each through the orchestrator.

    ``trail`` is what the services write into (its reconciler is the Invariant Reconciliation
    Actor, checkpointed in ``checkpointer`` like every actor here); ``worker`` names this worker
    in the runs it claims.
    """

    def __init__(
        self,
        trail: Trail,
        checkpointer: BaseCheckpointSaver[Any],
        *,
        worker: str | None = None,
        skills: Skills | None = None,
        settings: RuntimeSettings | None = None,
        models: ModelFactory = chat_model,
    ) -> None:
        self.trail = trail if trail.reconciler is not None else replace(trail, reconciler=Reconciler(checkpointer))
        self.checkpointer = checkpointer
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.skills = skills or Skills()
        self.settings = settings or RuntimeSettings.from_env()
        self.lease = timedelta(seconds=self.settings.lease)
        self.models = models
        """Builds each actor's chat model from the run's model name (``actors.models.chat_model``)."""
        self.graph = self._orchestrator()
        self._held: dict[str, PlanRun] = {}
        self._deadlines: dict[str, float] = {}  # a held run's turn ends by then (time.monotonic)
        self._lost: set[str] = set()
        self._lock = threading.Lock()

    # -- the worker's side --------------------------------------------------------------------

    def run_once(self) -> PlanRun | None:
        """Claim one run and drive it until it waits, finishes or fails; the run as it was left,
        None when no run was waiting to be claimed."""
        held = runs.claim(self.trail, self.worker, self.lease, principal=RUNTIME)
        if held is None:
            return None
        with self._lock:
            self._held[held.run_id] = held
            self._deadlines[held.run_id] = time.monotonic() + self.settings.time_limit
            self._lost.discard(held.run_id)
        try:
            return self._drive(held)
        finally:
            with self._lock:
                self._held.pop(held.run_id, None)
                self._deadlines.pop(held.run_id, None)

    def heartbeat(self) -> None:
        """Keep the leases of the runs this worker drives; those it lost stop at their next step."""
        with self._lock:
            held = list(self._held.values())
        for lost in runs.heartbeat(self.trail, self.worker, [r.run_id for r in held], self.lease, principal=RUNTIME):
            with self._lock:
                self._lost.add(lost)

    def run_until_settled(self, plan_id: str, timeout: float = 300.0, poll: float = 0.05) -> PlanRun:
        """Drive runs in this thread until the plan's run has finished, or waits while no run of its
        hierarchy is queued or running (a person's review, here or in a child plan); the CLI's
        ``run --wait`` and the tests. Other plans' runs met meanwhile are driven too."""
        deadline = time.monotonic() + timeout
        while True:
            current = runs.runs_of_plans(self.trail, [plan_id])[0]
            if current is None:
                raise LookupError(f"plan {plan_id} has no run")
            if current.finished:
                return current
            if time.monotonic() > deadline:
                raise TimeoutError(f"the run of plan {plan_id} did not settle in {timeout:.0f} s (it is {current.status.value})")
            if self.run_once() is not None:
                continue
            if current.status is RunStatus.WAITING and not runs.active_in_hierarchy(self.trail, plan_id, RUNTIME):
                return current
            time.sleep(poll)

    def _drive(self, held: PlanRun) -> PlanRun | None:
        if held.attempts > MAX_ATTEMPTS:
            given_up = f"gave up after {MAX_ATTEMPTS} claims (workers stopped)"
            failed = outcomes.give_up(self.trail, RUNTIME, held, given_up)
            return runs.finish(
                self.trail, held, self.worker, RunStatus.FAILED, principal=RUNTIME, failed_replays=failed, error=given_up
            )
        state: RunState = {}
        try:
            config, start = self._start(held)
            # What this turn replays, if it does: a new generation's input, or its checkpointed state.
            state = dict(start) if isinstance(start, dict) else dict(self.graph.get_state(config).values)  # type: ignore[assignment]
            self._within_time_limit(held, lambda: self.graph.invoke(start, config))
            snapshot = self.graph.get_state(config)
            state = dict(snapshot.values)  # type: ignore[assignment]
            if snapshot.next:
                waiting = snapshot.interrupts[0].value if snapshot.interrupts else {"waiting": "children"}
                return runs.finish(
                    self.trail,
                    held,
                    self.worker,
                    RunStatus.WAITING,
                    principal=RUNTIME,
                    waiting_for=waiting.get("waiting"),
                    actor=waiting.get("actor"),
                    error=None,
                )
            outcomes.report(self.trail, RUNTIME, self.worker, state, ReplayOutcome.REPLAYED, None)
            return runs.finish(
                self.trail, held, self.worker, RunStatus.SUCCEEDED, principal=RUNTIME, actor=None, waiting_for=None, error=None
            )
        except Lost:
            log.info("run %s is no longer this worker's (cancelled, or claimed again); left as it is", held.run_id)
            return None
        except Unavailable as e:
            # The store's outage, not the run's failure (nor its replay's): the turn stops where its
            # last checkpoint left it, the claim lapses, and the next claim goes on from there (one
            # of MAX_ATTEMPTS). Failing it here would fail a replay for a Neo4j restart, and the
            # failure could not be written anyway while Neo4j is down.
            log.warning("run %s stopped mid-turn, Neo4j unavailable (%s); taken up again once its claim lapses", held.run_id, e)
            return None
        except Exception as e:  # an actor's or a step's failure is the run's: visible on it, and on its replay
            log.warning("run %s failed: %s", held.run_id, e, exc_info=not isinstance(e, (Failed, DecisionTrailError)))
            detail = f"{type(e).__name__}: {e}" if not isinstance(e, DecisionTrailError) else f"{e.code}: {e.message}"
            outcomes.report(self.trail, RUNTIME, self.worker, state, ReplayOutcome.FAILED, detail)
            return runs.finish(self.trail, held, self.worker, RunStatus.FAILED, principal=RUNTIME, error=detail[:2000])

    def _start(self, held: PlanRun) -> tuple[RunnableConfig, Any]:
        """Where this turn starts: a queued replay (a new generation), the generation's pause, or its beginning."""
        config = self._config(held, held.generation)
        snapshot = self.graph.get_state(config)
        if held.replays:
            previous = snapshot.values.get("replay") if snapshot.values and snapshot.next else None
            if previous is not None:
                outcomes.report(
                    self.trail,
                    RUNTIME,
                    self.worker,
                    dict(snapshot.values),
                    ReplayOutcome.NOT_NEEDED,
                    f"correction attempt {held.replays[0]} came before this replay finished; that replay continues from it",
                )
            attempt_id = held.replays[0]
            taken = runs.take_replay(self.trail, held, self.worker, attempt_id, principal=RUNTIME)
            if taken is None:
                raise Lost(held.run_id)
            self._update_held(taken)
            start: RunState = {
                "run_id": held.run_id,
                "plan_id": held.plan_id,
                "model": held.model,
                "generation": taken.generation,
                "round": 0,
                "replay": outcomes.replay_of(self.trail, RUNTIME, attempt_id, held.plan_id),
                "replayed": False,
            }
            return self._config(held, taken.generation), start
        if not snapshot.values:
            # Its beginning: a new run's, or a replay's whose turn was cut off after it was taken up
            # (``replaying``) and before its first checkpoint: that generation still owes its replay.
            replay = outcomes.replay_of(self.trail, RUNTIME, held.replaying, held.plan_id) if held.replaying else None
            return config, {
                "run_id": held.run_id,
                "plan_id": held.plan_id,
                "model": held.model,
                "generation": held.generation,
                "round": 0,
                "replay": replay,
                "replayed": False,
            }
        if snapshot.interrupts:
            return config, Command(resume=True)
        return config, None  # a turn cut short (the worker died): on from the last checkpoint

    def _config(self, held: PlanRun, generation: int) -> RunnableConfig:
        return {"configurable": {"thread_id": f"run:{held.run_id}:orchestrator:g{generation}", "plan_id": held.plan_id}}

    def _update_held(self, run: PlanRun) -> None:
        with self._lock:
            self._held[run.run_id] = run

    def _within_time_limit(self, held: PlanRun, turn: Callable[[], object]) -> None:
        """Run ``turn`` (the orchestrator's), giving up on it at the turn's deadline.

        It runs in a thread of its own, so that a model call that never returns does not hold
        this worker: past the deadline the run is given up (``_lost``), the turn's thread stops at
        its next step or model answer (``_check``, ``_guard``: it records nothing more), and this
        raises ``TimedOut``.
        """
        outcome: list[BaseException | None] = []

        def target() -> None:
            try:
                turn()
                outcome.append(None)
            except BaseException as e:  # handed to the worker's thread, as if raised there
                outcome.append(e)

        thread = threading.Thread(target=target, name=f"run {held.run_id}", daemon=True)
        thread.start()
        with self._lock:
            deadline = self._deadlines.get(held.run_id, time.monotonic() + self.settings.time_limit)
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            with self._lock:
                self._lost.add(held.run_id)
            raise TimedOut(self._overtime())
        if outcome and outcome[0] is not None:
            raise outcome[0]

    def _guard(self, run_id: str) -> Callable[[], None]:
        """What an actor of the run checks around each model call: the run is still this worker's to drive."""

        def check() -> None:
            with self._lock:
                given_up = run_id in self._lost or run_id not in self._held
            if given_up:
                raise Lost(run_id)

        return check

    def _overtime(self) -> str:
        return (
            f"the turn took longer than its time limit of {self.settings.time_limit:g} s (DECISIONTRAIL_RUN_TIME_LIMIT); "
            "it stopped there"
        )

    def _check(self, state: RunState, actor: Actor | None = None) -> PlanRun:
        """The run, still this worker's (else ``Lost``) and within its turn's time limit (else
        ``TimedOut``), with the actor now running recorded on it."""
        with self._lock:
            held = self._held.get(state["run_id"])
            lost = state["run_id"] in self._lost
            deadline = self._deadlines.get(state["run_id"])
        if held is None or lost:
            raise Lost(state["run_id"])
        if deadline is not None and time.monotonic() > deadline:
            raise TimedOut(self._overtime())
        updated = runs.update(
            self.trail, held, self.worker, principal=RUNTIME, actor=actor.value if actor else None, waiting_for=None
        )
        if updated is None:
            raise Lost(state["run_id"])
        return updated

    # -- the orchestrator -------------------------------------------------------------------

    def _orchestrator(self) -> CompiledStateGraph[Any]:
        graph = StateGraph(RunState)
        graph.add_node("strategize", self._strategize)
        graph.add_node("execute", self._execute)
        graph.add_node("children", self._children)
        graph.add_node("execution", self._execution)
        graph.add_node("next_round", lambda state: {"round": state.get("round", 0) + 1})
        graph.add_node("apply", self._apply)
        graph.add_edge(START, "strategize")
        graph.add_edge("strategize", "execute")
        graph.add_edge("execute", "children")
        graph.add_edge("children", "execution")
        graph.add_conditional_edges("execution", self._after_execution, ["next_round", "apply"])
        graph.add_edge("next_round", "strategize")
        graph.add_edge("apply", END)
        return graph.compile(checkpointer=self.checkpointer)

    def _plan(self, state: RunState) -> Plan:
        return reading.get_plan(self.trail, state["plan_id"], RUNTIME)

    def _strategize(self, state: RunState) -> dict[str, Any]:
        plan = self._plan(state)
        if plan.phase is not Phase.STRATEGIZE:
            return {}
        self._check(state, Actor.RECONCILIATION)
        if state.get("generation", 0) == 0 and state.get("round", 0) == 0:
            # The plan's first Strategize entry, reconciled here rather than by instantiate_plan, so
            # that no worker's strategy comes between the invariants (a run is claimable once it is
            # committed). Reconciling records only what nothing enforces or proposes yet: a turn
            # run again (a crash) records nothing twice.
            self.trail.entered_strategize(plan)
        self._await_reviews(state, plan, Actor.RECONCILIATION)
        replayed = self._run_actor(state, Actor.STRATEGY, plan)
        self._await_reviews(state, plan, Actor.STRATEGY)
        return {"replayed": state.get("replayed", False) or replayed}

    def _execute(self, state: RunState) -> dict[str, Any]:
        plan = self._plan(state)
        if plan.phase is Phase.STRATEGIZE:
            self._check(state)
            self._await_reviews(state, plan, Actor.STRATEGY)
            self._advance(plan.plan_id, Phase.EXECUTE, "strategy complete")
        return {}

    def _children(self, state: RunState) -> dict[str, Any]:
        plan = self._plan(state)
        if plan.phase is not Phase.EXECUTE:
            return {}
        held = self._check(state)
        spawns = [
            d for d in reading.list_decisions(self.trail, plan.plan_id, RUNTIME, current_only=True) if d.decision_type in SPAWNS
        ]
        if not spawns:
            return {}
        child_ids = reading.child_plans_of(self.trail, [plan.plan_id])[0]
        children = [c for c in reading.get_plans(self.trail, child_ids, RUNTIME) if c is not None and not c.is_invalidated]
        for spawn in spawns:
            existing = {c.description for c in children if c.spawned_by_decision_id == spawn.decision_id}
            for description in child_descriptions(
                spawn.chosen_option, spawn.decision_type is DecisionType.SUBPLAN_PARALLEL_SPAWN
            ):
                if description in existing:
                    continue
                child, _ = instantiate_plan(
                    self.trail,
                    description,
                    _child_arguments(plan),
                    automation_profile=plan.automation_profile,
                    spawned_by_decision_id=spawn.decision_id,
                    principal=RUNTIME,
                    owner=plan.owner,
                    run=RunRequest(model=held.model, parent_run_id=held.run_id),
                )
                log.info("run %s spawned child plan %s from decision %s", held.run_id, child.plan_id, spawn.decision_id)
                children.append(child)
        current = [c for c in children if c.spawned_by_decision_id in {s.decision_id for s in spawns}]
        while True:
            child_runs = runs.runs_of_plans(self.trail, [c.plan_id for c in current])
            failed = [r for r in child_runs if r is not None and r.status in (RunStatus.FAILED, RunStatus.CANCELLED)]
            if failed:
                raise Failed(
                    f"the run of child plan {failed[0].plan_id} {failed[0].status.value}: {failed[0].error or ''}".rstrip(": ")
                )
            if all(r is None or r.status is RunStatus.SUCCEEDED for r in child_runs):
                return {}
            interrupt({"waiting": "children", "plan_ids": [c.plan_id for c in current]})
            self._check(state)

    def _execution(self, state: RunState) -> dict[str, Any]:
        plan = self._plan(state)
        if plan.phase is not Phase.EXECUTE:
            return {}
        replayed = self._run_actor(state, Actor.EXECUTION, plan)
        self._await_reviews(state, plan, Actor.EXECUTION)
        return {"replayed": state.get("replayed", False) or replayed}

    def _after_execution(self, state: RunState) -> str:
        return "next_round" if self._plan(state).phase is Phase.STRATEGIZE else "apply"

    def _apply(self, state: RunState) -> dict[str, Any]:
        plan = self._plan(state)
        if plan.phase is Phase.EXECUTE:
            self._check(state)
            self._advance(plan.plan_id, Phase.APPLY, "execution complete")
        return {}

    def _advance(self, plan_id: str, to: Phase, reason: str) -> None:
        """Move the plan on, unless it is there already: a turn taken up again after a cut (Neo4j
        gone while the answer to this very advance was on its way) finds its own advance made."""
        try:
            advance_phase(self.trail, plan_id, to, reason, principal=RUNTIME)
        except RuleViolation as e:
            if e.rule != "phase_transition" or reading.get_plan(self.trail, plan_id, RUNTIME).phase is not to:
                raise
            log.info("plan %s is in %s already: the advance of a turn cut short was made", plan_id, to.value)

    def _await_reviews(self, state: RunState, plan: Plan, actor: Actor) -> None:
        """Pause the run while reviews wait in the plan (resolving one queues the run again)."""
        while pending := reading.pending_reviews(self.trail, plan.plan_id, RUNTIME):
            interrupt({"waiting": "review", "actor": actor.value, "review_ids": [r.review_id for r in pending]})
            self._check(state, actor)

    # -- the actors ---------------------------------------------------------------------------

    def _run_actor(self, state: RunState, role: Actor, plan: Plan) -> bool:
        """Run (or resume) ``role``'s actor on the plan to its end; whether it was the replayed one."""
        self._check(state, role)
        replay = state.get("replay")
        replaying = bool(replay and not state.get("replayed") and actor_of_thread(replay.get("thread_id") or "") is role)
        thread = (
            replay["thread_id"]
            if replaying and replay
            else actor_thread(state["run_id"], state["generation"], role, state["round"])
        )
        brief = self._brief(plan, role, state)
        actor = build_actor(
            self.models(state["model"], role, brief, self.settings),
            self.skills.tools(ToolContext(self.trail, role, RUNTIME)),
            self.checkpointer,
            guard=self._guard(state["run_id"]),
        )
        config: RunnableConfig = {"configurable": {"thread_id": thread, "plan_id": plan.plan_id}}
        snapshot = actor.get_state(config)
        if replaying and replay is not None:
            marker = f"correction-{replay['attempt_id']}"
            if not any(getattr(m, "id", None) == marker for m in snapshot.values.get("messages", [])):
                base = config
                if replay["mode"] == CorrectionMode.REVERT.value and replay.get("checkpoint"):
                    at = actor.get_state(checkpoint_config(CheckpointRef(**replay["checkpoint"])))
                    base = at.parent_config or checkpoint_config(CheckpointRef(**replay["checkpoint"]))
                forked = actor.update_state(
                    base, {"messages": [HumanMessage(CORRECTION_PREFIX + replay["guidance"], id=marker)]}, as_node="tools"
                )
                actor.invoke(None, forked)
        elif not snapshot.values.get("messages"):
            actor.invoke(
                {
                    "messages": [SystemMessage(role_prompt(role)), HumanMessage(brief.text(role))],
                    "plan_id": plan.plan_id,
                    "resources": [],
                    "depends_on": [],
                },
                config,
            )
        while (snapshot := actor.get_state(config)).next:
            self._check(state, role)
            asked = [i.value for i in snapshot.interrupts]
            if not asked:
                actor.invoke(None, config)  # a turn cut short: on from the actor's last checkpoint
                continue
            review_id = asked[0]["review_id"]
            while reading.get_review(self.trail, review_id, RUNTIME).status is ReviewStatus.PENDING:
                interrupt({"waiting": "review", "actor": role.value, "review_ids": [review_id]})
                self._check(state, role)
            actor.invoke(Command(resume={"review_id": review_id}), config)
        return replaying

    def _brief(self, plan: Plan, role: Actor, state: RunState) -> Brief:
        strategy = ""
        if role is Actor.EXECUTION:
            strategy = "\n".join(
                f"- {d.decision_type.value}: {d.question} -> {d.chosen_option}"
                for d in reading.list_decisions(self.trail, plan.plan_id, RUNTIME, current_only=True)
                if d.decision_type in STRATEGIZE_TYPES and d.decision_type is not DecisionType.PROMPT_DEFINITION
            )
        note = ""
        if role is Actor.STRATEGY and state.get("round", 0) > 0:
            changes = reading.phase_changes(self.trail, plan.plan_id, RUNTIME)
            note = f"Back in Strategize: {changes[-1].get('reason') or 'the execution actor reverted'}" if changes else ""
        return Brief(
            plan_id=plan.plan_id,
            description=plan.description,
            arguments=plan.arguments,
            invariants=[f"{i.name}: {i.statement}" for i in plan.invariants],
            strategy=strategy,
            note=note,
        )


def _child_arguments(plan: Plan) -> dict[str, Any]:
    """A child plan's arguments: the parent's depth, one level less (the scripted playbook's bound)."""
    depth = plan.arguments.get("depth", 2)
    depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else 2
    return {"depth": depth - 1}
