"""A plan's decision tree assembled from its decisions, and its text rendering."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from decisiontrail.domain.decision import Decision
from decisiontrail.exceptions import RuleViolation


@dataclass(frozen=True)
class TreeNode:
    """A decision and its children in sequence order."""

    decision: Decision
    children: tuple[TreeNode, ...] = field(default=())

    def walk(self) -> Iterator[tuple[int, TreeNode]]:
        """Depth-first, pre-order: (depth, node) pairs, the root at depth 0."""
        stack: list[tuple[int, TreeNode]] = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            if node.children:
                stack.extend((depth + 1, child) for child in reversed(node.children))


@dataclass(frozen=True)
class DecisionTree:
    """One plan's tree: its root prompt_definition and everything recorded under it."""

    plan_id: str
    root: TreeNode

    @classmethod
    def build(cls, plan_id: str, decisions: Iterable[Decision]) -> DecisionTree:
        """Assemble the tree from a plan's decisions (any order); children come in sequence order.

        Give it one tree's decisions: the current ones (``superseded_by`` unset), or those
        current at one moment (an as-of read). Raises RuleViolation unless they form exactly one
        tree rooted at one parentless decision.
        """
        return cls._assemble(plan_id, decisions, lambda d: d.parent_decision_id)

    @classmethod
    def history(cls, plan_id: str, decisions: Iterable[Decision]) -> DecisionTree:
        """Everything ever recorded in the plan as one tree, superseded decisions included.

        A prompt correction gives the plan a new root, so its history has one parentless
        decision per prompt; here each superseded root hangs under the root that replaced it,
        and the history reads as one tree with the current root on top.
        """
        by_id = {d.decision_id: d for d in decisions}

        def parent_of(decision: Decision) -> str | None:
            if decision.parent_decision_id is None and decision.superseded_by in by_id:
                return decision.superseded_by
            return decision.parent_decision_id

        return cls._assemble(plan_id, by_id.values(), parent_of)

    @classmethod
    def _assemble(cls, plan_id: str, decisions: Iterable[Decision], parent_of: Callable[[Decision], str | None]) -> DecisionTree:
        by_id = {d.decision_id: d for d in decisions}
        children: dict[str | None, list[Decision]] = {}
        for decision in by_id.values():
            children.setdefault(parent_of(decision), []).append(decision)
        roots = children.get(None, [])
        if len(roots) != 1:
            raise RuleViolation(
                f"plan {plan_id} has {len(roots)} parentless decisions, a tree needs exactly one",
                rule="single_root",
            )
        orphans = [d.decision_id for d in by_id.values() if (p := parent_of(d)) is not None and p not in by_id]
        if orphans:
            raise RuleViolation(
                f"plan {plan_id}: decisions {', '.join(sorted(orphans))} have a parent outside the given decisions",
                rule="parent_in_same_plan",
            )

        # Built bottom-up without recursion: a plan's tree may be thousands of decisions deep.
        order: list[Decision] = []
        stack = [roots[0]]
        while stack:
            decision = stack.pop()
            order.append(decision)
            stack.extend(children.get(decision.decision_id, []))
        built: dict[str, TreeNode] = {}
        for decision in reversed(order):
            kids = children.get(decision.decision_id)
            below = tuple(built[k.decision_id] for k in sorted(kids, key=_sequence_key)) if kids else ()
            built[decision.decision_id] = TreeNode(decision, below)
        if len(built) != len(by_id):
            raise RuleViolation(
                f"plan {plan_id}: {len(by_id) - len(built)} decisions are not reachable from the root",
                rule="single_tree",
            )

        return cls(plan_id, built[roots[0].decision_id])

    def __iter__(self) -> Iterator[Decision]:
        return (node.decision for _, node in self.root.walk())

    def __len__(self) -> int:
        return sum(1 for _ in self.root.walk())

    def render(self, *, ids: bool = False) -> str:
        """The tree as indented text, one decision a line.

        Each line shows the sequence number, type, chosen option, and marks
        superseded decisions; with ``ids``, each decision's id too (what `correct` asks for).
        """
        return "\n".join(describe(node.decision, depth, ids=ids) for depth, node in self.root.walk())


def describe(decision: Decision, depth: int = 0, width: int = 100, *, ids: bool = False) -> str:
    """One decision as one line: sequence number, type, chosen option, spawned plans, status.

    Line breaks in the chosen option are shown as spaces and long options are cut, so a
    rendering always has exactly one line per decision.
    """
    option = " ".join(decision.chosen_option.split())
    if len(option) > width:
        option = option[: width - 1] + "…"
    spawned = f"  -> spawns {', '.join(decision.downstream_plan_ids)}" if decision.downstream_plan_ids else ""
    status = "" if decision.is_current else f"  [superseded by {decision.superseded_by}]"
    identity = f" {decision.decision_id}" if ids else ""
    return f"{'  ' * depth}#{decision.sequence_number}{identity} {decision.decision_type.value}: {option}{spawned}{status}"


def _sequence_key(decision: Decision) -> tuple[int, str]:
    seq = decision.sequence_number
    return (seq if seq is not None else -1, decision.decision_id)


def render_hierarchy(root_plan_id: str, trees: dict[str, DecisionTree], descriptions: dict[str, str]) -> str:
    """A plan's tree with each child plan's tree drawn right under the decision that spawned it."""
    lines: list[str] = []

    def draw(plan_id: str, indent: str, seen: frozenset[str]) -> None:
        lines.append(f"{indent}plan {plan_id}: {descriptions.get(plan_id, '')}")
        tree = trees[plan_id]
        for depth, node in tree.root.walk():
            lines.append(f"{indent}  {describe(node.decision, depth)}")
            for child_plan in node.decision.downstream_plan_ids:
                if child_plan in trees and child_plan not in seen:
                    draw(child_plan, f"{indent}  {'  ' * (depth + 1)}", seen | {child_plan})

    draw(root_plan_id, "", frozenset({root_plan_id}))
    return "\n".join(lines)
