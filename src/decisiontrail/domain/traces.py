"""Agent traces as decisions: which OpenTelemetry spans carry a decision, and the plans and decisions a trace becomes.

Spans come from any OpenTelemetry-instrumented runtime, in OpenInference's conventions
(``openinference.span.kind``: AGENT, TOOL, RETRIEVER, DECISION, ...) or in OpenTelemetry's GenAI
conventions (``gen_ai.operation.name``: ``invoke_agent``, ``execute_tool``, ...). The mapping
(docs/interop.md has it as a table):

- an **agent** span (AGENT, ``invoke_agent``) is a plan: its input the plan's prompt, and one
  ``strategy_choice`` (which agent takes the task on) that the plan's other decisions hang under;
  the trace's root span is a plan too when decisions lie outside every agent span;
- an agent span inside another agent's is a **child plan**, spawned by a ``subplan_spawn`` of the
  outer plan (``subplan_parallel_spawn`` when it ran alongside a sibling agent);
- a **tool** span (TOOL, ``execute_tool``) is a ``tool_invocation``, a **retriever** span a
  ``resource_selection`` (the documents it returned are its resources), a **DECISION** span a
  decision of the type it names (``decisiontrail.decision.type``, else ``implementation_choice``);
  any span may name its decision outright with ``decisiontrail.decision.*`` attributes;
- every other span (LLM calls, chains, embeddings, ...) carries no decision and is kept out.

A decision's PARENT is the latest decision made at the agent-graph node its span names in
``graph.node.parent_id``; else the nearest enclosing span that became a decision of the same
plan; else the plan's strategy. A span link to a span that became a decision recorded before it
is a DEPENDS_ON. Decisions are recorded in the order their spans started, each in a phase its
type allows: the plan moves to Execute before an Execute decision or a spawned plan, and back
to Strategize before a Strategize decision (ADR-007's phase reversion), each change recorded at
the span's time. Ids are derived from the trace and span ids, so a trace becomes the same
records however often it is sent.

Everything here is pure: ``import_steps`` turns the spans of one trace into the steps a service
writes in one transaction, where the placement rules judge them again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import ValidationError
from ulid import ULID

from decisiontrail.domain.decision import (
    PHASES_BY_TYPE,
    SPAWNING_TYPES,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Phase,
    ResourceRef,
)
from decisiontrail.domain.plan import Plan
from decisiontrail.domain.recording import ACTOR_DECISION_TYPES, PROMPT_QUESTION, CapturedContext, prompt_context
from decisiontrail.exceptions import ValidationFailed, validation_failed

__all__ = [
    "ChangePhase",
    "CreatePlan",
    "PlaceDecisions",
    "Span",
    "Step",
    "decision_kind",
    "import_steps",
    "is_trace_root",
    "kept_out_reason",
    "recorded_id",
]

AttributeValue = str | bool | int | float | list[Any] | dict[str, Any] | None

SPAN_KIND: Final = "openinference.span.kind"
GEN_AI_OPERATION: Final = "gen_ai.operation.name"
DECISION_PREFIX: Final = "decisiontrail.decision."
MAX_TEXT: Final = 2000
"""Characters of a question or chosen option taken from a span; the whole span is kept in the decision's context."""

AGENT = "agent"
_AGENT_KINDS = {"AGENT"}
_AGENT_OPERATIONS = {"invoke_agent"}
_KIND_TYPES = {"TOOL": DecisionType.TOOL_INVOCATION, "RETRIEVER": DecisionType.RESOURCE_SELECTION}
_OPERATION_TYPES = {"execute_tool": DecisionType.TOOL_INVOCATION}


@dataclass(frozen=True)
class Span:
    """One span as OTLP carries it, ids in lower-case hex, times in Unix nanoseconds."""

    trace_id: str
    span_id: str
    name: str
    start_ns: int
    end_ns: int = 0
    parent_span_id: str | None = None
    parent_is_remote: bool = False
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    resource: Mapping[str, AttributeValue] = field(default_factory=dict)
    links: tuple[str, ...] = ()
    """Span ids, in this trace, that the span links to."""
    status: str = "UNSET"

    def text(self, *names: str) -> str | None:
        """The first of ``names`` the span has as a non-blank attribute, as text."""
        for name in names:
            value = self.attributes.get(name)
            if value is None or value == "":
                continue
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
            if text.strip():
                return text
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "name": self.name,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "parent_span_id": self.parent_span_id,
            "parent_is_remote": self.parent_is_remote,
            "attributes": dict(self.attributes),
            "resource": dict(self.resource),
            "links": list(self.links),
            "status": self.status,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Span:
        return cls(**{**data, "links": tuple(data.get("links", ())), "attributes": data.get("attributes") or {}})

    def slim(self) -> Span:
        """What a span that carries no decision is kept as: where it sits in the trace, and the agent-graph node it names."""
        kept = {k: v for k, v in self.attributes.items() if k.startswith("graph.node.")}
        return Span(
            self.trace_id, self.span_id, self.name, self.start_ns, self.end_ns, self.parent_span_id, self.parent_is_remote, kept
        )


