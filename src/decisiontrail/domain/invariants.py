"""Invariants declared at four scopes, and their reconciliation at Strategize entry (ADR-033)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from decisiontrail.domain.decision import NonBlank
from decisiontrail.exceptions import ValidationFailed


class Scope(StrEnum):
    """Where an invariant is declared. Precedence: plan > action > project > global."""

    GLOBAL = "global"
    PROJECT = "project"
    ACTION = "action"
    PLAN = "plan"

    @property
    def precedence(self) -> int:
        return _PRECEDENCE.index(self)


_PRECEDENCE = [Scope.GLOBAL, Scope.PROJECT, Scope.ACTION, Scope.PLAN]


class Invariant(BaseModel):
    """A constraint on a plan. Invariants with the same ``name`` are about the same thing:
    declared differently at two scopes, they conflict and the higher scope wins."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: NonBlank
    statement: NonBlank
    scope: Scope = Scope.PLAN


@dataclass(frozen=True)
class Enforced:
    """One invariant that applies to the plan, and the lower-scope versions it overrides."""

    invariant: Invariant
    overridden: tuple[Invariant, ...]
    also_declared_at: tuple[Scope, ...]

    @property
    def rationale(self) -> str:
        scope = self.invariant.scope.value
        text = f"Declared at {scope} scope"
        if self.also_declared_at:
            text += " (also, identically, at " + ", ".join(s.value for s in self.also_declared_at) + " scope)"
        if self.overridden:
            lower = ", ".join(f"{i.scope.value} scope ({i.statement!r})" for i in self.overridden)
            text += f"; overrides the conflicting {lower}"
        return text + "; precedence is plan > action > project > global."


def reconcile(declared: Iterable[Invariant]) -> list[Enforced]:
    """Resolve conflicts by scope precedence: one enforced invariant per name.

    >>> rules = [Invariant(name="coverage", statement=">= 80%", scope=Scope.GLOBAL),
    ...          Invariant(name="coverage", statement=">= 90%", scope=Scope.PLAN)]
    >>> [(e.invariant.statement, [o.statement for o in e.overridden]) for e in reconcile(rules)]
    [('>= 90%', ['>= 80%'])]
    """
    by_name: dict[str, list[Invariant]] = {}
    for invariant in declared:
        by_name.setdefault(invariant.name, []).append(invariant)
    enforced = []
    for name, versions in by_name.items():
        ranked = sorted(versions, key=lambda i: i.scope.precedence, reverse=True)
        winner = ranked[0]
        rivals = [i for i in ranked[1:] if i.scope is winner.scope and i.statement != winner.statement]
        if rivals:
            raise ValidationFailed(
                f"invariants: {name!r} is declared twice at {winner.scope.value} scope with different "
                "statements; one scope cannot settle its own conflict",
                field="invariants",
            )
        overridden = tuple(dict.fromkeys(i for i in ranked[1:] if i.statement != winner.statement))
        same = tuple(
            dict.fromkeys(i.scope for i in ranked[1:] if i.statement == winner.statement and i.scope is not winner.scope)
        )
        enforced.append(Enforced(winner, overridden, same))
    return enforced
