"""Benchmark workloads: seeded, realistic plan hierarchies, generated as rows and loaded in batches.

``generate(spec)`` streams plan by plan the rows a run of real actors would leave behind, and
``load`` writes them with ``UNWIND $rows`` batches straight through the driver (no rules are
judged on the way: the generator builds data that already satisfies every rule of
``decisiontrail check``, and the tests prove it). ``subtree_fixture`` and ``tree_fixture`` build
the single plans the correction and nested-tree benchmarks time.

Each plan is recorded as a run would record it. Strategize first: the root ``prompt_definition``
(#0); one ``invariant_enforced`` per invariant the plan declares (0-2, as the reconciliation
actor records them); 1-3 ``strategy_choice`` under the root; then, under strategies, one
``subplan_spawn`` per child plan and the Strategize share of the type mix below. Execute next:
``implementation_choice`` under strategies, and under implementation choices the tool calls,
their error recoveries (a tool call may follow a recovery), validations, execute-phase resource
selections and user interventions. The rest of a plan, after the root, invariants, top
strategies and spawns, draws its types from ``REST_MIX``:

    tool_invocation 44%, implementation_choice 17%, validation_response 12%,
    resource_selection 9% (half Strategize, half Execute), strategy_choice 8% (nested under
    strategies), error_recovery 8%, user_intervention 2%

``DEPENDS_ON`` points only at an earlier decision of the same plan, and a Strategize decision
depends only on Strategize decisions, so correcting an Execute decision never reaches a spawn
or a child plan. Superseded history: some ``implementation_choice`` decisions are corrected the
way ``correct(..., "revert")`` does it (their subtree and dependents, transitively, get
``superseded_at`` and ``SUPERSEDED_BY {at}`` to a ``user_intervention`` correction under the
original's parent, which ``CORRECTS`` the original), and the replay that follows records new
Execute decisions under the correction. Every plan ends in Apply.

Not written, because no benchmarked read needs them: ``Context`` nodes (snapshots use external
``bench://context/<hash>`` references), ``CheckpointGroup``, ``PhaseChange``, ``Review`` and
``CorrectionAttempt`` nodes, and idempotency keys. Ids are ULIDs drawn from a generator seeded
by the spec, so loading the same spec twice into one database breaks the unique constraints:
load into an empty database, or change the seed.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, LiteralString, NamedTuple

from ulid import ULID

from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.invariants import Invariant, reconcile
from decisiontrail.domain.plan import Plan
from decisiontrail.domain.recording import SYSTEM_DECISION_TYPES
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.records import plan_properties
from decisiontrail.domain.recording import PROMPT_QUESTION, prompt_context

_T = DecisionType

REST_MIX: dict[DecisionType, int] = {
    _T.TOOL_INVOCATION: 44,
    _T.IMPLEMENTATION_CHOICE: 17,
    _T.VALIDATION_RESPONSE: 12,
    _T.RESOURCE_SELECTION: 9,
    _T.STRATEGY_CHOICE: 8,
    _T.ERROR_RECOVERY: 8,
    _T.USER_INTERVENTION: 2,
}
"""Weights of the decision types after each plan's fixed structure (see the module docstring)."""

# What Execute draws from: the rest without its Strategize share (strategies, half the resource selections).
_EXECUTE_MIX = {
    kind: weight / 2 if kind is _T.RESOURCE_SELECTION else weight
    for kind, weight in REST_MIX.items()
    if kind is not _T.STRATEGY_CHOICE
}
_EPOCH = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)
_SUBTREE_MIX = {_T.TOOL_INVOCATION: 6, _T.ERROR_RECOVERY: 2, _T.VALIDATION_RESPONSE: 2}
_SUBTREE_FAN_OUT = 10
_RECONCILE_QUESTION = "Should this invariant apply to this plan?"  # the reconciliation actor's


