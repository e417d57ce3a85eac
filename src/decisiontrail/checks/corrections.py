"""Validation checks of corrections: a correction supersedes its original's whole downstream, its
metadata agrees both ways, and no pending review is left where it could never be resolved.

Each check takes a graph built as ``decisiontrail.checks.model`` describes and returns the
violations it finds, in a stable order, as ``validation``'s do.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from decisiontrail.checks.model import Label, Rel, decisions, edges_of, targets
from decisiontrail.checks.report import Violation, sorted_ids

__all__ = ["check_correction_consistency", "check_no_partial_invalidation", "check_review_resolvable"]


def check_no_partial_invalidation(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Everything downstream of a superseded decision is superseded: its children, the plans it
    spawned and all their decisions (its current dependents are ``dependency_is_current``'s).

    Judged edge by edge, which by induction covers the whole downstream closure.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, superseded_at="t")
    >>> _ = add_decision(G, "I", plan_id="P", decision_type="implementation_choice", sequence_number=2, parent="S")
    >>> [v.message for v in check_no_partial_invalidation(G)]
    ['decision S is superseded but its child I is current']
    """
    found = []
    hint = "a correction supersedes the original's whole downstream at once; partial invalidation is not permitted (ADR-007)"
    relation = {Rel.PARENT.value: "child"}
    for source, target, key in G.edges(keys=True):
        source_data, target_data = G.nodes[source], G.nodes[target]
        if source_data.get("boundary") or target_data.get("status") not in ("superseded", "invalidated"):
            continue
        if key in relation and source_data.get("status") == "current":
            found.append(
                Violation(
                    "no_partial_invalidation",
                    f"decision {target} is superseded but its {relation[key]} {source} is current",
                    decision_ids=(target, source),
                    plan_ids=sorted_ids([source_data["plan_id"]]),
                    hint=hint,
                )
            )
        elif key == Rel.SPAWNED_BY.value and source_data.get("status") == "active":
            found.append(
                Violation(
                    "no_partial_invalidation",
                    f"decision {target} is superseded but plan {source}, which it spawned, is not invalidated",
                    decision_ids=(target,),
                    plan_ids=(source,),
                    hint=hint,
                )
            )
        elif key == Rel.IN_PLAN.value and source_data.get("status") == "current":
            found.append(
                Violation(
                    "no_partial_invalidation",
                    f"plan {target} is invalidated but its decision {source} is current",
                    decision_ids=(source,),
                    plan_ids=(target,),
                    hint=hint,
                )
            )
    return found


