"""The offline scenarios: ``check --all`` and ``export --all`` as a user runs them (the command
line in a process of its own, and its worker processes), and the whole database loaded as one
graph, against the driver streaming the same rows in a process of its own.

Both sides are timed the same way, as whole processes: from the parent's spawn of the process
to its exit, as the parent sees it (``run_measured``), so each pays its interpreter's start, its
imports and its connection. Their memory is measured from outside, over the process and every
process it starts (``ProcessTree``): ``peak_rss_mb_summed`` is the sum over those processes of
each one's own peak resident memory (``VmHWM``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.exports import Exports
from bench.harness import Row, Stats, side_by_side_each
from decisiontrail.cypher import query
from decisiontrail.graphdb import Graph

BASELINE = "the driver streaming the same rows (a process of its own)"

POLL_SECONDS = 0.02
"""How often ``ProcessTree`` reads its processes' memory."""

SCAN_EVERY = 5
"""Every this many readings, ``ProcessTree`` looks through /proc for processes started since."""

NOTE = (
    "Times: each side's whole process, from its spawn to its exit as the bench saw it (the interpreter's start, "
    "imports and connection included). peak_rss_mb_summed: the sum over the command's processes (itself, its "
    "workers, multiprocessing's resource tracker) of each one's own peak resident memory (VmHWM, read from /proc "
    f"every {POLL_SECONDS * 1000:.0f} ms), an upper bound of what they held at once (pages they share counted in "
    "each); peak_rss_mb_each: each one's, largest first; peak_rss_mb_largest: the largest. Of a row's runs, the one "
    "whose sum was the largest. baseline_peak_rss_mb_summed: the stream's process's, the largest of its runs."
)


def offline(graph: Graph, decisions: int, progress: Callable[[str], None]) -> Row:
    """Load the whole database, run every rule and write one export, in a process of its own
    (``bench.offline``), against the stream of the same rows in a process of its own. The total
    is that whole process's time, spawn to exit; the phases (``load_ms``, ``checks_ms``,
    ``export_ms``) are timed inside it, so they leave out its start and imports. For reference
    (the whole database as one graph): the targets are the group-by-group rows'."""
    progress(f"offline: load + all checks + GraphML export of {decisions:,} decisions (a process of its own)")
    run = run_measured([sys.executable, "-m", "bench.offline", graph.uri, graph.database])
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    if result["decisions"] != decisions:
        raise RuntimeError(f"the graph loaded whole held {result['decisions']:,} decisions, the workload has {decisions:,}")
    stream = _stream_process(graph, decisions)
    return Row(
        "offline",
        f"{result['decisions']:,} decisions as one graph: load, {result['rules']} rules, GraphML export",
        Stats((run.wall_ms,), decisions),
        Stats((stream.wall_ms,), decisions),
        BASELINE,
        note=NOTE + " The phases (load_ms, checks_ms, export_ms) are timed inside the process.",
        extra={k: result[k] for k in ("load_ms", "checks_ms", "export_ms", "violations")}
        | run.memory()
        | {"baseline_peak_rss_mb_summed": stream.summed_mb},
    )


def offline_grouped(
    graph: Graph, decisions: int, progress: Callable[[str], None], *, jobs: tuple[int, ...] = (1, 2), repeat: int = 1
) -> list[Row]:
    """``decisiontrail check --all --jobs N`` (group by group) for each N of ``jobs``, and ``export
    --all --format graphml --output FILE --jobs N`` likewise, each as a user runs it (``python -m
    decisiontrail.cli``, a process of its own), against the driver streaming the same rows in a
    process of its own (``bench.stream``): ``repeat`` runs each way, interleaved (who goes first
    alternates), after a warm-up run of each when ``repeat`` is above 1. Each run's count of
    decisions, as the command reported it (``check``'s JSON report; ``export``'s document), must
    be the workload's. The first export is read back and compared with the database in full, and
    every other run's document with it, byte for byte (``Exports``)."""
    runs: list[tuple[str, str, int]] = [(f"check --all group by group, --jobs {n}", "check", n) for n in jobs]
    runs += [("export --all group by group, GraphML" + (f", --jobs {n}" if n > 1 else ""), "export", n) for n in jobs]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-export-") as scratch:
        exports = Exports(graph, Path(scratch), progress)
        for case, command, n in runs:
            progress(f"offline: {case}, {decisions:,} decisions, {repeat} run(s) each way")
            ours, raw, extra = _offline_runs(graph, decisions, case, command, n, repeat, exports)
            target, met = _offline_target(decisions, ours, raw, extra["peak_rss_mb_summed"])
            rows.append(
                Row(
                    "offline",
                    f"{decisions:,} decisions: {case}",
                    ours,
                    raw,
                    BASELINE,
                    target=target,
                    met=met,
                    note=NOTE,
                    extra=extra | ({"compared": exports.COMPARED} if command == "export" else {}),
                )
            )
    return rows


