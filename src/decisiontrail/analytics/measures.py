"""The measures ``analyze`` gathers, each a pure function of a loaded decision graph (see the package's definitions)."""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import networkx as nx

from decisiontrail.analytics.radius import blast_radius
from decisiontrail.analytics.results import (
    Analytics,
    ConfidenceBucket,
    ConfidenceSummary,
    CorrectedDecision,
    CorrectionSummary,
    CriticalDecision,
    DecisionCounts,
    PlanSummary,
    ReviewSummary,
    TreeShape,
)
from decisiontrail.checks.model import Label, Rel, decisions, plans, sources, targets
from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.recording import SYSTEM_DECISION_TYPES, ReviewAction, ReviewStatus
from decisiontrail.exceptions import ValidationFailed

__all__ = [
    "analyze",
    "chain_origin",
    "confidence_histogram",
    "confidence_summary",
    "corrected_decisions",
    "correction_summary",
    "corrections_per_chain",
    "decision_counts",
    "decision_depths",
    "fan_out",
    "most_critical",
    "plan_levels",
    "plan_summaries",
    "review_summary",
    "tree_shape",
]

_BUCKET_EDGES = tuple(i / 10 for i in range(1, 10))
_SYSTEM_TYPES = frozenset(t.value for t in SYSTEM_DECISION_TYPES)
_RESOLUTION = {
    ReviewStatus.APPROVED.value: ReviewAction.APPROVE.value,
    ReviewStatus.ALTERNATIVE_SELECTED.value: ReviewAction.SELECT_ALTERNATIVE.value,
    ReviewStatus.CUSTOM.value: ReviewAction.CUSTOM.value,
}


def analyze(G: nx.MultiDiGraph[str], *, top: int = 10) -> Analytics:
    """The analytics of every in-scope node of ``G``, with the ``top`` most corrected and most critical decisions.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> a = analyze(G, top=1)
    >>> a.decisions.total, a.shape.decision_depth, [(c.decision_id, c.blast_radius) for c in a.most_critical]
    (2, 1, [('R', 2)])
    """
    if top < 0:
        raise ValidationFailed(f"top: must be 0 or more, not {top}", field="top")
    radius = blast_radius(G)
    return Analytics(
        decisions=decision_counts(G),
        confidence=confidence_summary(G),
        corrections=correction_summary(G, top=top),
        shape=tree_shape(G),
        most_critical=most_critical(G, radius, top=top),
        reviews=review_summary(G),
        plans=plan_summaries(G),
    )


# Counts


def decision_counts(G: nx.MultiDiGraph[str]) -> DecisionCounts:
    """How many decisions are recorded, current and superseded, by type and by phase.

    >>> from datetime import UTC, datetime
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "T", plan_id="P", decision_type="tool_invocation", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent="R",
    ...                  superseded_at=datetime(2026, 1, 2, tzinfo=UTC))
    >>> c = decision_counts(G)
    >>> c.total, c.current, c.superseded, c.by_type, c.by_phase
    (3, 2, 1, {'prompt_definition': 1, 'strategy_choice': 1, 'tool_invocation': 1}, {'strategize': 2, 'execute': 1})
    """
    recorded = [data for _, data in decisions(G)]
    current = sum(1 for data in recorded if _is_current(data))
    return DecisionCounts(
        total=len(recorded),
        current=current,
        superseded=len(recorded) - current,
        by_type=_ordered_counts((str(d.get("decision_type")) for d in recorded), (t.value for t in DecisionType)),
        by_phase=_ordered_counts((str(d.get("phase")) for d in recorded), (p.value for p in Phase)),
    )


# Confidence


