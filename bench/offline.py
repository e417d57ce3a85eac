"""The offline scenario in a process of its own: load everything, run every rule, export GraphML.

Prints one JSON line with the phases' times and the process's peak resident memory, so the
harness reports memory that belongs to this work alone.
"""

from __future__ import annotations

import json
import resource
import sys
import time

from decisiontrail.checks import run_checks
from decisiontrail.checks.export import ExportFormat, export
from decisiontrail.checks.model import decisions
from decisiontrail.graphdb.connection import Graph, create_driver
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph


def main(uri: str, database: str) -> None:
    with create_driver(uri, None, None) as driver:
        graph = Graph(driver=driver, database=database, uri=uri)
        start = time.perf_counter()
        G = load_graph(graph, LoadScope.ALL, progress=False)
        loaded = time.perf_counter()
    report = run_checks(G, scope="all")
    checked = time.perf_counter()
    written = 0
    with open("/dev/null", "w", encoding="utf-8") as sink:
        for chunk in export(G, ExportFormat.GRAPHML):
            written += sink.write(chunk)
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
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