def decision_kind(span: Span) -> str | DecisionType | None:
    """What a span carries: ``"agent"`` (a plan), a decision type, or None (no decision).

    >>> decision_kind(Span("t", "s", "search", 0, attributes={"openinference.span.kind": "TOOL"}))
    <DecisionType.TOOL_INVOCATION: 'tool_invocation'>
    >>> decision_kind(Span("t", "s", "invoke_agent planner", 0, attributes={"gen_ai.operation.name": "invoke_agent"}))
    'agent'
    >>> decision_kind(Span("t", "s", "chat", 0, attributes={"gen_ai.operation.name": "chat"})) is None
    True
    """
    kind = str(span.attributes.get(SPAN_KIND, "")).upper()
    operation = str(span.attributes.get(GEN_AI_OPERATION, ""))
    if kind in _AGENT_KINDS or operation in _AGENT_OPERATIONS:
        return AGENT
    named = span.attributes.get(DECISION_PREFIX + "type")
    if named is not None:
        _confidence(span)
        return _named_type(span, named)
    if kind == "DECISION":
        return DecisionType.IMPLEMENTATION_CHOICE
    found = _KIND_TYPES.get(kind) or _OPERATION_TYPES.get(operation)
    if found is None and any(name.startswith(DECISION_PREFIX) for name in span.attributes):
        name = f"span {span.span_id}: {DECISION_PREFIX}type"
        raise ValidationFailed(f"{name}: is required on a span that names its decision with {DECISION_PREFIX}*", field=name)
    if found is not None:
        _confidence(span)
    return found


def kept_out_reason(span: Span) -> str:
    """Why a span that carries no decision is kept out, for a request's partial-success message."""
    kind = span.attributes.get(SPAN_KIND) or span.attributes.get(GEN_AI_OPERATION) or "no kind"
    return str(kind)


def is_trace_root(span: Span) -> bool:
    """Whether the span starts its trace: it has no parent. (A span whose parent is in another
    process is not a root: the trace is imported once the span above every other has arrived.)"""
    return span.parent_span_id is None


def _named_type(span: Span, value: object) -> DecisionType:
    field_name = f"span {span.span_id}: {DECISION_PREFIX}type"
    try:
        kind = DecisionType(str(value))
    except ValueError:
        allowed = ", ".join(t.value for t in ACTOR_DECISION_TYPES)
        raise ValidationFailed(f"{field_name}: {value!r} is not one of {allowed}", field=field_name) from None
    if kind not in ACTOR_DECISION_TYPES or kind in SPAWNING_TYPES:
        raise ValidationFailed(
            f"{field_name}: {kind.value} is not a type a span records (a plan's prompt and its spawns come from agent spans)",
            field=field_name,
        )
    return kind