def confidence_histogram(scores: Iterable[float]) -> tuple[ConfidenceBucket, ...]:
    """The scores in ten buckets [0.0, 0.1), ..., [0.9, 1.0], a score of 1.0 in the last.

    >>> [b.count for b in confidence_histogram([0.0, 0.1, 0.15, 0.3, 0.95, 1.0])]
    [1, 2, 0, 1, 0, 0, 0, 0, 0, 2]
    """
    counts = [0] * 10
    for score in scores:
        # Against edges built as i / 10, a score written 0.3 lands in [0.3, 0.4), as a reader expects.
        counts[bisect_right(_BUCKET_EDGES, score)] += 1
    return tuple(ConfidenceBucket(low=i / 10, high=(i + 1) / 10, count=n) for i, n in enumerate(counts))


def confidence_summary(G: nx.MultiDiGraph[str]) -> ConfidenceSummary:
    """The spread of the current decisions' confidence scores; decisions without one are counted apart.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> for n, score in enumerate([0.5, 0.75, 0.8], start=1):
    ...     _ = add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n,
    ...                      parent="R", confidence_score=score)
    >>> s = confidence_summary(G)
    >>> s.scored, s.unscored, s.minimum, s.median, s.maximum, round(s.mean or 0, 4)
    (3, 1, 0.5, 0.75, 0.8, 0.6833)
    """
    current = [data for _, data in decisions(G) if _is_current(data)]
    scores = sorted(float(d["confidence_score"]) for d in current if d.get("confidence_score") is not None)
    return ConfidenceSummary(
        scored=len(scores),
        unscored=len(current) - len(scores),
        minimum=scores[0] if scores else None,
        maximum=scores[-1] if scores else None,
        mean=statistics.fmean(scores) if scores else None,
        median=statistics.median(scores) if scores else None,
        histogram=confidence_histogram(scores),
    )


# Corrections


def chain_origin(G: nx.MultiDiGraph[str], decision_id: str) -> str:
    """The first decision of the correction chain ``decision_id`` is on: itself if it corrects nothing.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for n, d in enumerate(["D", "C1", "C2"]):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=n)
    >>> add_edge(G, "C1", "D", "CORRECTS"); add_edge(G, "C2", "C1", "CORRECTS")
    >>> chain_origin(G, "C2"), chain_origin(G, "D")
    ('D', 'D')
    """
    seen = {decision_id}
    node = decision_id
    while originals := [t for t in targets(G, node, Rel.CORRECTS) if t not in seen]:
        node = originals[0]
        seen.add(node)
    return node


def corrections_per_chain(G: nx.MultiDiGraph[str]) -> Counter[str]:
    """How many times each in-scope correction chain was corrected, keyed by its first decision.

    Counted from the correction attempts (their ``original_decision_id``); a graph without
    attempt nodes falls back to the CORRECTS edges of its correction decisions.

    >>> from decisiontrail.checks.model import add_attempt, add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for n, d in enumerate(["D", "C1", "C2"]):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=n)
    >>> add_edge(G, "C1", "D", "CORRECTS"); add_edge(G, "C2", "C1", "CORRECTS")
    >>> corrections_per_chain(G)
    Counter({'D': 2})
    >>> _ = add_attempt(G, "A1", original_decision_id="D")
    >>> corrections_per_chain(G)
    Counter({'D': 1})
    """
    in_scope = {d for d, _ in decisions(G)}
    attempts = list(_nodes(G, Label.CORRECTION_ATTEMPT))
    if attempts:
        origins = [_attempt_origin(G, node, data) for node, data in attempts]
    else:
        origins = [chain_origin(G, d) for d in in_scope if targets(G, d, Rel.CORRECTS)]
    return Counter(o for o in origins if o in in_scope)


def corrected_decisions(G: nx.MultiDiGraph[str]) -> frozenset[str]:
    """The in-scope decisions a correction targeted directly (by CORRECTS or ATTEMPT_ON).

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for n, d in enumerate(["D", "E", "C"]):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=n)
    >>> add_edge(G, "C", "D", "CORRECTS")
    >>> sorted(corrected_decisions(G))
    ['D']
    """
    return frozenset(d for d, _ in decisions(G) if sources(G, d, Rel.CORRECTS) or sources(G, d, Rel.ATTEMPT_ON))