def _offline_runs(
    graph: Graph, decisions: int, case: str, command: str, jobs: int, repeat: int, exports: Exports
) -> tuple[Stats, Stats, dict[str, Any]]:
    """``repeat`` runs of the command and of the stream, each a whole process timed from spawn
    to exit (``run_measured``), interleaved as every scenario's (``side_by_side_each``, whose own
    timings, which would add the bench's checks after a run, are not used), after a warm-up run
    of each when ``repeat`` is above 1; an export's document checked by ``exports`` after its
    run. Ours' and the stream's timings, and the row's extras: the memory of the run whose summed
    peak was the largest, and the stream's largest."""
    ours: list[Measured] = []
    raws: list[Measured] = []
    results: list[dict[str, Any]] = []

    def ours_once() -> None:
        out = exports.path()
        if command == "check":
            run = _cli("check", "--all", "--format", "json", "--jobs", str(jobs), graph=graph, exit_codes=(0, 1))
            report = json.loads(run.stdout)
            if run.returncode != (0 if report["ok"] else 1):
                raise RuntimeError(f"{case} exited {run.returncode} with a report that says ok={report['ok']}")
            counted, result = report["decisions"], {"rules": len(report["rules"]), "violations": len(report["violations"])}
        else:
            run = _cli("export", "--all", "--format", "graphml", "--output", str(out), "--jobs", str(jobs), graph=graph)
            result = {"export_bytes": out.stat().st_size}
            exports.check(out)  # the first run's document compared with the database, any other with it
            assert exports.first is not None
            counted = exports.first.decisions  # the decisions in the document, every run's the same
        if counted != decisions:
            raise RuntimeError(f"{case} counted {counted:,} decisions, the workload has {decisions:,}")
        ours.append(run)
        results.append(result)

    def raw_once() -> None:
        raws.append(_stream_process(graph, decisions))

    if repeat > 1:
        ours_once()
        raw_once()
        ours.clear()
        raws.clear()
        results.clear()
    side_by_side_each([ours_once] * repeat, [raw_once] * repeat, ops=decisions)
    extra = {
        **results[-1],
        **max(ours, key=lambda run: run.summed_mb).memory(),
        "baseline_peak_rss_mb_summed": max(run.summed_mb for run in raws),
    }
    return Stats(tuple(run.wall_ms for run in ours), decisions), Stats(tuple(run.wall_ms for run in raws), decisions), extra


def _offline_target(decisions: int, ours: Stats, raw: Stats, summed_mb: float) -> tuple[str, bool]:
    """The issue's offline targets, each command timed whole against the stream timed whole: at
    most 2x the stream at every size; and the peak memory summed over the command's processes
    (``peak_rss_mb_summed``) within 2 GB at 1M decisions and 8 GB at 10M (the workloads are sized
    to within a plan of those).

    >>> _offline_target(10_000_000, Stats((150.0,)), Stats((100.0,)), 8000.0)
    ('<= 2x; peak memory summed over processes <= 8 GB at 10M decisions', True)
    >>> _offline_target(1_000_000, Stats((150.0,)), Stats((100.0,)), 2100.0)
    ('<= 2x; peak memory summed over processes <= 2 GB at 1M decisions', False)
    >>> _offline_target(10_000, Stats((250.0,)), Stats((100.0,)), 100.0)
    ('<= 2x', False)
    """
    in_time = ours.p50_ms <= 2 * raw.p50_ms
    if decisions >= 9_900_000:
        return "<= 2x; peak memory summed over processes <= 8 GB at 10M decisions", in_time and summed_mb <= 8192
    if decisions >= 990_000:
        return "<= 2x; peak memory summed over processes <= 2 GB at 1M decisions", in_time and summed_mb <= 2048
    return "<= 2x", in_time


def _cli(*args: str, graph: Graph, exit_codes: tuple[int, ...] = (0,)) -> Measured:
    """``python -m decisiontrail.cli -q ARGS`` on the bench's database (``NEO4J_URI``, as a user
    points it at a server), measured whole."""
    env = {**os.environ, "NEO4J_URI": graph.uri, "NEO4J_DATABASE": graph.database}
    return run_measured([sys.executable, "-m", "decisiontrail.cli", "-q", *args], env=env, exit_codes=exit_codes)


def _stream_process(graph: Graph, decisions: int) -> Measured:
    """The baseline: ``python -m bench.stream``, the driver streaming every decision's row in a
    process of its own, measured whole; the decisions it read must be the workload's."""
    env = {**os.environ, "NEO4J_URI": graph.uri, "NEO4J_DATABASE": graph.database}
    run = run_measured([sys.executable, "-m", "bench.stream", query("graph/all_plan_ids"), query("graph/decision_rows")], env=env)
    if int(run.stdout) != decisions:
        raise RuntimeError(f"the stream read {int(run.stdout):,} decisions, the workload has {decisions:,}")
    return run


