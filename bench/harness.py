"""Timing, results and the served API: the parts every scenario shares."""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, LiteralString

import httpx
import neo4j

from decisiontrail.access import process
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.graphdb.timing import Timing, timing
from decisiontrail.graphdb.timing import db_hits as plan_hits


BENCH = process("bench")
"""Who the benchmarks' fixtures are recorded and read as, in process."""

# A p95 needs at least this many samples (with fewer, the "p95" is the largest sample or close to
# it); rows with fewer report p50 and the sample count only.
MIN_P95_SAMPLES = 20


@dataclass(frozen=True)
class Stats:
    """Repeated timings of one thing, in milliseconds, and what each run did."""

    samples_ms: tuple[float, ...]
    ops_per_sample: int = 1
    throughput: float | None = None  # measured over a whole concurrent run, where p50 does not give it

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p95_ms(self) -> float | None:
        """The 95th percentile, or None from fewer than ``MIN_P95_SAMPLES`` samples.

        >>> Stats(tuple(float(i) for i in range(1, 21))).p95_ms
        19.0
        >>> Stats((1.0, 2.0, 3.0)).p95_ms is None
        True
        """
        if len(self.samples_ms) < MIN_P95_SAMPLES:
            return None
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def ops_per_second(self) -> float:
        if self.throughput is not None:
            return self.throughput
        return self.ops_per_sample / (self.p50_ms / 1000) if self.p50_ms else float("inf")

    def as_json(self) -> dict[str, Any]:
        return {
            "runs": len(self.samples_ms),
            "p50_ms": round(self.p50_ms, 3),
            "p95_ms": round(self.p95_ms, 3) if self.p95_ms is not None else None,
            "ops_per_sample": self.ops_per_sample,
            "ops_per_second": round(self.ops_per_second, 1),
        }


@dataclass(frozen=True)
class Row:
    """One line of the report: ours against the baseline, with the target it is judged by.

    ``compare`` says what the ratio divides: ``latency`` (ours p50 / baseline p50: lower is
    better) or ``throughput`` (ours / baseline operations per second: higher is better).
    """

    scenario: str
    case: str
    ours: Stats
    baseline: Stats | None
    baseline_name: str
    compare: str = "latency"
    target: str = ""
    met: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    interval: tuple[float, float] | None = None  # the ratio's 95% bootstrap interval, where the target is judged by it

    @property
    def ratio(self) -> float | None:
        if self.baseline is None:
            return None
        if self.compare == "throughput":
            return self.ours.ops_per_second / self.baseline.ops_per_second
        return self.ours.p50_ms / self.baseline.p50_ms

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ours"] = self.ours.as_json()
        data["baseline"] = self.baseline.as_json() if self.baseline else None
        data["ratio"] = round(self.ratio, 3) if self.ratio is not None else None
        return data


def timed(run: Callable[[], object], *, repeat: int, warmup: int = 1, ops: int = 1) -> Stats:
    """Run ``run`` warmup + repeat times; the last ``repeat`` are measured."""
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return Stats(tuple(samples), ops)


def interleaved(runs: list[Callable[[], object]], *, samples: int, warmup: int = 3, ops: int = 1) -> list[Stats]:
    """Time several contenders interleaved sample by sample, after ``warmup`` runs of each: ours and
    every anchor it is measured against in the same minute of the machine. Who goes first turns
    round each sample.

    >>> calls = []
    >>> stats = interleaved([lambda: calls.append("a"), lambda: calls.append("b"), lambda: calls.append("c")], samples=3, warmup=0)
    >>> "".join(calls), [len(s.samples_ms) for s in stats]
    ('abcbcacab', [3, 3, 3])
    """
    return interleaved_each([[run] * (warmup + samples) for run in runs], warmup=warmup, ops=ops)


