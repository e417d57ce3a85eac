"""Coverage checks: after a phase, did the actors record the decisions that phase must produce?

ADR-033 (Risks) asks for post-phase validation that the tree covers the expected decision
types, because a model may forget to call record_decision. What is expected is a
``CoverageSpec``; the defaults are ADR-033's minimum (a prompt_definition, an
invariant_enforced per invariant, at least one strategy_choice) and ADR-007's Execute rules.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from decisiontrail.checks.model import Rel, decisions, plans, sources, targets
from decisiontrail.checks.report import Violation
from decisiontrail.domain.decision import SPAWNING_TYPES, DecisionType, Phase
from decisiontrail.domain.invariants import Invariant, enforces_name, reconcile
from decisiontrail.exceptions import ValidationFailed

_PAST_STRATEGIZE = {Phase.EXECUTE.value, Phase.APPLY.value}
_PAST_EXECUTE = {Phase.APPLY.value}


class CoverageSpec(BaseModel):
    """What each phase must leave behind; load your own from JSON with ``--coverage FILE``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategize_minimums: dict[DecisionType, int] = Field(
        default_factory=lambda: {DecisionType.PROMPT_DEFINITION: 1, DecisionType.STRATEGY_CHOICE: 1},
        description="after Strategize, at least this many current decisions of each type",
    )
    invariants_enforced: bool = Field(default=True, description="after Strategize, an invariant_enforced per declared invariant")
    spawns_have_children: bool = Field(default=True, description="after Execute, each spawning decision has its child plan(s)")
    execute_under_strategize: bool = Field(default=True, description="Execute decisions hang under a Strategize decision")


DEFAULT_SPEC = CoverageSpec()


def check_strategize_coverage(G: nx.MultiDiGraph[str], spec: CoverageSpec = DEFAULT_SPEC) -> list[Violation]:
    """A plan past Strategize has at least the spec's minimum of each decision type.

    >>> from decisiontrail.checks.model import add_decision, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P", phase="execute")
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> [v.message for v in check_strategize_coverage(G)]
    ['plan P left Strategize with 0 strategy_choice decision(s); at least 1 expected']
    """
    found = []
    counts = _current_types(G)
    for plan_id, _plan in _active_plans(G, _PAST_STRATEGIZE):
        for kind, minimum in spec.strategize_minimums.items():
            have = counts.get(plan_id, Counter())[kind.value]
            if have < minimum:
                found.append(
                    Violation(
                        "strategize_coverage",
                        f"plan {plan_id} left Strategize with {have} {kind.value} decision(s); at least {minimum} expected",
                        plan_ids=(plan_id,),
                        hint="an actor may have skipped record_decision; ADR-033 expects these types from Strategize",
                    )
                )
    return found


def check_invariant_coverage(G: nx.MultiDiGraph[str], spec: CoverageSpec = DEFAULT_SPEC) -> list[Violation]:
    """A plan past Strategize has a current invariant_enforced decision for each invariant it
    declares (after scope precedence), naming it in its rationale or stating it as its option.

    >>> import json
    >>> from decisiontrail.checks.model import add_decision, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P", phase="execute", invariants=json.dumps([{"name": "tests", "statement": "pass", "scope": "plan"}]))
    >>> [v.message for v in check_invariant_coverage(G)]
    ["plan P declares invariant 'tests' but no current invariant_enforced decision enforces it"]
    """
    if not spec.invariants_enforced:
        return []
    found = []
    for plan_id, plan in _active_plans(G, _PAST_STRATEGIZE):
        enforced = [
            data
            for _, data in _plan_decisions(G, plan_id)
            if data["decision_type"] == DecisionType.INVARIANT_ENFORCED.value and data["status"] == "current"
        ]
        for name, statement in _declared(plan):
            if not any(d.get("chosen_option") == statement or enforces_name(name, d.get("rationale", "")) for d in enforced):
                found.append(
                    Violation(
                        "invariant_coverage",
                        f"plan {plan_id} declares invariant {name!r} but no current invariant_enforced decision enforces it",
                        plan_ids=(plan_id,),
                        hint="the Invariant Reconciliation Actor records one invariant_enforced per enforced invariant (ADR-033)",
                    )
                )
    return found


def check_spawns_have_children(G: nx.MultiDiGraph[str], spec: CoverageSpec = DEFAULT_SPEC) -> list[Violation]:
    """After Execute, each current subplan_spawn has its one child plan and each
    subplan_parallel_spawn at least one.

    >>> from decisiontrail.checks.model import add_decision, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P", phase="apply")
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="subplan_spawn", sequence_number=1)
    >>> [v.message for v in check_spawns_have_children(G)]
    ['subplan_spawn S of plan P has 0 active child plans; it should have exactly one']
    """
    if not spec.spawns_have_children:
        return []
    found = []
    active = {plan_id for plan_id, _ in _active_plans(G, _PAST_EXECUTE)}
    for d, data in decisions(G):
        kind = DecisionType(data["decision_type"])
        if kind not in SPAWNING_TYPES or data["status"] != "current" or data["plan_id"] not in active:
            continue
        children = [p for p in sources(G, d, Rel.SPAWNED_BY) if G.nodes[p].get("status") == "active"]
        if kind is DecisionType.SUBPLAN_SPAWN and len(children) != 1:
            expected = "exactly one"
        elif kind is DecisionType.SUBPLAN_PARALLEL_SPAWN and not children:
            expected = "at least one"
        else:
            continue
        found.append(
            Violation(
                "spawns_have_children",
                f"{kind.value} {d} of plan {data['plan_id']} has {len(children)} active child plans; it should have {expected}",
                decision_ids=(d,),
                plan_ids=(data["plan_id"], *children),
                hint="Execute instantiates the child plans its spawning decisions chose",
            )
        )
    return found


