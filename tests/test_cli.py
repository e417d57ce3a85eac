"""The decisiontrail command line, run in-process against the session's Neo4j."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from decisiontrail.access import LOCAL, operator
from decisiontrail.cli import main
from decisiontrail.domain import Decision, DecisionType, Plan
from decisiontrail.domain.tree import describe
from decisiontrail.graphdb import Graph
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from factories import decision as a_decision


def test_help_lists_commands_and_environment(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    for word in ("demo", "tree", "migrate", "neo4j", "NEO4J_URI", "DECISIONTRAIL_DATA_DIR"):
        assert word in out


def test_a_reader_gone_from_stdout_ends_the_command_quietly() -> None:
    """`decisiontrail ... | head -1` once head has its line: what is left goes nowhere, and the
    command ends as one stopped by SIGPIPE does, without a traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first write
    try:
        done = subprocess.run(
            [sys.executable, "-m", "decisiontrail.cli", "schema"], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (128 + signal.SIGPIPE, "")


def test_a_broken_pipe_not_stdout_s_is_not_taken_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> int:
        raise BrokenPipeError("a pipe of the command's own")

    monkeypatch.setattr("decisiontrail.cli._execute", broken)
    with pytest.raises(BrokenPipeError, match="of the command's own"):
        main(["schema"])


@pytest.mark.parametrize(("flags", "logged"), [([], True), (["--no-access-log"], False), (["--access-log"], True)])
def test_serve_logs_each_request_unless_told_not_to(monkeypatch: pytest.MonkeyPatch, flags: list[str], logged: bool) -> None:
    import uvicorn

    served: dict[str, object] = {}
    monkeypatch.delenv("DECISIONTRAIL_TOKENS_FILE", raising=False)
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(options))

    assert main(["serve", "--workers", "1", *flags]) == 0  # one process: the uvicorn.run replaced above
    assert served["access_log"] is logged and served["host"] == "127.0.0.1"


def test_demo_prints_the_tree_read_back_from_neo4j(
    store: Trail,
    graph: Graph,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))

    assert main(["demo"]) == 0

    out = capsys.readouterr().out
    plan_ids = re.findall(r"^\s*plan (\w{26}):", out, flags=re.MULTILINE)
    assert len(plan_ids) == 2
    # Every decision line printed is a decision that is really in the database.
    for plan_id in plan_ids:
        for d in reading.list_decisions(store, plan_id, principal=LOCAL):
            assert describe(d) in out
    # The actors' LangGraph checkpoints are in the same Neo4j (no file beside it), each with its plan.
    assert not (tmp_path / "checkpoints.sqlite").exists()
    records, _, _ = graph.driver.execute_query(
        "MATCH (c:Checkpoint) RETURN count(c) AS n, collect(DISTINCT c.plan_id) AS plans", database_=graph.database
    )
    assert records[0]["n"] > 0 and set(plan_ids) <= set(records[0]["plans"])


