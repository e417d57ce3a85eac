"""One real Neo4j per test session, its data wiped before each test that uses it."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, wait

import httpx
import pytest

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph, open_graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services.relay import RELAY_THREAD
from decisiontrail.settings import Neo4jSettings
from decisiontrail.services import Trail, analysis
from serving import served


@pytest.fixture(scope="session")
def graph(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    """The session's Neo4j: the embedded server, started here on a free port and a fresh store.

    DECISIONTRAIL_TEST_NEO4J_URI points the suite at another server instead; every test
    wipes that server's database, so never point it at data you want to keep.
    """
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")

    def progress(message: str) -> None:
        # Shown as it happens, not captured: the server's start belongs in the test output.
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(f"[neo4j] {message}")

    defaults = Neo4jSettings.from_env()
    settings = Neo4jSettings(
        uri=os.environ.get("DECISIONTRAIL_TEST_NEO4J_URI") or None,
        user=os.environ.get("DECISIONTRAIL_TEST_NEO4J_USER") or None,
        password=os.environ.get("DECISIONTRAIL_TEST_NEO4J_PASSWORD") or None,
        data_dir=tmp_path_factory.mktemp("neo4j"),
        cache_dir=defaults.cache_dir,
        bolt_port=0,
        heap_mb=1024,
        pagecache_mb=128,
    )
    with open_graph(settings, progress=progress) as graph:
        yield graph


@pytest.fixture
def base_url(store: Trail, graph: Graph) -> Iterator[str]:
    """The service, served by uvicorn in a thread for one test, on the database ``store`` emptied.

    The test's own: started after the wipe and stopped (its event relay with it) before the next
    test's, so no served process writes while a test wipes. A module that serves its own app
    overrides this fixture the same way, after ``store``.
    """
    with served(create_app(graph=graph)) as url:
        yield url


@pytest.fixture
def api(base_url: str, store: Trail) -> Iterator[httpx.Client]:
    """A client of the test's service, on an empty database."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


@pytest.fixture
def store(graph: Graph) -> Trail:
    """A decision store on an empty database (schema kept).

    Refused while a served app of this process still runs its background work: its relay
    numbers and reads the outbox, and must be stopped by the fixture that started it before the
    database is wiped under it.
    """
    running = [t.name for t in threading.enumerate() if t.name == RELAY_THREAD]
    assert not running, f"{len(running)} event relay(s) still running: serve the app from a fixture that depends on `store`"
    delete_all_data(graph)
    return Trail.on(graph)


@pytest.fixture
def started_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline work with worker processes (--jobs) starts them whatever the database's size, and
    waits for one to have started before its first load.

    Left alone, a test's few decisions are not worth a worker, and this process would take every
    load itself until one has started.
    """
    ready = analysis._Workers.ready

    def wait_for_one(workers: analysis._Workers) -> bool:
        wait(workers.probes, return_when=FIRST_COMPLETED)
        return ready(workers)

    monkeypatch.setattr(analysis, "WORKERS_FROM", 0)
    monkeypatch.setattr(analysis._Workers, "ready", wait_for_one)
