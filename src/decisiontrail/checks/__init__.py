"""networkx checks, as pure functions of a decision graph: the rules a stored graph must keep.

``graphdb.loading.load_graph`` builds the graph; ``run_checks`` judges it against every rule
(docs/checks.md lists them with example violations). Beside the rules (``validation``,
``corrections``, ``coverage``): the graph's shape (``model``), the downstream and lineage
closures (``closure``) and the graph as it stood at a moment (``history``). Analytics and exports
read the same graph from rooms of their own, ``decisiontrail.analytics`` and ``decisiontrail.exports``.
"""

from __future__ import annotations

from functools import partial

import networkx as nx

from decisiontrail.checks import corrections, coverage, validation
from decisiontrail.checks.coverage import DEFAULT_SPEC, CoverageSpec
from decisiontrail.checks.model import collector_held_off, decisions, plans
from decisiontrail.checks.report import Report, Rule, Violation

VALIDATION_RULES: tuple[Rule, ...] = (
    Rule(
        "single_root",
        "validation",
        "exactly one current root per active plan, and it is the prompt_definition",
        validation.check_single_root,
    ),
    Rule(
        "tree_per_plan",
        "validation",
        "PARENT edges form one tree per plan: the root has no parent, every other decision one, no cycles",
        validation.check_tree_per_plan,
    ),
    Rule("parent_in_same_plan", "validation", "PARENT edges never cross plans", validation.check_parent_in_same_plan),
    Rule("no_dependency_cycle", "validation", "DEPENDS_ON has no cycles", validation.check_no_dependency_cycle),
    Rule(
        "dependency_is_current",
        "validation",
        "the current tree depends on no superseded decision",
        validation.check_dependency_is_current,
    ),
    Rule(
        "no_partial_invalidation",
        "validation",
        "everything downstream of a superseded decision is superseded",
        corrections.check_no_partial_invalidation,
    ),
    Rule(
        "correction_consistency", "validation", "correction metadata agrees both ways", corrections.check_correction_consistency
    ),
    Rule(
        "sequence_order",
        "validation",
        "sequence numbers are unique per plan and follow creation order",
        validation.check_sequence_order,
    ),
    Rule("type_in_phase", "validation", "decision types match their phases", validation.check_type_in_phase),
    Rule(
        "context_snapshot",
        "validation",
        "every decision has a context snapshot that can replay it",
        validation.check_context_snapshot,
    ),
    Rule("spawn_link", "validation", "child plans link to the decision that spawned them", validation.check_spawn_link),
    Rule(
        "review_resolvable",
        "validation",
        "no pending review waits in an invalidated plan or under a superseded decision",
        corrections.check_review_resolvable,
    ),
)


def coverage_rules(spec: CoverageSpec = DEFAULT_SPEC) -> tuple[Rule, ...]:
    """The post-phase coverage rules, judged against ``spec``."""
    return (
        Rule(
            "strategize_coverage",
            "coverage",
            "after Strategize, the expected decision types are there",
            partial(coverage.check_strategize_coverage, spec=spec),
        ),
        Rule(
            "invariant_coverage",
            "coverage",
            "after Strategize, an invariant_enforced per declared invariant",
            partial(coverage.check_invariant_coverage, spec=spec),
        ),
        Rule(
            "spawns_have_children",
            "coverage",
            "after Execute, every spawning decision has its child plan(s)",
            partial(coverage.check_spawns_have_children, spec=spec),
        ),
        Rule(
            "execute_under_strategize",
            "coverage",
            "Execute decisions hang under Strategize decisions",
            partial(coverage.check_execute_under_strategize, spec=spec),
        ),
    )


def all_rules(spec: CoverageSpec = DEFAULT_SPEC) -> tuple[Rule, ...]:
    return VALIDATION_RULES + coverage_rules(spec)


def run_checks(G: nx.MultiDiGraph[str], *, scope: str = "graph", rules: tuple[Rule, ...] | None = None) -> Report:
    """Run ``rules`` (all of them by default) over ``G`` and gather what they find.

    >>> from decisiontrail.checks.model import add_decision, add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P")
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> run_checks(G).ok
    True
    """
    chosen = all_rules() if rules is None else rules
    found: list[Violation] = []
    with collector_held_off():
        for rule in chosen:
            found.extend(rule.check(G))
    return Report(
        scope=scope,
        decisions=sum(1 for _ in decisions(G)),
        plans=sum(1 for _ in plans(G)),
        rules=tuple(r.name for r in chosen),
        violations=tuple(found),
    )


__all__ = [
    "DEFAULT_SPEC",
    "VALIDATION_RULES",
    "CoverageSpec",
    "Report",
    "Rule",
    "Violation",
    "all_rules",
    "coverage_rules",
    "run_checks",
]