def check_execute_under_strategize(G: nx.MultiDiGraph[str], spec: CoverageSpec = DEFAULT_SPEC) -> list[Violation]:
    """Every current Execute decision is constrained by a Strategize decision: walking up its
    parents, the first decision outside Execute is a Strategize decision other than the root.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "T", plan_id="P", decision_type="tool_invocation", sequence_number=1, parent="R")
    >>> [v.message for v in check_execute_under_strategize(G)]
    ['execute decision T (tool_invocation) hangs under no Strategize decision but the prompt_definition R']
    """
    if not spec.execute_under_strategize:
        return []
    found = []
    anchors: dict[str, str | None] = {}
    for d, data in decisions(G):
        if data.get("phase") != Phase.EXECUTE.value or data["status"] != "current":
            continue
        anchor = _first_outside_execute(G, d, anchors)
        if anchor is None or G.nodes[anchor].get("phase") != Phase.STRATEGIZE.value:
            found.append(
                Violation(
                    "execute_under_strategize",
                    f"execute decision {d} ({data['decision_type']}) has no Strategize decision above it",
                    decision_ids=(d,),
                    plan_ids=(data["plan_id"],),
                    hint="ADR-007: decisions made during Execute must be constrained by Strategize decisions",
                )
            )
        elif G.nodes[anchor]["decision_type"] == DecisionType.PROMPT_DEFINITION.value:
            found.append(
                Violation(
                    "execute_under_strategize",
                    f"execute decision {d} ({data['decision_type']}) hangs under no Strategize decision but the prompt_definition {anchor}",
                    decision_ids=(d, anchor),
                    plan_ids=(data["plan_id"],),
                    hint="ADR-007: decisions made during Execute must be constrained by Strategize decisions, not by the prompt alone",
                )
            )
    return found


def load_spec(text: str) -> CoverageSpec:
    """A coverage spec from JSON text, with errors that name the field."""
    try:
        return CoverageSpec.model_validate_json(text)
    except ValueError as e:
        raise ValidationFailed(f"coverage spec: {e}", field="coverage") from e


def _first_outside_execute(G: nx.MultiDiGraph[str], decision_id: str, anchors: dict[str, str | None]) -> str | None:
    """Up ``decision_id``'s first parents, the first decision outside Execute (None at a root or a
    cycle). Every Execute decision on the way has the same, so ``anchors`` keeps it for each:
    walking each decision's whole chain again cost a plan of n Execute decisions in a chain n²/2 steps.
    """
    execute = Phase.EXECUTE.value
    path = [decision_id]
    seen = {decision_id}
    node = decision_id
    anchor: str | None = None
    while node not in anchors:
        parents = targets(G, node, Rel.PARENT)
        if not parents or parents[0] in seen:
            break
        node = parents[0]
        if G.nodes[node].get("phase") != execute:
            anchor = node
            break
        path.append(node)
        seen.add(node)
    else:
        anchor = anchors[node]
    for on_the_way in path:
        anchors[on_the_way] = anchor
    return anchor


def _active_plans(G: nx.MultiDiGraph[str], phases: set[str]) -> list[tuple[str, dict[str, Any]]]:
    return [(p, data) for p, data in plans(G) if data["status"] == "active" and data.get("phase") in phases]


def _plan_decisions(G: nx.MultiDiGraph[str], plan_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(d, G.nodes[d]) for d in sources(G, plan_id, Rel.IN_PLAN) if not G.nodes[d].get("boundary")]


def _current_types(G: nx.MultiDiGraph[str]) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {}
    for _, data in decisions(G):
        if data["status"] == "current":
            counts.setdefault(data["plan_id"], Counter())[data["decision_type"]] += 1
    return counts


def _declared(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """The plan's invariants after scope precedence, as (name, statement)."""
    try:
        declared = [Invariant.model_validate(i) for i in json.loads(plan.get("invariants") or "[]")]
        return [(e.invariant.name, e.invariant.statement) for e in reconcile(declared)]
    except (ValueError, ValidationFailed):
        # Instantiation refuses conflicting invariants; a plan that has them anyway still needs
        # each name enforced once.
        return sorted(
            {(i["name"], "") for i in json.loads(plan.get("invariants") or "[]") if isinstance(i, dict) and "name" in i}
        )
