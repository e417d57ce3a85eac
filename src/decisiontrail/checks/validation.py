"""Validation checks: the structural rules of ADR-007 and the model reference, over a decision graph.

Each check takes a graph built as ``decisiontrail.checks.model`` describes and returns the
violations it finds, in a stable order. Only nodes inside the loaded scope are judged; boundary
nodes are read where a rule needs the far end of an edge. The rules about corrections (no partial
invalidation, correction metadata both ways, reviews left resolvable) are in ``corrections``.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

import networkx as nx

from decisiontrail.checks.model import Label, Rel, decisions, edges_of, plans, targets
from decisiontrail.checks.report import Violation, sorted_ids
from decisiontrail.domain.decision import PHASES_BY_TYPE, SPAWNING_TYPES, DecisionType
from decisiontrail.domain.recording import CONTEXT_REF_PREFIX, SYSTEM_DECISION_TYPES

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_PROMPT = DecisionType.PROMPT_DEFINITION.value


def check_single_root(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Every active plan has exactly one current root, and it is its prompt_definition.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1)
    >>> [v.message for v in check_single_root(G)]
    ['plan P has 2 current roots (R, S); exactly one, its prompt_definition, is allowed']
    """
    roots: dict[str, list[str]] = defaultdict(list)
    for d, data in decisions(G):
        if data["status"] == "current" and not targets(G, d, Rel.PARENT):
            roots[data["plan_id"]].append(d)
    found = []
    for plan_id, plan in plans(G):
        if plan["status"] != "active":
            continue
        current_roots = sorted(roots.get(plan_id, []), key=lambda d: G.nodes[d]["sequence_number"])
        hint = "a plan's tree starts at its one current prompt_definition; other decisions hang under a parent"
        if not current_roots:
            found.append(Violation("single_root", f"plan {plan_id} has no current root", plan_ids=(plan_id,), hint=hint))
        elif len(current_roots) > 1:
            found.append(
                Violation(
                    "single_root",
                    f"plan {plan_id} has {len(current_roots)} current roots ({', '.join(current_roots)}); "
                    "exactly one, its prompt_definition, is allowed",
                    decision_ids=tuple(current_roots),
                    plan_ids=(plan_id,),
                    hint=hint,
                )
            )
        elif G.nodes[current_roots[0]]["decision_type"] != _PROMPT:
            root = current_roots[0]
            found.append(
                Violation(
                    "single_root",
                    f"plan {plan_id}'s root {root} is a {G.nodes[root]['decision_type']}, not a prompt_definition",
                    decision_ids=(root,),
                    plan_ids=(plan_id,),
                    hint=hint,
                )
            )
    return found


