"""Faults injected under load: Neo4j stopped and started again, the service killed and restarted.

Each scenario serves the API as users run it (``decisiontrail serve`` in its own process on a
fixed port), runs ``reliability.load`` against it as a second process, injects its fault in the
middle, and then compares the load's journal with the database (``load.verify``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.connection import create_driver
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, free_port
from decisiontrail.settings import Neo4jSettings
from reliability import load
from reliability.outcome import Outcome

Progress = Callable[[str], None]

UNAVAILABLE_BOUND = 5.0
"""Seconds within which a request must be answered UNAVAILABLE while Neo4j is down."""

WINDOW_GRACE = 1.0
"""Seconds a fault's window stays open after the service answered again: the harness asks every
0.1 s, and requests the load sent in that moment may still have met Neo4j not yet serving them."""

PROBE = "query { plans(first: 1) { totalCount } }"


def _say(message: str) -> None:
    print(f"[faults] {message}", file=sys.stderr, flush=True)


class Service:
    """``decisiontrail serve`` as its own process on one fixed port, so a restart comes back on the same address."""

    def __init__(
        self,
        neo4j_uri: str,
        database: str,
        log_path: Path,
        port: int | None = None,
        options: tuple[str, ...] = (),
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.options = options
        """More ``serve`` options (``--max-in-flight 8``)."""
        self.environment = dict(environment or {})
        """Settings it runs with beyond this process's environment (``DECISIONTRAIL_QUERY_TIMEOUT``)."""
        self.url = f"http://127.0.0.1:{self.port}"
        self.neo4j_uri = neo4j_uri
        self.database = database
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 120.0) -> float:
        """Start it and wait until /readyz answers 200; returns the seconds that took."""
        started = time.monotonic()
        env = {**os.environ, **self.environment, "NEO4J_URI": self.neo4j_uri, "NEO4J_DATABASE": self.database}
        env.pop("DECISIONTRAIL_TOKENS_FILE", None)
        env.pop("DECISIONTRAIL_TOKENS", None)
        # Its log goes to a file: a pipe nobody reads would fill and stall the service.
        with self.log_path.open("ab") as log_file:
            self.process = subprocess.Popen(
                # One worker process: the scenarios shed load at one process's --max-in-flight, and a
                # replica behind the balancer is one process.
                [
                    sys.executable,
                    "-m",
                    "decisiontrail.cli",
                    "-q",
                    "serve",
                    "--workers",
                    "1",
                    "--port",
                    str(self.port),
                    *self.options,
                ],
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1
        deadline = started + timeout
        while not _ready(self.url):
            if not self.alive:
                raise RuntimeError(f"decisiontrail serve exited; see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"decisiontrail serve was not ready within {timeout:.0f} s; see {self.log_path}")
            time.sleep(0.1)
        return time.monotonic() - started

    def kill(self) -> None:
        """SIGKILL: no shutdown, no answers to the requests in flight."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Probe:
    """A GraphQL read and /readyz every ``every`` seconds while Neo4j is down: how fast and how each answered."""

    url: str
    every: float = 0.25
    answers: list[tuple[str, float, float]] = field(default_factory=list)  # (code or "OK", seconds, sent at)
    readiness: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as http:
            while not self._stop.is_set():
                start, sent = time.perf_counter(), time.time()
                try:
                    body = http.post("/graphql", json={"query": PROBE}).json()
                    errors = body.get("errors") or []
                    code = str((errors[0].get("extensions") or {}).get("code") or "UNEXPECTED") if errors else "OK"
                except (httpx.HTTPError, ValueError) as e:
                    code = type(e).__name__
                self.answers.append((code, time.perf_counter() - start, sent))
                try:
                    self.readiness.append(http.get("/readyz").status_code)
                except httpx.HTTPError:
                    self.readiness.append(0)
                self._stop.wait(self.every)

    @contextmanager
    def running(self) -> Iterator[Probe]:
        thread = threading.Thread(target=self.run, name="probe", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(35)


def _first_success(url: str, timeout: float) -> float | None:
    """Seconds until a GraphQL read through the service succeeds again, or None within ``timeout``."""
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=10) as http:
        while time.monotonic() - started < timeout:
            try:
                body = http.post("/graphql", json={"query": PROBE}).json()
                if not body.get("errors"):
                    return time.monotonic() - started
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.1)
    return None


def outside_windows(
    events: Iterable[dict[str, Any]],
    windows: Sequence[tuple[float, float]],
    grace: float = WINDOW_GRACE,
    codes: Collection[str] = ("UNAVAILABLE",),
) -> list[dict[str, Any]]:
    """The load's answers of ``codes`` (UNAVAILABLE) no fault explains: their request was not in
    flight at any moment of a window (from a fault's injection until Neo4j served again, ``grace``
    seconds more).

    A journalled request was sent ``ms`` before it was answered ``at`` (wall clock, as the windows).

    >>> def unavailable(at, ms):
    ...     return {"type": "error", "code": "UNAVAILABLE", "at": at, "ms": ms}
    >>> events = [unavailable(99.0, 5), unavailable(105.0, 5), unavailable(111.0, 3000), unavailable(111.5, 5)]
    >>> [e["at"] for e in outside_windows(events, [(100.0, 110.0)], grace=1.0)]
    [99.0, 111.5]
    """
    return [
        e
        for e in events
        if e["type"] == "error"
        and e["code"] in codes
        and not any(e["at"] - e["ms"] / 1000 <= end + grace and e["at"] >= start for start, end in windows)
    ]


def _own_neo4j(scratch: Path, progress: Progress, *, heap_mb: int, pagecache_mb: int) -> EmbeddedNeo4j:
    """An embedded Neo4j of the scenario's own, on a fixed port so that a restart keeps its address."""
    return EmbeddedNeo4j(
        scratch / "neo4j",
        cache_dir=Neo4jSettings.from_env().cache_dir,
        bolt_port=free_port(),
        heap_mb=heap_mb,
        pagecache_mb=pagecache_mb,
        progress=progress,
    )


@contextmanager
def _graph(uri: str, database: str = "neo4j") -> Iterator[Graph]:
    driver = create_driver(uri, None, None)
    try:
        yield Graph(driver=driver, database=database, uri=uri)
    finally:
        driver.close()


def _kill_if_running(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


def _finish_load(generator: subprocess.Popen[bytes], outcome: Outcome, grace: float) -> None:
    """End the load (SIGTERM: started writes finish their retries) and require a clean exit."""
    generator.send_signal(signal.SIGTERM)
    try:
        code = generator.wait(grace + 60)
    except subprocess.TimeoutExpired:
        generator.kill()
        code = generator.wait()
    outcome.require(code == 0, f"the load generator exited with {code}")


def neo4j_restart(
    scratch_dir: Path,
    *,
    seconds: float = 30.0,
    clients: int = 4,
    down_seconds: float = 5.0,
    cycles: int = 1,
    seed: int = 0,
    unavailable_bound: float = UNAVAILABLE_BOUND,
    heap_mb: int = 512,
    pagecache_mb: int = 64,
    crash: bool = False,
    progress: Progress = _say,
) -> Outcome:
    """Neo4j stopped ``cycles`` times in the middle of a load and started again; with ``crash``,
    killed (SIGKILL to its JVM: transactions cut off mid-commit, recovered from the transaction
    log at the next start) rather than stopped.

    The load runs ``seconds`` in all (split before, between and after the faults) plus the time
    Neo4j takes to stop and start. While Neo4j is down for ``down_seconds`` a probe requires every
    request to be answered UNAVAILABLE within ``unavailable_bound`` seconds and /readyz to say
    unavailable; after Neo4j is back the same service process must answer again by itself, and
    the load's retries (same idempotency keys) must leave every acknowledged decision stored
    exactly once. The load's UNAVAILABLE answers are excused only inside a fault's window, from the
    fault until the service answers again (``outside_windows``); outside, as in the load scenario,
    only as many as the service logged silent connections. ``scratch_dir`` holds the server's
    store, the service's log and the journal.
    """
    how = "killed (SIGKILL)" if crash else "stopped"
    outcome = Outcome(
        "neo4j_crash" if crash else "neo4j_restart",
        f"Neo4j {how} {cycles}x for {down_seconds:.0f} s under a load of {clients} clients",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "neo4j-restart.jsonl"
    journal.unlink(missing_ok=True)
    grace = 60.0
    recoveries: list[float] = []
    restarts: list[float] = []
    survived = 0
    probes: list[Probe] = []
    down_windows: list[tuple[float, float]] = []  # wall-clock spans from Neo4j gone to its restart
    fault_windows: list[tuple[float, float]] = []  # wall-clock spans from the fault to the service answering again
    stopping: list[float] = []
    with ExitStack() as stack:
        neo4j = _own_neo4j(scratch_dir, progress, heap_mb=heap_mb, pagecache_mb=pagecache_mb)
        stack.enter_context(neo4j)
        assert neo4j.uri is not None
        service = Service(neo4j.uri, "neo4j", scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        pid = service.pid
        cap = seconds + cycles * (down_seconds + 2 * neo4j.startup_timeout)
        generator = load.spawn(service.url, journal, seconds=cap, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        slice_ = seconds / (cycles + 1)
        for cycle in range(1, cycles + 1):
            time.sleep(slice_)
            progress(f"fault {cycle}/{cycles}: {'killing' if crash else 'stopping'} Neo4j under load")
            probe = Probe(service.url)
            probes.append(probe)
            with probe.running():
                began = time.time()
                neo4j.kill() if crash else neo4j.stop()
                stopped = time.time()
                stopping.append(stopped - began)
                time.sleep(down_seconds)
            down_windows.append((stopped, time.time()))
            down = [s for code, s, at in probe.answers if code != "OK" and at >= stopped]
            progress(
                f"Neo4j down {down_seconds:.0f} s: {len(down)} probe(s) answered in at most {max(down, default=0):.2f} s; starting it again"
            )
            back = time.monotonic()
            neo4j.start()
            restarts.append(time.monotonic() - back)
            recovery = _first_success(service.url, timeout=60)
            fault_windows.append((began, time.time()))
            recovered = recovery is not None and service.alive and service.pid == pid
            if recovery is not None:
                recoveries.append(recovery)
            outcome.require(recovered, f"fault {cycle}: the service did not answer again by itself within 60 s of Neo4j's return")
            codes = {code for code, _, _ in probe.answers}
            unavailable_at_once = bool(down) and max(down) <= unavailable_bound and codes <= {"OK", "UNAVAILABLE"}
            outcome.require(bool(down), f"fault {cycle}: no probe reached the service while Neo4j was down")
            outcome.require(
                codes <= {"OK", "UNAVAILABLE"}, f"fault {cycle}: probes while Neo4j was down answered {sorted(codes)}"
            )
            not_ready = 503 in probe.readiness and set(probe.readiness) <= {200, 503}
            outcome.require(
                not_ready, f"fault {cycle}: /readyz answered {sorted(set(probe.readiness))} while Neo4j was down, not 503"
            )
            survived += recovered and unavailable_at_once and not_ready
            progress(f"fault {cycle}: Neo4j back after {restarts[-1]:.1f} s, the service answered {recovery or 0:.2f} s later")
        time.sleep(slice_)
        _finish_load(generator, outcome, grace)
        events = load.read_journal(journal)
        with _graph(neo4j.uri) as graph:
            # A crash cuts requests off mid-transaction: they are UNAVAILABLE, retried, recorded once.
            # Only inside a fault's window, though (judged below).
            load.verify(events, graph, outcome, expected_codes={"UNAVAILABLE"})
        silent = load.silent_in_log(service.log_path)

    # The bound is for requests sent while Neo4j is down. Those in flight while it shuts down
    # wait for it (Neo4j lets running transactions end first), reported apart.
    def while_down(sent: float) -> bool:
        return any(start <= sent <= end for start, end in down_windows)

    timed = [(s, at) for p in probes for code, s, at in p.answers if code == "UNAVAILABLE"]
    timed += [(e["ms"] / 1000, e["at"] - e["ms"] / 1000) for e in load.iter_codes(events, "UNAVAILABLE")]
    answered = [s for s, sent in timed if while_down(sent)]
    worst = max(answered, default=0.0)
    during_shutdown = max((s for s, sent in timed if not while_down(sent)), default=0.0)
    outcome.require(
        worst <= unavailable_bound, f"an UNAVAILABLE took {worst:.2f} s, more than the {unavailable_bound:.1f} s bound"
    )
    outcome.require(
        outcome.figures["unresolved_writes"] == 0, f"{outcome.figures['unresolved_writes']} write(s) never got an answer"
    )
    judge_windows(outcome, events, fault_windows, silent)
    outcome.figures.update(
        {
            "faults_injected": cycles,
            "faults_survived": survived,
            "unavailable_answers": len(answered),
            "max_seconds_to_unavailable": round(worst, 3),
            "max_seconds_to_unavailable_while_stopping": round(during_shutdown, 3),
            "neo4j_stop_seconds": [round(s, 1) for s in stopping],
            "unavailable_bound_seconds": unavailable_bound,
            "neo4j_down_seconds": down_seconds,
            "neo4j_restart_seconds": [round(s, 1) for s in restarts],
            "recovery_seconds": [round(s, 2) for s in recoveries],
            "service_restarted": service.starts - 1,
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


def judge_windows(
    outcome: Outcome,
    events: list[dict[str, Any]],
    windows: Sequence[tuple[float, float]],
    silent: int,
    codes: Collection[str] = ("UNAVAILABLE",),
) -> None:
    """Require every UNAVAILABLE the load was answered to be explained: inside a fault's window
    (from the fault until the service answered again, ``outside_windows``), or, outside every
    window, as many as the service logged connections given up silent (an answer lost between
    the service and Neo4j, which the load scenario allows too); and report the windows. Other
    ``codes`` (a TIMEOUT while Neo4j recovers its store) are excused inside a window only."""
    stray = outside_windows(events, windows, codes=codes)
    # How long after the service answered again a request was still sent and answered UNAVAILABLE:
    # the part of WINDOW_GRACE a run used.
    late = [
        e["at"] - e["ms"] / 1000 - end
        for e in load.iter_codes(events, "UNAVAILABLE")
        for start, end in windows
        if start <= e["at"] and e["at"] - e["ms"] / 1000 <= end + WINDOW_GRACE
    ]
    unavailable = sum(1 for e in stray if e["code"] == "UNAVAILABLE")
    unexplained = unavailable - min(unavailable, silent) + len(stray) - unavailable
    outcome.require(
        unexplained == 0,
        f"{unexplained} {'/'.join(codes)} answer(s) outside every fault's window, beyond the {silent} silent connection(s) "
        "the service logged: "
        + ", ".join(f"{e['op']} at {_clock(e['at'])} after {e['ms']:.0f} ms" for e in stray[:5])
        + f" (windows: {', '.join(f'{_clock(a)}-{_clock(b)}' for a, b in windows)})",
    )
    outcome.figures.update(
        {
            "unavailable outside a fault's window": len(stray),
            "connections given up silent (answers lost on the way)": silent,
            "fault_window_seconds": [round(end - start, 1) for start, end in windows],
            "fault_window_grace_seconds": WINDOW_GRACE,
            "latest_unavailable_sent_after_recovery_seconds": round(max([0.0, *late]), 3),
        }
    )


def _clock(at: float) -> str:
    """A journal's wall-clock time as a failure names it."""
    return time.strftime("%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}"


def service_kill(
    scratch_dir: Path,
    *,
    graph: Graph | None = None,
    seconds: float = 30.0,
    clients: int = 4,
    kills: int = 1,
    seed: int = 0,
    heap_mb: int = 512,
    pagecache_mb: int = 64,
    progress: Progress = _say,
) -> Outcome:
    """The service killed (SIGKILL) ``kills`` times in the middle of a load and started again on its port.

    Requests in flight get no answer and the load retries them with the same idempotency keys
    once the service is back: every acknowledged decision must be stored exactly once. Runs on
    ``graph``'s database when given (the API then serves ``graph.uri``; NEO4J_USER/NEO4J_PASSWORD
    come from the environment), else on an embedded Neo4j of its own under ``scratch_dir``.
    """
    outcome = Outcome("service_kill", f"the service killed {kills}x (SIGKILL) under a load of {clients} clients")
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "service-kill.jsonl"
    journal.unlink(missing_ok=True)
    grace = 60.0
    downtimes: list[float] = []
    with ExitStack() as stack:
        if graph is None:
            neo4j = stack.enter_context(_own_neo4j(scratch_dir, progress, heap_mb=heap_mb, pagecache_mb=pagecache_mb))
            assert neo4j.uri is not None
            graph = stack.enter_context(_graph(neo4j.uri))
        service = Service(graph.uri, graph.database, scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        generator = load.spawn(service.url, journal, seconds=seconds + kills * 300, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        slice_ = seconds / (kills + 1)
        for kill in range(1, kills + 1):
            time.sleep(slice_)
            progress(f"fault {kill}/{kills}: SIGKILL to the service (pid {service.pid}) under load")
            service.kill()
            downtimes.append(service.start())
            progress(f"fault {kill}: the service was back after {downtimes[-1]:.1f} s")
        time.sleep(slice_)
        _finish_load(generator, outcome, grace)
        events = load.read_journal(journal)
        # Answers lost between the service and Neo4j: UNAVAILABLE, as many as the service logged.
        silent = load.silent_in_log(service.log_path)
        outcome.figures["connections given up silent (answers lost on the way)"] = silent
        load.verify(events, graph, outcome, expected_codes={"UNREACHABLE"}, explained={"UNAVAILABLE": silent})
    outcome.require(
        outcome.figures["unresolved_writes"] == 0, f"{outcome.figures['unresolved_writes']} write(s) never got an answer"
    )
    outcome.figures.update(
        {
            "faults_injected": kills,
            "faults_survived": kills if outcome.passed else 0,
            "service_down_seconds": [round(s, 1) for s in downtimes],
            "in_flight_retried": sum(1 for e in events if e["type"] == "retried"),
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


def summary(outcome: Outcome) -> dict[str, Any]:
    """The figures docs/reliability.md shows for a fault scenario."""
    keys = (
        "faults_injected",
        "faults_survived",
        "requests",
        "acknowledged",
        "stored",
        "lost",
        "duplicated",
        "max_seconds_to_unavailable",
        "recovery_seconds",
        "service_down_seconds",
        "check_violations",
    )
    return {k: outcome.figures[k] for k in keys if k in outcome.figures}