@dataclass(frozen=True)
class WorkloadSpec:
    """How big and how shaped a workload is; the same spec always generates the same rows."""

    seed: int = 7
    hierarchies: int = 1  # root plans
    depth: int = 2  # levels of child plans below each root plan (0 = root plans only)
    fan_out: int = 2  # child plans per non-leaf plan, each spawned by its own subplan_spawn decision
    decisions_per_plan: int = 50
    depends_on_density: float = 0.2  # probability a decision also DEPENDS_ON one earlier decision of its plan
    superseded_share: float = 0.1  # approximate share of decisions that are superseded history

    def __post_init__(self) -> None:
        if self.hierarchies < 1 or self.depth < 0 or self.fan_out < 1:
            raise ValueError("a workload needs at least one hierarchy, a depth of 0 or more and a fan-out of 1 or more")
        if not (0.0 <= self.depends_on_density <= 1.0 and 0.0 <= self.superseded_share <= 0.5):
            raise ValueError("depends_on_density is a probability; superseded_share lies in [0, 0.5]")
        least = _least_decisions(self.fan_out if self.depth else 0)
        if self.decisions_per_plan < least:
            raise ValueError(f"decisions_per_plan must be at least {least} for this fan-out")

    @classmethod
    def sized(cls, decisions: int, **overrides: Any) -> WorkloadSpec:
        """The spec with as many hierarchies as bring the total nearest ``decisions``."""
        if "hierarchies" in overrides:
            raise TypeError("sized() chooses hierarchies itself")
        shape = cls(**overrides)
        per_hierarchy = shape.plans_per_hierarchy * shape.decisions_per_plan
        return replace(shape, hierarchies=max(1, round(decisions / per_hierarchy)))

    @property
    def plans_per_hierarchy(self) -> int:
        return sum(self.fan_out**level for level in range(self.depth + 1))

    @property
    def plans(self) -> int:
        return self.hierarchies * self.plans_per_hierarchy

    @property
    def total_decisions(self) -> int:
        """Exact: every plan holds ``decisions_per_plan`` decisions, corrections and replays included."""
        return self.plans * self.decisions_per_plan


class Link(NamedTuple):
    """A relationship from ``source`` (the dependent end) to ``target`` (what it hangs on)."""

    source: str
    target: str


class Dependency(NamedTuple):
    source: str
    target: str
    ordinal: int


class Supersession(NamedTuple):
    source: str  # the superseded decision
    target: str  # the correction that superseded it
    at: datetime


@dataclass(frozen=True)
class PlanRows:
    """One plan as rows: its node, its decisions' nodes (in sequence order) and its relationships.

    ``IN_PLAN`` follows each decision's ``plan_id``; ``child_of`` and ``spawned_by`` are set on
    child plans only. Every relationship points from the dependent end, as in Neo4j.
    """

    plan: dict[str, Any]
    decisions: list[dict[str, Any]]
    parents: list[Link] = field(default_factory=list)
    depends_on: list[Dependency] = field(default_factory=list)
    corrects: list[Link] = field(default_factory=list)
    superseded_by: list[Supersession] = field(default_factory=list)
    child_of: Link | None = None
    spawned_by: Link | None = None
    level: int = 0  # 0 for a root plan

    @property
    def plan_id(self) -> str:
        return str(self.plan["plan_id"])

    @property
    def relationships(self) -> int:
        spawn_links = 2 if self.child_of is not None else 0
        return (
            len(self.decisions)
            + len(self.parents)
            + len(self.depends_on)
            + len(self.corrects)
            + len(self.superseded_by)
            + spawn_links
        )

    def depths(self) -> dict[str, int]:
        """Each decision's depth in the plan's tree (the root is 0)."""
        parent = dict(self.parents)
        depth: dict[str, int] = {}
        for row in self.decisions:  # in sequence order, so a parent always comes first
            above = parent.get(row["decision_id"])
            depth[row["decision_id"]] = 0 if above is None else depth[above] + 1
        return depth


@dataclass(frozen=True)
class LoadResult:
    """What ``load`` wrote, how long it took, and decisions worth querying in it."""

    plans: int
    decisions: int
    relationships: int
    seconds: float
    root_plan_ids: tuple[str, ...]
    root_decision_id: str  # the first root plan's prompt_definition: its impact is the whole hierarchy
    top_decision_id: str  # a strategy_choice under that root whose subtree spawns child plans
    deep_decision_id: str  # the deepest current decision of a deepest plan: the longest lineage
    implementation_decision_id: str | None  # that plan's current implementation_choice with most children: an Execute-only impact
    corrected_decision_id: str | None  # an implementation_choice a correction superseded: correction history


def generate(spec: WorkloadSpec) -> Iterator[PlanRows]:
    """The workload's plans, one at a time, each root plan followed depth-first by the plans below it."""
    rng = random.Random(f"workload:{spec!r}")
    for hierarchy in range(spec.hierarchies):
        # (parent plan id, spawning decision id, level, creation time)
        pending: list[tuple[str | None, str | None, int, datetime]] = [(None, None, 0, _EPOCH + timedelta(minutes=3 * hierarchy))]
        number = 0
        while pending:
            parent_plan_id, spawned_by, level, start = pending.pop()
            spawns = spec.fan_out if level < spec.depth else 0
            number += 1
            run = _PlanRun(
                rng,
                start,
                spec.decisions_per_plan,
                f"Benchmark plan {hierarchy}.{number}: {rng.choice(_TASKS)}",
                density=spec.depends_on_density,
                superseded_share=spec.superseded_share,
                spawns=spawns,
                level=level,
            )
            run.record_strategize(invariants=rng.choice((0, 1, 1, 2)))
            run.record_execute()
            rows = run.rows(parent_plan_id=parent_plan_id, spawned_by=spawned_by)
            yield rows
            for spawn in reversed(run.spawns):
                spawn_row = run.decision_rows[spawn]
                child_start = spawn_row["created_at"] + timedelta(milliseconds=rng.randrange(5_000, 120_000))
                pending.append((rows.plan_id, spawn_row["decision_id"], level + 1, child_start))


