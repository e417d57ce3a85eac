"""Every check on a small literal graph: one that satisfies all rules, and for each rule a copy
that breaks exactly that rule and nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decisiontrail.checks import VALIDATION_RULES, CoverageSpec, all_rules, coverage_rules, run_checks
from decisiontrail.checks.coverage import check_execute_under_strategize, load_spec
from decisiontrail.checks.validation import _cycles, check_no_dependency_cycle, check_tree_per_plan
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph
from decisiontrail.domain import DecisionType
from decisiontrail.exceptions import ValidationFailed


def valid_graph() -> nx.MultiDiGraph[str]:
    """A parent plan with an invariant, a corrected strategy and a spawned, applied child plan."""
    G = decision_graph()
    add_plan(G, "P", phase="apply", invariants=json.dumps([{"name": "tests", "statement": "all tests pass", "scope": "plan"}]))
    add_plan(G, "C", phase="apply")
    add_decision(G, "R0", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    add_decision(
        G,
        "I1",
        plan_id="P",
        decision_type="invariant_enforced",
        sequence_number=1,
        parent="R0",
        chosen_option="all tests pass",
        rationale="tests: Declared at plan scope",
    )
    superseded = {"superseded_at": "2026-01-01T00:10:00+00:00"}
    add_decision(G, "S2", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent="R0", **superseded)
    add_decision(G, "X3", plan_id="P", decision_type="implementation_choice", sequence_number=3, parent="S2", **superseded)
    add_decision(G, "N4", plan_id="P", decision_type="subplan_spawn", sequence_number=4, parent="R0")
    add_decision(G, "U5", plan_id="P", decision_type="user_intervention", sequence_number=5, parent="R0", is_correction=True)
    add_edge(G, "U5", "S2", "CORRECTS")
    add_edge(G, "S2", "U5", "SUPERSEDED_BY")
    add_edge(G, "X3", "U5", "SUPERSEDED_BY")
    add_decision(G, "S6", plan_id="P", decision_type="strategy_choice", sequence_number=6, parent="U5")
    add_decision(G, "T7", plan_id="P", decision_type="tool_invocation", sequence_number=7, parent="S6")
    add_edge(G, "T7", "N4", "DEPENDS_ON", ordinal=0)
    add_edge(G, "C", "P", "CHILD_OF")
    add_edge(G, "C", "N4", "SPAWNED_BY")
    add_decision(G, "CR0", plan_id="C", decision_type="prompt_definition", sequence_number=0)
    add_decision(G, "CS1", plan_id="C", decision_type="strategy_choice", sequence_number=1, parent="CR0")
    add_decision(G, "CT2", plan_id="C", decision_type="tool_invocation", sequence_number=2, parent="CS1")
    add_attempt(G, "A1", original_decision_id="S2", corrected_decision_id="S2", correction_decision_id="U5", attempt_number=1)
    add_edge(G, "A1", "S2", "ATTEMPT_ON")
    add_edge(G, "A1", "U5", "PRODUCED")
    add_review(G, "V1", plan_id="P", status="approved")
    add_edge(G, "V1", "N4", "RESOLVED_AS")
    return G


def test_the_valid_graph_passes_every_rule() -> None:
    report = run_checks(valid_graph())
    assert report.ok, report.render()
    assert report.rules == tuple(r.name for r in all_rules())


def _drop(G: nx.MultiDiGraph[str], source: str, target: str, rel: str) -> None:
    G.remove_edge(source, target, key=rel)


def _second_root(G: nx.MultiDiGraph[str]) -> None:
    add_decision(G, "R8", plan_id="P", decision_type="prompt_definition", sequence_number=8)


def _two_parents(G: nx.MultiDiGraph[str]) -> None:
    add_edge(G, "CT2", "CR0", "PARENT")


def _parent_in_other_plan(G: nx.MultiDiGraph[str]) -> None:
    _drop(G, "CT2", "CS1", "PARENT")
    add_edge(G, "CT2", "S6", "PARENT")


def _dependency_cycle(G: nx.MultiDiGraph[str]) -> None:
    add_edge(G, "N4", "T7", "DEPENDS_ON", ordinal=0)


def _depends_on_superseded(G: nx.MultiDiGraph[str]) -> None:
    add_edge(G, "T7", "X3", "DEPENDS_ON", ordinal=1)


def _missed_child(G: nx.MultiDiGraph[str]) -> None:
    _drop(G, "X3", "U5", "SUPERSEDED_BY")
    del G.nodes["X3"]["superseded_at"]
    G.nodes["X3"]["status"] = "current"


def _superseded_without_successor(G: nx.MultiDiGraph[str]) -> None:
    _drop(G, "S2", "U5", "SUPERSEDED_BY")


def _created_out_of_order(G: nx.MultiDiGraph[str]) -> None:
    G.nodes["T7"]["created_at"] = G.nodes["S6"]["created_at"] - timedelta(seconds=1)


def _tool_in_strategize(G: nx.MultiDiGraph[str]) -> None:
    G.nodes["T7"]["phase"] = "strategize"


def _context_not_stored(G: nx.MultiDiGraph[str]) -> None:
    G.nodes["CS1"]["has_context"] = False


def _child_of_another_plan(G: nx.MultiDiGraph[str]) -> None:
    add_plan(G, "Q")
    add_decision(G, "Q0", plan_id="Q", decision_type="prompt_definition", sequence_number=0)
    _drop(G, "C", "P", "CHILD_OF")
    add_edge(G, "C", "Q", "CHILD_OF")


def _review_left_under_superseded(G: nx.MultiDiGraph[str]) -> None:
    add_review(G, "V2", plan_id="P", status="pending", parent_decision_id="X3")


def _no_strategy_in_child(G: nx.MultiDiGraph[str]) -> None:
    G.nodes["CS1"]["decision_type"] = DecisionType.RESOURCE_SELECTION.value


def _invariant_not_enforced(G: nx.MultiDiGraph[str]) -> None:
    G.nodes["I1"]["decision_type"] = DecisionType.STRATEGY_CHOICE.value


def _spawn_without_child(G: nx.MultiDiGraph[str]) -> None:
    _drop(G, "C", "P", "CHILD_OF")
    _drop(G, "C", "N4", "SPAWNED_BY")


def _execute_under_prompt(G: nx.MultiDiGraph[str]) -> None:
    _drop(G, "CT2", "CS1", "PARENT")
    add_edge(G, "CT2", "CR0", "PARENT")


BREAKS: dict[str, Callable[[nx.MultiDiGraph[str]], None]] = {
    "single_root": _second_root,
    "tree_per_plan": _two_parents,
    "parent_in_same_plan": _parent_in_other_plan,
    "no_dependency_cycle": _dependency_cycle,
    "dependency_is_current": _depends_on_superseded,
    "no_partial_invalidation": _missed_child,
    "correction_consistency": _superseded_without_successor,
    "sequence_order": _created_out_of_order,
    "type_in_phase": _tool_in_strategize,
    "context_snapshot": _context_not_stored,
    "spawn_link": _child_of_another_plan,
    "review_resolvable": _review_left_under_superseded,
    "strategize_coverage": _no_strategy_in_child,
    "invariant_coverage": _invariant_not_enforced,
    "spawns_have_children": _spawn_without_child,
    "execute_under_strategize": _execute_under_prompt,
}


def test_every_rule_has_a_breaking_case() -> None:
    assert set(BREAKS) == {r.name for r in all_rules()}


@pytest.mark.parametrize("rule", list(BREAKS))
def test_a_graph_that_breaks_one_rule_fails_that_rule_only(rule: str) -> None:
    G = valid_graph()
    BREAKS[rule](G)

    report = run_checks(G)

    assert set(report.by_rule()) == {rule}, report.render()
    (violation, *_) = report.violations
    assert violation.hint and (violation.decision_ids or violation.plan_ids)
    assert f"[{rule}]" in report.render()


def test_the_spec_switches_coverage_rules_and_sets_minimums() -> None:
    G = valid_graph()
    _spawn_without_child(G)
    lenient = CoverageSpec(spawns_have_children=False)
    strict = CoverageSpec(strategize_minimums={DecisionType.STRATEGY_CHOICE: 2})

    assert run_checks(G, rules=VALIDATION_RULES + coverage_rules(lenient)).ok
    assert set(run_checks(valid_graph(), rules=coverage_rules(strict)).by_rule()) == {"strategize_coverage"}


def test_a_spec_loads_from_json_and_refuses_unknown_fields() -> None:
    spec = load_spec('{"strategize_minimums": {"strategy_choice": 2}, "invariants_enforced": false}')
    assert spec.strategize_minimums == {DecisionType.STRATEGY_CHOICE: 2} and not spec.invariants_enforced
    with pytest.raises(ValidationFailed, match="coverage"):
        load_spec('{"strategise_minimums": {}}')


def test_a_plan_still_in_strategize_is_not_held_to_post_phase_coverage() -> None:
    G = valid_graph()
    G.nodes["C"]["phase"] = "strategize"
    _no_strategy_in_child(G)
    assert run_checks(G).ok


def test_an_invalidated_child_plan_of_a_superseded_spawn_is_consistent() -> None:
    G = valid_graph()
    for node in ("N4", "T7"):  # the spawn is corrected away, and its dependent with it
        G.nodes[node].update(superseded_at="2026-01-01T00:20:00+00:00", status="superseded")
        add_edge(G, node, "U5", "SUPERSEDED_BY")
    report = run_checks(G, rules=VALIDATION_RULES)
    assert set(report.by_rule()) == {"no_partial_invalidation"}
    assert any("plan C, which it spawned, is not invalidated" in v.message for v in report.violations)

    G.nodes["C"].update(invalidated_at="2026-01-01T00:20:00+00:00", status="invalidated")
    for node in ("CR0", "CS1", "CT2"):
        G.nodes[node].update(superseded_at="2026-01-01T00:20:00+00:00", status="superseded")
        add_edge(G, node, "U5", "SUPERSEDED_BY")
    assert run_checks(G, rules=VALIDATION_RULES).ok, run_checks(G, rules=VALIDATION_RULES).render()


def test_a_pending_review_is_judged_by_its_parent_and_its_plan_and_a_cancelled_one_not_at_all() -> None:
    G = valid_graph()
    add_review(G, "V2", plan_id="P", status="pending", parent_decision_id="S6")  # under a current decision: resolvable
    add_review(G, "V3", plan_id="C", status="pending", parent_decision_id="CS1")
    add_review(G, "V4", plan_id="P", status="cancelled", parent_decision_id="X3")  # made moot, and cancelled with it
    assert run_checks(G, rules=VALIDATION_RULES).ok

    G.nodes["C"].update(invalidated_at="2026-01-01T00:20:00+00:00", status="invalidated")
    messages = [v.message for v in run_checks(G, rules=VALIDATION_RULES).violations if v.rule == "review_resolvable"]
    assert messages == ["review V3 is pending in plan C, which is invalidated: it can never be resolved"]


def test_a_correction_whose_original_was_pruned_is_still_consistent() -> None:
    G = valid_graph()
    G.remove_nodes_from(["S2", "X3"])  # the superseded history, pruned; the attempt keeps the ids
    assert run_checks(G, rules=VALIDATION_RULES).ok
    G.remove_node("A1")
    assert set(run_checks(G, rules=VALIDATION_RULES).by_rule()) == {"correction_consistency"}


def test_docs_list_every_rule_with_an_example_violation() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "checks.md").read_text(encoding="utf-8")
    for rule in all_rules():
        section = text.split(f"#### {rule.name}\n", 1)
        assert len(section) == 2, f"docs/checks.md has no section for {rule.name}"
        assert f"[{rule.name}]" in section[1].split("####", 1)[0], f"docs/checks.md shows no example violation of {rule.name}"


@given(
    size=st.integers(min_value=1, max_value=10),
    pairs=st.lists(st.tuples(st.integers(min_value=0, max_value=9), st.integers(min_value=0, max_value=9)), max_size=25),
    rel=st.sampled_from(["PARENT", "DEPENDS_ON"]),
)
def test_the_cycle_rules_find_what_a_search_of_every_edge_finds(size: int, pairs: list[tuple[int, int]], rel: str) -> None:
    # The rules peel off the nodes that are on no cycle before searching; what they report must be
    # what searching a graph of every edge of the type reports.
    G = decision_graph()
    for i in range(size):
        add_decision(G, f"D{i}", plan_id="P", decision_type="strategy_choice", sequence_number=i)
    for s, t in pairs:
        add_edge(G, f"D{s % size}", f"D{t % size}", rel)
    every_edge: nx.DiGraph[str] = nx.DiGraph([(s, t) for s, t, key in G.edges(keys=True) if key == rel])
    rule, name = (check_tree_per_plan, "PARENT") if rel == "PARENT" else (check_no_dependency_cycle, "DEPENDS_ON")

    found = [v.decision_ids for v in rule(G) if v.message.startswith(f"{name} edges form a cycle")]

    assert found == [tuple(cycle) for cycle in _cycles(every_edge)]


@given(
    phases=st.lists(st.sampled_from(["execute", "execute", "strategize", "apply"]), min_size=1, max_size=10),
    parents=st.lists(st.integers(min_value=-3, max_value=9), max_size=10),
)
def test_execute_under_strategize_finds_what_walking_each_chain_whole_finds(phases: list[str], parents: list[int]) -> None:
    # The rule remembers each Execute decision's anchor on the way up; what it reports must be what
    # walking every decision's own chain of first parents reports (cycles and roots included).
    G = decision_graph()
    for i, phase in enumerate(phases):
        add_decision(G, f"D{i}", plan_id="P", decision_type="tool_invocation", sequence_number=i, phase=phase)
    for i, parent in enumerate(parents[: len(phases)]):
        if parent >= 0:
            add_edge(G, f"D{i}", f"D{parent % len(phases)}", "PARENT")

    def walked(d: str) -> str | None:
        seen, node = {d}, d
        while True:
            up = [t for t, keyed in G.succ[node].items() if "PARENT" in keyed]
            if not up or up[0] in seen:
                return None
            node = up[0]
            seen.add(node)
            if G.nodes[node]["phase"] != "execute":
                return node

    anchors = {f"D{i}": walked(f"D{i}") for i, phase in enumerate(phases) if phase == "execute"}
    expected = [d for d, anchor in anchors.items() if anchor is None or G.nodes[anchor]["phase"] != "strategize"]
    found = [v.decision_ids[0] for v in check_execute_under_strategize(G)]

    assert found == expected
