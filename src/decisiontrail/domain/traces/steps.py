"""The steps one trace's spans become: the plans, phase changes and decisions a service writes in one transaction.

Everything here is pure: ``import_steps`` orders what the spans carry (conventions.py says what
that is, content.py what each decision says), places each decision under its parent and in a
phase its type allows, and derives every id from the trace and span ids, so a trace becomes the
same records however often it is sent. The service writes the steps, and the placement rules
judge them again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from ulid import ULID

from decisiontrail.domain.decision import (
    PHASES_BY_TYPE,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Phase,
    ResourceRef,
)
from decisiontrail.domain.plan import Plan
from decisiontrail.domain.recording import PROMPT_QUESTION, CapturedContext, prompt_context
from decisiontrail.domain.traces.content import agent_name, content, plan_noun
from decisiontrail.domain.traces.conventions import DECISION_PREFIX, Operation
from decisiontrail.domain.traces.spans import AGENT, Span, confidence, decision_kind, is_trace_root, short
from decisiontrail.exceptions import validation_failed


@dataclass(frozen=True)
class CreatePlan:
    """A plan with its root prompt_definition (a child plan names its spawning decision)."""

    plan: Plan
    root: Decision
    context: CapturedContext


@dataclass(frozen=True)
class PlaceDecisions:
    """Decisions of one plan recorded in its current phase, in order, each with its span as context."""

    plan_id: str
    decisions: tuple[tuple[Decision, CapturedContext], ...]


@dataclass(frozen=True)
class ChangePhase:
    plan_id: str
    current: Phase
    target: Phase
    at: datetime
    reason: str


Step = CreatePlan | PlaceDecisions | ChangePhase


def derived_id(role: str, trace_id: str, span_id: str, started_ns: int) -> str:
    """A ULID for what a span became: its time the span's start, the rest a digest of the trace, span and role.

    >>> trace, span, started = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 1_700_000_000_123_000_000
    >>> derived_id("plan", trace, span, started) == derived_id("plan", trace, span, started)
    True
    >>> derived_id("plan", trace, span, started) == derived_id("root", trace, span, started)
    False
    >>> ULID.from_str(derived_id("plan", trace, span, started)).milliseconds
    1700000000123
    """
    digest = hashlib.sha256(f"{role}:{trace_id}:{span_id}".encode()).digest()[:10]
    millis = max(0, started_ns // 1_000_000) & ((1 << 48) - 1)
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + digest))


def recorded_id(span: Span) -> str | None:
    """The id of what a span becomes when its trace is imported (its plan, for an agent; else its
    decision), or None for a span that carries no decision: how a span sent again is told from
    one that arrived after its trace was imported."""
    kind = decision_kind(span)
    if kind is None:
        return None
    return derived_id("plan" if kind == AGENT else "decision", span.trace_id, span.span_id, span.start_ns)


def import_steps(spans: Sequence[Span], *, owner: str | None, project: str | None) -> list[Step]:
    """The plans, phase changes and decisions one trace's spans become, in the order to write them.

    ``spans`` are all the spans of the trace received (a span that carries no decision may be
    slim). Returns no steps when no span carries a decision.
    """
    try:
        return _TraceImport(spans, owner, project).steps()
    except ValidationError as e:  # a value a span gave that a record refuses (a blank name, say)
        raise validation_failed(e) from e


@dataclass
class _PlanState:
    plan_id: str
    agent: Span
    strategy_id: str
    task: str
    phase: Phase = Phase.STRATEGIZE
    recorded: list[tuple[Decision, CapturedContext]] = field(default_factory=list)
    by_graph_node: dict[str, str] = field(default_factory=dict)
    planned: list[tuple[int, str]] = field(default_factory=list)
    """The decisions of its plan spans, each with when its span ended, in the order they started."""


class _TraceImport:
    def __init__(self, spans: Sequence[Span], owner: str | None, project: str | None) -> None:
        self.spans = {s.span_id: s for s in spans}
        self.owner = owner
        self.project = project
        self.kinds = {s.span_id: decision_kind(s) for s in spans}
        self.decision_of: dict[str, str] = {}  # span id -> decision id recorded for it
        self.plan_of_decision: dict[str, str] = {}
        self.plans: dict[str, _PlanState] = {}  # agent span id -> plan
        self.agents: set[str] = set()
        self.written: set[str] = set()  # decisions in steps already emitted
        self.starts: dict[str, int] = {}
        self.depths: dict[str, int] = {}
        self.out: list[Step] = []

    def steps(self) -> list[Step]:
        carrying = [s for s in self.spans.values() if self.kinds[s.span_id] is not None]
        if not carrying:
            return []
        agents = self.agents
        agents.update(s.span_id for s in carrying if self.kinds[s.span_id] == AGENT)
        roots = [s.span_id for s in self.spans.values() if is_trace_root(s)]
        if any(s.span_id not in agents and self._agent_of(s) is None for s in carrying):
            # Decisions outside every agent span: the trace's root span is their plan (and, if it
            # carries a decision itself, that decision is the plan's first).
            agents.update(roots)
        fallback = next((r for r in roots if r in agents), None)
        spans = carrying + [self.spans[a] for a in agents if self.kinds[a] is None]
        for span in sorted(spans, key=lambda s: (self._start(s), s.span_id not in agents, self._depth(s))):
            owner = self._agent_of(span)
            if span.span_id in agents:
                self._agent(span, owner)
                if isinstance(self.kinds[span.span_id], DecisionType):
                    self._decision(span, self.plans[span.span_id])
            else:
                # A span whose chain of parents breaks (a parent never sent) lies in the trace's root plan.
                owner = owner or fallback
                if owner is not None and owner in self.plans:
                    self._decision(span, self.plans[owner])
        for state in self.plans.values():
            self._flush(state)
        return self.out

    def _start(self, span: Span) -> int:
        """When a span started, never before its parent did: clocks of two processes can disagree,
        and a span is recorded after what encloses it. Walked without recursion (a trace may nest
        deeper than Python's stack), each span's answer kept."""
        chain = []
        current: Span | None = span
        while current is not None and current.span_id not in self.starts:
            chain.append(current)
            self.starts[current.span_id] = current.start_ns  # a cycle of parents ends here
            current = self.spans.get(current.parent_span_id) if current.parent_span_id else None
        above = self.starts[current.span_id] if current is not None else None
        for link in reversed(chain):
            above = link.start_ns if above is None else max(link.start_ns, above)
            self.starts[link.span_id] = above
        return self.starts[span.span_id]

    def _depth(self, span: Span) -> int:
        """How many spans enclose this one, each span's answer kept."""
        chain = []
        current: Span | None = span
        while current is not None and current.span_id not in self.depths:
            chain.append(current)
            self.depths[current.span_id] = 0  # a cycle of parents ends here
            current = self.spans.get(current.parent_span_id) if current.parent_span_id else None
        depth = self.depths[current.span_id] if current is not None else -1
        for link in reversed(chain):
            depth += 1
            self.depths[link.span_id] = depth
        return self.depths[span.span_id]

    def _started(self, span: Span) -> datetime:
        return datetime.fromtimestamp(self._start(span) / 1e9, UTC)

    # -- where a span sits --

    def _ancestors(self, span: Span) -> Iterable[Span]:
        seen = {span.span_id}
        current = span
        while current.parent_span_id is not None:
            parent = self.spans.get(current.parent_span_id)
            if parent is None or parent.span_id in seen:
                return
            seen.add(parent.span_id)
            yield parent
            current = parent

    def _agent_of(self, span: Span) -> str | None:
        """The agent span (plan) a span lies in: the nearest enclosing one."""
        return next((a.span_id for a in self._ancestors(span) if a.span_id in self.agents), None)

    # -- what a span becomes --

    def _agent(self, span: Span, outer: str | None) -> None:
        trace = span.trace_id
        name, noun = agent_name(span), plan_noun(span)
        plan_id = derived_id("plan", trace, span.span_id, span.start_ns)
        parent_plan_id = spawned_by = None
        if outer is not None:
            parent = self.plans.get(outer)
            if parent is None:
                return
            spawn_type = (
                DecisionType.SUBPLAN_PARALLEL_SPAWN if self._runs_alongside_sibling(span, outer) else DecisionType.SUBPLAN_SPAWN
            )
            spawned_by = self._record(
                parent,
                span,
                role="spawn",
                kind=spawn_type,
                question=f"Which {noun} takes on: {short(span.input() or name)}?",
                chosen=name,
                rationale=span.text("gen_ai.agent.description", "agent.description")
                or f"The {noun} span {span.name!r} ran inside this plan's {plan_noun(parent.agent)}.",
            )
            self._move(parent, Phase.EXECUTE, span, f"{noun} {name!r} starts (span {span.span_id})")
            self._flush(parent)
            parent_plan_id = parent.plan_id
        description = short(span.input() or span.text("gen_ai.agent.description") or span.name)
        arguments: dict[str, Any] = {"otlp": {"trace_id": trace, "span_id": span.span_id, "span_name": span.name, noun: name}}
        context = prompt_context(description, arguments)
        plan = Plan(
            plan_id=plan_id,
            description=description,
            arguments=arguments,
            parent_plan_id=parent_plan_id,
            spawned_by_decision_id=spawned_by,
            created_at=self._started(span),
            owner=self.owner,
            project=self.project,
        )
        root = Decision(
            decision_id=derived_id("root", trace, span.span_id, span.start_ns),
            plan_id=plan_id,
            decision_type=DecisionType.PROMPT_DEFINITION,
            question=PROMPT_QUESTION,
            chosen_option=context.content,
            rationale=f"Imported from the OpenTelemetry span {span.name!r} (trace {trace}).",
            context_snapshot=ContextSnapshot(hot_context_hash=context.context_hash, hot_context_ref=context.ref),
            created_at=self._started(span),
        )
        self.out.append(CreatePlan(plan, root, context))
        self.written.add(root.decision_id)
        state = _PlanState(plan_id, span, derived_id("strategy", trace, span.span_id, span.start_ns), description)
        self.plans[span.span_id] = state
        self.decision_of[span.span_id] = root.decision_id
        self.plan_of_decision[root.decision_id] = plan_id
        self._record(
            state,
            span,
            role="strategy",
            kind=DecisionType.STRATEGY_CHOICE,
            question=f"Which {noun} takes this task on?",
            chosen=name,
            rationale=span.text("gen_ai.agent.description", "agent.description")
            or f"The trace shows {noun} {name!r} taking it on.",
            parent_id=root.decision_id,
            decision_id=state.strategy_id,
        )
        self.decision_of[span.span_id] = state.strategy_id  # what the agent's inner spans hang under

    def _decision(self, span: Span, state: _PlanState) -> None:
        kind = self.kinds[span.span_id]
        assert isinstance(kind, DecisionType)
        question = chosen = None
        if span.operation == Operation.PLAN and kind is DecisionType.STRATEGY_CHOICE:
            question, chosen = self._planned(span, state)
        question, chosen, alternatives, resources = content(span, kind, question=question, chosen=chosen)
        self._record(
            state,
            span,
            role="decision",
            kind=kind,
            question=question,
            chosen=chosen,
            alternatives=alternatives,
            resources=resources,
            rationale=span.text(DECISION_PREFIX + "rationale", "tool.description", "gen_ai.tool.description")
            or f"Imported from the OpenTelemetry span {span.name!r}.",
            confidence=confidence(span),
            reasoning=span.text(DECISION_PREFIX + "reasoning"),
        )

    def _record(
        self,
        state: _PlanState,
        span: Span,
        *,
        role: str,
        kind: DecisionType,
        question: str,
        chosen: str,
        rationale: str,
        alternatives: tuple[str, ...] = (),
        resources: tuple[ResourceRef, ...] = (),
        confidence: float | None = None,
        reasoning: str | None = None,
        parent_id: str | None = None,
        decision_id: str | None = None,
    ) -> str:
        if state.phase not in PHASES_BY_TYPE[kind]:
            target = PHASES_BY_TYPE[kind][0]
            self._move(state, target, span, f"{kind.value} from span {span.span_id} ({span.name})")
        context = CapturedContext(json.dumps({"otlp_span": span.to_json()}, ensure_ascii=False, sort_keys=True))
        decision_id = decision_id or derived_id(role, span.trace_id, span.span_id, span.start_ns)
        decision = Decision(
            decision_id=decision_id,
            plan_id=state.plan_id,
            parent_decision_id=parent_id or self._parent(span, state),
            decision_type=kind,
            phase=state.phase,
            question=short(question),
            chosen_option=short(chosen),
            alternatives_considered=alternatives,
            confidence_score=confidence,
            rationale=rationale,
            actor_reasoning=reasoning,
            depends_on=self._dependencies(span, decision_id, state.plan_id),
            context_snapshot=ContextSnapshot(
                hot_context_hash=context.context_hash,
                hot_context_ref=context.ref,
                relevant_resources=resources,
                actor_state_ref=CheckpointRef(
                    thread_id=f"otlp:{span.trace_id}", checkpoint_ns=agent_name(state.agent), checkpoint_id=span.span_id
                ),
            ),
            created_at=self._started(span),
        )
        state.recorded.append((decision, context))
        if role == "decision":
            self.decision_of[span.span_id] = decision_id
            node = span.attributes.get("graph.node.id")
            if isinstance(node, str) and node:
                state.by_graph_node[node] = decision_id
            if span.operation == Operation.PLAN:
                state.planned.append((span.end_ns, decision_id))
        self.plan_of_decision[decision_id] = state.plan_id
        return decision_id

    def _parent(self, span: Span, state: _PlanState) -> str:
        node = span.attributes.get("graph.node.parent_id")
        if isinstance(node, str) and node in state.by_graph_node:
            return state.by_graph_node[node]
        for ancestor in self._ancestors(span):
            found = self.decision_of.get(ancestor.span_id)
            if found == state.strategy_id:
                break  # the plan's own span: what ran after a plan span hangs under that plan
            if found is not None and self.plan_of_decision.get(found) == state.plan_id:
                return found
        started = self._start(span)
        return next((d for ended, d in reversed(state.planned) if ended <= started), state.strategy_id)

    def _planned(self, span: Span, state: _PlanState) -> tuple[str, str]:
        """The question a plan span answers, and the plan: its own output, else that of the last
        model call inside it (the conventions put the call that writes the plan there), else its name."""
        agent = span.text("gen_ai.agent.name", "agent.name") or agent_name(state.agent)
        task = span.input() or state.task
        calls = [s for s in self.spans.values() if s.parent_span_id == span.span_id and s.is_model_call]
        written = next((t for t in (c.output() for c in sorted(calls, key=lambda c: -c.end_ns)) if t), None)
        return f"How does {agent} go about: {task}?", span.output() or written or span.name

    def _dependencies(self, span: Span, decision_id: str, plan_id: str) -> tuple[str, ...]:
        linked = tuple(dict.fromkeys(d for d in (self.decision_of.get(link) for link in span.links) if d is not None))
        for dependency in linked:
            if dependency not in self.written:  # recorded in another plan, not yet written: write it first
                holder = next((s for s in self.plans.values() if any(d.decision_id == dependency for d, _ in s.recorded)), None)
                if holder is not None and holder.plan_id != plan_id:
                    self._flush(holder)
        return tuple(d for d in linked if d != decision_id)

    def _move(self, state: _PlanState, target: Phase, span: Span, why: str) -> None:
        if state.phase is target:
            return
        self._flush(state)
        self.out.append(ChangePhase(state.plan_id, state.phase, target, self._started(span), why))
        state.phase = target

    def _flush(self, state: _PlanState) -> None:
        if state.recorded:
            self.out.append(PlaceDecisions(state.plan_id, tuple(state.recorded)))
            self.written.update(d.decision_id for d, _ in state.recorded)
            state.recorded = []

    def _runs_alongside_sibling(self, span: Span, outer: str) -> bool:
        """Whether another agent (or workflow) span of the same outer plan ran while this one did."""
        return any(
            other.span_id != span.span_id
            and self.kinds.get(other.span_id) == AGENT
            and self._agent_of(other) == outer
            and other.start_ns < span.end_ns
            and span.start_ns < other.end_ns
            for other in self.spans.values()
        )
