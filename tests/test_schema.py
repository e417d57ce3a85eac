"""The published SDL (docs/schema.graphql) and the schema the code builds must agree."""

from __future__ import annotations

from pathlib import Path

from decisiontrail.schema import schema

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
