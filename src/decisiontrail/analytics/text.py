"""The analytics as a plain-text report for a terminal (``decisiontrail analyze``)."""

from __future__ import annotations

from collections.abc import Mapping

from decisiontrail.analytics.results import (
    Analytics,
    ConfidenceSummary,
    CorrectionSummary,
    CriticalDecision,
    DecisionCounts,
    PlanSummary,
    ReviewSummary,
    TreeShape,
)

__all__ = ["render_text"]


def render_text(analytics: Analytics) -> str:
    """The analytics as a plain-text report for a terminal.

    >>> from decisiontrail.analytics.measures import analyze
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> print(render_text(analyze(G)).splitlines()[0])
    Decisions: 1 recorded (1 current, 0 superseded)
    """
    sections = (
        _decisions_text(analytics.decisions),
        _plans_text(analytics.plans, analytics.shape),
        _confidence_text(analytics.confidence),
        _corrections_text(analytics.corrections, analytics.decisions.total),
        _critical_text(analytics.most_critical),
        _reviews_text(analytics.reviews),
    )
    return "\n\n".join("\n".join(lines) for lines in sections) + "\n"


def _decisions_text(counts: DecisionCounts) -> list[str]:
    return [
        f"Decisions: {counts.total} recorded ({counts.current} current, {counts.superseded} superseded)",
        f"  by type:  {_counts_text(counts.by_type)}",
        f"  by phase: {_counts_text(counts.by_phase)}",
    ]


def _plans_text(summaries: tuple[PlanSummary, ...], shape: TreeShape) -> list[str]:
    fan = (
        f"widest {shape.widest_decision_id} with {shape.max_fan_out} children, mean fan-out {shape.mean_fan_out:.2f}"
        if shape.widest_decision_id is not None and shape.mean_fan_out is not None
        else "no decision has children"
    )
    lines = [
        f"Plans: {len(summaries)}, hierarchy depth {_or_dash(shape.hierarchy_depth)}; "
        f"deepest decision at depth {_or_dash(shape.decision_depth)}; {fan}"
    ]
    for p in summaries:
        lines.append(
            f"  {'  ' * p.level}{p.plan_id}  {p.phase or '-'}/{p.status or '-'}  decisions {p.decisions} "
            f"({p.current} current)  depth {_or_dash(p.depth)}  reviews {p.reviews}"
            + (f"  {p.description}" if p.description else "")
        )
    return lines


def _confidence_text(confidence: ConfidenceSummary) -> list[str]:
    head = f"Confidence of current decisions: {confidence.scored} scored, {confidence.unscored} without a score"
    if not confidence.scored:
        return [head]
    lines = [
        f"{head}; min {confidence.minimum:.2f}, median {confidence.median:.2f}, "
        f"mean {confidence.mean:.2f}, max {confidence.maximum:.2f}"
    ]
    widest = max(b.count for b in confidence.histogram)
    for b in confidence.histogram:
        bar = "#" * round(20 * b.count / widest)
        lines.append(f"  {b.low:.1f}-{b.high:.1f} {bar:<20} {b.count}")
    return lines


def _corrections_text(corrections: CorrectionSummary, recorded: int) -> list[str]:
    rate = f"{corrections.rate:.1%}" if corrections.rate is not None else "-"
    lines = [
        f"Corrections: {corrections.corrections} recorded; {corrections.corrected} of {recorded} decisions "
        f"corrected ({rate}); {corrections.attempts} attempts"
        + (f" ({_counts_text(corrections.replay_outcomes)})" if corrections.replay_outcomes else "")
    ]
    lines += [
        f"  {c.corrections}x  {c.decision_id}  {c.decision_type}  {c.question or ''}".rstrip() for c in corrections.most_corrected
    ]
    return lines


def _critical_text(critical: tuple[CriticalDecision, ...]) -> list[str]:
    return ["Most critical decisions (blast radius):"] + [
        f"  {c.blast_radius:>4}  {c.decision_id}  {c.decision_type}  {c.plan_id}#{c.sequence_number}  {c.question or ''}".rstrip()
        for c in critical
    ]


def _reviews_text(reviews: ReviewSummary) -> list[str]:
    rate = f"{reviews.rate:.1%} of actor proposals" if reviews.rate is not None else "no actor proposals"
    lines = [f"Reviews: {reviews.total} ({reviews.pending} pending), {rate}"]
    if reviews.by_status:
        lines.append(f"  by status:   {_counts_text(reviews.by_status)}")
    if reviews.by_resolution:
        lines.append(f"  resolved as: {_counts_text(reviews.by_resolution)}")
    return lines


def _counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {n}" for key, n in counts.items()) or "-"


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)
