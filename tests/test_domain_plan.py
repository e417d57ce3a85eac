"""The Plan record and its automation profile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from decisiontrail.domain import AutomationProfile, Invariant, Phase, Plan, new_ulid
from decisiontrail.domain.plan import MAX_PROJECT, partial_plan


def test_plan_defaults() -> None:
    plan = Plan(description="refactor the parser")
    assert plan.phase is Phase.STRATEGIZE
    assert plan.automation_profile == AutomationProfile(edit_code=0.0, execute_command=0.0)
    assert plan.automation_profile.edit_code == 0.0
    assert plan.automation_profile.execute_command == 0.0
    assert plan.arguments == {}
    assert plan.invariants == ()
    assert plan.parent_plan_id is None
    assert plan.spawned_by_decision_id is None
    assert plan.created_at.tzinfo is UTC
    assert Plan(description="another").plan_id != plan.plan_id


@pytest.mark.parametrize("blank", ["", " ", "\n\t"])
def test_description_rejects_empty_or_whitespace(blank: str) -> None:
    with pytest.raises(ValidationError, match=r"description\n.*must not be empty"):
        Plan(description=blank)


def test_plan_id_normalised_and_validated() -> None:
    plan_id = new_ulid()
    assert Plan(plan_id=plan_id.lower(), description="d").plan_id == plan_id
    with pytest.raises(ValidationError, match=r"plan_id\n.*must be a ULID"):
        Plan(plan_id="plan-1", description="d")


def test_top_level_plan_names_neither_parent_nor_spawner() -> None:
    plan = Plan(description="top")
    assert (plan.parent_plan_id, plan.spawned_by_decision_id) == (None, None)


def test_child_plan_names_parent_and_spawner() -> None:
    parent, spawner = new_ulid(), new_ulid()
    plan = Plan(description="child", parent_plan_id=parent, spawned_by_decision_id=spawner)
    assert (plan.parent_plan_id, plan.spawned_by_decision_id) == (parent, spawner)


@pytest.mark.parametrize("field", ["parent_plan_id", "spawned_by_decision_id"])
def test_spawn_link_half_set_rejected(field: str) -> None:
    with pytest.raises(ValidationError, match="spawned_by_decision_id: a child plan names both"):
        Plan(description="half", **{field: new_ulid()})


@pytest.mark.parametrize("field", ["parent_plan_id", "spawned_by_decision_id"])
def test_spawn_link_fields_must_be_ulids(field: str) -> None:
    fields = {"parent_plan_id": new_ulid(), "spawned_by_decision_id": new_ulid(), field: "nope"}
    with pytest.raises(ValidationError, match=rf"{field}\n.*must be a ULID"):
        Plan(description="child", **fields)


def test_plan_cannot_be_its_own_parent() -> None:
    own = new_ulid()
    with pytest.raises(ValidationError, match="parent_plan_id: a plan cannot be its own parent"):
        Plan(plan_id=own, description="loop", parent_plan_id=own.lower(), spawned_by_decision_id=new_ulid())


@pytest.mark.parametrize("field", ["edit_code", "execute_command"])
@pytest.mark.parametrize("threshold", [0, 0.0, 0.25, 1, 1.0])
def test_automation_threshold_accepts_unit_interval(field: str, threshold: float) -> None:
    assert getattr(AutomationProfile(**{field: threshold}), field) == threshold


@pytest.mark.parametrize("field", ["edit_code", "execute_command"])
@pytest.mark.parametrize("threshold", [-0.01, 1.01, float("nan")])
def test_automation_threshold_rejects_outside_unit_interval(field: str, threshold: float) -> None:
    with pytest.raises(ValidationError, match=field):
        AutomationProfile(**{field: threshold})


def test_plan_rejects_bad_profile_threshold() -> None:
    with pytest.raises(ValidationError, match=r"automation_profile\.execute_command"):
        Plan(description="d", automation_profile={"execute_command": 2})


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "src/app.py", "count": 3, "ratio": 0.5, "dry_run": True, "missing": None},
        {"nested": {"list": [1, "two", {"three": [None, False]}]}},
        {},
    ],
)
def test_arguments_accept_json_values(arguments: dict[str, Any]) -> None:
    assert Plan(description="d", arguments=arguments).arguments == arguments


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes"])
def test_arguments_reject_non_json_values(value: object) -> None:
    with pytest.raises(ValidationError, match=r"arguments\.a"):
        Plan(description="d", arguments={"a": value})


def test_invariants_reject_blank_entry() -> None:
    green = Invariant(name="tests", statement="keep tests green")
    assert Plan(description="d", invariants=[green]).invariants == (green,)
    with pytest.raises(ValidationError, match=r"invariants\.1\.statement\n.*must not be empty"):
        Plan(description="d", invariants=[green, {"name": "x", "statement": " "}])


def test_phase_accepts_name_and_rejects_unknown() -> None:
    assert Plan(description="d", phase="execute").phase is Phase.EXECUTE
    with pytest.raises(ValidationError, match="phase"):
        Plan(description="d", phase="review")


def test_created_at_converted_to_utc_and_naive_rejected() -> None:
    local = datetime(2024, 1, 1, 9, 0, tzinfo=timezone(timedelta(hours=-5)))
    created = Plan(description="d", created_at=local).created_at
    assert created.utcoffset() == timedelta(0)
    assert created.hour == 14
    with pytest.raises(ValidationError, match=r"created_at\n.*timezone"):
        Plan(description="d", created_at=datetime(2024, 1, 1, 9, 0))


def test_unknown_field_rejected() -> None:
    with pytest.raises(ValidationError, match=r"created_by\n.*Extra inputs are not permitted"):
        Plan(description="d", created_by="me")
    with pytest.raises(ValidationError, match=r"review\n.*Extra inputs are not permitted"):
        AutomationProfile(review=0.5)


def test_plan_and_profile_are_frozen() -> None:
    plan = Plan(description="d")
    with pytest.raises(ValidationError, match="frozen"):
        plan.description = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        plan.automation_profile.edit_code = 1.0  # type: ignore[misc]
    assert plan.description == "d"


def test_a_project_name_is_non_blank_and_short_enough_to_index() -> None:
    assert Plan(description="d", project="p" * MAX_PROJECT).project == "p" * MAX_PROJECT
    for bad in ("", "  ", "p" * (MAX_PROJECT + 1)):
        with pytest.raises(ValidationError, match="project"):
            Plan(description="d", project=bad)


def test_a_partial_plan_is_what_pydantic_copying_the_template_with_its_values_gives() -> None:
    values: dict[str, Any] = {"plan_id": new_ulid(), "description": "d", "phase": Phase.EXECUTE}

    partial = partial_plan(**values)
    copied = Plan.model_construct(created_at=None).model_copy(update=values)

    assert partial == copied and partial.__pydantic_fields_set__ == copied.__pydantic_fields_set__ == {*values, "created_at"}
    assert partial.created_at is None and partial.arguments == {}
    # Built without pydantic's copy: right only while a Plan has no private attributes and no extra fields.
    assert Plan.__private_attributes__ == {} and Plan.model_config.get("extra") == "forbid"
    assert partial_plan(plan_id="P2").plan_id == "P2" and partial.plan_id == values["plan_id"]  # each its own fields
