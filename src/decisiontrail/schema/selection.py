"""What a query selects below a field, judged before resolving it (look-ahead for one-statement paths)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from strawberry.types.nodes import SelectedField, Selection

Shape = Mapping[str, "Shape | None"]
"""The fields a path can serve, by GraphQL name: the shape of each one's own selection, None for a leaf."""

OUTLINE: dict[str, Shape | None] = dict.fromkeys(
    ("__typename", "id", "planId", "parentDecisionId", "sequenceNumber", "decisionType", "phase", "status", "supersededById")
)
OUTLINE["children"] = OUTLINE["dependsOn"] = OUTLINE
"""What a Decision built from an outline record can answer, at any depth of children and dependsOn."""

IDS: Shape = dict.fromkeys(("__typename", "id"))
"""A selection of ids only: a list of ids a walk returned answers it without reading a record."""

TREE_OF_OUTLINES: Shape = {"tree": {"__typename": None, "depth": None, "decision": OUTLINE}}
"""A plan's ``tree`` selection that outlines serve whole."""


def asks_only(selections: Iterable[Selection], shape: Shape) -> bool:
    """Whether the selections ask for nothing outside ``shape``, at every depth.

    A fragment's fields count as selected (its type condition and any @skip are not judged:
    the answer errs towards no).
    """
    for selection in selections:
        if not isinstance(selection, SelectedField):
            if not asks_only(selection.selections, shape):
                return False
        elif selection.name not in shape:
            return False
        else:
            inner = shape[selection.name]
            if inner is not None and not asks_only(selection.selections, inner):
                return False
    return True


def asks_for(selections: Iterable[Selection], name: str) -> bool:
    """Whether the selections ask for the field ``name`` at their top level (a fragment's fields
    count as selected: its type condition and any @skip are not judged, so the answer errs
    towards yes)."""
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == name:
                return True
        elif asks_for(selection.selections, name):
            return True
    return False
