"""The shape of a decision graph in networkx: what the loader builds and every check reads.

A ``networkx.MultiDiGraph`` whose nodes are keyed by their ids (decisions, plans, reviews and
correction attempts all have ULIDs) and carry the stored properties as attributes, plus:

- ``label``: the Neo4j label (``Decision``, ``Plan``, ``Review``, ``CorrectionAttempt``);
- ``status``: ``current`` or ``superseded`` for a decision, ``active`` or ``invalidated`` for a
  plan, the review's own status for a review, the replay outcome for a correction attempt;
- ``boundary``: True on a node that lies outside the loaded scope but is the far end of an edge
  from a node inside it (the parent plan's spawning decision of a child plan loaded alone, say),
  or a child plan of a spawning decision inside it (a parent plan loaded alone: so its spawns are
  judged by the children they have). Boundary nodes carry their properties so rules can read them, but no rule judges them.

Edges point as in Neo4j, from the dependent end to what it hangs on (``child -PARENT-> parent``),
keyed by their type, with the type also in the ``type`` attribute. Properties that Neo4j does
not hold (None) are not set. The builders below are how tests and docstrings write literal
graphs, and how the loader adds what it reads, so both have the same shape.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final

import networkx as nx

from decisiontrail.domain.decision import PHASES_BY_TYPE, DecisionType, Phase
from decisiontrail.domain.recording import context_ref
from decisiontrail.domain.vocabulary import Label, Rel

__all__ = [
    "Label",
    "Rel",
    "add_attempt",
    "add_decision",
    "add_edge",
    "add_plan",
    "add_review",
    "collector_held_off",
    "decision_graph",
    "decisions",
    "edges_of",
    "plans",
    "sources",
    "targets",
]

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_DEFAULT_HASH = "0" * 64


def decision_graph() -> nx.MultiDiGraph[str]:
    """An empty decision graph."""
    return nx.MultiDiGraph()


@contextmanager
def collector_held_off() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a decision graph is built or judged.

    Every node and edge is a new dict, and the rules build dicts, lists and small graphs of their
    own per decision: the collector ran again and again over the growing (or merely large) graph,
    two fifths of the time of building one and a third of the rules'. Those containers of plain
    values hold no reference cycle for it to find, and whatever cycles appear meanwhile (the
    graph object itself is one, through networkx's cached views) are collected once it is back.
    Only turned back on if it was on (the collector is the process's).

    >>> with collector_held_off():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def add_plan(G: nx.MultiDiGraph[str], plan_id: str, **props: Any) -> str:
    """Add (or update) a plan node.

    >>> G = decision_graph()
    >>> add_plan(G, "P1", phase="execute")
    'P1'
    >>> G.nodes["P1"]["status"], G.nodes["P1"]["label"]
    ('active', 'Plan')
    """
    attrs = {"phase": Phase.STRATEGIZE.value, "invariants": "[]", "created_at": _EPOCH, **props}
    attrs = {k: v for k, v in attrs.items() if v is not None}
    attrs["status"] = "invalidated" if attrs.get("invalidated_at") is not None else "active"
    G.add_node(plan_id, label=Label.PLAN.value, plan_id=plan_id, **attrs)
    return plan_id


def add_decision(
    G: nx.MultiDiGraph[str],
    decision_id: str,
    *,
    plan_id: str,
    decision_type: DecisionType | str,
    sequence_number: int,
    parent: str | None = None,
    **props: Any,
) -> str:
    """Add a decision node with its IN_PLAN edge, and its PARENT edge when ``parent`` is given.

    Defaults make a small literal graph short to write: the first phase of the type, a creation
    time ``sequence_number`` seconds after an epoch, and a placeholder context hash.

    >>> G = decision_graph()
    >>> add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    'D0'
    >>> G.nodes["D0"]["status"], G.nodes["D0"]["phase"], list(G.edges("D0", keys=True))
    ('current', 'strategize', [('D0', 'P1', 'IN_PLAN')])
    """
    kind = DecisionType(decision_type)
    # The defaults are made only when some are missing: a decision loaded from the store has them all.
    attrs = {**_decision_defaults(kind, sequence_number), **props} if _DECISION_DEFAULTS - props.keys() else props
    attrs = {k: v for k, v in attrs.items() if v is not None}
    attrs["status"] = "superseded" if attrs.get("superseded_at") is not None else "current"
    G.add_node(
        decision_id,
        label=Label.DECISION._value_,
        decision_id=decision_id,
        plan_id=plan_id,
        decision_type=kind._value_,
        sequence_number=sequence_number,
        **attrs,
    )
    if plan_id not in G:
        add_plan(G, plan_id, boundary=attrs.get("boundary"))
    add_edge(G, decision_id, plan_id, Rel.IN_PLAN)
    if parent is not None:
        add_edge(G, decision_id, parent, Rel.PARENT)
    return decision_id


def _decision_defaults(kind: DecisionType, sequence_number: int) -> dict[str, Any]:
    return {
        "phase": _first_phase(kind),
        "question": f"{kind.value} {sequence_number}?",
        "chosen_option": f"option {sequence_number}",
        "rationale": "",
        "created_at": _EPOCH.replace(second=sequence_number % 60, minute=sequence_number // 60 % 60),
        "is_correction": False,
        "hot_context_hash": _DEFAULT_HASH,
        "hot_context_ref": context_ref(_DEFAULT_HASH),
        "actor_state_thread_id": "thread",
        "actor_state_checkpoint_id": f"checkpoint-{sequence_number}",
        "has_context": True,
    }


def add_review(G: nx.MultiDiGraph[str], review_id: str, *, plan_id: str, status: str, **props: Any) -> str:
    """Add a review node (a decision held for a person) with its FOR_PLAN edge."""
    attrs = {k: v for k, v in props.items() if v is not None}
    G.add_node(review_id, label=Label.REVIEW.value, review_id=review_id, plan_id=plan_id, status=status, **attrs)
    add_edge(G, review_id, plan_id, Rel.FOR_PLAN)
    return review_id


def add_attempt(G: nx.MultiDiGraph[str], attempt_id: str, **props: Any) -> str:
    """Add a correction attempt node; its status is its replay outcome."""
    attrs = {k: v for k, v in props.items() if v is not None}
    attrs.setdefault("replay_outcome", "pending")
    G.add_node(attempt_id, label=Label.CORRECTION_ATTEMPT.value, attempt_id=attempt_id, status=attrs["replay_outcome"], **attrs)
    return attempt_id


def add_edge(G: nx.MultiDiGraph[str], source: str, target: str, rel: Rel | str, **props: Any) -> None:
    """Add one typed edge; a second edge of the same type between the same nodes replaces it."""
    kind = rel._value_ if isinstance(rel, Rel) else Rel(rel)._value_
    if props:
        G.add_edge(source, target, key=kind, type=kind, **{k: v for k, v in props.items() if v is not None})
    else:
        G.add_edge(source, target, key=kind, type=kind)


def decisions(G: nx.MultiDiGraph[str], *, include_boundary: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    """The decision nodes and their attributes (in scope only, unless asked)."""
    label = Label.DECISION._value_
    for node, data in G._node.items():  # type: ignore[attr-defined]
        if data.get("label") == label and (include_boundary or not data.get("boundary")):
            yield node, data


def plans(G: nx.MultiDiGraph[str], *, include_boundary: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    """The plan nodes and their attributes (in scope only, unless asked)."""
    label = Label.PLAN._value_
    for node, data in G._node.items():  # type: ignore[attr-defined]
        if data.get("label") == label and (include_boundary or not data.get("boundary")):
            yield node, data


def edges_of(G: nx.MultiDiGraph[str], rel: Rel) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every edge of one type, as (source, target, attributes)."""
    key = rel._value_
    for source, nbrs in G._succ.items():  # type: ignore[attr-defined]
        for target, keyed in nbrs.items():
            if key in keyed:
                yield source, target, keyed[key]