def interleaved_each(runs: list[list[Callable[[], object]]], *, warmup: int = 0, ops: int = 1) -> list[Stats]:
    """Interleave lists of one-shot runs (each consuming a fixture of its own), one of each list in
    turn, who goes first turning round; the first ``warmup`` of each list run first, the same way,
    and are not measured.

    >>> calls = []
    >>> stats = interleaved_each([[lambda: calls.append("a")] * 3, [lambda: calls.append("b")] * 3], warmup=1)
    >>> "".join(calls), [len(s.samples_ms) for s in stats]
    ('abbaab', [2, 2])
    """
    if len({len(each) for each in runs}) != 1:
        raise ValueError("interleaving needs as many runs of each contender")
    if not 0 <= warmup < len(runs[0]):
        raise ValueError("interleaving needs a run of each left to measure after its warm-up runs")
    times: list[list[float]] = [[] for _ in runs]
    for i in range(len(runs[0])):
        for k in range(len(runs)):
            which = (i + k) % len(runs)
            start = time.perf_counter()
            runs[which][i]()
            if i >= warmup:
                times[which].append((time.perf_counter() - start) * 1000)
    return [Stats(tuple(t), ops) for t in times]


def judged(ours: Stats, baseline: Stats, bound: float, *, at_least: bool = False) -> tuple[bool | None, tuple[float, float]]:
    """Whether ours / baseline (p50s) is within ``bound`` (at most it, or ``at_least`` it for a
    throughput), judged by the ratio's 95% interval (2,000 bootstrap resamplings of both sides'
    samples, seeded): met when the whole interval is on the right side of the bound, missed when it
    is wholly on the wrong side, and ``None`` (too close to call with these samples) when it holds
    the bound. A verdict that would flip between runs is not given. For throughput rows the
    samples are latencies, so the ratio is inverted (baseline / ours per operation).

    >>> fast, slow = Stats(tuple(float(x) for x in range(10, 30))), Stats(tuple(float(x) for x in range(40, 60)))
    >>> judged(fast, slow, 1.0)[0], judged(slow, fast, 1.0)[0], judged(fast, fast, 1.0)[0]
    (True, False, None)
    >>> judged(slow, fast, 0.5, at_least=True)[0]
    False
    """
    rng = random.Random(0)
    a, b = ours.samples_ms, baseline.samples_ms
    ratios = []
    for _ in range(2000):
        ra = statistics.median(rng.choices(a, k=len(a)))
        rb = statistics.median(rng.choices(b, k=len(b)))
        ratios.append(rb / ra if at_least else ra / rb)
    ratios.sort()
    low, high = ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]
    if at_least:
        met = True if low >= bound else False if high < bound else None
    else:
        met = True if high <= bound else False if low > bound else None
    return met, (round(low, 3), round(high, 3))


def db_hits(graph: Graph, document: str, /, **variables: Any) -> int:
    """The database hits of one GraphQL request, the same document the row times, executed once in
    this process by the same schema (every statement it runs profiled: ``graphdb.timing``), outside
    the timed runs. A write is made: give it a fixture of its own."""
    from decisiontrail.api import schema
    from decisiontrail.schema.context import Context
    from decisiontrail.services import Trail

    with timing(profile=True) as spent:
        result = asyncio.run(
            schema.execute(document, variable_values=variables, context_value=Context(trail=Trail.on(graph), principal=BENCH))
        )
    if result.errors:
        raise RuntimeError(f"profiling a request failed: {result.errors}")
    return spent.db_hits


def profiled_hits(run: Callable[[], object]) -> int:
    """The database hits of what ``run`` does through the service in this process (every statement
    profiled), for a row that is not a GraphQL request (an OTLP import); once, outside the timed runs."""
    with timing(profile=True) as spent:
        run()
    return spent.db_hits


def raw_db_hits(driver: neo4j.Driver, database: str, statement: LiteralString, **parameters: Any) -> int:
    """The database hits of one statement run through the driver with PROFILE (a write is made)."""
    result = driver.execute_query("PROFILE " + statement, parameters, database_=database)
    return plan_hits(result.summary.profile)


