"""``python -m bench [--full]``: every scenario, side by side with its baseline; see docs/benchmarks.md."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bench import corrections, events, offline_rows, recording, report, tree, walks
from bench.harness import Row, git_commit, served_api
from bench.scenarios import FULL, QUICK, Sizes
from decisiontrail.graphdb import Graph, open_graph
from decisiontrail.graphdb.admin import count_graph, delete_all_data, server_version
from decisiontrail.settings import Neo4jSettings

SCENARIOS = ("offline", "recording", "correction", "lineage", "tree", "events", "explorer", "runtime")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Run the benchmark scenarios against a Neo4j of their own and write docs/benchmarks.md.",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="the whole range of sizes (up to 1M decisions, and 10M for the offline checks and export; two hours or more)",
    )
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, help="run only these scenarios")
    parser.add_argument(
        "--largest",
        type=int,
        metavar="DECISIONS",
        help="leave out the workloads and corrections larger than this many decisions; the earlier results of "
        "the rows left out stay on the page (--full --only offline --largest 1000000 runs the offline rows "
        "up to 1M and keeps the 10M rows of the run before)",
    )
    parser.add_argument("--no-write", action="store_true", help="print the table, do not write docs/benchmarks*")
    parser.add_argument(
        "--wipe",
        action="store_true",
        help="with NEO4J_URI set: delete everything in that database first (without it, a non-empty database is refused)",
    )
    args = parser.parse_args(argv)
    sizes = FULL if args.full else QUICK
    if args.largest is not None:
        if args.largest < 1:
            parser.error(f"--largest: a number of decisions, at least 1, not {args.largest}")
        sizes = sizes.up_to(args.largest)
    chosen = args.only or list(SCENARIOS)

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="decisiontrail-bench-") as scratch:
        settings = _settings(Path(scratch), full=args.full)
        with open_graph(settings, progress=_say) as graph:
            if count_graph(graph).nodes and not args.wipe:
                _say(f"{graph.uri} holds data; the benchmark needs an empty database (pass --wipe to delete it)")
                return 2
            delete_all_data(graph)
            rows, workload = _run(graph, sizes, chosen)
            result = {
                "sizes": sizes.name,
                "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "commit": git_commit(),
                "machine": report.machine(),
                "versions": _versions(graph, "tree" in chosen),
                "workload": workload,
                "scenarios": chosen,
                **({"largest": args.largest} if args.largest is not None else {}),
                "seconds": time.monotonic() - started,
                "rows": [row.as_json() for row in rows],
                "misses": [_miss(row, sizes.name) for row in rows if row.met is False or (row.met is None and row.target)],
            }
    print(report.render([result]))
    if not args.no_write:
        _say(f"wrote {report.write(result)} and {report.MARKDOWN}")
    return 0


def _run(graph: Graph, sizes: Sizes, chosen: list[str]) -> tuple[list[Row], str]:
    from bench.workload import LoadResult, WorkloadSpec, load

    rows: list[Row] = []
    samples: dict[str, str] = {}
    described = []

    def load_workload(decisions: int) -> LoadResult:
        spec = WorkloadSpec.sized(decisions)
        _say(f"workload: generating and loading {spec.total_decisions:,} decisions")
        loaded = load(graph, spec, progress=_progress("loading"))
        described.append(f"{loaded.decisions:,} decisions in {loaded.plans:,} plans ({spec}), loaded in {loaded.seconds:.0f} s")
        return loaded

    for i, decisions in enumerate(sizes.offline):
        loaded = load_workload(decisions)
        samples = {"lineage": loaded.deep_decision_id, "impact": loaded.top_decision_id}
        if "offline" in chosen:
            rows.append(offline_rows.offline(graph, loaded.decisions, _say))
            rows += offline_rows.offline_grouped(graph, loaded.decisions, _say, repeat=sizes.offline_repeat)
        if i < len(sizes.offline) - 1:
            delete_all_data(graph)
    with served_api(graph.uri, graph.database) as api:
        if "recording" in chosen:
            rows += recording.recording(graph, api, sizes, _say)
        if "lineage" in chosen:
            rows += walks.lineage_and_impact(graph, api, sizes, samples, _say)
        if "correction" in chosen:
            rows += corrections.correction(graph, api, sizes, _say)
        if "tree" in chosen:
            rows += tree.nested_tree(graph, api, sizes, _say)
        if "events" in chosen:
            rows += events.live_events(api, sizes, _say)
        if "explorer" in chosen:
            from bench.explorer import explorer

            rows += explorer(graph, api, sizes, _say)
        if "runtime" in chosen:
            from bench.runtime import runtime

            rows += runtime(graph, api, sizes, _say)
    for decisions in sizes.offline_by_group if "offline" in chosen else ():
        # Last, on a database of its own: too many decisions to load whole, and the other scenarios ran above.
        delete_all_data(graph)
        loaded = load_workload(decisions)
        rows += offline_rows.offline_grouped(graph, loaded.decisions, _say, jobs=(1,))
    return rows, "; ".join(described)


def _settings(scratch: Path, *, full: bool) -> Neo4jSettings:
    settings = Neo4jSettings.from_env()
    if settings.uri is not None:
        return settings
    # An embedded Neo4j of the benchmark's own, in a scratch directory, with room for the full sizes.
    return replace(
        settings,
        data_dir=scratch / "neo4j",
        bolt_port=0,
        heap_mb=4096 if full else 2048,
        pagecache_mb=2048 if full else 512,
        tx_memory_mb=0,  # no per-transaction cap: the full sizes correct a downstream of 100,000 in one transaction
    )


def _versions(graph: Graph, with_peer: bool) -> dict[str, str]:
    found = {"python": sys.version.split()[0], "neo4j": server_version(graph)}
    for package in ("decisiontrail", "neo4j", "neo4j-rust-ext", "strawberry-graphql", "networkx", "uvicorn"):
        try:
            found[package if package != "neo4j" else "neo4j driver"] = version(package)
        except PackageNotFoundError:
            pass
    if with_peer:
        from bench import peer

        found.update(peer.versions())
    return found


def _miss(row: Row, sizes: str) -> str:
    """A target missed (or too close to call), with its profile: the ratio's interval, Neo4j's db
    hits of both sides and where ours' time went, as the row recorded them."""
    data = row.as_json()
    ratio = f" {row.ratio:.2f}x" if row.ratio is not None else ""
    interval = f" (95% interval {row.interval[0]:.2f}-{row.interval[1]:.2f})" if row.interval else ""
    verdict = "too close to call: " if row.met is None else ""
    profile = []
    if hits := row.extra.get("db_hits"):
        theirs = f" against the anchor's statement's {hits['baseline']:,}" if "baseline" in hits else ""
        profile.append(f"db hits {hits['ours']:,}{theirs}")
    if "breakdown" in row.extra:
        profile.append(report.cite_time([{"sizes": sizes, "rows": [data]}], sizes, row.scenario, row.case))
    return f"{verdict}{row.scenario}, {row.case}: target {row.target}, measured {row.ours.p50_ms:.1f} ms p50{ratio}{interval}" + (
        f"; {'; '.join(profile)}" if profile else ""
    )


def _say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _progress(what: str) -> Callable[[int, int], None]:
    last = [0.0]

    def report_progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] > 5 or done >= total:
            last[0] = now
            _say(f"{what}: {done:,}/{total:,}")

    return report_progress


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