def load(
    graph: Graph, spec: WorkloadSpec, *, batch_size: int = 5000, progress: Callable[[int, int], None] | None = None
) -> LoadResult:
    """Generate ``spec`` and write it into ``graph`` (best an empty database) in ``UNWIND`` batches.

    ``progress(done, total)`` is called with decisions written after each batch of decisions.
    """
    started = time.perf_counter()
    writer = _Writer(graph, batch_size, progress, spec.total_decisions)
    roots: list[str] = []
    root_id = top_id = ""
    deepest: tuple[int, int] = (-1, -1)
    deep_id, implementation_id, corrected_id = "", None, None
    for rows in generate(spec):
        writer.add(rows)
        if rows.level == 0:
            roots.append(rows.plan_id)
            if len(roots) == 1:
                root_id, top_id = rows.decisions[0]["decision_id"], _spawning_strategy(rows)
        if corrected_id is None and rows.corrects:
            corrected_id = rows.corrects[0].target
        current = {row["decision_id"]: row for row in rows.decisions if "superseded_at" not in row}
        depth, leaf = max((d, i) for i, d in rows.depths().items() if i in current)
        if (rows.level, depth) > deepest:
            deepest, deep_id = (rows.level, depth), leaf
            children = Counter(parent for child, parent in rows.parents if child in current)
            implementations = [i for i, row in current.items() if row["decision_type"] == _T.IMPLEMENTATION_CHOICE.value]
            implementation_id = max(implementations, key=lambda i: children[i], default=None)
    writer.finish()
    return LoadResult(
        plans=writer.plans,
        decisions=writer.decisions,
        relationships=writer.relationships,
        seconds=time.perf_counter() - started,
        root_plan_ids=tuple(roots),
        root_decision_id=root_id,
        top_decision_id=top_id,
        deep_decision_id=deep_id,
        implementation_decision_id=implementation_id,
        corrected_decision_id=corrected_id,
    )


