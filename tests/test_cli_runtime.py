"""`decisiontrail run` and `decisiontrail plans`, run in-process against the session's Neo4j."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from decisiontrail.cli import main
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.domain.pages import PlanPage
from decisiontrail.domain.runs import RunStatus
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading, runs
from decisiontrail.services import recording
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.access import LOCAL
from factories import decision as a_decision

ULID = r"[0-9A-HJKMNP-TV-Z]{26}"


@pytest.fixture
def neo4j_env(store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The command pointed at the test's emptied database, with the default chat model."""
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.delenv("DECISIONTRAIL_CHAT_MODEL", raising=False)
    yield


def _types(store: Trail, plan_id: str) -> list[str]:
    return [d.decision_type.value for d in reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)]


def _children(store: Trail, plan_id: str) -> list[str]:
    return reading.child_plans_of(store, [plan_id])[0]


def test_run_wait_records_the_hierarchy_and_exits_0(
    store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # the progress: on stderr outside pytest, which captures logging
    code = main(
        [
            "run",
            "Add rate limiting to the billing API",
            "--arg",
            "limit_per_minute=600",
            "--arg",
            "service=billing-api",
            "--invariant",
            "coverage=Coverage stays at 80%",
            "--project",
            "billing",
            "--wait",
            "--timeout",
            "120",
        ]
    )
    out, err = capsys.readouterr()

    assert code == 0, err
    lines = out.splitlines()
    plan_id = lines[0]
    assert re.fullmatch(ULID, plan_id)
    plan = reading.get_plan(store, plan_id, principal=LOCAL)
    assert plan.phase is Phase.APPLY and plan.project == "billing"
    assert plan.arguments == {"limit_per_minute": 600, "service": "billing-api"}
    assert _types(store, plan_id) == [
        "prompt_definition",
        "invariant_enforced",
        "strategy_choice",
        "resource_selection",
        "subplan_spawn",
        "implementation_choice",
        "tool_invocation",
    ]
    (child_id,) = _children(store, plan_id)
    child = reading.get_plan(store, child_id, principal=LOCAL)
    assert child.phase is Phase.APPLY and child.project == "billing"
    assert {"strategy_choice", "implementation_choice"} <= set(_types(store, child_id))
    run = runs.runs_of_plans(store, [plan_id])[0]
    assert run is not None and run.status is RunStatus.SUCCEEDED
    # The run id, the final status and the hierarchy's decision count, as stored.
    decisions = len(_types(store, plan_id)) + len(_types(store, child_id))
    assert lines[1] == f"run {run.run_id} queued (model scripted)"
    assert f"run {run.run_id} apply, succeeded" in out
    assert f"{decisions} decision(s) in 2 plan(s): 2 prompt_definition, 2 invariant_enforced, 2 strategy_choice" in out
    # Progress: the child plan as it was spawned, the plans' phases and runs, each plan's final state.
    said = caplog.messages
    assert f"plan {plan_id} spawned child plan {child_id}: {child.description}" in said
    # The progress looks every 0.2 s, so a state shorter than a look (the parent waiting for a child
    # that ran within one, on a loaded machine) may pass unseen; the parent is seen executing.
    assert any(m.startswith(f"plan {plan_id}: execute, ") for m in said), said
    assert said.index(f"plan {child_id}: apply, succeeded") < said.index(f"plan {plan_id}: apply, succeeded")
    assert not [m for m in said if m.startswith("run ")]  # the runtime's own lines are left to the progress


def test_run_without_wait_queues_the_run(
    store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assert main(["run", "Rotate the API keys", "--arg", "depth=1", "--arg", 'regions=["eu","us"]', "--model", "scripted"]) == 0
    out = capsys.readouterr().out

    plan_id, second = out.splitlines()
    run = runs.runs_of_plans(store, [plan_id])[0]
    assert run is not None and run.status is RunStatus.QUEUED and run.model == "scripted"
    assert second == f"run {run.run_id} queued (model scripted)"
    assert any("queued for the runtime workers of a serving process" in m for m in caplog.messages)
    plan = reading.get_plan(store, plan_id, principal=LOCAL)
    assert plan.phase is Phase.STRATEGIZE and plan.arguments == {"depth": 1, "regions": ["eu", "us"]}
    assert _types(store, plan_id) == ["prompt_definition"]  # nothing decided: no worker ran it


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arg", "limit"], "argument --arg: 'limit' is not KEY=VALUE"),
        (["--arg", "=600"], "argument --arg: '=600' is not KEY=VALUE"),
        (["--arg", "limit=1", "--arg", "limit=2"], "--arg: limit is given twice"),
        (["--model", "gpt"], "model: 'gpt' is neither 'scripted' nor an init_chat_model name"),
        (["--invariant", "coverage"], "invariant: 'coverage' is not NAME=STATEMENT"),
        (["--review-below", "2"], "argument --review-below: a confidence from 0 to 1, not 2"),
    ],
)
def test_a_bad_run_is_refused_naming_what_and_writes_nothing(
    store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        code = main(["run", "Rotate the API keys", *argv, "--wait"])
    except SystemExit as exited:  # refused by argparse, before anything runs
        code = exited.code  # type: ignore[assignment]
    out, err = capsys.readouterr()

    assert code == 2 and out == ""
    assert message in err
    assert reading.count_plans(store, principal=LOCAL) == 0


def test_run_wait_stops_at_a_review_and_exits_2(store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    # The scripted strategy decides with confidence 0.9: below 0.95 it waits for a person.
    code = main(["-q", "run", "Add rate limiting", "--arg", "depth=1", "--review-below", "0.95", "--wait", "--timeout", "60"])
    out, err = capsys.readouterr()

    assert code == 2, err
    plan_id = out.splitlines()[0]
    (review,) = reading.pending_reviews(store, plan_id, principal=LOCAL)
    assert review.proposal.decision_type.value == "strategy_choice"
    assert f"{review.review_id} pending plan {plan_id}: strategy_choice" in out
    assert "decisiontrail resolve REVIEW_ID" in out
    run = runs.runs_of_plans(store, [plan_id])[0]
    assert run is not None and run.status is RunStatus.WAITING and run.waiting_for == "review"
    assert err == ""  # -q: no progress


def test_run_wait_stops_when_a_child_plan_waits_for_a_person(
    store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent's run waits for its children, not for a person; the command still settles on the child's review."""
    from decisiontrail.actors import models

    playbook = models.playbook

    def unsure_in_child_plans(actor: Any, brief: Any) -> list[dict[str, Any]]:
        steps = playbook(actor, brief)
        if brief.arguments.get("depth") == 1:  # a child plan of a depth-2 plan
            steps = [{**step, "confidence_score": 0.2} for step in steps]
        return steps

    monkeypatch.setattr(models, "playbook", unsure_in_child_plans)
    code = main(["-q", "run", "Add rate limiting", "--review-below", "0.5", "--wait", "--timeout", "60"])
    out, err = capsys.readouterr()

    assert code == 2, err
    plan_id = out.splitlines()[0]
    (child_id,) = _children(store, plan_id)
    (review,) = reading.pending_reviews(store, child_id, principal=LOCAL)
    assert f"{review.review_id} pending plan {child_id}" in out
    parent, child = runs.runs_of_plans(store, [plan_id, child_id])
    assert parent is not None and parent.waiting_for == "children"
    assert f"run {parent.run_id} execute, waiting for children" in out
    assert child is not None and child.waiting_for == "review"


def test_run_wait_reports_a_failed_run_and_exits_1(
    store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from decisiontrail.actors import models

    def no_model(actor: Any, brief: Any) -> list[dict[str, Any]]:
        raise RuntimeError("the model is unreachable")

    monkeypatch.setattr(models, "playbook", no_model)
    code = main(["-q", "run", "Add rate limiting", "--wait", "--timeout", "60"])
    out, err = capsys.readouterr()

    assert code == 1, err
    plan_id = out.splitlines()[0]
    run = runs.runs_of_plans(store, [plan_id])[0]
    assert run is not None and run.status is RunStatus.FAILED
    assert f"run {run.run_id} strategize, failed: RuntimeError: the model is unreachable" in out


def _plan(store: Trail, description: str, project: str | None = None) -> str:
    return instantiate_plan(store, description, project=project, principal=LOCAL)[0].plan_id


def test_plans_lists_newest_first_and_filters(store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    oldest = _plan(store, "Rotate the API keys", project="security")
    middle, root = instantiate_plan(
        store, "Add rate limiting\nto the billing API " + "and more " * 20, project="billing", principal=LOCAL
    )
    newest = _plan(store, "Audit the billing logs", project="billing")
    recording.record(store, a_decision(middle.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    advance_phase(store, middle.plan_id, Phase.EXECUTE, "strategy complete", by="test", principal=LOCAL)
    assert main(["-q", "run", "Queued by the runtime", "--project", "ops"]) == 0
    queued = capsys.readouterr().out.splitlines()[0]

    def plans(*argv: str) -> list[list[str]]:
        assert main(["-q", "plans", *argv]) == 0, capsys.readouterr().err
        return [line.split(maxsplit=4) for line in capsys.readouterr().out.splitlines()]

    listed = plans()
    assert [row[0] for row in listed] == [queued, newest, middle.plan_id, oldest]
    assert listed[0][1:4] == ["strategize", "queued", "ops"]
    assert listed[1][1:] == ["strategize", "-", "billing", "Audit the billing logs"]
    assert listed[2][1:4] == ["execute", "-", "billing"]
    assert listed[2][4].startswith("Add rate limiting to the billing API and more") and listed[2][4].endswith("…")
    assert len(listed[2][4]) == 80
    assert [row[0] for row in plans("--project", "billing")] == [newest, middle.plan_id]
    assert [row[0] for row in plans("--phase", "execute")] == [middle.plan_id]
    assert [row[0] for row in plans("--project", "billing", "--phase", "strategize")] == [newest]
    assert [row[0] for row in plans("--limit", "2")] == [queued, newest]
    assert plans("--project", "nobody") == []

    assert main(["-q", "plans", "--limit", "2", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [p["plan_id"] for p in found] == [queued, newest]
    assert found[0]["run"]["status"] == "queued" and found[0]["project"] == "ops" and found[1]["run"] is None


def test_plans_top_level_leaves_child_plans_out(store: Trail, neo4j_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "run", "Add rate limiting", "--wait", "--timeout", "120"]) == 0
    root = capsys.readouterr().out.splitlines()[0]
    (child,) = _children(store, root)

    assert main(["-q", "plans"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [child, root]
    assert main(["-q", "plans", "--top-level"]) == 0
    assert [line.split()[:3] for line in capsys.readouterr().out.splitlines()] == [[root, "apply", "succeeded"]]


def test_a_newest_first_page_of_plans_goes_on_from_its_cursor(store: Trail) -> None:
    ids = [_plan(store, f"plan {i}") for i in range(5)]

    _, first = reading.page_plans(store, PlanPage(first=2, newest_first=True, count=False), principal=LOCAL)
    total, second = reading.page_plans(store, PlanPage(first=2, after=first[-1], newest_first=True), principal=LOCAL)
    _, oldest_first = reading.page_plans(store, PlanPage(first=2, after=ids[0], count=False), principal=LOCAL)

    assert first == ids[:2:-1] and second == ids[2:0:-1] and total == 5
    assert oldest_first == ids[1:3]  # the GraphQL plans' order, as it was


@pytest.mark.parametrize("command", ["run", "plans"])
def test_help_mentions_the_options(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    options = {
        "run": [
            "--arg",
            "KEY=VALUE",
            "--project",
            "--invariant",
            "NAME=STATEMENT",
            "--model",
            "--wait",
            "--timeout",
            "--review-below",
        ],
        "plans": ["--project", "--phase", "--top-level", "--limit", "--json"],
    }[command]
    for option in options:
        assert option in out


def test_a_newest_first_page_costs_the_same_among_any_number_of_plans(store: Trail, graph: Graph) -> None:
    """As the oldest-first page (tests/test_page_cost.py): an ordered seek from the cursor, stopped when full."""
    from decisiontrail.cypher import query
    from factories import db_hits

    def add(prefix: str, count: int) -> None:
        graph.driver.execute_query(
            "UNWIND range(0, $count - 1) AS i CREATE (:Plan {plan_id: $prefix + '-' + i, phase: 'execute', description: 'paged'})",
            prefix=prefix,
            count=count,
            database_=graph.database,
        )

    def profiled() -> tuple[int, list[str]]:
        params = PlanPage(first=11, after="B-5", count=False, newest_first=True).params()
        with graph.driver.session(database=graph.database) as session:
            result = session.run("PROFILE " + query("plan/page_plans"), params)
            ids = list(result.single(strict=True)["plan_ids"])
            profile = result.consume().profile
        assert profile is not None
        return db_hits(profile), ids

    add("B", 30)
    few, few_ids = profiled()
    add("A", 3_000)
    many, many_ids = profiled()

    assert few_ids == many_ids == sorted((f"B-{i}" for i in range(30) if f"B-{i}" < "B-5"), reverse=True)[:11]
    assert many <= few + 50, (few, many)
