"""Where the Cytoscape.js export puts each node: the explorer's drawing, each plan a box holding its decision tree.

The explorer (explorer/src/layout.ts and graph.ts) lays a plan's decisions out left to right: a
decision's rank is its depth in the plan's tree, leaves take successive rows, a parent sits
midway between its first and last child, and siblings go by id; a pending review hangs on the
decision it waits under. ``tree_positions`` is that function, with the explorer's spacing, so a
document opened in Cytoscape.js has the shape the page draws. Around each plan's tree is its box
(its compound node), the reviews no longer pending and the correction attempts in rows below the
tree, each one rank right of the decision it is about. The boxes are laid out as the explorer
lays out plans: a child plan right of its parent, the plans of each depth in one column (as
wide as its widest box), a plan centred beside the plans below it, top-level plans one below
another; whatever no plan holds (a correction attempt on no decision drawn) goes in a row below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import networkx as nx

from decisiontrail.checks.model import Label, Rel, targets

__all__ = ["DECISION_HEIGHT", "DECISION_WIDTH", "RANK", "ROW", "Drawing", "draw", "tree_positions"]

# The explorer's sizes (explorer/src/graph.ts): a decision's box, the gaps between ranks and rows.
DECISION_WIDTH: Final = 190.0
DECISION_HEIGHT: Final = 46.0
RANK: Final = DECISION_WIDTH + 60.0
ROW: Final = DECISION_HEIGHT + 14.0
_PLAN_WIDTH: Final = 240.0  # a plan holding nothing drawn, a node of its own
_PLAN_HEIGHT: Final = 58.0
_PADDING: Final = 18.0  # between a plan's box and what it holds
_LABEL_BAND: Final = 24.0  # above a plan's box, where its label is drawn
_GAP_X: Final = 90.0
_GAP_Y: Final = 40.0


def tree_positions(items: Sequence[tuple[str, str | None]], rank: float, row: float) -> dict[str, tuple[float, float]]:
    """Centres for a forest of ``(id, parent)`` items, as the explorer's ``treePositions`` places
    them: the first root's first leaf at (0, 0), a node ``rank`` right of its parent, leaves
    ``row`` apart in the order of a walk, a parent midway between its first and last child;
    siblings, and roots, by id. A parent not among the items makes a root; an item that closes a
    cycle is drawn as the root of what hangs below it. Without recursion: a chain of any length.

    >>> tree_positions([("a", None), ("b", "a"), ("c", "a")], 10, 2)
    {'b': (10, 0), 'c': (10, 2), 'a': (0, 1.0)}
    """
    known = {item for item, _ in items}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for item, parent in items:
        if parent is not None and parent != item and parent in known:
            children.setdefault(parent, []).append(item)
        else:
            roots.append(item)
    for siblings in children.values():
        siblings.sort()
    roots.sort()
    placed: dict[str, tuple[float, float]] = {}
    next_row = 0

    def walk(root: str) -> None:
        # Depth first with an explicit stack: a node is placed after its children (post-order).
        nonlocal next_row
        stack: list[tuple[str, int, bool]] = [(root, 0, False)]
        on_stack = {root}
        while stack:
            item, depth, opened = stack[-1]
            below = [c for c in children.get(item, ()) if c not in placed and c not in on_stack]
            if not opened and below:
                stack[-1] = (item, depth, True)
                stack.extend((child, depth + 1, False) for child in reversed(below))  # the first child taken first
                on_stack.update(below)
                continue
            stack.pop()
            on_stack.discard(item)
            if item in placed:
                continue
            rows = [placed[c][1] for c in children.get(item, ()) if c in placed]
            if rows:
                y: float = (min(rows) + max(rows)) / 2
            else:
                y, next_row = next_row * row, next_row + 1
            placed[item] = (depth * rank, y)

    for root in roots:
        walk(root)
    for item, _ in items:  # what only a cycle can reach
        if item not in placed:
            walk(item)
    return placed


@dataclass(frozen=True)
class Drawing:
    """Where each node drawn is (its centre; y grows downwards), the plan whose box holds it, and
    how far down the drawing reaches (the next drawing below starts there)."""

    positions: Mapping[str, tuple[float, float]]
    holders: Mapping[str, str]
    height: float


def draw(G: nx.MultiDiGraph[str], drawn: Mapping[Any, Mapping[str, Any]]) -> Drawing:
    """The drawing of ``drawn``, some of ``G``'s nodes with their attributes: each plan a box of its
    decisions (and its reviews and correction attempts), the boxes in the explorer's layered layout.
    Decisions whose plan is not drawn (a decisions-only export) are laid out as if it were, without its node.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0")
    >>> drawing = draw(G, dict(G.nodes(data=True)))
    >>> drawing.positions["D1"][0] - drawing.positions["D0"][0], drawing.holders["D1"]
    (250.0, 'P1')
    """
    plans = {str(n) for n, attrs in drawn.items() if attrs.get("label") == Label.PLAN}
    groups: dict[str, list[str]] = {plan: [] for plan in plans}
    loose: list[str] = []
    for node, attrs in drawn.items():
        if attrs.get("label") != Label.PLAN:
            group = _group_of(G, node, attrs)
            (loose if group is None else groups.setdefault(group, [])).append(str(node))
    boxes = {group: _Box.of(G, drawn, members, holds=group in plans) for group, members in groups.items()}
    holders = {member: group for group, members in groups.items() if group in plans for member in members}
    positions: dict[str, tuple[float, float]] = {}
    bottom = _place_boxes(G, boxes, positions)
    for column, node in enumerate(sorted(loose)):
        positions[node] = (column * RANK + DECISION_WIDTH / 2, bottom + DECISION_HEIGHT / 2)
    return Drawing(positions, holders, bottom + (DECISION_HEIGHT + _GAP_Y if loose else 0.0))


def _group_of(G: nx.MultiDiGraph[str], node: Any, attrs: Mapping[str, Any]) -> str | None:
    """The plan whose box holds a node: its own for a decision or a review, the plan of the decision
    a correction attempt is on; None for what no plan holds."""
    label = attrs.get("label")
    if label in (Label.DECISION, Label.REVIEW):
        plan_id = attrs.get("plan_id")
        return None if plan_id is None else str(plan_id)
    if label == Label.CORRECTION_ATTEMPT:
        for decision in targets(G, node, Rel.ATTEMPT_ON):
            plan_id = G.nodes[decision].get("plan_id")
            if plan_id is not None:
                return str(plan_id)
    return None


@dataclass
class _Box:
    """A plan's box: where its members sit inside it (from the top left of the first decision
    box), how large it is, and, once placed, its top left."""

    inside: dict[str, tuple[float, float]]
    width: float
    height: float
    holds: bool  # a plan node drawn around its members, or members without their plan's node
    x: float = 0.0
    y: float = 0.0

    @classmethod
    def of(cls, G: nx.MultiDiGraph[str], drawn: Mapping[Any, Mapping[str, Any]], members: list[str], *, holds: bool) -> _Box:
        if not members:
            return cls({}, _PLAN_WIDTH, _PLAN_HEIGHT, holds)
        inside = _plan_tree(G, drawn, members)
        width = max(x for x, _ in inside.values()) + DECISION_WIDTH + 2 * _PADDING
        height = max(y for _, y in inside.values()) + DECISION_HEIGHT + 2 * _PADDING + _LABEL_BAND
        return cls(inside, width, height, holds)


def _plan_tree(
    G: nx.MultiDiGraph[str], drawn: Mapping[Any, Mapping[str, Any]], members: list[str]
) -> dict[str, tuple[float, float]]:
    """Where a plan's members sit: its decisions and pending reviews as the explorer draws them
    (the items named as the explorer names them, so siblings sort alike: ``d:`` a decision, ``r:``
    a review), then the others a row each below, one rank right of the decision each is about."""
    attrs_of = {str(n): attrs for n, attrs in drawn.items()}
    decisions = {m for m in members if attrs_of[m].get("label") == Label.DECISION}
    items: list[tuple[str, str | None]] = []
    rest: list[tuple[str, str | None]] = []
    for member in members:
        attrs = attrs_of[member]
        label = attrs.get("label")
        if label == Label.DECISION:
            parent = next((p for p in targets(G, member, Rel.PARENT) if p in decisions), None)
            items.append((f"d:{member}", None if parent is None else f"d:{parent}"))
        elif label == Label.REVIEW and attrs.get("status") == "pending":
            waits = attrs.get("parent_decision_id")
            items.append((f"r:{member}", f"d:{waits}" if waits in decisions else None))
        else:
            ends = [*targets(G, member, Rel.RESOLVED_AS), attrs.get("parent_decision_id"), *targets(G, member, Rel.ATTEMPT_ON)]
            rest.append((member, next((str(d) for d in ends if d in decisions), None)))
    tree = tree_positions(items, RANK, ROW)
    inside = {name[2:]: point for name, point in tree.items()}
    below = max((y for _, y in inside.values()), default=-ROW) + ROW
    for row, (member, about) in enumerate(sorted(rest)):
        x = inside[about][0] + RANK if about is not None else 0.0
        inside[member] = (x, below + row * ROW)
    return inside


def _place_boxes(G: nx.MultiDiGraph[str], boxes: dict[str, _Box], positions: dict[str, tuple[float, float]]) -> float:
    """Place the boxes, a child plan's right of its parent's, and their members; how far down they reach."""
    up = {
        group: next((p for p in targets(G, group, Rel.CHILD_OF) if p in boxes), None) if group in G else None for group in boxes
    }
    below: dict[str, list[str]] = {}
    for group in sorted(boxes):
        parent = up[group]
        if parent is not None and parent != group:
            below.setdefault(parent, []).append(group)
    # A walk from the top-level plans, then from whatever a cycle (which the checks report) kept
    # from being reached: each plan once, its depth, and the plans placed beside it.
    order: list[tuple[str, int]] = []
    beside: dict[str, list[str]] = {}
    tops: list[str] = []
    seen: set[str] = set()
    for top in [g for g in sorted(boxes) if up[g] is None or up[g] == g] + sorted(boxes):
        if top in seen:
            continue
        tops.append(top)
        stack: list[tuple[str, int, str | None]] = [(top, 0, None)]
        while stack:
            group, depth, parent = stack.pop()
            if group in seen:
                continue
            seen.add(group)
            order.append((group, depth))
            if parent is not None:
                beside.setdefault(parent, []).append(group)
            stack.extend((child, depth + 1, group) for child in reversed(below.get(group, [])) if child not in seen)
    # Each plan's span: its box's height or its children's, whichever is taller.
    span: dict[str, float] = {}
    for group, _ in reversed(order):
        kids = beside.get(group, [])
        stacked = sum(span[k] for k in kids) + _GAP_Y * max(len(kids) - 1, 0)
        span[group] = max(boxes[group].height, stacked)
    widths: dict[int, float] = {}
    for group, depth in order:
        widths[depth] = max(widths.get(depth, 0.0), boxes[group].width)
    columns = [0.0]
    for depth in range(1, len(widths)):
        columns.append(columns[-1] + widths[depth - 1] + _GAP_X)
    top_of: dict[str, float] = {}
    cursor = 0.0
    for top in tops:
        top_of[top] = cursor
        cursor += span[top] + _GAP_Y
    for group, depth in order:  # a parent before its children
        box, kids = boxes[group], beside.get(group, [])
        box.x, box.y = columns[depth], top_of[group] + (span[group] - box.height) / 2
        stacked = sum(span[k] for k in kids) + _GAP_Y * max(len(kids) - 1, 0)
        at = top_of[group] + (span[group] - stacked) / 2
        for kid in kids:
            top_of[kid] = at
            at += span[kid] + _GAP_Y
        _place_members(group, box, positions)
    return cursor


def _place_members(group: str, box: _Box, positions: dict[str, tuple[float, float]]) -> None:
    if not box.inside:
        positions[group] = (box.x + box.width / 2, box.y + box.height / 2)
        return
    left = box.x + _PADDING + DECISION_WIDTH / 2
    top = box.y + _LABEL_BAND + _PADDING + DECISION_HEIGHT / 2
    for member, (x, y) in box.inside.items():
        positions[member] = (left + x, top + y)
    if box.holds:  # where Cytoscape.js draws a compound node: the middle of what it holds
        body = box.height - _LABEL_BAND - 2 * _PADDING
        positions[group] = (box.x + box.width / 2, box.y + _LABEL_BAND + _PADDING + body / 2)