def side_by_side(
    ours: Callable[[], object], baseline: Callable[[], object], *, samples: int, warmup: int = 3, ops: int = 1
) -> tuple[Stats, Stats]:
    """Time ours and the baseline interleaved sample by sample, after ``warmup`` runs of each, so a
    slow minute of the machine (or a cache warming) falls on both; who goes first alternates."""
    for _ in range(warmup):
        ours()
        baseline()
    return side_by_side_each([ours] * samples, [baseline] * samples, ops=ops)


def side_by_side_each(
    ours: list[Callable[[], object]], baseline: list[Callable[[], object]], *, ops: int = 1, warmup: int = 0
) -> tuple[Stats, Stats]:
    """Interleave two lists of one-shot runs (each consuming its own fixture), one of each in turn;
    the first ``warmup`` of each list run first, the same way, and are not measured.

    >>> calls = []
    >>> a, b = side_by_side_each([lambda: calls.append("a")] * 3, [lambda: calls.append("b")] * 3, warmup=1)
    >>> calls, len(a.samples_ms), len(b.samples_ms)
    (['b', 'a', 'a', 'b', 'b', 'a'], 2, 2)
    """
    if len(ours) != len(baseline):
        raise ValueError("side by side needs as many runs of ours as of the baseline")
    if not 0 <= warmup < len(ours):
        raise ValueError("side by side needs a run of each left to measure after its warm-up runs")
    times: tuple[list[float], list[float]] = ([], [])
    for i, pair in enumerate(zip(ours, baseline, strict=True)):
        order = (0, 1) if (i - warmup) % 2 == 0 else (1, 0)
        for which in order:
            start = time.perf_counter()
            pair[which]()
            if i >= warmup:
                times[which].append((time.perf_counter() - start) * 1000)
    return Stats(tuple(times[0]), ops), Stats(tuple(times[1]), ops)


@dataclass
class Breakdown:
    """Where each run of a row went, run by run: ours as the served process's ``Server-Timing``
    header said (``serve --server-timing``), or, in process, as ``graphdb.timing`` counted it; the
    baseline's statements as Neo4j reported them (to the first record, then to the last, whole
    milliseconds). Warm-up runs are recorded too and left out: a row's measured runs are its last.
    """

    ours: list[dict[str, float]] = field(default_factory=list)
    baseline: list[dict[str, float]] = field(default_factory=list)

    def served(self, response: httpx.Response) -> None:
        """Keep what a response's ``Server-Timing`` says.

        >>> b = Breakdown()
        >>> b.served(httpx.Response(200, headers={"server-timing": 'app;dur=4.5, db;dur=2.5;desc="1 transaction and 2 statements", '
        ...                                                           'neo4j;dur=1, commit;dur=0.5'}))
        >>> b.ours
        [{'served_ms': 4.5, 'database_ms': 2.5, 'neo4j_ms': 1.0, 'commit_ms': 0.5, 'transactions': 1.0, 'statements': 2.0}]
        """
        metrics = dict(metric.split(";dur=", 1) for metric in response.headers["server-timing"].split(", "))
        database, _, described = metrics["db"].partition(';desc="')
        transactions, statements = (float(word) for word in described.split() if word.isdigit())
        self.ours.append(
            {
                "served_ms": float(metrics["app"]),
                "database_ms": float(database),
                "neo4j_ms": float(metrics["neo4j"]),
                "commit_ms": float(metrics["commit"]),
                "transactions": transactions,
                "statements": statements,
            }
        )

    def in_process(self, spent: Timing) -> None:
        self.ours.append({key: float(value) for key, value in spent.as_json().items()})

    def raw(self, result: neo4j.EagerResult) -> neo4j.EagerResult:
        """Keep what Neo4j reports the baseline's statement took; the result, as it came."""
        summary = result.summary
        self.baseline.append({"neo4j_ms": float((summary.result_available_after or 0) + (summary.result_consumed_after or 0))})
        return result

    def as_json(self, ours: Stats, baseline: Stats | None = None) -> dict[str, Any]:
        """The median of each part over the measured runs (so the parts need not add up).

        >>> b = Breakdown([{"neo4j_ms": 9.0}, {"neo4j_ms": 1.0}, {"neo4j_ms": 3.0}], [{"neo4j_ms": 2.0}] * 3)
        >>> b.as_json(Stats((1.0, 1.0)), Stats((1.0, 1.0)))
        {'runs': 2, 'ours': {'neo4j_ms': 2.0}, 'baseline': {'neo4j_ms': 2.0}}
        """
        runs = len(ours.samples_ms)
        measured = self.ours[-runs:]
        if len(measured) != runs:
            raise RuntimeError(f"a breakdown of {len(measured)} runs for {runs} measured")
        result: dict[str, Any] = {"runs": runs, "ours": _medians(measured)}
        if baseline is not None and self.baseline:
            result["baseline"] = _medians(self.baseline[-len(baseline.samples_ms) :])
        return result


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}


