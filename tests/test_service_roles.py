"""Roles judged by the services themselves: every write use-case, called in-process, refuses a role
that may not do it (FORBIDDEN, nothing written), whichever entry point calls it; and no service
function takes a principal that may be None."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import decisiontrail.services
from decisiontrail.access import LOCAL, Action, Principal, Role, process
from decisiontrail.domain import ArtifactRef, AutomationProfile, DecisionType, Invariant, Phase, Plan
from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.domain.invariants import Scope
from decisiontrail.domain.recording import ReviewAction
from decisiontrail.domain.retention import RetentionPolicy
from decisiontrail.domain.runs import PlanRun, RunRequest
from decisiontrail.exceptions import Forbidden
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import (
    Trail,
    backup,
    correction,
    importing,
    invariants,
    lifecycle,
    reading,
    recording,
    retention,
    reviews,
    runs,
)
from factories import actor_snapshot, decision, tool_input

ANALYST = Principal(name="analyst-1", role=Role.ANALYST)
REVIEWER = Principal(name="reviewer-1", role=Role.REVIEWER)


@dataclass(frozen=True)
class Fixture:
    """What the use-cases are tried on: a plan in Strategize with a strategy, a plan in Execute with
    a tool invocation, a review waiting, a correction attempt and a run."""

    plan: str
    root: str
    strategy: str
    other: str
    executing: str
    tool: str
    review: str
    attempt: str
    run: PlanRun


def _fixture(store: Trail) -> Fixture:
    plan, root = lifecycle.instantiate_plan(store, "roles", principal=LOCAL)
    strategy = recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    other = recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    corrected = recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    attempt = correction.correct(store, corrected.decision_id, "revert", "another way", "roles", principal=LOCAL).attempt
    executing, executing_root = lifecycle.instantiate_plan(store, "executing", principal=LOCAL)
    executing_strategy = recording.record(
        store, decision(executing.plan_id, DecisionType.STRATEGY_CHOICE, executing_root.decision_id), principal=LOCAL
    )
    lifecycle.advance_phase(store, executing.plan_id, Phase.EXECUTE, principal=LOCAL)
    tool = recording.record(
        store, decision(executing.plan_id, DecisionType.TOOL_INVOCATION, executing_strategy.decision_id), principal=LOCAL
    )
    gated, _ = lifecycle.instantiate_plan(store, "gated", automation_profile=AutomationProfile(edit_code=1.0), principal=LOCAL)
    review = recording.record_decision(
        store, tool_input("strategy_choice"), plan_id=gated.plan_id, snapshot=actor_snapshot(), principal=LOCAL
    )
    running, _ = lifecycle.instantiate_plan(store, "running", principal=LOCAL, run=RunRequest())
    run = runs.runs_of_plans(store, [running.plan_id])[0]
    assert run is not None
    return Fixture(
        plan=plan.plan_id,
        root=root.decision_id,
        strategy=strategy.decision_id,
        other=other.decision_id,
        executing=executing.plan_id,
        tool=tool.decision_id,
        review=review.review_id,  # type: ignore[union-attr]
        attempt=attempt.attempt_id,
        run=run,
    )


UseCase = Callable[[Trail, Fixture, Principal, Path], Any]

WRITES: dict[str, tuple[Action, UseCase]] = {
    "instantiate_plan": (Action.RECORD, lambda s, f, p, _: lifecycle.instantiate_plan(s, "x", principal=p)),
    "instantiate_plan with a run": (
        Action.RECORD,
        lambda s, f, p, _: lifecycle.instantiate_plan(s, "x", principal=p, run=RunRequest()),
    ),
    "create_plan": (Action.RECORD, lambda s, f, p, _: lifecycle.create_plan(s, Plan(description="x"), principal=p)),
    "record_decision": (
        Action.RECORD,
        lambda s, f, p, _: recording.record_decision(
            s, tool_input("strategy_choice"), plan_id=f.plan, snapshot=actor_snapshot(), principal=p
        ),
    ),
    "record_decisions": (
        Action.RECORD,
        lambda s, f, p, _: recording.record_decisions(
            s,
            [(recording.propose(tool_input("strategy_choice"), plan_id=f.plan, snapshot=actor_snapshot()), None)],
            principal=p,
        ),
    ),
    "record": (
        Action.RECORD,
        lambda s, f, p, _: recording.record(s, decision(f.plan, DecisionType.STRATEGY_CHOICE, f.root), principal=p),
    ),
    "add_dependency": (Action.RECORD, lambda s, f, p, _: recording.add_dependency(s, f.other, f.strategy, principal=p)),
    "attach_artifacts": (
        Action.RECORD,
        lambda s, f, p, _: recording.attach_artifacts(
            s, f.tool, [ArtifactRef(artifact_path="out.txt", artifact_type="file")], principal=p
        ),
    ),
    "advance_phase": (Action.RECORD, lambda s, f, p, _: lifecycle.advance_phase(s, f.plan, Phase.EXECUTE, principal=p)),
    "advance_phase back to Strategize": (
        Action.RECORD,
        lambda s, f, p, _: lifecycle.advance_phase(s, f.executing, Phase.STRATEGIZE, "stuck", principal=p),
    ),
    "record_replay": (
        Action.RECORD,
        lambda s, f, p, _: correction.record_replay(s, f.attempt, ReplayOutcome.NOT_NEEDED, principal=p),
    ),
    "regather_invariants": (Action.RECORD, lambda s, f, p, _: invariants.regather_invariants(s, f.plan, p)),
    "cancel_run": (Action.RECORD, lambda s, f, p, _: runs.cancel_run(s, f.run.run_id, principal=p)),
    "claim": (Action.RECORD, lambda s, f, p, _: runs.claim(s, "worker", principal=p)),
    "heartbeat": (Action.RECORD, lambda s, f, p, _: runs.heartbeat(s, "worker", [f.run.run_id], principal=p)),
    "update": (Action.RECORD, lambda s, f, p, _: runs.update(s, f.run, "worker", principal=p, actor=None)),
    "take_replay": (Action.RECORD, lambda s, f, p, _: runs.take_replay(s, f.run, "worker", f.attempt, principal=p)),
    "finish": (Action.RECORD, lambda s, f, p, _: runs.finish(s, f.run, "worker", f.run.status, principal=p)),
    "import_spans": (Action.RECORD, lambda s, f, p, _: importing.import_spans(s, [], principal=p)),
    "resolve_review": (
        Action.REVIEW,
        lambda s, f, p, _: reviews.resolve_review(s, f.review, ReviewAction.APPROVE, principal=p),
    ),
    "correct": (Action.CORRECT, lambda s, f, p, _: correction.correct(s, f.strategy, "revert", "g", "r", principal=p)),
    "supersede": (Action.CORRECT, lambda s, f, p, _: correction.supersede(s, f.strategy, f.other, principal=p)),
    "add_guidance": (
        Action.CORRECT,
        lambda s, f, p, _: lifecycle.add_guidance(s, f.plan, "prefer Redis", parent_decision_id=f.root, principal=p),
    ),
    "record_user_intervention": (
        Action.CORRECT,
        lambda s, f, p, _: lifecycle.record_user_intervention(s, f.plan, "prefer Redis", parent_decision_id=f.root, principal=p),
    ),
    "add_invariant": (
        Action.CORRECT,
        lambda s, f, p, _: invariants.add_invariant(s, f.plan, "coverage", "Coverage stays at 90%", principal=p),
    ),
    "remove_invariant": (
        Action.CORRECT,
        lambda s, f, p, _: invariants.remove_invariant(s, f.plan, "coverage", "it should not apply", principal=p),
    ),
    "set_invariants": (
        Action.CONFIGURE,
        lambda s, f, p, _: invariants.set_invariants(
            s, Scope.GLOBAL, None, [Invariant(name="coverage", statement="Coverage stays at 90%")], principal=p
        ),
    ),
    "prune": (
        Action.CONFIGURE,
        lambda s, f, p, _: retention.prune(
            s, RetentionPolicy(older_than=timedelta(0)), principal=p, dry_run=False, now=datetime.now(UTC)
        ),
    ),
    "dump": (Action.CONFIGURE, lambda s, f, p, tmp: backup.dump(s, tmp / "dump.jsonl.gz", principal=p, progress=False)),
    "restore": (Action.CONFIGURE, lambda s, f, p, tmp: backup.restore(s, tmp / "missing.jsonl.gz", principal=p, progress=False)),
}


@pytest.mark.parametrize("use_case", list(WRITES))
def test_an_analyst_may_write_nothing(store: Trail, graph: Graph, tmp_path: Path, use_case: str) -> None:
    fixture = _fixture(store)
    action, call = WRITES[use_case]
    before = count_graph(graph)

    with pytest.raises(Forbidden) as refused:
        call(store, fixture, ANALYST, tmp_path)

    assert refused.value.code == "FORBIDDEN"
    assert refused.value.message == f"the analyst role may not {action.value}"
    assert count_graph(graph) == before  # refused before anything was written
    assert not (tmp_path / "dump.jsonl.gz").exists()


def test_a_reviewer_may_not_record_but_may_revert_to_strategize(store: Trail, graph: Graph) -> None:
    fixture = _fixture(store)
    before = count_graph(graph)

    with pytest.raises(Forbidden, match="the reviewer role may not record"):
        recording.record_decision(
            store, tool_input("strategy_choice"), plan_id=fixture.plan, snapshot=actor_snapshot(), principal=REVIEWER
        )
    with pytest.raises(Forbidden, match="the reviewer role may not record"):
        lifecycle.instantiate_plan(store, "x", principal=REVIEWER)
    with pytest.raises(Forbidden, match="the reviewer role may not record"):
        lifecycle.advance_phase(store, fixture.plan, Phase.EXECUTE, principal=REVIEWER)
    assert count_graph(graph) == before

    reverted = lifecycle.advance_phase(store, fixture.executing, Phase.STRATEGIZE, "execute cannot proceed", principal=REVIEWER)

    assert reverted.phase is Phase.STRATEGIZE
    assert reading.phase_changes(store, fixture.executing, LOCAL)[-1]["by"] == "reviewer-1"


def test_a_limited_admin_may_not_take_the_whole_store(store: Trail, graph: Graph, tmp_path: Path) -> None:
    scoped = Principal(name="admin-beta", role=Role.ADMIN, project="beta")
    before = count_graph(graph)

    with pytest.raises(Forbidden, match="limited to project beta"):
        backup.dump(store, tmp_path / "dump.jsonl.gz", principal=scoped, progress=False)
    with pytest.raises(Forbidden, match="limited to project beta"):
        retention.prune(store, RetentionPolicy(older_than=timedelta(0)), principal=scoped, dry_run=True)

    assert not (tmp_path / "dump.jsonl.gz").exists()
    assert count_graph(graph) == before


def test_what_a_process_does_is_recorded_as_its_own(store: Trail) -> None:
    worker = process("roles-test")
    plan, _ = lifecycle.instantiate_plan(store, "by a process", principal=worker)
    lifecycle.instantiate_plan(store, "for someone", principal=worker, owner="actor-1")
    recording.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, _root(store, plan.plan_id)), principal=worker)

    moved = lifecycle.advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=worker)

    assert worker == Principal(name="process:roles-test", role=Role.ADMIN)
    assert moved.owner == "process:roles-test"
    assert [c["by"] for c in reading.phase_changes(store, plan.plan_id, worker)] == ["process:roles-test"]
    mine = reading.page_plans(store, _plan_page(), Principal(name="actor-1", role=Role.ACTOR))[1]
    assert [p.description for p in reading.get_plans(store, mine, LOCAL) if p is not None] == ["for someone"]


def test_an_actor_owns_what_it_instantiates_whatever_owner_it_names(store: Trail) -> None:
    actor = Principal(name="actor-1", role=Role.ACTOR)

    plan, _ = lifecycle.instantiate_plan(store, "mine", principal=actor, owner="actor-2")

    assert plan.owner == "actor-1"


def _root(store: Trail, plan_id: str) -> str:
    return next(d.decision_id for d in reading.list_decisions(store, plan_id, LOCAL) if d.parent_decision_id is None)


def _plan_page() -> Any:
    from decisiontrail.domain.pages import PlanPage

    return PlanPage(first=10, count=False)


SERVICES = Path(decisiontrail.services.__file__).parent


def _optional_principals() -> list[str]:
    """Every parameter of a function in ``services/`` annotated as a principal that may be None."""
    found = []
    for path in sorted(SERVICES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                annotation = ast.unparse(argument.annotation) if argument.annotation is not None else ""
                if "Principal" in annotation and ("None" in annotation or "Optional" in annotation):
                    found.append(f"{path.name}:{node.lineno} {node.name}({argument.arg}: {annotation})")
    return found


def test_no_service_takes_a_principal_that_may_be_none() -> None:
    assert _optional_principals() == []


def test_the_check_for_optional_principals_finds_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("def read(trail, principal: Principal | None = None) -> None: ...\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.SERVICES", tmp_path)

    assert _optional_principals() == ["planted.py:1 read(principal: Principal | None)"]
