"""A plan's decision tree: assembly from unordered decisions, traversal and text rendering."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decision

from decisiontrail.domain import Decision, DecisionTree, DecisionType, new_ulid
from decisiontrail.domain.tree import render_hierarchy
from decisiontrail.exceptions import RuleViolation

PLAN = new_ulid()


def root(plan_id: str = PLAN, **fields: Any) -> Decision:
    return decision(plan_id, DecisionType.PROMPT_DEFINITION, sequence_number=0, **fields)


def under(parent: Decision, seq: int, decision_type: DecisionType = DecisionType.STRATEGY_CHOICE, **fields: Any) -> Decision:
    """A decision hanging under ``parent`` with sequence number ``seq`` and chosen option "option <seq>"."""
    return decision(
        parent.plan_id, decision_type, parent.decision_id, sequence_number=seq, chosen_option=f"option {seq}", **fields
    )


def test_children_ordered_by_sequence_number_and_iterated_pre_order() -> None:
    top = root()
    third = under(top, 3)
    first = under(top, 1)
    second = under(top, 2)
    first_child = under(first, 4, DecisionType.IMPLEMENTATION_CHOICE)
    second_child = under(second, 5, DecisionType.IMPLEMENTATION_CHOICE)

    tree = DecisionTree.build(PLAN, [second_child, third, first_child, second, top, first])

    assert tree.plan_id == PLAN
    assert tree.root.decision == top
    assert [node.decision.sequence_number for node in tree.root.children] == [1, 2, 3]
    assert [d.sequence_number for d in tree] == [0, 1, 4, 2, 5, 3]
    assert len(tree) == 6


def test_children_sorted_numerically_not_lexically() -> None:
    top = root()
    tree = DecisionTree.build(PLAN, [under(top, 10), top, under(top, 9), under(top, 100)])
    assert [d.sequence_number for d in tree] == [0, 9, 10, 100]


def test_walk_reports_depth() -> None:
    top = root()
    a = under(top, 1)
    b = under(a, 2)
    tree = DecisionTree.build(PLAN, [b, a, top])
    assert [(depth, node.decision.decision_id) for depth, node in tree.root.walk()] == [
        (0, top.decision_id),
        (1, a.decision_id),
        (2, b.decision_id),
    ]


def test_single_decision_tree() -> None:
    top = root()
    tree = DecisionTree.build(PLAN, [top])
    assert list(tree) == [top]
    assert len(tree) == 1


def test_no_parentless_decision_rejected() -> None:
    orphan = decision(PLAN, DecisionType.STRATEGY_CHOICE, new_ulid())
    with pytest.raises(RuleViolation, match="has 0 parentless decisions") as caught:
        DecisionTree.build(PLAN, [orphan])
    assert caught.value.rule == "single_root"


def test_empty_decisions_rejected() -> None:
    with pytest.raises(RuleViolation, match="has 0 parentless decisions") as caught:
        DecisionTree.build(PLAN, [])
    assert caught.value.rule == "single_root"


def test_two_parentless_decisions_rejected() -> None:
    with pytest.raises(RuleViolation, match=f"plan {PLAN} has 2 parentless decisions") as caught:
        DecisionTree.build(PLAN, [root(), root()])
    assert caught.value.rule == "single_root"


def test_decision_with_missing_parent_rejected() -> None:
    top = root()
    stray = decision(PLAN, DecisionType.STRATEGY_CHOICE, new_ulid())
    with pytest.raises(RuleViolation, match=f"decisions {stray.decision_id} have a parent outside") as caught:
        DecisionTree.build(PLAN, [top, under(top, 1), stray])
    assert caught.value.rule == "parent_in_same_plan"


def test_cycle_detached_from_root_rejected() -> None:
    a_id, b_id = new_ulid(), new_ulid()
    a = decision(PLAN, DecisionType.STRATEGY_CHOICE, b_id, decision_id=a_id)
    b = decision(PLAN, DecisionType.STRATEGY_CHOICE, a_id, decision_id=b_id)
    with pytest.raises(RuleViolation, match="2 decisions are not reachable from the root") as caught:
        DecisionTree.build(PLAN, [root(), a, b])
    assert caught.value.rule == "single_tree"


def test_five_thousand_deep_chain_builds_and_renders() -> None:
    chain = [root()]
    for seq in range(1, 5000):
        chain.append(under(chain[-1], seq))

    tree = DecisionTree.build(PLAN, reversed(chain))
    lines = tree.render().splitlines()

    assert len(tree) == 5000
    assert [d.decision_id for d in tree] == [d.decision_id for d in chain]
    assert len(lines) == 5000
    assert lines[-1] == "  " * 4999 + "#4999 strategy_choice: option 4999"


def test_render_lines_indent_and_mark_superseded() -> None:
    top = root(chosen_option="ship it")
    replacement = new_ulid()
    old = under(top, 1, superseded_by=replacement)
    new = under(top, 2)
    tool = under(new, 3, DecisionType.TOOL_INVOCATION)

    text = DecisionTree.build(PLAN, [tool, new, old, top]).render()

    assert text.splitlines() == [
        "#0 prompt_definition: ship it",
        f"  #1 strategy_choice: option 1  [superseded by {replacement}]",
        "  #2 strategy_choice: option 2",
        "    #3 tool_invocation: option 3",
    ]


def test_render_shows_spawned_plans() -> None:
    child_plan = new_ulid()
    top = root()
    spawn = under(top, 1, DecisionType.SUBPLAN_SPAWN, downstream_plan_ids=[child_plan])
    assert DecisionTree.build(PLAN, [top, spawn]).render().splitlines()[1] == (
        f"  #1 subplan_spawn: option 1  -> spawns {child_plan}"
    )


def test_render_hierarchy_draws_child_plan_under_spawning_decision() -> None:
    child_plan = new_ulid()
    top = root(chosen_option="build")
    spawn = under(top, 1, DecisionType.SUBPLAN_SPAWN, downstream_plan_ids=[child_plan])
    after_spawn = under(spawn, 2)
    sibling = under(top, 3)
    parent_tree = DecisionTree.build(PLAN, [top, spawn, after_spawn, sibling])

    child_root = root(child_plan, chosen_option="sub task")
    child_step = under(child_root, 1)
    child_tree = DecisionTree.build(child_plan, [child_root, child_step])

    text = render_hierarchy(
        PLAN,
        {PLAN: parent_tree, child_plan: child_tree},
        {PLAN: "parent work", child_plan: "child work"},
    )

    assert text.splitlines() == [
        f"plan {PLAN}: parent work",
        "  #0 prompt_definition: build",
        f"    #1 subplan_spawn: option 1  -> spawns {child_plan}",
        f"      plan {child_plan}: child work",
        "        #0 prompt_definition: sub task",
        "          #1 strategy_choice: option 1",
        "      #2 strategy_choice: option 2",
        "    #3 strategy_choice: option 3",
    ]


def test_render_hierarchy_skips_plans_without_a_tree() -> None:
    missing_plan = new_ulid()
    top = root()
    spawn = under(top, 1, DecisionType.SUBPLAN_SPAWN, downstream_plan_ids=[missing_plan])
    text = render_hierarchy(PLAN, {PLAN: DecisionTree.build(PLAN, [top, spawn])}, {})
    assert text.splitlines()[0] == f"plan {PLAN}: "
    assert f"plan {missing_plan}" not in text
    assert len(text.splitlines()) == 3


def test_multi_line_options_render_one_line_per_decision() -> None:
    first = root(chosen_option="line one\nline two\u2028line three")
    long = decision(PLAN, DecisionType.STRATEGY_CHOICE, first.decision_id, sequence_number=1, chosen_option="x" * 500)
    tree = DecisionTree.build(PLAN, [first, long])

    lines = tree.render().splitlines()
    hierarchy = render_hierarchy(PLAN, {PLAN: tree}, {PLAN: "d"}).splitlines()

    assert len(lines) == 2
    assert "line one line two line three" in lines[0]
    assert lines[1].endswith("…") and len(lines[1]) < 150
    assert len(hierarchy) == 3
