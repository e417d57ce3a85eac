"""W3C PROV-JSON (the ``prov`` package): provenance rather than a drawing, decisions as entities each made by its own activity."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from datetime import date, datetime, time
from tempfile import TemporaryFile
from typing import Any, Final

import networkx as nx

from decisiontrail.checks.model import Label, Rel, edges_of, targets
from decisiontrail.exports.document import (
    Part,
    caption,
    float_text,
    joined_lines,
    node_attributes,
    nodes_in,
    plain,
    present,
    to_json,
)

__all__ = ["assemble", "make_part", "prov_json"]


def prov_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """W3C PROV-JSON: decisions and plans as entities, each decision made by its own activity; one record a line.

    >>> import json
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> json.loads("".join(prov_json(G)))["wasGeneratedBy"]
    {'_:g1': {'prov:entity': 'dt:decision/D0', 'prov:activity': 'dt:deciding/D0', 'prov:time': '2026-01-01T00:00:00+00:00'}}
    """
    return assemble(G.graph, [make_part(G, True)])


def make_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s part of a PROV-JSON document: its records and the agents they name (with ``every_node``, its boundary nodes too)."""
    agents: dict[str, dict[str, Any]] = {}
    return Part(records=_prov_records(G, every_node, agents), agents=agents)


def assemble(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The PROV-JSON document of ``parts``, section by section, the relations numbered as they are put in place."""
    # A section holds its records from every part, so each waits in a temporary file, one record
    # a line, until every part has been seen; the agents (one per owner, or per plan without one)
    # are few and kept. The relations are numbered as they are put in place (their blank-node
    # ids). ``graph`` has nothing PROV holds.
    numbered = dict.fromkeys(_PROV_RELATIONS, 0)
    agents: dict[str, Mapping[str, Any]] = {}
    with ExitStack() as files:
        waiting = {section: files.enter_context(TemporaryFile("w+", encoding="utf-8")) for section in _PROV_WRITTEN}
        held: set[str] = set()
        for part in parts:
            for section, text in part.records:
                letter = _PROV_RELATIONS.get(section)
                if letter is not None:
                    numbered[section] += 1
                    text = f'"_:{letter}{numbered[section]}": {text}'
                waiting[section].write(text + "\n")
                held.add(section)
            for agent, record in part.agents.items():
                agents.setdefault(agent, record)
        yield f'{{"prefix": {{"dt": {to_json(_PROV_NAMESPACE)}}}\n'
        for section in (*_PROV_SECTIONS, *_PROV_RELATIONS):
            if section == "agent":
                if not agents:
                    continue
                lines: Iterator[str] = (f"{to_json(ident)}: {to_json(record)}" for ident, record in agents.items())
            elif section in held:
                waiting[section].seek(0)
                lines = (line.rstrip("\n") for line in waiting[section])
            else:
                continue
            yield f', "{section}": {{\n'
            yield from joined_lines(lines)
            yield "}\n"
    yield "}\n"


_PROV_NAMESPACE: Final = "https://decisiontrail.dev/ns#"
_PROV_SECTIONS: Final = ("entity", "activity", "agent")
# The relations written, each with the letter of its blank-node ids.
_PROV_RELATIONS: Final = {
    "wasGeneratedBy": "g",
    "wasDerivedFrom": "d",
    "wasInvalidatedBy": "i",
    "wasAssociatedWith": "a",
    "wasInformedBy": "c",
}
_PROV_DECISION: Final = (
    "decision_type", "phase", "sequence_number", "question", "chosen_option", "confidence_score", "rationale",
    "plan_id", "decision_status", "superseded", "is_correction", "correction_reason", "superseded_at", "boundary",
)  # fmt: skip
_PROV_PLAN: Final = (
    "description", "phase", "plan_status", "invalidated", "owner", "project", "created_at", "invalidated_at", "boundary",
)  # fmt: skip
_PROV_ESCAPES: Final = re.compile(r"[^A-Za-z0-9_-]")
_PROV_WRITTEN: Final = tuple(section for section in (*_PROV_SECTIONS, *_PROV_RELATIONS) if section != "agent")
"""The sections whose records are written as the groups come (the agents are collected)."""


def _prov_records(G: nx.MultiDiGraph[str], every_node: bool, agents: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """The records of ``G``'s nodes (its boundary ones only with ``every_node``) and of the edges
    leaving them, each ``(section, text)`` (``Part.records``), but its agents, which are added to ``agents``."""

    def record(section: str, ident: str, attrs: dict[str, Any]) -> tuple[str, str]:
        return section, f"{to_json(ident)}: {to_json(attrs)}"

    def relate(kind: str, attrs: dict[str, Any]) -> tuple[str, str]:
        return kind, to_json(present(attrs))

    for node, attrs in nodes_in(G, every_node):
        label = attrs.get("label")
        if label == Label.DECISION:
            entity, activity, created = (
                _prov_id("decision", node),
                _prov_id("deciding", node),
                _prov_time(attrs.get("created_at")),
            )
            yield record("entity", entity, _prov_entity("dt:Decision", node, attrs, _PROV_DECISION))
            deciding = {"prov:type": _qname("dt:Deciding"), "prov:startTime": created, "prov:endTime": created}
            yield record("activity", activity, present(deciding))
            yield relate("wasGeneratedBy", {"prov:entity": entity, "prov:activity": activity, "prov:time": created})
            plan_id = str(attrs.get("plan_id"))
            plan = G.nodes[plan_id] if plan_id in G else {}
            agent = _prov_agent(plan_id, plan.get("owner"), agents)
            drawn = _prov_id("plan", plan_id) if plan else None
            yield relate("wasAssociatedWith", {"prov:activity": activity, "prov:agent": agent, "prov:plan": drawn})
            for parent in targets(G, node, Rel.PARENT):
                yield relate("wasInformedBy", {"prov:informed": activity, "prov:informant": _prov_id("deciding", parent)})
            if attrs.get("status") == "superseded":
                successors = [(t, d) for _, t, k, d in G.out_edges(node, keys=True, data=True) if k == Rel.SUPERSEDED_BY]
                by = _prov_id("deciding", successors[0][0]) if successors else None
                at = attrs.get("superseded_at", successors[0][1].get("at") if successors else None)
                yield relate("wasInvalidatedBy", {"prov:entity": entity, "prov:activity": by, "prov:time": _prov_time(at)})
        elif label == Label.PLAN:
            entity, created = _prov_id("plan", node), _prov_time(attrs.get("created_at"))
            yield record("entity", entity, _prov_entity("prov:Plan", node, attrs, _PROV_PLAN))
            for spawner in targets(G, node, Rel.SPAWNED_BY):
                yield relate(
                    "wasGeneratedBy",
                    {"prov:entity": entity, "prov:activity": _prov_id("deciding", spawner), "prov:time": created},
                )
            if attrs.get("status") == "invalidated":
                corrections = [c for attempt in targets(G, node, Rel.INVALIDATED_BY) for c in targets(G, attempt, Rel.PRODUCED)]
                by = _prov_id("deciding", corrections[0]) if corrections else None
                at = _prov_time(attrs.get("invalidated_at"))
                yield relate("wasInvalidatedBy", {"prov:entity": entity, "prov:activity": by, "prov:time": at})

    def written(source: str) -> bool:  # an edge is its source's group's
        return every_node or not G.nodes[source].get("boundary")

    for source, target, data in edges_of(G, Rel.DEPENDS_ON):
        if not written(source):
            continue
        derived = {"prov:generatedEntity": _prov_id("decision", source), "prov:usedEntity": _prov_id("decision", target)}
        yield relate("wasDerivedFrom", derived | {"dt:ordinal": data.get("ordinal")})
    for source, target, _ in edges_of(G, Rel.CORRECTS):
        if not written(source):
            continue
        revised = {"prov:generatedEntity": _prov_id("decision", source), "prov:usedEntity": _prov_id("decision", target)}
        yield relate("wasDerivedFrom", revised | {"prov:type": _qname("prov:Revision")})


def _prov_id(kind: str, name: object) -> str:
    """A qualified name in ``dt``: ``dt:<kind>/<name>``, the name percent-encoded past ``[A-Za-z0-9_-]``.

    >>> _prov_id("agent", "ana.b@x")
    'dt:agent/ana%2Eb%40x'
    """
    escaped = _PROV_ESCAPES.sub(lambda m: "".join(f"%{byte:02X}" for byte in m[0].encode()), str(name))
    return f"dt:{kind}/{escaped}"


def _prov_agent(plan_id: object, owner: object, agents: dict[str, dict[str, Any]]) -> str:
    # The store names who instantiated a plan, not who made each decision: a plan without an owner
    # gets an agent of its own, standing for whoever acted in it.
    if owner:
        agent, name = _prov_id("agent", owner), str(owner)
    else:
        agent, name = _prov_id("agent/plan", plan_id), f"the actor of plan {plan_id}"
    agents.setdefault(agent, {"prov:label": name})
    return agent


def _prov_entity(kind: str, node: object, attrs: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    values = node_attributes(attrs)  # each kind's status under its own name, as in the drawings
    described = {f"dt:{name}": _prov_value(values[name]) for name in names if values.get(name) is not None}
    return {"prov:type": _qname(kind), "prov:label": caption(node, attrs), **described}


def _prov_value(value: Any) -> Any:
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$": float_text(value), "type": "xsd:double"}
    for kind, xsd in _XSD_TIMES:
        if isinstance(value, kind):
            return {"$": value.isoformat(), "type": f"xsd:{xsd}"}
    value = plain(value)
    return value if isinstance(value, str) else to_json(value)


# datetime before date: it is one.
_XSD_TIMES: Final = ((datetime, "dateTime"), (date, "date"), (time, "time"))


def _prov_time(value: Any) -> str | None:
    return None if value is None else str(plain(value))


def _qname(name: str) -> dict[str, str]:
    return {"$": name, "type": "xsd:QName"}