def correction_summary(G: nx.MultiDiGraph[str], *, top: int = 10) -> CorrectionSummary:
    """The corrections recorded, the correction rate, the replays and the ``top`` chains corrected most.

    >>> from decisiontrail.checks.model import add_attempt, add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for n, d in enumerate(["R", "D", "E"]):
    ...     _ = add_decision(G, d, plan_id="P", decision_type="strategy_choice", sequence_number=n)
    >>> _ = add_decision(G, "C", plan_id="P", decision_type="user_intervention", sequence_number=3,
    ...                  is_correction=True)
    >>> add_edge(G, "C", "D", "CORRECTS")
    >>> _ = add_attempt(G, "A", original_decision_id="D", replay_outcome="replayed")
    >>> s = correction_summary(G)
    >>> s.corrections, s.corrected, s.rate, s.replay_outcomes, [(m.decision_id, m.corrections) for m in s.most_corrected]
    (1, 1, 0.25, {'replayed': 1}, [('D', 1)])
    """
    recorded = dict(decisions(G))
    corrected = corrected_decisions(G)
    per_chain = corrections_per_chain(G)
    ranked = sorted(per_chain, key=lambda d: (-per_chain[d], _sequence(recorded[d]), d))[:top]
    outcomes = (str(data.get("status")) for _, data in _nodes(G, Label.CORRECTION_ATTEMPT))
    return CorrectionSummary(
        corrections=sum(1 for data in recorded.values() if data.get("is_correction")),
        corrected=len(corrected),
        rate=len(corrected) / len(recorded) if recorded else None,
        attempts=sum(1 for _ in _nodes(G, Label.CORRECTION_ATTEMPT)),
        replay_outcomes=_ordered_counts(outcomes, ("pending", "replayed", "failed", "not_needed")),
        most_corrected=tuple(CorrectedDecision(**_identity(d, recorded[d]), corrections=per_chain[d]) for d in ranked),
    )


# Shape


def decision_depths(G: nx.MultiDiGraph[str]) -> dict[str, int]:
    """How far each current decision is below its plan's root (depth 0), along current PARENT edges.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "I", plan_id="P", decision_type="implementation_choice", sequence_number=2, parent="S")
    >>> decision_depths(G)
    {'R': 0, 'S': 1, 'I': 2}
    """
    current = [d for d, data in decisions(G) if _is_current(data)]
    return _levels(G, current, Rel.PARENT)


def plan_levels(G: nx.MultiDiGraph[str]) -> dict[str, int]:
    """How far each in-scope plan is below the top plan of the scope (level 0), along CHILD_OF edges.

    >>> from decisiontrail.checks.model import add_edge, add_plan, decision_graph
    >>> G = decision_graph()
    >>> for p in ["P", "Q", "Q2"]:
    ...     _ = add_plan(G, p)
    >>> add_edge(G, "Q", "P", "CHILD_OF"); add_edge(G, "Q2", "Q", "CHILD_OF")
    >>> plan_levels(G)
    {'P': 0, 'Q': 1, 'Q2': 2}
    """
    return _levels(G, [p for p, _ in plans(G)], Rel.CHILD_OF)


def fan_out(G: nx.MultiDiGraph[str]) -> dict[str, int]:
    """How many current children each current decision with children has.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> for n in (1, 2):
    ...     _ = add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent="R")
    >>> fan_out(G)
    {'R': 2}
    """
    current = {d for d, data in decisions(G) if _is_current(data)}
    children = {d: sum(1 for c in sources(G, d, Rel.PARENT) if c in current) for d in current}
    return {d: n for d, n in children.items() if n}


