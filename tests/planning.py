"""Reading a statement's plan, as the driver returns it from EXPLAIN or PROFILE."""

from __future__ import annotations

from typing import Any


def operators(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """Every operator of ``plan``, depth first, as (its name without the runtime, its details).

    >>> operators({"operatorType": "Filter@neo4j", "args": {"Details": "x > 1"}, "children": [{"operatorType": "AllNodesScan@neo4j"}]})
    [('Filter', 'x > 1'), ('AllNodesScan', '')]
    """
    found = [(plan["operatorType"].split("@")[0], str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children", []):
        found.extend(operators(child))
    return found
