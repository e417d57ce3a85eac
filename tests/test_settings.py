"""Settings from the environment: an existing server by NEO4J_URI, the embedded one otherwise."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from decisiontrail.exceptions import ValidationFailed
from decisiontrail.settings import Neo4jSettings, RetentionSettings


def test_no_uri_means_the_embedded_server_with_defaults() -> None:
    settings = Neo4jSettings.from_env({"HOME": "/home/u"})

    assert settings.embedded
    assert settings.database == "neo4j"
    assert settings.bolt_port == 7687
    assert settings.data_dir == Path("/home/u/.local/share/decisiontrail/neo4j")
    assert settings.cache_dir == Path("/home/u/.cache/decisiontrail")


def test_an_existing_server_is_taken_from_the_neo4j_variables() -> None:
    settings = Neo4jSettings.from_env(
        {
            "NEO4J_URI": "neo4j://db.internal:7687",
            "NEO4J_USER": "svc",
            "NEO4J_PASSWORD": "secret",
            "NEO4J_DATABASE": "lineage",
        }
    )

    assert not settings.embedded
    assert (settings.uri, settings.user, settings.password, settings.database) == (
        "neo4j://db.internal:7687",
        "svc",
        "secret",
        "lineage",
    )


def test_embedded_server_options_are_read(tmp_path: Path) -> None:
    settings = Neo4jSettings.from_env(
        {
            "DECISIONTRAIL_DATA_DIR": str(tmp_path),
            "DECISIONTRAIL_CACHE_DIR": str(tmp_path / "cache"),
            "DECISIONTRAIL_NEO4J_PORT": "0",
            "DECISIONTRAIL_NEO4J_HEAP_MB": "2048",
            "DECISIONTRAIL_NEO4J_PAGECACHE_MB": "64",
            "DECISIONTRAIL_NEO4J_TX_MEMORY_MB": "32",
        }
    )

    assert settings.data_dir == tmp_path / "neo4j"
    assert settings.cache_dir == tmp_path / "cache"
    assert (settings.bolt_port, settings.heap_mb, settings.pagecache_mb) == (0, 2048, 64)
    assert settings.tx_memory_mb == 32


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DECISIONTRAIL_NEO4J_PORT", "seven", "whole number"),
        ("DECISIONTRAIL_NEO4J_PORT", "70000", "between 0 and 65535"),
        ("DECISIONTRAIL_NEO4J_HEAP_MB", "10", "between 256"),
        ("DECISIONTRAIL_NEO4J_TX_MEMORY_MB", "-1", "between 0 and 65536"),
    ],
)
def test_bad_values_are_refused_naming_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(ValidationFailed, match=message) as raised:
        Neo4jSettings.from_env({name: value})
    assert raised.value.field == name


def test_the_trace_wait_is_an_age_as_prune_takes_one_and_a_bad_one_names_its_variable() -> None:
    assert RetentionSettings.from_env({}).trace_wait == timedelta(days=7)
    assert RetentionSettings.from_env({"DECISIONTRAIL_TRACE_WAIT": "2w"}).trace_wait == timedelta(weeks=2)
    with pytest.raises(ValidationFailed, match="DECISIONTRAIL_TRACE_WAIT: 'a week' is not an age") as raised:
        RetentionSettings.from_env({"DECISIONTRAIL_TRACE_WAIT": "a week"})
    assert raised.value.field == "DECISIONTRAIL_TRACE_WAIT"