def tree_shape(G: nx.MultiDiGraph[str]) -> TreeShape:
    """The deepest current decision, the deepest active plan, and the fan-out of the current trees.

    >>> from decisiontrail.checks.model import add_decision, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P")
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> for n in (1, 2):
    ...     _ = add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent="R")
    >>> _ = add_decision(G, "I", plan_id="P", decision_type="implementation_choice", sequence_number=3, parent="S1")
    >>> s = tree_shape(G)
    >>> s.decision_depth, s.hierarchy_depth, s.max_fan_out, s.mean_fan_out, s.widest_decision_id
    (2, 0, 2, 1.5, 'R')
    """
    recorded = dict(decisions(G))
    depths = decision_depths(G)
    levels = plan_levels(G)
    active = [levels[p] for p, data in plans(G) if data.get("status") != "invalidated"]
    children = fan_out(G)
    widest = min(children, key=lambda d: (-children[d], _sequence(recorded[d]), d), default=None)
    return TreeShape(
        decision_depth=max(depths.values(), default=None),
        hierarchy_depth=max(active, default=None),
        max_fan_out=children[widest] if widest is not None else None,
        mean_fan_out=statistics.fmean(children.values()) if children else None,
        widest_decision_id=widest,
    )


# Most critical


def most_critical(G: nx.MultiDiGraph[str], radius: Mapping[str, int], *, top: int = 10) -> tuple[CriticalDecision, ...]:
    """The ``top`` decisions by blast radius, largest first, then by sequence number.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> [(c.decision_id, c.blast_radius) for c in most_critical(G, {"R": 2, "S": 1}, top=1)]
    [('R', 2)]
    """
    recorded = dict(decisions(G))
    ranked = sorted((d for d in radius if d in recorded), key=lambda d: (-radius[d], _sequence(recorded[d]), d))[:top]
    return tuple(CriticalDecision(**_identity(d, recorded[d]), blast_radius=radius[d]) for d in ranked)


# Reviews


def review_summary(G: nx.MultiDiGraph[str]) -> ReviewSummary:
    """The reviews held, by status and by resolution, and the share of actor proposals held for review.

    >>> from decisiontrail.checks.model import add_decision, add_review, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> for n in (1, 2, 3):
    ...     _ = add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent="R")
    >>> _ = add_review(G, "V1", plan_id="P", status="alternative_selected")
    >>> _ = add_review(G, "V2", plan_id="P", status="pending")
    >>> s = review_summary(G)
    >>> s.total, s.pending, s.by_status, s.by_resolution, s.rate
    (2, 1, {'pending': 1, 'alternative_selected': 1}, {'select_alternative': 1}, 0.5)
    """
    statuses = [str(data.get("status")) for _, data in _nodes(G, Label.REVIEW)]
    pending = statuses.count(ReviewStatus.PENDING.value)
    actor_decisions = sum(1 for _, data in decisions(G) if data.get("decision_type") not in _SYSTEM_TYPES)
    proposals = actor_decisions + pending
    return ReviewSummary(
        total=len(statuses),
        pending=pending,
        by_status=_ordered_counts(statuses, (s.value for s in ReviewStatus)),
        by_resolution=_ordered_counts((_RESOLUTION[s] for s in statuses if s in _RESOLUTION), (a.value for a in ReviewAction)),
        rate=len(statuses) / proposals if proposals else None,
    )


# Plans


def plan_summaries(G: nx.MultiDiGraph[str]) -> tuple[PlanSummary, ...]:
    """Each in-scope plan with its place in the hierarchy, its decisions, reviews and depth, parents first.

    >>> from decisiontrail.checks.model import add_decision, add_edge, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P"); _ = add_plan(G, "Q")
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="subplan_spawn", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "R2", plan_id="Q", decision_type="prompt_definition", sequence_number=0)
    >>> add_edge(G, "Q", "P", "CHILD_OF")
    >>> [(p.plan_id, p.parent_plan_id, p.level, p.decisions, p.depth) for p in plan_summaries(G)]
    [('P', None, 0, 2, 1), ('Q', 'P', 1, 1, 0)]
    """
    levels = plan_levels(G)
    depths = decision_depths(G)
    by_plan: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for d, data in decisions(G):
        by_plan[str(data.get("plan_id"))].append((d, data))
    reviews = Counter(str(data.get("plan_id")) for _, data in _nodes(G, Label.REVIEW))
    summaries = [_plan_summary(G, p, data, levels[p], by_plan[p], depths, reviews[p]) for p, data in plans(G)]
    # Stable: within a level, plans keep the loader's order (creation order).
    return tuple(sorted(summaries, key=lambda s: s.level))