# --- the steps a trace becomes ---------------------------------------------------------------


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
    phase: Phase = Phase.STRATEGIZE
    recorded: list[tuple[Decision, CapturedContext]] = field(default_factory=list)
    by_graph_node: dict[str, str] = field(default_factory=dict)


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
        name = _agent_name(span)
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
                question=f"Which agent takes on: {_short(span.text('input.value', 'gen_ai.input.messages') or name)}?",
                chosen=name,
                rationale=span.text("gen_ai.agent.description", "agent.description")
                or f"The agent span {span.name!r} ran inside this plan's agent.",
            )
            self._move(parent, Phase.EXECUTE, span, f"agent {name!r} starts (span {span.span_id})")
            self._flush(parent)
            parent_plan_id = parent.plan_id
        description = _short(span.text("input.value", "gen_ai.input.messages", "gen_ai.agent.description") or span.name)
        arguments: dict[str, Any] = {"otlp": {"trace_id": trace, "span_id": span.span_id, "span_name": span.name, "agent": name}}
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
        state = _PlanState(plan_id, span, derived_id("strategy", trace, span.span_id, span.start_ns))
        self.plans[span.span_id] = state
        self.decision_of[span.span_id] = root.decision_id
        self.plan_of_decision[root.decision_id] = plan_id
        self._record(
            state,
            span,
            role="strategy",
            kind=DecisionType.STRATEGY_CHOICE,
            question="Which agent takes this task on?",
            chosen=name,
            rationale=span.text("gen_ai.agent.description", "agent.description")
            or f"The trace shows agent {name!r} taking it on.",
            parent_id=root.decision_id,
            decision_id=state.strategy_id,
        )
        self.decision_of[span.span_id] = state.strategy_id  # what the agent's inner spans hang under

    def _decision(self, span: Span, state: _PlanState) -> None:
        kind = self.kinds[span.span_id]
        assert isinstance(kind, DecisionType)
        question, chosen, alternatives, resources = _content(span, kind)
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
            confidence=_confidence(span),
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
        content = json.dumps({"otlp_span": span.to_json()}, ensure_ascii=False, sort_keys=True)
        context = CapturedContext(content)
        decision_id = decision_id or derived_id(role, span.trace_id, span.span_id, span.start_ns)
        decision = Decision(
            decision_id=decision_id,
            plan_id=state.plan_id,
            parent_decision_id=parent_id or self._parent(span, state),
            decision_type=kind,
            phase=state.phase,
            question=_short(question),
            chosen_option=_short(chosen),
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
                    thread_id=f"otlp:{span.trace_id}", checkpoint_ns=_agent_name(state.agent), checkpoint_id=span.span_id
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
        self.plan_of_decision[decision_id] = state.plan_id
        return decision_id

    def _parent(self, span: Span, state: _PlanState) -> str:
        node = span.attributes.get("graph.node.parent_id")
        if isinstance(node, str) and node in state.by_graph_node:
            return state.by_graph_node[node]
        for ancestor in self._ancestors(span):
            found = self.decision_of.get(ancestor.span_id)
            if found is not None and self.plan_of_decision.get(found) == state.plan_id:
                return found
        return state.strategy_id

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
        """Whether another agent span of the same outer plan ran while this one did."""
        return any(
            other.span_id != span.span_id
            and self.kinds.get(other.span_id) == AGENT
            and self._agent_of(other) == outer
            and other.start_ns < span.end_ns
            and span.start_ns < other.end_ns
            for other in self.spans.values()
        )


def _agent_name(span: Span) -> str:
    named = span.text("gen_ai.agent.name", "agent.name", "graph.node.id")
    if named is None and decision_kind(span) != AGENT:  # a trace's root standing in for its agent: the service
        service = span.resource.get("service.name")
        named = service if isinstance(service, str) and service.strip() else None
    return named or span.name


def _short(text: str) -> str:
    text = text.strip() or "(empty)"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _confidence(span: Span) -> float | None:
    value = span.attributes.get(DECISION_PREFIX + "confidence")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        name = f"span {span.span_id}: {DECISION_PREFIX}confidence"
        raise ValidationFailed(f"{name}: {value!r} is not a number in [0, 1]", field=name)
    return float(value)


def _content(span: Span, kind: DecisionType) -> tuple[str, str, tuple[str, ...], tuple[ResourceRef, ...]]:
    """Question, chosen option, alternatives and resources of a span's decision."""
    named_question = span.text(DECISION_PREFIX + "question")
    named_choice = span.text(DECISION_PREFIX + "chosen_option")
    alternatives = _strings(span.attributes.get(DECISION_PREFIX + "alternatives"))
    resources: tuple[ResourceRef, ...] = ()
    if kind is DecisionType.TOOL_INVOCATION:
        tool = span.text("tool.name", "gen_ai.tool.name") or span.name
        arguments = span.text("tool.parameters", "gen_ai.tool.call.arguments", "input.value")
        question = "Which tool to call, with which arguments?"
        chosen = f"{tool}({arguments})" if arguments else tool
    elif kind is DecisionType.RESOURCE_SELECTION and named_choice is None:
        documents = _documents(span)
        resources = tuple(ResourceRef(resource_id=d) for d in documents)
        question = f"Which documents to use for: {span.text('input.value') or span.name}?"
        chosen = ", ".join(documents) if documents else span.text("output.value") or "no documents"
    else:
        question = span.text("input.value") or span.name
        chosen = span.text("output.value") or span.name
    return named_question or question, named_choice or chosen, alternatives, resources


def _documents(span: Span) -> list[str]:
    found: dict[int, str] = {}
    for name, value in span.attributes.items():
        parts = name.split(".")
        if len(parts) == 5 and parts[:2] == ["retrieval", "documents"] and parts[3:] == ["document", "id"] and parts[2].isdigit():
            if str(value).strip():  # a document without an id is no resource to name
                found[int(parts[2])] = str(value)
    return [found[i] for i in sorted(found)]


def _strings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        return (value,)
    raise ValidationFailed(
        f"{DECISION_PREFIX}alternatives: {value!r} is not a list of strings", field=DECISION_PREFIX + "alternatives"
    )
