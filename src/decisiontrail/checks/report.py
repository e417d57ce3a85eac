"""What a check finds: violations that name their rule, the records involved and how to read them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

Check = Callable[["nx.MultiDiGraph[str]"], list["Violation"]]


@dataclass(frozen=True)
class Violation:
    """One broken rule: which, where, and what it means.

    >>> v = Violation("single_root", "plan P has 2 current roots", decision_ids=("A", "B"), plan_ids=("P",))
    >>> print(v.render())
    [single_root] plan P has 2 current roots
      decisions: A, B
      plans: P
    """

    rule: str
    message: str
    decision_ids: tuple[str, ...] = ()
    plan_ids: tuple[str, ...] = ()
    hint: str = ""

    def render(self) -> str:
        lines = [f"[{self.rule}] {self.message}"]
        if self.decision_ids:
            lines.append("  decisions: " + ", ".join(self.decision_ids))
        if self.plan_ids:
            lines.append("  plans: " + ", ".join(self.plan_ids))
        if self.hint:
            lines.append(f"  how to read it: {self.hint}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "message": self.message,
            "decision_ids": list(self.decision_ids),
            "plan_ids": list(self.plan_ids),
            "hint": self.hint,
        }


@dataclass(frozen=True)
class Rule:
    """A named check and what it guards, as docs/checks.md lists it."""

    name: str
    kind: str  # "validation" or "coverage"
    summary: str
    check: Check


@dataclass(frozen=True)
class Report:
    """The outcome of running rules over one loaded graph."""

    scope: str
    decisions: int
    plans: int
    rules: tuple[str, ...]
    violations: tuple[Violation, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.violations

    def by_rule(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for v in self.violations:
            counts[v.rule] = counts.get(v.rule, 0) + 1
        return counts

    def render(self) -> str:
        head = f"checked {self.scope}: {self.decisions} decisions in {self.plans} plans, {len(self.rules)} rules"
        if self.ok:
            return f"{head}\nno violations"
        lines = [head, f"{len(self.violations)} violation(s): " + ", ".join(f"{r} x{n}" for r, n in self.by_rule().items()), ""]
        lines.extend(v.render() + "\n" for v in self.violations)
        return "\n".join(lines).rstrip()

    def as_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "decisions": self.decisions,
            "plans": self.plans,
            "rules": list(self.rules),
            "ok": self.ok,
            "violations": [v.as_json() for v in self.violations],
        }


def sorted_ids(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(ids)))