def _plan_summary(
    G: nx.MultiDiGraph[str],
    plan_id: str,
    data: Mapping[str, Any],
    level: int,
    members: list[tuple[str, dict[str, Any]]],
    depths: Mapping[str, int],
    reviews: int,
) -> PlanSummary:
    current = sum(1 for _, d in members if _is_current(d))
    parents = targets(G, plan_id, Rel.CHILD_OF)
    return PlanSummary(
        plan_id=plan_id,
        parent_plan_id=parents[0] if parents else None,
        level=level,
        description=data.get("description"),
        phase=data.get("phase"),
        status=data.get("status"),
        decisions=len(members),
        current=current,
        superseded=len(members) - current,
        depth=max((depths[d] for d, _ in members if d in depths), default=None),
        reviews=reviews,
    )


# Shared pieces


def _nodes(G: nx.MultiDiGraph[str], label: Label) -> Iterator[tuple[str, dict[str, Any]]]:
    for node, data in G.nodes(data=True):
        if data.get("label") == label.value and not data.get("boundary"):
            yield node, data


def _is_current(data: Mapping[str, Any]) -> bool:
    return data.get("status") == "current"


def _sequence(data: Mapping[str, Any]) -> int:
    return int(data.get("sequence_number") or 0)


def _identity(decision_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "decision_id": decision_id,
        "decision_type": str(data.get("decision_type")),
        "plan_id": str(data.get("plan_id")),
        "sequence_number": _sequence(data),
        "question": data.get("question"),
    }


def _attempt_origin(G: nx.MultiDiGraph[str], attempt: str, data: Mapping[str, Any]) -> str | None:
    # The attempt names its chain's first decision; an older one only points at what it corrected.
    if data.get("original_decision_id") is not None:
        return str(data["original_decision_id"])
    corrected = targets(G, attempt, Rel.ATTEMPT_ON)
    return chain_origin(G, corrected[0]) if corrected else None


def _levels(G: nx.MultiDiGraph[str], nodes: Iterable[str], rel: Rel) -> dict[str, int]:
    """How many ``rel`` hops each node is below a top node, hopping only among ``nodes``.

    >>> from decisiontrail.checks.model import add_plan, add_edge, decision_graph
    >>> G = decision_graph()
    >>> for p in ["A", "B", "C"]:
    ...     _ = add_plan(G, p)
    >>> add_edge(G, "B", "A", "CHILD_OF"); add_edge(G, "C", "B", "CHILD_OF")
    >>> _levels(G, ["C", "B"], Rel.CHILD_OF)
    {'C': 1, 'B': 0}
    """
    members = list(nodes)
    allowed = set(members)
    levels: dict[str, int] = {}
    for start in members:
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = start
        while node is not None and node not in levels and node not in on_path:
            path.append(node)
            on_path.add(node)
            node = next((up for up in targets(G, node, rel) if up in allowed), None)
        # A cycle (which other checks report) is cut where the walk met itself.
        base = levels[node] + 1 if node is not None and node in levels else 0
        for offset, member in enumerate(reversed(path)):
            levels[member] = base + offset
    return {n: levels[n] for n in members}


def _ordered_counts(values: Iterable[str], order: Iterable[str]) -> dict[str, int]:
    """How often each value occurs, keyed in ``order``, unknown values after it sorted; no zeros.

    >>> _ordered_counts(["b", "z", "a", "b"], ["a", "b", "c"])
    {'a': 1, 'b': 2, 'z': 1}
    """
    counts = Counter(values)
    known = [key for key in order if key in counts]
    rest = sorted(set(counts) - set(known))
    return {key: counts[key] for key in (*known, *rest)}
