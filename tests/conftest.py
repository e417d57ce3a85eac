"""One real Neo4j per test session, its data wiped before each test that uses it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait

import httpx
import pytest
from hypothesis import settings

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph, open_graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services.relay import RELAY_THREAD
from decisiontrail.settings import Neo4jSettings
from decisiontrail.services import Trail, analysis
from serving import served


# Hypothesis's own "ci" profile, active when CI is set (.ci/run sets it), derandomizes every test:
# each CI run would draw the examples the last one drew. Ours keeps the rest of it (no deadline, no
# example database, a failing example's @reproduce_failure blob printed) and draws anew each run,
# from --hypothesis-seed when given (`make test` gives the run's seed, see pytest_terminal_summary).
settings.register_profile("ci", settings.get_profile("ci"), derandomize=False)


def pytest_report_header(config: pytest.Config) -> str:
    return _seeds(config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # Again at the foot, beside the failures, so a failing order can be run again without scrolling back.
    terminalreporter.write_line(_seeds(config))


def _seeds(config: pytest.Config) -> str:
    """What this run's order and Hypothesis's examples came from, and how to run them again."""
    order = config.getoption("randomly_seed", None)
    examples = config.getoption("hypothesis_seed", None)
    said = "test order: " + (f"--randomly-seed={order}" if isinstance(order, int) else "as written (pytest-randomly off)")
    said += "; Hypothesis: " + (f"--hypothesis-seed={examples}" if examples is not None else "a fresh seed per test")
    if isinstance(order, int) and examples is not None and str(order) == str(examples):
        said += f"; `make test SEED={order}` repeats both"
    return said


@pytest.fixture(scope="session")
def neo4j_progress(pytestconfig: pytest.Config) -> Callable[[str], None]:
    """Writes a test server's ``[neo4j]`` lines as they happen, not captured: a server's start belongs in the test output."""
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")

    def progress(message: str) -> None:
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(f"[neo4j] {message}")

    return progress


@pytest.fixture(scope="session")
def graph(neo4j_progress: Callable[[str], None], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    """The session's Neo4j: the embedded server, started here on a free port and a fresh store.

    DECISIONTRAIL_TEST_NEO4J_URI points the suite at another server instead; every test
    wipes that server's database, so never point it at data you want to keep.
    """
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
    with open_graph(settings, progress=neo4j_progress) as graph:
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