def test_tree_of_an_unknown_plan_is_a_clear_error(
    graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)

    assert main(["-q", "tree", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == 2

    assert "error: plan 01ARZ3NDEKTSV4RRFFQ69G5FAV does not exist" in capsys.readouterr().err


def test_an_unreachable_server_is_reported_not_raised(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")  # the discard port: nothing listens

    assert main(["-q", "migrate"]) == 2

    assert "cannot reach Neo4j at bolt://127.0.0.1:9" in capsys.readouterr().err


def test_the_spec_commands_end_to_end(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """tree prints ids and PLAN#N references work; guide, reviews, resolve, phase, correct, history
    and replay call the same services as the API, and what they print is what was stored."""
    from decisiontrail.domain import AutomationProfile, DecisionType
    from decisiontrail.services.lifecycle import instantiate_plan
    from decisiontrail.services.recording import record_decision
    from factories import actor_snapshot, decision, tool_input

    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    plan, root = instantiate_plan(store, "cli plan", automation_profile=AutomationProfile(edit_code=0.5), principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    held = record_decision(
        store,
        tool_input("strategy_choice", confidence_score=0.1),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        principal=LOCAL,
    )

    def run(*argv: str) -> str:
        assert main(["-q", *argv]) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    assert f"#1 {strategy.decision_id} strategy_choice" in run("tree", plan.plan_id)
    assert strategy.decision_id in run("impact", f"{plan.plan_id}#1")
    guided = run("guide", f"{plan.plan_id}#0", "--guidance", "public endpoints only", "--by", "ana")
    guidance = [
        d
        for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)
        if d.decision_type is DecisionType.USER_INTERVENTION
    ]
    assert len(guidance) == 1 and guidance[0].decision_id in guided and guidance[0].chosen_option == "public endpoints only"
    assert held.review_id in run("reviews", "--plan", plan.plan_id)  # type: ignore[union-attr]
    assert "approved" in run("resolve", held.review_id)  # type: ignore[union-attr]
    resolved = reading.get_review(store, held.review_id, principal=LOCAL)  # type: ignore[union-attr]
    assert resolved.resolved_by == operator().name and resolved.resolved_by.startswith("cli:")
    assert resolved.approved_digest is not None and resolved.approved_digest in run(
        "reviews", "--plan", plan.plan_id, "--status", "all"
    )
    assert run("reviews", "--plan", plan.plan_id) == ""
    assert "execute" in run("phase", plan.plan_id, "execute", "--reason", "settled", "--by", "ana")
    assert [(c["to_phase"], c["by"]) for c in reading.phase_changes(store, plan.plan_id, principal=LOCAL)] == [("execute", "ana")]
    run("correct", f"{plan.plan_id}#1", "--guidance", "a sliding window", "--by", "ana")
    [attempt] = reading.correction_attempts(store, strategy.decision_id, principal=LOCAL)
    assert attempt.requested_by == "ana" and "by ana" in run("history", strategy.decision_id)
    assert "replay replayed" in run("replay", attempt.attempt_id, "replayed", "--detail", "re-ran")
    assert reading.get_attempt(store, attempt.attempt_id, principal=LOCAL).replay_detail == "re-ran"


def test_a_bad_decision_reference_is_a_clear_error(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from decisiontrail.services.lifecycle import instantiate_plan

    monkeypatch.setenv("NEO4J_URI", graph.uri)
    plan, _ = instantiate_plan(store, "cli plan", principal=LOCAL)

    assert main(["-q", "impact", f"{plan.plan_id}#9"]) == 2
    assert f"decision {plan.plan_id}#9 does not exist" in capsys.readouterr().err
    assert main(["-q", "impact", f"{plan.plan_id}#x"]) == 2
    assert "neither a ULID nor PLAN_ID#N" in capsys.readouterr().err


def test_invariants_commands_end_to_end(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """invariants set/show/add/remove call the same services as setInvariants, addInvariant and removeInvariant."""
    from decisiontrail.domain import DecisionType
    from decisiontrail.services.lifecycle import instantiate_plan

    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))

    def run(*argv: str) -> str:
        assert main(["-q", *argv]) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    assert "no project billing invariants are set" in run("invariants", "show", "--project", "billing")
    run("invariants", "set", "--project", "billing", "compat=no breaking changes")
    assert "compat: no breaking changes" in run("invariants", "show", "--project", "billing")
    plan, _ = instantiate_plan(store, "cli plan", project="billing", principal=LOCAL)
    assert [i.name for i in reading.get_plan(store, plan.plan_id, principal=LOCAL).invariants] == ["compat"]

    added = run("invariants", "add", plan.plan_id, "latency", "p95 under 50 ms", "--reason", "an SLO", "--by", "ana")
    enforced = [
        d
        for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)
        if d.decision_type is DecisionType.INVARIANT_ENFORCED
    ]
    assert [d.chosen_option for d in enforced] == ["p95 under 50 ms"] and enforced[0].decision_id in added
    assert enforced[0].rationale.startswith("latency: added by ana")
    assert "supersedes" in run("invariants", "remove", plan.plan_id, "latency", "--reason", "not ours", "--by", "ana")
    assert [i.name for i in reading.get_plan(store, plan.plan_id, principal=LOCAL).invariants] == ["compat"]

    assert main(["-q", "invariants", "set", "--global", "no-equals-sign"]) == 2
    assert "is not NAME=STATEMENT" in capsys.readouterr().err


def _strategy_corrected(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, description: str
) -> tuple[Plan, Decision, str, Decision]:
    """The CLI pointed at the test's Neo4j, and a plan whose strategy was corrected: the plan, the
    strategy, the moment just before its correction, and the correction."""
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    plan, root = instantiate_plan(store, description, principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    before = datetime.now(UTC).isoformat()
    return plan, strategy, before, correct(store, strategy.decision_id, "revert", "another way", "r", principal=LOCAL).correction


def test_export_as_of_a_past_moment_writes_the_plan_as_it_stood(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan, strategy, before, fix = _strategy_corrected(store, graph, monkeypatch, "exported")
    out = tmp_path / "then.json"

    assert main(["-q", "export", "--plan", plan.plan_id, "--format", "json", "--as-of", before, "-o", str(out)]) == 0

    nodes = {n["id"]: n for n in json.loads(out.read_text())["nodes"]}
    assert nodes[strategy.decision_id]["decision_status"] == "current" and fix.decision_id not in nodes
    assert main(["-q", "export", "--plan", plan.plan_id, "--as-of", "2001-01-01T00:00:00Z"]) == 2
    assert "asOf: plan" in capsys.readouterr().err


def test_tree_as_of_a_past_moment_shows_no_correction_made_after_it(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, strategy, before, fix = _strategy_corrected(store, graph, monkeypatch, "drawn as it stood")

    assert main(["-q", "tree", plan.plan_id, "--as-of", before]) == 0
    then = capsys.readouterr().out
    assert main(["-q", "tree", plan.plan_id, "--history"]) == 0
    now = capsys.readouterr().out

    assert strategy.decision_id in then and "superseded" not in then and fix.decision_id not in then
    assert f"[superseded by {fix.decision_id}]" in now


@pytest.fixture
def cli(store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The command line pointed at the test's emptied database."""
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))


def _output(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["-q", *argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _with_strategy(store: Trail, description: str = "cli plan", **options: Any) -> tuple[Plan, Decision]:
    """A plan (instantiated with ``options``) and a strategy recorded under its root, its #1."""
    plan, root = instantiate_plan(store, description, principal=LOCAL, **options)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    return plan, strategy


def test_correct_and_history_print_the_attempt_id_that_replay_takes(
    store: Trail, cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, strategy = _with_strategy(store)
    assert "has never been corrected" in _output(capsys, "history", f"{plan.plan_id}#1")

    corrected = _output(capsys, "correct", f"{plan.plan_id}#1", "--guidance", "a sliding window")
    [attempt] = reading.correction_attempts(store, strategy.decision_id, principal=LOCAL)
    assert f"attempt {attempt.attempt_id}: replay pending" in corrected
    assert f"decisiontrail replay {attempt.attempt_id} replayed|failed|not_needed" in corrected
    [line] = _output(capsys, "history", strategy.decision_id).splitlines()
    assert line.startswith(f"attempt 1 {attempt.attempt_id} at ")

    # What the replay recorded is named as `tree` prints it, PLAN_ID#N, like any decision.
    replayed = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, attempt.correction_decision_id), principal=LOCAL
    )
    assert "replay replayed" in _output(
        capsys, "replay", attempt.attempt_id, "replayed", "--decision", f"{plan.plan_id}#{replayed.sequence_number}"
    )
    assert reading.get_attempt(store, attempt.attempt_id, principal=LOCAL).replayed_decision_ids == (replayed.decision_id,)


def test_history_says_when_a_decision_was_never_corrected(store: Trail, cli: None, capsys: pytest.CaptureFixture[str]) -> None:
    plan, strategy = _with_strategy(store)

    out = _output(capsys, "history", f"{plan.plan_id}#1")

    assert (
        out
        == f"decision {plan.plan_id}#1 ({strategy.decision_id}) has never been corrected: no correction attempts on its chain\n"
    )
    assert f"decision {strategy.decision_id} has never been corrected" in _output(capsys, "history", strategy.decision_id)


def test_correct_on_a_plan_the_runtime_runs_says_the_runtime_replays_it(
    store: Trail, cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from decisiontrail.domain.runs import RunRequest
    from decisiontrail.services.runs import runs_of_plans

    plan, strategy = _with_strategy(store, run=RunRequest(model="scripted"))
    run = runs_of_plans(store, [plan.plan_id])[0]
    assert run is not None

    out = _output(capsys, "correct", strategy.decision_id, "--guidance", "a sliding window")

    [attempt] = reading.correction_attempts(store, strategy.decision_id, principal=LOCAL)
    assert f"attempt {attempt.attempt_id}: replay queued on run {run.run_id}; the runtime replays it" in out


def test_export_and_analyze_take_plan_hash_n_as_impact_does(
    store: Trail, cli: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan, strategy = _with_strategy(store)
    reference = f"{plan.plan_id}#1"

    for view in ("--impact", "--lineage"):
        out = tmp_path / f"{view.strip('-')}.json"
        _output(capsys, "export", view, reference, "--format", "json", "-o", str(out))
        assert strategy.decision_id in {n["id"] for n in json.loads(out.read_text())["nodes"]}
    analytics = json.loads(_output(capsys, "analyze", "--plan", reference, "--format", "json"))
    assert analytics["decisions"]["total"] == 2
    assert _output(capsys, "tree", reference) == _output(capsys, "tree", plan.plan_id)

    assert main(["-q", "export", "--impact", f"{plan.plan_id}#7", "--format", "json"]) == 2
    assert f"decision {plan.plan_id}#7 does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["-q", "analyze", "--plan", f"{plan.plan_id}#x"])
    assert refused.value.code == 2 and "neither a ULID nor PLAN_ID#N" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["analyze"], "PLAN_ID#N"),
        (["export"], "PLAN_ID#N"),
        (["tree"], "decisiontrail plans"),
        (["replay"], "as `correct` and `history` print it"),
        (["history"], "never corrected"),
        (["import", "otlp"], "stderr shows"),
    ],
)
def test_help_says_what_a_command_takes(command: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])

    assert says in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr taken for a terminal someone watches (the captured one is not)."""
    from decisiontrail.cli import progress

    monkeypatch.setattr(progress, "on_terminal", lambda: True)


def test_import_shows_its_progress_on_stderr_and_only_its_report_on_stdout(
    store: Trail, cli: None, terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = str(Path(__file__).resolve().parents[1] / "docs" / "examples" / "otlp-trace.json")

    assert main(["import", "otlp", trace]) == 0
    shown = capsys.readouterr()
    assert "importing 8 spans of otlp-trace.json in one transaction" in shown.err
    assert shown.out.startswith("8 spans: imported 1 trace(s) into 2 plan(s)") and "importing" not in shown.out

    assert main(["-q", "import", "otlp", trace]) == 0
    assert "importing" not in capsys.readouterr().err


def test_export_shows_its_progress_on_stderr_never_in_the_document(
    store: Trail, cli: None, terminal: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan, strategy = _with_strategy(store)

    assert main(["export", "--plan", plan.plan_id, "--format", "json"]) == 0
    shown = capsys.readouterr()
    assert strategy.decision_id in {n["id"] for n in json.loads(shown.out)["nodes"]}
    assert re.search(r"exporting: [\d.]+[kM]?B", shown.err), shown.err

    assert main(["export", "--all", "--format", "json", "-o", str(tmp_path / "all.json")]) == 0
    assert "writing groups of plans" in capsys.readouterr().err
    assert main(["check", "--all"]) == 0
    assert "checking groups of plans" in capsys.readouterr().err

    assert main(["-q", "export", "--plan", plan.plan_id, "--format", "json"]) == 0
    assert capsys.readouterr().err == ""
