"""The decisiontrail command line, run in-process against the session's Neo4j."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from decisiontrail.cli import main
from decisiontrail.domain.tree import describe
from decisiontrail.graphdb import DecisionStore, Graph


def test_help_lists_commands_and_environment(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    for word in ("demo", "tree", "migrate", "neo4j", "NEO4J_URI", "DECISIONTRAIL_DATA_DIR"):
        assert word in out


def test_demo_prints_the_tree_read_back_from_neo4j(
    store: DecisionStore,
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
        for d in store.list_decisions(plan_id):
            assert describe(d) in out
    assert (tmp_path / "checkpoints.sqlite").is_file()  # the actors' LangGraph checkpoints


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
