"""The offline scenario in a process of its own: load everything, run every rule, export GraphML;
or (``--grouped JOBS``) ``check --all`` group by group in JOBS worker processes; or
(``--export N FILE``) ``export --all`` as GraphML, group by group, in N worker processes, into
FILE (as ``export --all -o FILE`` writes it), for the harness to read back and compare.

Prints one JSON line with the phases' times and the process's peak resident memory, so the
harness reports memory that belongs to this work alone.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

from decisiontrail.checks import run_checks
from decisiontrail.exports import ExportFormat, export
from decisiontrail.checks.model import decisions
from decisiontrail.graphdb.connection import Graph, create_driver
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.access import process


def main(uri: str, database: str) -> None:
    with create_driver(uri, None, None) as driver:
        graph = Graph(driver=driver, database=database, uri=uri)
        start = time.perf_counter()
        G = load_graph(graph, LoadScope.ALL, progress=False)
        loaded = time.perf_counter()
    report = run_checks(G, scope="all")
    checked = time.perf_counter()
    written = 0
    with open("/dev/null", "wb") as sink:  # encoded here, as a text file's writes encode: bytes counted
        for chunk in export(G, ExportFormat.GRAPHML):
            written += sink.write(chunk.encode("utf-8"))
    exported = time.perf_counter()
    print(
        json.dumps(
            {
                "decisions": sum(1 for _ in decisions(G)),
                "rules": len(report.rules),
                "violations": len(report.violations),
                "load_ms": (loaded - start) * 1000,
                "checks_ms": (checked - loaded) * 1000,
                "export_ms": (exported - checked) * 1000,
                "export_bytes": written,
                "peak_rss_mb": peak_mb(),
            }
        )
    )


def grouped(uri: str, database: str, jobs: int) -> None:
    """``check --all`` as the CLI runs it: group by group, in ``jobs`` worker processes; the peak
    memory is the larger of this process's and a worker's."""
    from decisiontrail.services import Trail, analysis

    with create_driver(uri, None, None) as driver:
        graph = Graph(driver=driver, database=database, uri=uri)
        start = time.perf_counter()
        report = analysis.check_all(Trail.on(graph), jobs=jobs, principal=process("bench"))
        checked = time.perf_counter()
    print(
        json.dumps(
            {
                "decisions": report.decisions,
                "rules": len(report.rules),
                "violations": len(report.violations),
                "check_ms": (checked - start) * 1000,
                "peak_rss_mb": peak_mb(with_workers=True),
            }
        )
    )


def exported(uri: str, database: str, jobs: int, out: str) -> None:
    """``export --all -o out`` as the CLI runs it, GraphML written a group of plans at a time, the
    groups' parts made in ``jobs`` worker processes; the peak memory is the larger of this
    process's and a worker's."""
    from decisiontrail.services import Trail, analysis

    with create_driver(uri, None, None) as driver:
        graph = Graph(driver=driver, database=database, uri=uri)
        start = time.perf_counter()
        nodes = 0
        with open(out, "w", encoding="utf-8") as sink:
            for chunk in analysis.export(
                Trail.on(graph), analysis.View.ALL, None, ExportFormat.GRAPHML, jobs=jobs, principal=process("bench")
            ):
                sink.write(chunk)
                nodes += chunk.count(">Decision</data>")  # each decision node's label
        done = time.perf_counter()
        written = os.path.getsize(out)
    print(
        json.dumps(
            {
                "decisions": nodes,
                "export_ms": (done - start) * 1000,
                "export_bytes": written,
                "peak_rss_mb": peak_mb(with_workers=True),
            }
        )
    )


def peak_mb(*, with_workers: bool = False) -> float:
    """This process's peak resident memory in MB since it started (Linux's VmHWM), or with
    ``with_workers`` the larger of it and its finished worker processes'.

    Not getrusage's ru_maxrss for the process itself: Linux carries that across exec from the
    process it was forked from, so a row started by a bench that held a large graph reported the
    bench's memory (a child of a 500 MB process said 510 MB, its VmHWM 9 MB). A worker's
    ru_maxrss (RUSAGE_CHILDREN) carries this process's memory at the fork the same way, which is
    at most this process's peak: the larger of the two is still the largest process's own peak.

    >>> 0 < peak_mb() <= peak_mb(with_workers=True)
    True
    """
    with open("/proc/self/status", encoding="ascii") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))  # kB
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if with_workers else 0  # kB
    return max(own, workers) / 1024


if __name__ == "__main__":
    if len(sys.argv) > 5 and sys.argv[3] == "--export":
        exported(sys.argv[1], sys.argv[2], int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) > 4 and sys.argv[3] == "--grouped":
        grouped(sys.argv[1], sys.argv[2], int(sys.argv[4]))
    else:
        main(sys.argv[1], sys.argv[2])
