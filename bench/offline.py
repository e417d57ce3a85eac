"""The offline reference row (the whole database as one graph) in a process of its own: load
everything, run every rule, export GraphML.

Prints one JSON line with the phases' times, taken inside this process (``load_ms`` from the
connection open to the graph loaded, then ``checks_ms`` and ``export_ms``), for the row's
breakdown. The row's total is not their sum: the harness times this whole process from its
spawn to its exit (the interpreter's start, the imports and the connection included) and
measures its memory from outside (``bench.offline_rows``).
"""

from __future__ import annotations

import json
import sys
import time

from decisiontrail.checks import run_checks
from decisiontrail.checks.model import decisions
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.exports import ExportFormat, export
from decisiontrail.graphdb.connection import Graph, create_driver
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
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