RESULTS = ("docs/benchmarks.md", "docs/benchmarks", "docs/reliability.md", "docs/reliability")
"""What a run of the benchmarks or of ``make reliability`` writes, relative to the checkout (a
measurement made after the other, in the same checkout, is still of the commit's code)."""


def git_commit(root: str | None = None) -> str:
    """The commit the harness runs from (``root``, by default its own checkout), marked ``+dirty``
    when the working tree has changes other than the results a run writes (a full run made in
    parts writes them between its parts, and ``make reliability`` its own)."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *(f":!{path}" for path in RESULTS)],
            cwd=root,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty.stdout.strip() else "")


def timed_each(runs: list[Callable[[], object]], *, ops: int = 1) -> Stats:
    """Time a list of different one-shot runs (each consumes its own fixture)."""
    samples = []
    for run in runs:
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return Stats(tuple(samples), ops)


@contextmanager
def served_api(neo4j_uri: str, database: str) -> Iterator[str]:
    """``decisiontrail serve`` in its own process on the bench's Neo4j, as users run it, with
    ``--server-timing`` (each response says where its time went: ``Breakdown``; what that costs
    is in our figures).

    Its log goes to a file: a pipe nobody reads fills (64 KB of warnings, or a few tracebacks of
    the records the raw baselines leave half-written) and then blocks the service on its next log
    line, which a benchmark would measure as a hang.
    """
    port = free_port()
    env = {**os.environ, "NEO4J_URI": neo4j_uri, "NEO4J_DATABASE": database}
    env.pop("DECISIONTRAIL_TOKENS_FILE", None)
    env.pop("DECISIONTRAIL_TOKENS", None)
    with tempfile.TemporaryDirectory(prefix="decisiontrail-bench-serve-") as scratch:
        log_path = Path(scratch) / "serve.log"
        argv = [sys.executable, "-m", "decisiontrail.cli", "-q", "serve", "--port", str(port), "--server-timing"]
        with served_process(argv, port, log_path, "decisiontrail serve", env=env) as url:
            yield url


@contextmanager
def served_process(argv: list[str], port: int, log_path: Path, what: str, **popen: Any) -> Iterator[str]:
    """Run ``argv`` (an HTTP server on ``port``, its log into ``log_path``) until the block ends:
    its base URL once its /readyz answers 200 (within 120 s), terminated after (killed if it has
    not stopped within 15 s)."""
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log_file, **popen)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited: {log_path.read_text(errors='replace')[-4000:]}")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not become ready in 120 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def graphql(client: httpx.Client, query: str, /, breakdown: Breakdown | None = None, **variables: Any) -> dict[str, Any]:
    """POST one GraphQL request (its ``Server-Timing`` kept in ``breakdown``); any error stops the
    benchmark, since it would measure a failure."""
    response = client.post("/graphql", json={"query": query, "variables": variables})
    if breakdown is not None:
        breakdown.served(response)
    body: dict[str, Any] = response.json()
    if response.status_code != 200 or body.get("errors"):
        raise RuntimeError(f"GraphQL request failed ({response.status_code}): {body.get('errors')}")
    data: dict[str, Any] = body["data"]
    return data
