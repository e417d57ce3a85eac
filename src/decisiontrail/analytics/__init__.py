"""Analytics for analysts: what a loaded plan or hierarchy recorded, how it was corrected and reviewed, and where it is fragile.

Every function reads the in-scope nodes of a graph shaped as ``checks/model.py`` describes;
boundary nodes are never counted. Which graph is given decides the scope: one plan, or a
hierarchy, whose plans ``plan_summaries`` also breaks down one by one. The definitions:

- *decisions recorded*: every in-scope decision, current or superseded, corrections included;
- *correction rate*: the distinct decisions a correction targeted (directly, not those its
  downstream superseded) over the decisions recorded;
- *review rate*: the reviews held over the proposals actors made, that is the decisions of the
  nine actor types recorded (current or superseded) plus the reviews still pending, which have
  no decision yet; prompt_definition and user_intervention are the system's and never reviewed;
- *blast radius*: for a current decision, how many in-scope decisions correcting it would
  invalidate: the decision itself and its downstream closure (``radius.blast_radius``), the
  count ``impact`` gives and ``correct`` supersedes;
- confidence, depth and fan-out describe the current trees, superseded decisions left out.

``results`` holds what ``analyze`` answers with, ``measures`` computes it, ``radius`` is the blast
radius, and ``text`` renders it for a terminal.
"""

from __future__ import annotations

from decisiontrail.analytics.measures import (
    analyze,
    chain_origin,
    confidence_histogram,
    confidence_summary,
    corrected_decisions,
    correction_summary,
    corrections_per_chain,
    decision_counts,
    decision_depths,
    fan_out,
    most_critical,
    plan_levels,
    plan_summaries,
    review_summary,
    tree_shape,
)
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
from decisiontrail.analytics.text import render_text

__all__ = [
    "Analytics",
    "ConfidenceBucket",
    "ConfidenceSummary",
    "CorrectedDecision",
    "CorrectionSummary",
    "CriticalDecision",
    "DecisionCounts",
    "PlanSummary",
    "ReviewSummary",
    "TreeShape",
    "analyze",
    "blast_radius",
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
    "render_text",
    "review_summary",
    "tree_shape",
]
