"""The published SDL (docs/schema.graphql) and the schema the code builds must agree."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from decisiontrail.api import schema

SDL = Path(__file__).resolve().parents[1] / "docs" / "schema.graphql"


def test_docs_schema_graphql_matches_the_code() -> None:
    assert SDL.read_text(encoding="utf-8") == schema.as_str() + "\n", (
        "docs/schema.graphql is stale: run `decisiontrail schema --output docs/schema.graphql`"
    )


def test_contract_names_are_camel_case_and_enums_upper_case() -> None:
    sdl = schema.as_str()
    for name in ("instantiatePlan", "recordDecision", "resolveReview", "correctDecision", "advancePhase", "pendingReviews"):
        assert name in sdl
    for value in ("STRATEGY_CHOICE", "EXECUTE", "REVERT", "SELECT_ALTERNATIVE", "SUPERSEDED"):
        assert value in sdl


def test_only_errors_that_get_masked_are_logged_as_errors(caplog: pytest.LogCaptureFixture) -> None:
    from graphql import GraphQLError

    client = GraphQLError("no decision 01J", original_error=GraphQLError("no decision 01J", extensions={"code": "NOT_FOUND"}))
    bug = GraphQLError("boom", original_error=RuntimeError("boom"))

    with caplog.at_level(logging.DEBUG):
        schema.process_errors([client, bug])

    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == ["boom"]
    assert any("no decision 01J" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)