def subtree_fixture(graph: Graph, downstream: int, *, copies: int = 1, seed: int = 7, batch_size: int = 5000) -> list[str]:
    """Write ``copies`` plans, each with a decision whose correction invalidates exactly
    ``downstream`` decisions (itself included); returns those decisions' ids. ``batch_size`` rows
    go in each transaction (fewer for a server that allows a transaction little memory).

    Each plan (in Execute) has its root, a strategy_choice, a small sibling branch that must
    stay out of the closure, and the implementation_choice X under the strategy, with a bushy
    tree of Execute decisions below X (fan-out 10, DEPENDS_ON only inside X's subtree).
    """
    if downstream < 1 or copies < 1:
        raise ValueError("downstream and copies must be at least 1 (the downstream counts the corrected decision)")
    rng = random.Random(f"subtree:{seed}:{downstream}:{copies}")
    writer = _Writer(graph, batch_size, None, copies * (downstream + 6))
    targets = []
    for copy in range(copies):
        description = f"Correction benchmark {seed}.{copy}: downstream of {downstream}"
        run = _PlanRun(rng, _EPOCH + timedelta(hours=copy), downstream + 6, description, density=0.0)
        root = run.record_root()
        strategy = run.record(_T.STRATEGY_CHOICE, Phase.STRATEGIZE, root)
        sibling = run.record(_T.IMPLEMENTATION_CHOICE, Phase.EXECUTE, strategy, depends=strategy)
        for _ in range(3):
            run.record(_T.TOOL_INVOCATION, Phase.EXECUTE, sibling)
        members = [run.record(_T.IMPLEMENTATION_CHOICE, Phase.EXECUTE, strategy)]
        kinds, weights = list(_SUBTREE_MIX), list(_SUBTREE_MIX.values())
        for i in range(1, downstream):
            parent = members[(i - 1) // _SUBTREE_FAN_OUT]
            dependency = members[rng.randrange(len(members))] if rng.random() < 0.1 else None
            members.append(
                run.record(
                    rng.choices(kinds, weights)[0], Phase.EXECUTE, parent, depends=dependency if dependency != parent else None
                )
            )
        writer.add(run.rows(phase=Phase.EXECUTE))
        targets.append(run.decision_rows[members[0]]["decision_id"])
    writer.finish()
    return targets


def tree_fixture(graph: Graph, decisions: int = 1000, *, seed: int = 7) -> str:
    """Write one applied plan of ``decisions`` decisions, with no superseded history, a
    realistic tree (most decisions 3-6 levels below the root, the deepest 7) and DEPENDS_ON
    edges (density about 0.3); returns its id."""
    if decisions < _least_decisions(0):
        raise ValueError(f"a tree needs at least {_least_decisions(0)} decisions")
    rng = random.Random(f"tree:{seed}:{decisions}")
    run = _PlanRun(rng, _EPOCH, decisions, f"Nested tree benchmark {seed}: {decisions} decisions", density=0.3)
    run.record_strategize(invariants=1)
    run.record_execute()
    rows = run.rows()
    writer = _Writer(graph, 5000, None, decisions)
    writer.add(rows)
    writer.finish()
    return rows.plan_id


# -- building one plan ---------------------------------------------------------------------


def _least_decisions(spawns: int) -> int:
    """The smallest plan that holds the fixed structure: root, a strategy, the spawns and one
    implementation choice."""
    return 3 + spawns


class _PlanRun:
    """One plan's decisions as a run records them, by sequence number (index).

    ``reserve`` decisions at the end are kept for history: corrections and the replays after
    them (or, when nothing fits the superseded budget, more Execute work).
    """

    def __init__(
        self,
        rng: random.Random,
        start: datetime,
        size: int,
        description: str,
        *,
        density: float,
        superseded_share: float = 0.0,
        spawns: int = 0,
        level: int = 0,
    ) -> None:
        self.rng = rng
        self.size = size
        self.density = density
        self.spawn_count = spawns
        self.reserve = min(round(size * superseded_share), size - _least_decisions(spawns))
        self.superseded_budget = round(size * superseded_share)
        self.start = start
        self.clock = start
        self.plan_id = _ulid(rng, start)
        self.description = description
        self.level = level
        self.arguments: dict[str, Any] = {"module": f"src/service/module_{rng.randrange(400)}.py", "level": level}
        self.invariants: list[Invariant] = []
        self.decision_rows: list[dict[str, Any]] = []
        self.kinds: list[DecisionType] = []
        self.parent: list[int | None] = []
        self.depends: list[int | None] = []
        self.children: list[list[int]] = []
        self.dependents: list[list[int]] = []
        self.superseded_by: dict[int, int] = {}
        self.corrections: list[tuple[int, int]] = []  # (correction, original)
        self.strategies: list[int] = []
        self.strategize: list[int] = []  # the non-root Strategize decisions
        self.execute: list[int] = []
        self.by_kind: dict[DecisionType, list[int]] = {kind: [] for kind in _T}
        self.spawns: list[int] = []
        self.first_hand_tools: list[int] = []  # tool invocations right under an implementation choice
        self.threads = {phase: f"{phase.value}-{self.plan_id}" for phase in (Phase.STRATEGIZE, Phase.EXECUTE)}

    # Strategize

    def record_root(self) -> int:
        prompt = prompt_context(self.description, self.arguments)
        return self.record(
            _T.PROMPT_DEFINITION,
            Phase.STRATEGIZE,
            None,
            context_hash=prompt.context_hash,
            content=(
                PROMPT_QUESTION,
                prompt.content,
                [],
                None,
                "Created by the plan lifecycle engine from the action's description and the user's arguments.",
            ),
        )

    def record_strategize(self, *, invariants: int) -> None:
        """The root, invariants, top strategies, spawns and the Strategize share of the rest."""
        root = self.record_root()
        # Room for what is not fixed, keeping one slot for an implementation choice.
        room = self.size - self.reserve - 1 - self.spawn_count - 1
        self.invariants = self.rng.sample(_INVARIANTS, min(invariants, room - 1))
        for enforced in reconcile(self.invariants):
            self.record(
                _T.INVARIANT_ENFORCED,
                Phase.STRATEGIZE,
                root,
                content=(
                    _RECONCILE_QUESTION,
                    enforced.invariant.statement,
                    [o.statement for o in enforced.overridden],
                    1.0,
                    f"{enforced.invariant.name}: {enforced.rationale}",
                ),
            )
        room -= len(self.invariants)
        tops = max(1, min(self.rng.randint(1, 3), room))
        for _ in range(tops):
            self.record(_T.STRATEGY_CHOICE, Phase.STRATEGIZE, root, depends=self._strategize_dependency())
        rest = self.rng.choices(list(REST_MIX), list(REST_MIX.values()), k=max(0, room - tops))
        nested = [_T.SUBPLAN_SPAWN] * self.spawn_count + [
            kind for kind in rest if kind is _T.STRATEGY_CHOICE or (kind is _T.RESOURCE_SELECTION and self.rng.random() < 0.5)
        ]
        self.rng.shuffle(nested)
        top_strategies = list(self.strategies)
        for kind in nested:
            # Strategies refine a top strategy, one level deep; the rest hangs under any strategy.
            parent = self.rng.choice(top_strategies if kind is _T.STRATEGY_CHOICE else self.strategies)
            self.record(kind, Phase.STRATEGIZE, parent, depends=self._strategize_dependency())

    # Execute, corrections and the replays after them

    def record_execute(self) -> None:
        """Execute decisions up to the plan's size: the run, then corrections that supersede
        about the superseded share of the plan, each followed by its replay."""
        kinds, weights = list(_EXECUTE_MIX), list(_EXECUTE_MIX.values())
        while len(self.decision_rows) < self.size - self.reserve:
            self.record_execute_step(self.rng.choices(kinds, weights)[0])
        budget = self.superseded_budget
        while len(self.decision_rows) < self.size:
            # A correction needs its own slot and one for the replay's implementation choice.
            target = self._correctable(budget) if len(self.decision_rows) < self.size - 1 else None
            if target is None:
                self.record_execute_step(self.rng.choices(kinds, weights)[0])
                continue
            origin, closure = target
            budget -= len(closure)
            correction = self.correct(origin, closure)
            replay = min(self.size - len(self.decision_rows), max(1, len(closure) - 1))
            self.record_execute_step(_T.IMPLEMENTATION_CHOICE, parent=correction)
            for _ in range(replay - 1):
                self.record_execute_step(self.rng.choices(kinds, weights)[0])

    def record_execute_step(self, kind: DecisionType, *, parent: int | None = None) -> int:
        implementation = self._recent(self.by_kind[_T.IMPLEMENTATION_CHOICE], wander=0.25)
        if implementation is None:
            kind = _T.IMPLEMENTATION_CHOICE
        if parent is None:
            parent = self._execute_parent(kind, implementation)
        return self.record(kind, Phase.EXECUTE, parent, depends=self._execute_dependency(parent))

    def correct(self, origin: int, closure: list[int]) -> int:
        """Supersede ``closure`` (``origin`` first) by a user_intervention under the origin's parent."""
        reason = self.rng.choice(_REASONS)
        correction = self.record(
            _T.USER_INTERVENTION,
            Phase.EXECUTE,
            self.parent[origin],
            content=(
                f"Correction of a {self.kinds[origin].value}: {self.decision_rows[origin]['question']}",
                self.rng.choice(_GUIDANCE),
                [self.decision_rows[origin]["chosen_option"]],
                None,
                reason,
            ),
        )
        row = self.decision_rows[correction]
        row.update(is_correction=True, correction_reason=reason)
        for superseded in closure:
            self.superseded_by[superseded] = correction
            self.decision_rows[superseded]["superseded_at"] = row["created_at"]
        self.corrections.append((correction, origin))
        return correction

    def closure(self, origin: int) -> list[int]:
        """What correcting ``origin`` supersedes: it, its subtree and its dependents, transitively."""
        reached, seen, stack = [origin], {origin}, [origin]
        while stack:
            node = stack.pop()
            for nxt in (*self.children[node], *self.dependents[node]):
                if nxt not in seen and nxt not in self.superseded_by:
                    seen.add(nxt)
                    reached.append(nxt)
                    stack.append(nxt)
        return reached

    # Recording one decision

    def record(
        self,
        kind: DecisionType,
        phase: Phase,
        parent: int | None,
        *,
        depends: int | None = None,
        content: tuple[str, str, list[str], float | None, str] | None = None,
        context_hash: str | None = None,
    ) -> int:
        index = len(self.decision_rows)
        step = self.rng.uniform(20, 90) if kind is _T.IMPLEMENTATION_CHOICE else self.rng.uniform(0.5, 12)
        self.clock += timedelta(milliseconds=max(1, int(step * 1000)))
        question, chosen, alternatives, confidence, rationale = content or self._content(kind)
        context_hash = context_hash or f"{self.rng.getrandbits(256):064x}"
        row: dict[str, Any] = {
            "decision_id": _ulid(self.rng, self.clock),
            "plan_id": self.plan_id,
            "sequence_number": index,
            "decision_type": kind.value,
            "phase": phase.value,
            "question": question,
            "chosen_option": chosen,
            "alternatives_considered": alternatives,
            "hot_context_hash": context_hash,
            "hot_context_ref": f"bench://context/{context_hash}",
            "relevant_resources": "[]",
            "rationale": rationale,
            "artifacts_produced": "[]",
            "created_at": self.clock,
            "is_correction": False,
        }
        if confidence is not None:
            row["confidence_score"] = confidence
        if kind not in SYSTEM_DECISION_TYPES:
            thread = self.threads[phase] if kind is not _T.INVARIANT_ENFORCED else f"reconcile-{self.plan_id}"
            row["actor_state_thread_id"] = thread
            row["actor_state_checkpoint_ns"] = ""
            row["actor_state_checkpoint_id"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.decision_rows.append(row)
        self.kinds.append(kind)
        self.parent.append(parent)
        self.depends.append(depends)
        self.children.append([])
        self.dependents.append([])
        if parent is not None:
            self.children[parent].append(index)
        if depends is not None:
            self.dependents[depends].append(index)
        self.by_kind[kind].append(index)
        if kind is _T.STRATEGY_CHOICE:
            self.strategies.append(index)
        if kind is _T.SUBPLAN_SPAWN:
            self.spawns.append(index)
        if kind is _T.TOOL_INVOCATION and parent is not None and self.kinds[parent] is _T.IMPLEMENTATION_CHOICE:
            self.first_hand_tools.append(index)
        if phase is Phase.EXECUTE:
            self.execute.append(index)
        elif parent is not None:
            self.strategize.append(index)
        return index

    def rows(self, *, phase: Phase = Phase.APPLY, parent_plan_id: str | None = None, spawned_by: str | None = None) -> PlanRows:
        plan = Plan(
            plan_id=self.plan_id,
            description=self.description,
            arguments=self.arguments,
            phase=phase,
            parent_plan_id=parent_plan_id,
            spawned_by_decision_id=spawned_by,
            invariants=tuple(self.invariants),
            created_at=self.start,
        )
        ids = [row["decision_id"] for row in self.decision_rows]
        return PlanRows(
            plan={**{k: v for k, v in plan_properties(plan).items() if v is not None}, "next_sequence": len(ids)},
            decisions=self.decision_rows,
            parents=[Link(ids[i], ids[p]) for i, p in enumerate(self.parent) if p is not None],
            depends_on=[Dependency(ids[i], ids[d], 0) for i, d in enumerate(self.depends) if d is not None],
            corrects=[Link(ids[c], ids[o]) for c, o in self.corrections],
            superseded_by=[
                Supersession(ids[s], ids[c], self.decision_rows[c]["created_at"]) for s, c in sorted(self.superseded_by.items())
            ],
            child_of=Link(self.plan_id, parent_plan_id) if parent_plan_id else None,
            spawned_by=Link(self.plan_id, spawned_by) if spawned_by else None,
            level=self.level,
        )

    # Choosing parents, dependencies and corrections

    def _recent(self, recorded: list[int], *, wander: float = 0.0, within: int = 6) -> int | None:
        """A current decision of those ``recorded``: usually the latest, sometimes (``wander``) an older one."""
        recent = [i for i in recorded[-within:] if i not in self.superseded_by]
        if not recent:
            current = [i for i in recorded if i not in self.superseded_by]
            return current[-1] if current else None
        return self.rng.choice(recent) if self.rng.random() < wander else recent[-1]

    def _execute_parent(self, kind: DecisionType, implementation: int | None) -> int:
        if kind is _T.IMPLEMENTATION_CHOICE or implementation is None:
            return self.rng.choice(self.strategies)
        tool = self._recent(self.by_kind[_T.TOOL_INVOCATION], within=3)
        if kind is _T.TOOL_INVOCATION:
            # A retry after a recovery; recoveries follow first-hand tool calls only, which bounds the depth.
            recovery = self._recent(self.by_kind[_T.ERROR_RECOVERY], within=2)
            return recovery if recovery is not None and self.rng.random() < 0.3 else implementation
        if kind is _T.ERROR_RECOVERY:
            first_hand = self._recent(self.first_hand_tools, within=3)
            return first_hand if first_hand is not None else implementation
        if kind is _T.VALIDATION_RESPONSE and tool is not None and self.rng.random() < 0.5:
            return tool
        return implementation

    def _strategize_dependency(self) -> int | None:
        if not self.strategize or self.rng.random() >= self.density:
            return None
        return self.rng.choice(self.strategize)

    def _execute_dependency(self, parent: int) -> int | None:
        if self.rng.random() >= self.density:
            return None
        if self.rng.random() < 0.5:
            pool = self.strategize
        else:
            pool = [i for i in self.execute[-10:] if i not in self.superseded_by and i != parent]
        return self.rng.choice(pool) if pool else None

    def _correctable(self, budget: int) -> tuple[int, list[int]] | None:
        """Of a few current implementation choices, the one whose closure comes nearest
        ``budget``, if it overshoots by less than the budget itself."""
        if budget <= 0:
            return None
        candidates = [i for i in self.by_kind[_T.IMPLEMENTATION_CHOICE] if i not in self.superseded_by]
        self.rng.shuffle(candidates)
        closures = [(origin, self.closure(origin)) for origin in candidates[:8]]
        best = min(closures, key=lambda c: abs(len(c[1]) - budget), default=None)
        return best if best is not None and len(best[1]) < 2 * budget else None

    def _content(self, kind: DecisionType) -> tuple[str, str, list[str], float | None, str]:
        question, options = _CONTENT[kind]
        subject = f"module_{self.rng.randrange(400)}"
        chosen, *alternatives = (o.format(subject) for o in self.rng.sample(options, self.rng.randint(1, 3)))
        confidence = None if kind in SYSTEM_DECISION_TYPES else round(self.rng.uniform(0.55, 0.99), 2)
        rationale = self.rng.choice(_RATIONALES).format(subject)
        return question.format(subject), chosen, alternatives, confidence, rationale


def _spawning_strategy(rows: PlanRows) -> str:
    """The top strategy_choice of a plan that has a spawn below it (else the first top strategy)."""
    parent = dict(rows.parents)
    root: str = rows.decisions[0]["decision_id"]
    spawns = [r["decision_id"] for r in rows.decisions if r["decision_type"] == _T.SUBPLAN_SPAWN.value]
    node: str = (
        spawns[0] if spawns else next(r["decision_id"] for r in rows.decisions if r["decision_type"] == _T.STRATEGY_CHOICE.value)
    )
    while parent[node] != root:
        node = parent[node]
    return node


def _ulid(rng: random.Random, at: datetime) -> str:
    """A ULID at ``at``, its randomness from the seeded generator."""
    return str(ULID.from_bytes((_millis(at) or 0).to_bytes(6, "big") + rng.randbytes(10)))


# -- writing -------------------------------------------------------------------------------
#
# Decision times travel as epoch milliseconds and become datetimes in Cypher: the driver turns
# Python datetimes into Bolt values in pure Python, and that took a third of the load's time.

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_CREATE_PLANS: LiteralString = "UNWIND $rows AS row CREATE (plan:Plan) SET plan = row"
# Setting a property to null leaves it out, as the real store leaves out what is None.
_CREATE_DECISIONS: LiteralString = """
UNWIND $rows AS row
MATCH (plan:Plan {plan_id: row.plan_id})
CREATE (d:Decision)-[:IN_PLAN]->(plan)
SET d = row,
    d.created_at = datetime({epochMillis: row.created_at}),
    d.superseded_at = CASE WHEN row.superseded_at IS NULL THEN null ELSE datetime({epochMillis: row.superseded_at}) END
"""
_CREATE_PARENT: LiteralString = """
UNWIND $rows AS row
MATCH (child:Decision {decision_id: row.source})
MATCH (parent:Decision {decision_id: row.target})
CREATE (child)-[:PARENT]->(parent)
"""
_CREATE_DEPENDS_ON: LiteralString = """
UNWIND $rows AS row
MATCH (dependent:Decision {decision_id: row.source})
MATCH (dependency:Decision {decision_id: row.target})
CREATE (dependent)-[:DEPENDS_ON {ordinal: row.ordinal}]->(dependency)
"""
_CREATE_CORRECTS: LiteralString = """
UNWIND $rows AS row
MATCH (correction:Decision {decision_id: row.source})
MATCH (original:Decision {decision_id: row.target})
CREATE (correction)-[:CORRECTS]->(original)
"""
_CREATE_SUPERSEDED_BY: LiteralString = """
UNWIND $rows AS row
MATCH (original:Decision {decision_id: row.source})
MATCH (successor:Decision {decision_id: row.target})
CREATE (original)-[:SUPERSEDED_BY {at: row.at}]->(successor)
"""
_CREATE_CHILD_OF: LiteralString = """
UNWIND $rows AS row
MATCH (child:Plan {plan_id: row.source})
MATCH (parent:Plan {plan_id: row.target})
CREATE (child)-[:CHILD_OF]->(parent)
"""
_CREATE_SPAWNED_BY: LiteralString = """
UNWIND $rows AS row
MATCH (child:Plan {plan_id: row.source})
MATCH (spawning:Decision {decision_id: row.target})
CREATE (child)-[:SPAWNED_BY]->(spawning)
"""
_NODES = (_CREATE_PLANS, _CREATE_DECISIONS)
_RELATIONSHIPS = (
    _CREATE_PARENT,
    _CREATE_DEPENDS_ON,
    _CREATE_CORRECTS,
    _CREATE_SUPERSEDED_BY,
    _CREATE_CHILD_OF,
    _CREATE_SPAWNED_BY,
)


def _decision_parameter(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "created_at": _millis(row["created_at"]), "superseded_at": _millis(row.get("superseded_at"))}


def _millis(at: datetime | None) -> int | None:
    return None if at is None else (at - _UNIX_EPOCH) // timedelta(milliseconds=1)


class _Writer:
    """Buffers rows per statement and writes them in batches, nodes always before the
    relationships that need them (every relationship's ends come from earlier or the same plan)."""

    def __init__(self, graph: Graph, batch_size: int, progress: Callable[[int, int], None] | None, total: int) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.graph = graph
        self.batch_size = batch_size
        self.progress = progress
        self.total = total
        self.buffers: dict[LiteralString, list[dict[str, Any]]] = {s: [] for s in (*_NODES, *_RELATIONSHIPS)}
        self.plans = self.decisions = self.relationships = 0

    def add(self, rows: PlanRows) -> None:
        self.buffers[_CREATE_PLANS].append(rows.plan)
        self.buffers[_CREATE_DECISIONS].extend(_decision_parameter(row) for row in rows.decisions)
        for statement, links in (
            (_CREATE_PARENT, rows.parents),
            (_CREATE_DEPENDS_ON, rows.depends_on),
            (_CREATE_CORRECTS, rows.corrects),
            (_CREATE_SUPERSEDED_BY, rows.superseded_by),
            (_CREATE_CHILD_OF, [rows.child_of] if rows.child_of else []),
            (_CREATE_SPAWNED_BY, [rows.spawned_by] if rows.spawned_by else []),
        ):
            self.buffers[statement].extend(link._asdict() for link in links)
        if any(len(buffer) >= self.batch_size for buffer in self.buffers.values()):
            self._flush(whole=False)

    def finish(self) -> None:
        self._flush(whole=True)

    def _flush(self, *, whole: bool) -> None:
        for statement in _NODES:
            self._write(statement, whole=True)
        for statement in _RELATIONSHIPS:
            self._write(statement, whole=whole)

    def _write(self, statement: LiteralString, *, whole: bool) -> None:
        buffer = self.buffers[statement]
        while len(buffer) >= self.batch_size or (whole and buffer):
            batch, buffer[:] = buffer[: self.batch_size], buffer[self.batch_size :]
            summary = self.graph.driver.execute_query(statement, {"rows": batch}, database_=self.graph.database).summary
            created = summary.counters.relationships_created if statement in _RELATIONSHIPS else summary.counters.nodes_created
            if created != len(batch):
                raise RuntimeError(f"a batch of {len(batch)} rows created {created}: a row names a node that is not there")
            self.relationships += summary.counters.relationships_created
            if statement == _CREATE_PLANS:
                self.plans += created
            elif statement == _CREATE_DECISIONS:
                self.decisions += created
                if self.progress is not None:
                    self.progress(self.decisions, self.total)


# -- what the decisions say ----------------------------------------------------------------

_INVARIANTS = [
    Invariant(name="tests-pass", statement="The whole test suite passes before Apply"),
    Invariant(name="no-secrets", statement="No credentials or tokens are written to the repository"),
    Invariant(name="api-compatible", statement="Public function signatures stay backward compatible"),
    Invariant(name="coverage", statement="Line coverage of changed files stays at or above 85%"),
]

_CONTENT: dict[DecisionType, tuple[str, list[str]]] = {
    _T.STRATEGY_CHOICE: (
        "How should the change to {} be approached?",
        [
            "Refactor {} behind an interface first",
            "Extend {} in place",
            "Rewrite {} from its tests",
            "Add a compatibility layer around {}",
            "Split {} into two modules",
        ],
    ),
    _T.RESOURCE_SELECTION: (
        "Which resources does the work on {} need?",
        ["{} and its tests", "{} with the schema definitions", "The call sites of {}", "The fixtures used by {}"],
    ),
    _T.SUBPLAN_SPAWN: (
        "Which part of {} becomes its own plan?",
        ["Migrate the callers of {}", "Update the documentation of {}", "Port the tests of {}", "Harden the error paths of {}"],
    ),
    _T.IMPLEMENTATION_CHOICE: (
        "How should {} be implemented?",
        [
            "Use a dataclass in {}",
            "Use a generator pipeline in {}",
            "Cache lookups in {}",
            "Batch the queries of {}",
            "Validate input at the edge of {}",
        ],
    ),
    _T.TOOL_INVOCATION: (
        "Which tool runs next on {}?",
        ["pytest tests/test_{}.py", "ruff check {}", "mypy --strict {}", "edit_file {}", "grep -rn TODO {}", "git diff {}"],
    ),
    _T.ERROR_RECOVERY: (
        "How to recover from the failure in {}?",
        [
            "Retry with a longer timeout for {}",
            "Revert the last edit to {}",
            "Fix the import in {}",
            "Skip the flaky check of {}",
        ],
    ),
    _T.VALIDATION_RESPONSE: (
        "What does the validation of {} call for?",
        ["Accept the result for {}", "Tighten the assertion in {}", "Add a missing test for {}", "Reject and re-run {}"],
    ),
    _T.USER_INTERVENTION: (
        "What did the user direct about {}?",
        ["Keep the public API of {}", "Prefer readability in {}", "Do not touch the generated code near {}"],
    ),
}

_RATIONALES = [
    "{} is small enough to change in one step.",
    "The tests around {} make this the safest option.",
    "This keeps {} consistent with its neighbours.",
    "The other options would touch more callers of {}.",
    "Earlier runs on {} failed the other way.",
]
_TASKS = [
    "add pagination to the export endpoint",
    "replace the retry loop with backoff",
    "split the settings module",
    "migrate the parser to the new grammar",
    "add audit logging to writes",
    "remove the deprecated client",
]
_GUIDANCE = ["Use the other approach", "Keep the existing data model", "Do it in smaller steps", "Prefer the standard library"]
_REASONS = ["The chosen approach broke a downstream consumer", "The user prefers a different design", "It ignored an invariant"]
