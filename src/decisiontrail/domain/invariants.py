"""Invariants declared at four scopes, and their reconciliation at Strategize entry (ADR-033)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from decisiontrail.domain.decision import NonBlank
from decisiontrail.exceptions import ValidationFailed


ENFORCEMENT_QUESTION = "Should this invariant apply to this plan?"
"""The question of every invariant_enforced decision (ADR-033, Invariant Reconciliation Actor Recording)."""


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


def gather(
    global_set: Iterable[Invariant],
    project_set: Iterable[Invariant],
    inherited: Iterable[Invariant],
    own: Iterable[Invariant],
) -> tuple[Invariant, ...]:
    """What a new plan declares: the global and its project's sets, its parent plan's declarations
    (a child plan inherits them) and its own, each once, in that order.

    >>> rule = Invariant(name="tests", statement="pass", scope=Scope.GLOBAL)
    >>> [i.name for i in gather([rule], [], [rule], [Invariant(name="docs", statement="kept")])]
    ['tests', 'docs']
    """
    own = tuple(own)
    for invariant in own:
        if invariant.scope in (Scope.GLOBAL, Scope.PROJECT):
            raise ValidationFailed(
                f"invariants: {invariant.name!r} is declared at {invariant.scope.value} scope; a plan declares action or "
                "plan invariants, and global and project ones are set with setInvariants",
                field="invariants",
            )
    return tuple(dict.fromkeys((*global_set, *project_set, *inherited, *own)))


def regather(
    declared: Iterable[Invariant], removed: Iterable[str], global_set: Iterable[Invariant], project_set: Iterable[Invariant]
) -> tuple[Invariant, ...]:
    """What a plan declares when it enters Strategize again: the global and its project's sets as they
    are now (not as they were when it was instantiated), its action and plan invariants (its own and
    those it inherited), less every name removed from it with removeInvariant.

    >>> old = Invariant(name="tests", statement="pass", scope=Scope.GLOBAL)
    >>> new = Invariant(name="docs", statement="kept", scope=Scope.GLOBAL)
    >>> own = Invariant(name="fast", statement="under 1 s")
    >>> [i.name for i in regather([old, own], [], [new, old], [])]
    ['docs', 'tests', 'fast']
    >>> [i.name for i in regather([old, own], ["tests"], [new, old], [])]
    ['docs', 'fast']
    """
    gone = set(removed)
    kept = [i for i in declared if i.scope not in (Scope.GLOBAL, Scope.PROJECT)]
    return tuple(i for i in dict.fromkeys((*global_set, *project_set, *kept)) if i.name not in gone)


def for_set(scope: Scope, invariants: Iterable[Invariant]) -> tuple[Invariant, ...]:
    """A global or project set: every invariant in it is declared at that scope, each name once."""
    if scope not in (Scope.GLOBAL, Scope.PROJECT):
        raise ValidationFailed(f"scope: a set of invariants is global or per project, not {scope.value}", field="scope")
    placed = tuple(i.model_copy(update={"scope": scope}) for i in invariants)
    names = [i.name for i in placed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValidationFailed(f"invariants: {', '.join(map(repr, repeated))} declared more than once", field="invariants")
    return placed


def enforces_name(name: str, rationale: str) -> bool:
    """Whether an invariant_enforced decision with ``rationale`` is about the invariant ``name``: its
    rationale starts with the name, as the reconciliation and addInvariant write it."""
    return rationale.startswith(f"{name}:")


def unenforced(declared: Iterable[Invariant], enforcing: Iterable[str], proposed: Iterable[str] = ()) -> list[Enforced]:
    """The invariants a plan declares (as ``reconcile`` settles them) that no current
    invariant_enforced decision enforces: ``enforcing`` are those decisions' rationales, matched by
    name (a reviewer who chose another statement still enforced the invariant), and ``proposed``
    the rationales of invariant_enforced proposals waiting for review (left to the reviewer).

    >>> rules = [Invariant(name="tests", statement="pass"), Invariant(name="docs", statement="kept")]
    >>> [e.invariant.name for e in unenforced(rules, ["tests: declared at plan scope"])]
    ['docs']
    >>> unenforced(rules, ["tests: ..."], proposed=["docs: ..."])
    []
    """
    named = [*enforcing, *proposed]
    return [e for e in reconcile(declared) if not any(enforces_name(e.invariant.name, r) for r in named)]


@dataclass(frozen=True)
class InvariantSet:
    """The global set of invariants, or one project's: what plans instantiated later gather."""

    scope: Scope
    project: str | None
    invariants: tuple[Invariant, ...]
    updated_at: datetime | None = None
    updated_by: str | None = None

    @property
    def key(self) -> str:
        return "global" if self.scope is Scope.GLOBAL else f"project:{self.project}"