def check_correction_consistency(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """Correction metadata agrees both ways: a correction corrects exactly one decision, which is
    superseded by it; a superseded decision names exactly one superseding correction; an
    attempt's ids match the decisions it links to.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1)
    >>> _ = add_decision(G, "C", plan_id="P", decision_type="user_intervention", sequence_number=2, is_correction=True)
    >>> add_edge(G, "C", "S", "CORRECTS")
    >>> [v.message for v in check_correction_consistency(G)]
    ['correction C corrects S, but S is not superseded by C']
    """
    found = []
    hint = "a correction records is_correction and CORRECTS its original; the original and its downstream point to it with SUPERSEDED_BY"
    produced_by: dict[str, list[str]] = defaultdict(list)
    for attempt, correction, _ in edges_of(G, Rel.PRODUCED):
        produced_by[correction].append(attempt)
    for d, data in decisions(G):
        plan_ids = (data["plan_id"],)
        corrects = targets(G, d, Rel.CORRECTS)
        successors = targets(G, d, Rel.SUPERSEDED_BY)
        if data.get("is_correction"):
            if len(corrects) > 1:
                found.append(
                    Violation(
                        "correction_consistency",
                        f"correction {d} corrects {len(corrects)} decisions; exactly one",
                        decision_ids=(d, *corrects),
                        plan_ids=plan_ids,
                        hint=hint,
                    )
                )
            elif not corrects and not _original_pruned(G, produced_by.get(d, [])):
                found.append(
                    Violation(
                        "correction_consistency",
                        f"decision {d} is a correction but corrects no decision",
                        decision_ids=(d,),
                        plan_ids=plan_ids,
                        hint=hint,
                    )
                )
            for original in corrects:
                if d not in targets(G, original, Rel.SUPERSEDED_BY):
                    found.append(
                        Violation(
                            "correction_consistency",
                            f"correction {d} corrects {original}, but {original} is not superseded by {d}",
                            decision_ids=(d, original),
                            plan_ids=plan_ids,
                            hint=hint,
                        )
                    )
        elif corrects:
            found.append(
                Violation(
                    "correction_consistency",
                    f"decision {d} CORRECTS {', '.join(corrects)} but is not marked is_correction",
                    decision_ids=(d, *corrects),
                    plan_ids=plan_ids,
                    hint=hint,
                )
            )
        superseded = data.get("superseded_at") is not None
        if superseded and len(successors) != 1:
            found.append(
                Violation(
                    "correction_consistency",
                    f"decision {d} is superseded but has {len(successors)} SUPERSEDED_BY edges; exactly one",
                    decision_ids=(d, *successors),
                    plan_ids=plan_ids,
                    hint=hint,
                )
            )
        elif not superseded and successors:
            found.append(
                Violation(
                    "correction_consistency",
                    f"decision {d} has SUPERSEDED_BY {successors[0]} but no superseded_at",
                    decision_ids=(d, *successors),
                    plan_ids=plan_ids,
                    hint=hint,
                )
            )
        for successor in successors:
            if not G.nodes[successor].get("is_correction", False):
                found.append(
                    Violation(
                        "correction_consistency",
                        f"decision {d} is superseded by {successor}, which is not a correction",
                        decision_ids=(d, successor),
                        plan_ids=plan_ids,
                        hint=hint,
                    )
                )
    for attempt, data in _attempts(G):
        for rel, prop in ((Rel.ATTEMPT_ON, "corrected_decision_id"), (Rel.PRODUCED, "correction_decision_id")):
            linked = targets(G, attempt, rel)
            if linked and linked != [data.get(prop)]:
                found.append(
                    Violation(
                        "correction_consistency",
                        f"correction attempt {attempt} records {prop} {data.get(prop)} but links {rel.value} to {', '.join(linked)}",
                        decision_ids=tuple(linked),
                        hint=hint,
                    )
                )
    return found


def check_review_resolvable(G: nx.MultiDiGraph[str]) -> list[Violation]:
    """No pending review waits in an invalidated plan or under a superseded decision: it could never be resolved.

    >>> from decisiontrail.checks.model import add_decision, add_review, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, superseded_at="t")
    >>> _ = add_review(G, "V", plan_id="P", status="pending", parent_decision_id="S")
    >>> [v.message for v in check_review_resolvable(G)]
    ['review V is pending under decision S, which is superseded: it can never be resolved']
    """
    found = []
    hint = "a correction cancels the pending reviews it makes moot, in its own transaction (domain.correction.moot_reviews)"
    for review, data in G.nodes(data=True):
        if data.get("label") != Label.REVIEW.value or data.get("boundary") or data.get("status") != "pending":
            continue
        plan_id = data["plan_id"]
        parent: str = data.get("parent_decision_id") or ""
        if G.nodes[plan_id].get("status") == "invalidated":
            found.append(
                Violation(
                    "review_resolvable",
                    f"review {review} is pending in plan {plan_id}, which is invalidated: it can never be resolved",
                    decision_ids=(parent,) if parent else (),
                    plan_ids=(plan_id,),
                    hint=hint,
                )
            )
        elif parent in G and G.nodes[parent].get("status") == "superseded":
            found.append(
                Violation(
                    "review_resolvable",
                    f"review {review} is pending under decision {parent}, which is superseded: it can never be resolved",
                    decision_ids=(parent,),
                    plan_ids=(plan_id,),
                    hint=hint,
                )
            )
    return found


def _attempts(G: nx.MultiDiGraph[str]) -> list[tuple[str, dict[str, Any]]]:
    return [(n, d) for n, d in G.nodes(data=True) if d.get("label") == Label.CORRECTION_ATTEMPT.value and not d.get("boundary")]


def _original_pruned(G: nx.MultiDiGraph[str], attempts: list[str]) -> bool:
    """A correction whose original was pruned keeps its attempt, which still names the original."""
    return any(G.nodes[a].get("corrected_decision_id") and G.nodes[a]["corrected_decision_id"] not in G for a in attempts)