@dataclass(frozen=True)
class Measured:
    """A finished process: its time from spawn to exit, its output, and each of its processes'
    peak resident memory (``ProcessTree``)."""

    wall_ms: float
    returncode: int
    stdout: str
    peaks_kb: Mapping[int, int]
    """Each process's peak resident memory (VmHWM, kB), by process id: the process started and every
    process started under it, as far as ``ProcessTree`` saw them."""

    @property
    def summed_mb(self) -> float:
        """The sum over the processes of each one's own peak: at least what they held at once."""
        return sum(self.peaks_kb.values()) / 1024

    @property
    def largest_mb(self) -> float:
        return max(self.peaks_kb.values(), default=0) / 1024

    def memory(self) -> dict[str, Any]:
        """A row's extras: ``peak_rss_mb_summed``, ``peak_rss_mb_largest`` (the largest process's own
        peak) and ``peak_rss_mb_each`` (each process's, largest first).

        >>> Measured(1.0, 0, "", {7: 2048, 8: 1024, 9: 512}).memory()
        {'peak_rss_mb_summed': 3.5, 'peak_rss_mb_largest': 2.0, 'peak_rss_mb_each': [2.0, 1.0, 0.5]}
        """
        each = [round(kb / 1024, 1) for kb in sorted(self.peaks_kb.values(), reverse=True)]
        return {"peak_rss_mb_summed": self.summed_mb, "peak_rss_mb_largest": self.largest_mb, "peak_rss_mb_each": each}


def run_measured(argv: list[str], *, env: Mapping[str, str] | None = None, exit_codes: tuple[int, ...] = (0,)) -> Measured:
    """Run ``argv`` to its end, timed from just before its spawn to its exit as this process sees
    it (``wait``), its memory and its descendants' read meanwhile by a thread (``ProcessTree``);
    its output is kept in files (a pipe nobody reads while it runs could fill and stall it).
    RuntimeError, with the end of its standard error, if it exits otherwise than ``exit_codes``.

    >>> run = run_measured([sys.executable, "-c", "print(6 * 7)"])
    >>> run.stdout, run.wall_ms > 0, run.summed_mb >= run.largest_mb > 0
    ('42\\n', True, True)
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        tree = ProcessTree(process.pid)
        watcher = threading.Thread(target=tree.watch, name="bench-process-tree", daemon=True)
        watcher.start()
        try:
            returncode = process.wait()
            wall_ms = (time.perf_counter() - start) * 1000
        finally:
            tree.stop()
            watcher.join()
            if process.poll() is None:
                process.kill()
                process.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8"), err.read().decode("utf-8", errors="replace")
    if returncode not in exit_codes:
        raise RuntimeError(f"{' '.join(argv[:6])} ... exited {returncode}: {stderr[-4000:]}")
    return Measured(wall_ms, returncode, stdout, dict(tree.peaks_kb))


class ProcessTree:
    """A process and every process started under it (children, theirs, ...), each one's peak
    resident memory read from outside (from /proc; psutil is not installed): ``/proc/PID/status``'s ``VmHWM`` (the high-water mark of
    its resident set, which Linux resets at exec, so a worker started by ``spawn`` holds its own
    alone) every ``POLL_SECONDS``, /proc looked through for new processes every ``SCAN_EVERY``
    readings. Each process's last reading before it exits is kept: growth in its last
    ``POLL_SECONDS`` is missed, and a process living less than ``SCAN_EVERY`` readings may be
    missed whole (a ``spawn`` worker lives as long as its pool).

    >>> tree = ProcessTree(os.getpid())
    >>> tree.read()
    >>> tree.peaks_kb[os.getpid()] > 0
    True
    """

    def __init__(self, root: int) -> None:
        self.pids = {root}
        self.peaks_kb: dict[int, int] = {}
        self._stopped = threading.Event()

    def watch(self) -> None:
        """Read until ``stop``, then once more."""
        readings = 0
        while True:
            if readings % SCAN_EVERY == 0:
                self.scan()
            self.read()
            readings += 1
            if self._stopped.wait(POLL_SECONDS):
                break

    def stop(self) -> None:
        self._stopped.set()

    def scan(self) -> None:
        """Add the processes whose parent is in the tree (theirs too), as /proc lists them now."""
        parents: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    # "PID (COMM) STATE PPID ...", where COMM may hold ")" itself.
                    parents[int(entry.name)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone since listed
        grown = True
        while grown:
            found = {pid for pid, parent in parents.items() if parent in self.pids and pid not in self.pids}
            self.pids |= found
            grown = bool(found)

    def read(self) -> None:
        """Each process's VmHWM now, in place of the one read before: it only grows, but from
        the exec that starts a process's program (until then the process holds a copy of its
        parent's memory, and its parent's high-water mark); a process gone (or a zombie, its
        memory freed) is read no more."""
        for pid in list(self.pids):
            try:
                with open(f"/proc/{pid}/status", "rb") as status:
                    hwm = next((int(line.split()[1]) for line in status if line.startswith(b"VmHWM:")), None)  # kB
            except (OSError, ValueError):
                hwm = None
            if hwm is None:
                self.pids.discard(pid)
                continue
            self.peaks_kb[pid] = hwm  # the last: a reading before its exec was of its parent's memory