# ``decisions``, ``plans``, ``edges_of``, ``targets`` and ``sources`` read the graph's own dicts
# (node -> attributes, node -> neighbour -> key -> attributes), as networkx's algorithms do: the
# rules ask them once or several times per decision, and a view (``G.nodes(data=True)``,
# ``G.out_edges(node, keys=True)``) cost from twice to ten times as much per item. A member's
# ``_value_`` is its plain attribute, where ``.value`` is a descriptor call each time.


def targets(G: nx.MultiDiGraph[str], node: str, rel: Rel) -> list[str]:
    """Where ``node``'s edges of type ``rel`` point.

    >>> G = decision_graph()
    >>> _ = add_decision(G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0")
    >>> targets(G, "D1", Rel.PARENT), targets(G, "D1", Rel.DEPENDS_ON), targets(G, "nowhere", Rel.PARENT)
    (['D0'], [], [])
    """
    key = rel._value_
    return [target for target, keyed in G._succ.get(node, {}).items() if key in keyed]  # type: ignore[attr-defined]


def sources(G: nx.MultiDiGraph[str], node: str, rel: Rel) -> list[str]:
    """Which nodes point at ``node`` with an edge of type ``rel``.

    >>> G = decision_graph()
    >>> _ = add_decision(G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0")
    >>> sources(G, "D0", Rel.PARENT), sources(G, "P1", Rel.IN_PLAN), sources(G, "D1", Rel.PARENT)
    (['D1'], ['D1'], [])
    """
    key = rel._value_
    return [source for source, keyed in G._pred.get(node, {}).items() if key in keyed]  # type: ignore[attr-defined]


def _first_phase(kind: DecisionType) -> str:
    return PHASES_BY_TYPE[kind][0].value


_DECISION_DEFAULTS: Final = frozenset(_decision_defaults(DecisionType.PROMPT_DEFINITION, 0))
"""The properties ``add_decision`` fills in when they are not given."""