def check_tree_per_plan(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """PARENT edges make one tree per plan: a prompt_definition has no parent, every other
    decision exactly one, and there are no cycles.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> add_edge(G, "R", "S", "PARENT")
    >>> for v in check_tree_per_plan(G): print(v.message)
    prompt_definition R has a parent (S); the prompt_definition is always its plan's root
    PARENT edges form a cycle: R -> S -> R
    """
    found = []
    hint = "each decision hangs under exactly one decision of its plan; following parents always ends at the root"
    for d, data in decisions(G):
        parents = targets(G, d, Rel.PARENT)
        if data["decision_type"] == _PROMPT and parents:
            found.append(
                Violation(
                    "tree_per_plan",
                    f"prompt_definition {d} has a parent ({', '.join(parents)}); the prompt_definition is always its plan's root",
                    decision_ids=(d, *parents),
                    plan_ids=(data["plan_id"],),
                    hint=hint,
                )
            )
        elif data["decision_type"] != _PROMPT and len(parents) != 1:
            found.append(
                Violation(
                    "tree_per_plan",
                    f"{data['decision_type']} {d} has {len(parents)} parents; every decision but the root has exactly one",
                    decision_ids=(d, *parents),
                    plan_ids=(data["plan_id"],),
                    hint=hint,
                )
            )
    for cycle in _cycles_of(G, Rel.PARENT):
        found.append(
            Violation(
                "tree_per_plan",
                "PARENT edges form a cycle: " + " -> ".join([*cycle, cycle[0]]),
                decision_ids=tuple(cycle),
                hint=hint,
            )
        )
    return found


def check_parent_in_same_plan(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """A PARENT edge never crosses plans: plans link through spawning decisions instead.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="Q", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> [v.message for v in check_parent_in_same_plan(G)]
    ['decision S of plan Q hangs under decision R of plan P']
    """
    found = []
    for child, parent, _ in edges_of(G, Rel.PARENT):
        child_data, parent_data = G.nodes[child], G.nodes[parent]
        if child_data.get("boundary") or child_data.get("label") != Label.DECISION.value:
            continue
        if parent_data.get("plan_id") != child_data["plan_id"]:
            found.append(
                Violation(
                    "parent_in_same_plan",
                    f"decision {child} of plan {child_data['plan_id']} hangs under decision {parent} of plan "
                    f"{parent_data.get('plan_id', '(unknown)')}",
                    decision_ids=(child, parent),
                    plan_ids=sorted_ids(p for p in (child_data["plan_id"], parent_data.get("plan_id")) if p),
                    hint="a child plan hangs under its spawning decision through SPAWNED_BY, never through PARENT",
                )
            )
    return found


def check_no_dependency_cycle(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """DEPENDS_ON has no cycles: no decision is, however indirectly, its own influence.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for i, d in enumerate("ABC"):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=i)
    >>> add_edge(G, "A", "B", "DEPENDS_ON"); add_edge(G, "B", "A", "DEPENDS_ON")
    >>> [v.message for v in check_no_dependency_cycle(G)]
    ['DEPENDS_ON edges form a cycle: A -> B -> A']
    """
    return [
        Violation(
            "no_dependency_cycle",
            "DEPENDS_ON edges form a cycle: " + " -> ".join([*cycle, cycle[0]]),
            decision_ids=tuple(cycle),
            hint="a dependency points at an influence; following them must never come back",
        )
        for cycle in _cycles_of(G, Rel.DEPENDS_ON)
        if any(not G.nodes[d].get("boundary") for d in cycle)
    ]


def check_dependency_is_current(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """The current tree depends on no superseded decision.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "A", plan_id="P", decision_type="strategy_choice", sequence_number=1)
    >>> _ = add_decision(G, "B", plan_id="P", decision_type="strategy_choice", sequence_number=2, superseded_at="t")
    >>> add_edge(G, "A", "B", "DEPENDS_ON")
    >>> [v.message for v in check_dependency_is_current(G)]
    ['current decision A depends on superseded decision B']
    """
    found = []
    for dependent, dependency, _ in edges_of(G, Rel.DEPENDS_ON):
        data = G.nodes[dependent]
        if data.get("boundary") or data.get("status") != "current":
            continue
        if G.nodes[dependency].get("status") == "superseded":
            found.append(
                Violation(
                    "dependency_is_current",
                    f"current decision {dependent} depends on superseded decision {dependency}",
                    decision_ids=(dependent, dependency),
                    plan_ids=sorted_ids([data["plan_id"]]),
                    hint="a correction supersedes everything that depends on what it supersedes; this dependent was missed",
                )
            )
    return found


def check_sequence_order(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Within a plan, sequence numbers are unique and follow creation order.

    >>> from datetime import datetime, UTC
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "A", plan_id="P", decision_type="strategy_choice", sequence_number=1, created_at=datetime(2026, 1, 2, tzinfo=UTC))
    >>> _ = add_decision(G, "B", plan_id="P", decision_type="strategy_choice", sequence_number=2, created_at=datetime(2026, 1, 1, tzinfo=UTC))
    >>> [v.message for v in check_sequence_order(G)]
    ['plan P: decision B (#2) was created before A (#1)']
    """
    by_plan: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for d, data in decisions(G):
        by_plan[data["plan_id"]].append((data["sequence_number"], d))
    found = []
    for plan_id, numbered in sorted(by_plan.items()):
        numbered.sort()
        seen: dict[int, list[str]] = defaultdict(list)
        for number, d in numbered:
            seen[number].append(d)
        for number, ids in seen.items():
            if len(ids) > 1:
                found.append(
                    Violation(
                        "sequence_order",
                        f"plan {plan_id}: sequence number {number} is held by {', '.join(ids)}",
                        decision_ids=tuple(ids),
                        plan_ids=(plan_id,),
                        hint="each decision of a plan gets the next number, under the plan's write lock",
                    )
                )
        for (n1, d1), (n2, d2) in itertools.pairwise(numbered):
            if n1 != n2 and G.nodes[d2]["created_at"] < G.nodes[d1]["created_at"]:
                found.append(
                    Violation(
                        "sequence_order",
                        f"plan {plan_id}: decision {d2} (#{n2}) was created before {d1} (#{n1})",
                        decision_ids=(d1, d2),
                        plan_ids=(plan_id,),
                        hint="sequence numbers are given in the order decisions are recorded",
                    )
                )
    return found


def check_type_in_phase(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Each decision was made in a phase its type allows (ADR-007's phase column).

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "T", plan_id="P", decision_type="tool_invocation", sequence_number=1, phase="strategize")
    >>> [v.message for v in check_type_in_phase(G)]
    ['tool_invocation T was recorded in strategize; tool_invocation belongs to execute']
    """
    found = []
    for d, data in decisions(G):
        allowed = [p.value for p in PHASES_BY_TYPE.get(DecisionType(data["decision_type"]), ())]
        if data.get("phase") not in allowed:
            kind = data["decision_type"]
            found.append(
                Violation(
                    "type_in_phase",
                    f"{kind} {d} was recorded in {data.get('phase')}; {kind} belongs to {' or '.join(allowed)}",
                    decision_ids=(d,),
                    plan_ids=(data["plan_id"],),
                    hint="Strategize decides what to do, Execute how; each type has its phases",
                )
            )
    return found


def check_context_snapshot(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Every decision has a context snapshot that could replay it: a SHA-256 hash, a reference
    the service can read back when it is its own, and an actor's checkpoint for actor decisions.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1,
    ...                  hot_context_hash="x", hot_context_ref="s3://contexts/x", actor_state_checkpoint_id=None)
    >>> for v in check_context_snapshot(G): print(v.message)
    strategy_choice S: hot_context_hash is not a SHA-256 hex digest
    strategy_choice S: no actor checkpoint (actor_state_ref) to replay from
    """
    found: list[Violation] = []
    for d, data in decisions(G):
        problems = []
        digest, ref = data.get("hot_context_hash", ""), data.get("hot_context_ref", "")
        if not _SHA256.match(digest):
            problems.append("hot_context_hash is not a SHA-256 hex digest")
        if not ref.strip():
            problems.append("hot_context_ref is empty")
        elif ref.startswith(CONTEXT_REF_PREFIX):
            if ref.removeprefix(CONTEXT_REF_PREFIX) != digest:
                problems.append(f"hot_context_ref {ref} names another hash than hot_context_hash")
            elif not data.get("has_context", False):
                problems.append(f"hot_context_ref {ref} points at a context that is not stored")
        if DecisionType(data["decision_type"]) not in SYSTEM_DECISION_TYPES and not (
            data.get("actor_state_thread_id") and data.get("actor_state_checkpoint_id")
        ):
            problems.append("no actor checkpoint (actor_state_ref) to replay from")
        found.extend(
            Violation(
                "context_snapshot",
                f"{data['decision_type']} {d}: {problem}",
                decision_ids=(d,),
                plan_ids=(data["plan_id"],),
                hint="ADR-007: the snapshot must be enough to replay the decision alone (hash, full context, checkpoint)",
            )
            for problem in problems
        )
    return found


def check_spawn_link(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """A child plan links to the subplan_spawn or subplan_parallel_spawn decision of its parent
    plan that spawned it, and a plan with a spawning decision is that decision's plan's child.

    >>> from decisiontrail.checks.model import add_decision, add_edge, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P"); _ = add_plan(G, "C")
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1)
    >>> add_edge(G, "C", "P", "CHILD_OF"); add_edge(G, "C", "S", "SPAWNED_BY")
    >>> [v.message for v in check_spawn_link(G)]
    ['plan C was spawned by S, a strategy_choice; only subplan_spawn and subplan_parallel_spawn spawn plans']
    """
    found = []
    hint = "a child plan is instantiated from a spawning decision of its parent plan and links to both"
    spawning_types = {t.value for t in SPAWNING_TYPES}
    for plan_id, _ in plans(G):
        parents = targets(G, plan_id, Rel.CHILD_OF)
        spawners = targets(G, plan_id, Rel.SPAWNED_BY)
        if not parents and not spawners:
            continue
        if len(parents) != 1 or len(spawners) != 1:
            found.append(
                Violation(
                    "spawn_link",
                    f"plan {plan_id} has {len(parents)} parent plan(s) and {len(spawners)} spawning decision(s); a child plan has one of each",
                    decision_ids=tuple(spawners),
                    plan_ids=(plan_id, *parents),
                    hint=hint,
                )
            )
            continue
        spawner = G.nodes[spawners[0]]
        if spawner.get("decision_type") not in spawning_types:
            found.append(
                Violation(
                    "spawn_link",
                    f"plan {plan_id} was spawned by {spawners[0]}, a {spawner.get('decision_type')}; only subplan_spawn and subplan_parallel_spawn spawn plans",
                    decision_ids=(spawners[0],),
                    plan_ids=(plan_id,),
                    hint=hint,
                )
            )
        elif spawner.get("plan_id") != parents[0]:
            found.append(
                Violation(
                    "spawn_link",
                    f"plan {plan_id} is a child of {parents[0]} but was spawned by {spawners[0]} of plan {spawner.get('plan_id')}",
                    decision_ids=(spawners[0],),
                    plan_ids=(plan_id, parents[0]),
                    hint=hint,
                )
            )
    return found


def _cycles_of(G: nx.MultiDiGraph[str], rel: Rel) -> list[list[str]]:
    """The cycles ``rel``'s edges make, as ``_cycles`` gives them.

    Nodes that are on none are peeled off first: a node whose edges all lead to nodes peeled
    (starting from those with no edge of their own) is on no cycle. What is left, none in a sound
    graph, is searched; building a graph of every edge for the search was most of the rules that
    look for cycles.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for i, d in enumerate("ABCDE"):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=i)
    >>> for s, t in ["AB", "BC", "CB", "DC", "EE", "DA"]:
    ...     add_edge(G, s, t, "DEPENDS_ON")
    >>> _cycles_of(G, Rel.DEPENDS_ON)
    [['B', 'C'], ['E']]
    """
    edges = [(source, target) for source, target, _ in edges_of(G, rel)]
    pending: dict[str, int] = defaultdict(int)  # a node's edges not yet known to lead off every cycle
    pointing: dict[str, list[str]] = defaultdict(list)
    for source, target in edges:
        pending[source] += 1
        pointing[target].append(source)
    peel = [node for node in pointing if node not in pending]
    while peel:
        for source in pointing.get(peel.pop(), ()):
            pending[source] -= 1
            if not pending[source]:
                peel.append(source)
    left = {node for node, count in pending.items() if count}
    if not left:
        return []
    return _cycles(nx.DiGraph([(s, t) for s, t in edges if s in left and t in left]))


def _cycles(G: nx.DiGraph[str]) -> list[list[str]]:
    """One cycle per strongly connected knot (and each self-loop), each starting at its smallest id."""
    cycles = []
    for component in nx.strongly_connected_components(G):
        if len(component) == 1:
            (node,) = component
            if not G.has_edge(node, node):
                continue
        edges = nx.find_cycle(G.subgraph(component), source=min(component))
        cycle = [u for u, _ in edges]
        rotate = cycle.index(min(cycle))
        cycles.append(cycle[rotate:] + cycle[:rotate])
    return sorted(cycles)
