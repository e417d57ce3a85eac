"""`decisiontrail plans` as the way in: finding a plan by words or in creation order, and being told
when the list is cut short or empty (tests/test_cli_runtime.py has its order, filters and --json)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from decisiontrail.access import LOCAL
from decisiontrail.cli import main
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.services.lifecycle import instantiate_plan


@pytest.fixture
def cli(store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The command line pointed at the test's emptied database."""
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))


def _plan(store: Trail, description: str, project: str | None = None) -> str:
    return instantiate_plan(store, description, project=project, principal=LOCAL)[0].plan_id


def _listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["-q", "plans", *argv]) == 0, capsys.readouterr().err
    return [line.split()[0] for line in capsys.readouterr().out.splitlines()]


def test_plans_finds_a_plan_by_words_and_lists_oldest_first_when_asked(
    store: Trail, cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = _plan(store, "Rotate the API signing keys", project="security")
    limits = _plan(store, "Add rate limiting to the billing API", project="billing")
    audit = _plan(store, "Audit the billing logs", project="billing")

    assert _listed(capsys, "--search", "RATE LIMITING") == [limits]
    assert _listed(capsys, "--search", "billing") == [audit, limits]  # in the description or the project
    assert _listed(capsys, "--search", keys[-8:].lower()) == [keys]  # a piece of an id
    assert _listed(capsys, "--search", "billing", "--project", "security") == []
    assert _listed(capsys, "--oldest-first") == [keys, limits, audit]
    assert _listed(capsys, "--oldest-first", "--limit", "2") == [keys, limits]
    assert main(["-q", "plans", "--search", "audit", "--json"]) == 0
    assert [p["plan_id"] for p in json.loads(capsys.readouterr().out)] == [audit]


def test_plans_says_when_more_match_than_it_shows_or_none_does(
    store: Trail, cli: None, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    def said(*argv: str) -> tuple[list[str], list[str]]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="decisiontrail"):
            assert main(["plans", *argv]) == 0
        listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
        return listed, [r.getMessage() for r in caplog.records if r.getMessage().startswith(("no plans", "2 plan"))]

    assert said() == ([], ["no plans yet: `decisiontrail run` or `decisiontrail demo` records some"])
    ids = [_plan(store, f"plan {i}") for i in range(3)]

    assert said("--limit", "2") == (ids[:0:-1], ["2 plan(s) shown; more match (--limit N shows more)"])
    assert said("--limit", "3") == (ids[::-1], [])
    assert said("--phase", "apply") == ([], ["no plans match"])
