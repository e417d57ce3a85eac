"""Invariant reconciliation at Strategize entry (ADR-033): one enforced invariant per name, by scope precedence."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from decisiontrail.domain import Invariant, Scope
from decisiontrail.domain.invariants import reconcile
from decisiontrail.exceptions import ValidationFailed

CHAIN = "precedence is plan > action > project > global"


def coverage(scope: Scope, statement: str | None = None) -> Invariant:
    return Invariant(name="coverage", statement=statement or f">= 80% ({scope.value})", scope=scope)


# Scope


def test_scope_precedence_orders_plan_action_project_global() -> None:
    assert sorted(Scope, key=lambda s: s.precedence, reverse=True) == [
        Scope.PLAN,
        Scope.ACTION,
        Scope.PROJECT,
        Scope.GLOBAL,
    ]
    assert Scope.PLAN.precedence > Scope.ACTION.precedence > Scope.PROJECT.precedence > Scope.GLOBAL.precedence


def test_invariant_scope_defaults_to_plan() -> None:
    assert Invariant(name="tests", statement="tests pass").scope is Scope.PLAN


@pytest.mark.parametrize("field", ["name", "statement"])
@pytest.mark.parametrize("blank", ["", "   "])
def test_invariant_rejects_blank(field: str, blank: str) -> None:
    values = {"name": "tests", "statement": "tests pass", field: blank}
    with pytest.raises(ValidationError, match=rf"{field}\n.*must not be empty"):
        Invariant(**values)


# One per name


def test_reconcile_nothing() -> None:
    assert reconcile([]) == []


def test_reconcile_one_enforced_per_name_in_order_of_first_declaration() -> None:
    declared = [
        Invariant(name="tests", statement="tests pass", scope=Scope.GLOBAL),
        coverage(Scope.PROJECT),
        Invariant(name="tests", statement="tests pass and lint is clean", scope=Scope.ACTION),
        coverage(Scope.PLAN),
        Invariant(name="uptime", statement="no downtime", scope=Scope.PROJECT),
    ]
    enforced = reconcile(declared)
    assert [(e.invariant.name, e.invariant.scope) for e in enforced] == [
        ("tests", Scope.ACTION),
        ("coverage", Scope.PLAN),
        ("uptime", Scope.PROJECT),
    ]


def test_reconcile_lone_invariant_overrides_nothing() -> None:
    [enforced] = reconcile([coverage(Scope.GLOBAL)])
    assert enforced.invariant == coverage(Scope.GLOBAL)
    assert enforced.overridden == ()
    assert enforced.also_declared_at == ()


# Precedence


@pytest.mark.parametrize("scopes", list(itertools.permutations(Scope)))
def test_highest_scope_wins_whatever_the_input_order(scopes: tuple[Scope, ...]) -> None:
    [enforced] = reconcile([coverage(s) for s in scopes])
    assert enforced.invariant == coverage(Scope.PLAN)
    assert enforced.overridden == (coverage(Scope.ACTION), coverage(Scope.PROJECT), coverage(Scope.GLOBAL))


@pytest.mark.parametrize(
    ("scopes", "winner"),
    [
        ((Scope.GLOBAL, Scope.PROJECT), Scope.PROJECT),
        ((Scope.PROJECT, Scope.GLOBAL), Scope.PROJECT),
        ((Scope.ACTION, Scope.PROJECT), Scope.ACTION),
        ((Scope.GLOBAL, Scope.ACTION), Scope.ACTION),
        ((Scope.PLAN, Scope.GLOBAL), Scope.PLAN),
        ((Scope.ACTION, Scope.PLAN), Scope.PLAN),
        ((Scope.GLOBAL, Scope.ACTION, Scope.PROJECT), Scope.ACTION),
        ((Scope.PROJECT, Scope.GLOBAL, Scope.PLAN), Scope.PLAN),
    ],
)
def test_higher_scope_wins_pairwise(scopes: tuple[Scope, ...], winner: Scope) -> None:
    [enforced] = reconcile([coverage(s) for s in scopes])
    assert enforced.invariant.scope is winner
    losers = sorted((s for s in scopes if s is not winner), key=lambda s: s.precedence, reverse=True)
    assert [i.scope for i in enforced.overridden] == losers


# Overridden versus identical


def test_identical_lower_statements_are_not_overridden() -> None:
    same = "tests pass"
    declared = [
        Invariant(name="tests", statement=same, scope=Scope.GLOBAL),
        Invariant(name="tests", statement=same, scope=Scope.PLAN),
        Invariant(name="tests", statement="tests pass on CI", scope=Scope.PROJECT),
        Invariant(name="tests", statement=same, scope=Scope.ACTION),
    ]
    [enforced] = reconcile(declared)
    assert enforced.invariant == Invariant(name="tests", statement=same, scope=Scope.PLAN)
    assert enforced.overridden == (Invariant(name="tests", statement="tests pass on CI", scope=Scope.PROJECT),)
    assert enforced.also_declared_at == (Scope.ACTION, Scope.GLOBAL)


def test_identical_declarations_at_the_winning_scope_are_one() -> None:
    declared = [coverage(Scope.PROJECT, "90%"), coverage(Scope.PROJECT, "90%"), coverage(Scope.GLOBAL, "90%")]
    [enforced] = reconcile(declared)
    assert enforced.invariant == coverage(Scope.PROJECT, "90%")
    assert enforced.overridden == ()
    assert enforced.also_declared_at == (Scope.GLOBAL,)


def test_also_declared_at_names_each_scope_once() -> None:
    declared = [coverage(Scope.ACTION, "90%"), coverage(Scope.GLOBAL, "90%"), coverage(Scope.GLOBAL, "90%")]
    [enforced] = reconcile(declared)
    assert enforced.also_declared_at == (Scope.GLOBAL,)


# Same-scope conflict


@pytest.mark.parametrize("scope", list(Scope))
def test_conflict_at_the_winning_scope_is_refused(scope: Scope) -> None:
    declared = [coverage(Scope.GLOBAL, "70%"), coverage(scope, "80%"), coverage(scope, "90%")]
    with pytest.raises(ValidationFailed, match=rf"^invariants: 'coverage' is declared twice at {scope.value} scope") as caught:
        reconcile(declared)
    assert caught.value.field == "invariants"


# Rationale


def test_rationale_names_winner_overridden_scopes_and_chain() -> None:
    declared = [coverage(Scope.GLOBAL, ">= 80%"), coverage(Scope.PROJECT, ">= 85%"), coverage(Scope.PLAN, ">= 95%")]
    [enforced] = reconcile(declared)
    assert enforced.rationale == (
        f"Declared at plan scope; overrides the conflicting project scope ('>= 85%'), global scope ('>= 80%'); {CHAIN}."
    )


def test_rationale_of_unopposed_invariant_names_its_scope_and_chain() -> None:
    [enforced] = reconcile([coverage(Scope.ACTION, ">= 90%")])
    assert enforced.rationale == f"Declared at action scope; {CHAIN}."


def test_rationale_names_identical_declarations() -> None:
    declared = [coverage(Scope.PROJECT, ">= 90%"), coverage(Scope.GLOBAL, ">= 90%"), coverage(Scope.ACTION, ">= 90%")]
    [enforced] = reconcile(declared)
    assert enforced.rationale == f"Declared at action scope (also, identically, at project, global scope); {CHAIN}."
    assert "overrides" not in enforced.rationale


def test_a_lower_scope_version_declared_twice_is_overridden_once() -> None:
    (enforced,) = reconcile([coverage(Scope.GLOBAL, "a"), coverage(Scope.GLOBAL, "a"), coverage(Scope.PLAN, "b")])

    assert [i.statement for i in enforced.overridden] == ["a"]
    assert enforced.rationale.count("global scope") == 1
