"""The embedded Neo4j: a real server, its build, its start and stop, and its failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import server_version
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, build_launcher, java_major_version, require_tool
from decisiontrail.settings import NEO4J_VERSION, Neo4jSettings

embedded_only = pytest.mark.skipif(
    bool(os.environ.get("DECISIONTRAIL_TEST_NEO4J_URI")), reason="the suite runs against an external server"
)


@embedded_only
def test_the_session_runs_on_real_neo4j_community_5_26(graph: Graph) -> None:
    assert server_version(graph) == f"{NEO4J_VERSION} community"
    assert graph.uri.startswith("bolt://127.0.0.1:")


@embedded_only
def test_a_routing_uri_works_against_the_server(graph: Graph) -> None:
    routing_uri = graph.uri.replace("bolt://", "neo4j://")
    with neo4j.GraphDatabase.driver(routing_uri, auth=None) as driver:
        records, _, _ = driver.execute_query("RETURN 41 + 1 AS answer", routing_=neo4j.RoutingControl.READ)
    assert records[0]["answer"] == 42


@embedded_only
def test_transaction_logs_are_kept_only_a_little_past_recovery(graph: Graph) -> None:
    records, _, _ = graph.driver.execute_query(
        "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
        names=["db.tx_log.rotation.retention_policy", "db.checkpoint.interval.time"],
        database_=graph.database,
    )
    assert {r["name"]: r["value"] for r in records} == {
        "db.tx_log.rotation.retention_policy": "256M size",
        "db.checkpoint.interval.time": "5m",
    }


def test_missing_tools_are_named_with_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    java = require_tool("java", "run Neo4j")
    only_java = tmp_path / "bin"
    only_java.mkdir()
    (only_java / "java").symlink_to(java)
    monkeypatch.setenv("PATH", str(tmp_path))

    with pytest.raises(Unavailable, match=r"`java` is not on PATH.*openjdk-17.*NEO4J_URI"):
        require_tool("java", "run Neo4j")
    monkeypatch.setenv("PATH", str(only_java))
    with pytest.raises(Unavailable, match=r"`mvn` is not on PATH.*apt-get install maven"):
        build_launcher(tmp_path / "cache", NEO4J_VERSION)


def test_java_version_is_read() -> None:
    assert java_major_version(require_tool("java", "run Neo4j")) >= 17


def test_the_launcher_build_is_cached_by_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = Neo4jSettings.from_env().cache_dir
    first = build_launcher(cache, NEO4J_VERSION)
    monkeypatch.setenv("PATH", str(tmp_path))  # no java, no mvn: only a cached build can be returned

    again = build_launcher(cache, NEO4J_VERSION)

    assert again == first
    assert first.name.startswith(f"{NEO4J_VERSION}-")
    assert (first / "launcher.jar").is_file()
    assert any(p.name == f"neo4j-{NEO4J_VERSION}.jar" for p in (first / "lib").iterdir())


CHILD = """
import sys
from pathlib import Path
from decisiontrail.graphdb.embedded import EmbeddedNeo4j
server = EmbeddedNeo4j(Path(sys.argv[1]), cache_dir=Path(sys.argv[2]), heap_mb=512, pagecache_mb=32)
server.start()
print(server.pid, flush=True)
input()  # parked until killed
"""


def test_server_stops_by_itself_when_its_owner_dies_and_a_locked_store_is_explained(tmp_path: Path) -> None:
    cache = Neo4jSettings.from_env().cache_dir
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "store"), str(cache)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as owner:
        assert owner.stdout is not None
        jvm_pid = int(owner.stdout.readline())

        second = EmbeddedNeo4j(tmp_path / "store", cache_dir=cache, heap_mb=512, pagecache_mb=32, startup_timeout=120)
        with pytest.raises(Unavailable, match="another process is using the data directory"):
            second.start()
        assert not second.running

        owner.send_signal(signal.SIGKILL)  # no chance to stop the JVM itself
        owner.wait()
        assert _exits_within(jvm_pid, seconds=60)
        assert "STOPPED" in (tmp_path / "store" / "launcher.log").read_text()


def _exits_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie (exited, not yet reaped by init) counts as gone.
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.2)
    return False


def test_extra_settings_reach_neo4j_and_an_unknown_one_stops_the_start(tmp_path: Path) -> None:
    cache = Neo4jSettings.from_env().cache_dir
    settings = {"db.tx_log.preallocate": "false", "db.tx_log.rotation.size": "1M"}
    with EmbeddedNeo4j(tmp_path / "tuned", cache_dir=cache, heap_mb=512, pagecache_mb=32, extra_settings=settings) as server:
        assert server.uri is not None
        with neo4j.GraphDatabase.driver(server.uri, auth=None) as driver:
            records, _, _ = driver.execute_query(
                "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value", names=sorted(settings)
            )
    assert {r["name"]: r["value"] for r in records} == {"db.tx_log.preallocate": "false", "db.tx_log.rotation.size": "1.00MiB"}

    misspelt = EmbeddedNeo4j(
        tmp_path / "misspelt", cache_dir=cache, heap_mb=512, pagecache_mb=32, extra_settings={"db.tx_log.prealocate": "false"}
    )
    with pytest.raises(Unavailable, match=r"db\.tx_log\.prealocate"):
        misspelt.start()
    assert not misspelt.running
