"""``python -m reliability``: fuzz, access, load and faults against a Neo4j of the harness's own;
writes docs/reliability.md (``--quick``: every scenario small, its report in build/). Exits 0 when
every guarantee held, 1 when one did not."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bench.harness import git_commit
from bench.report import machine
from decisiontrail.access import Role, TokenRegistry
from decisiontrail.app import create_app
from decisiontrail.checks import run_checks
from decisiontrail.graphdb import Graph, open_graph
from decisiontrail.graphdb.admin import count_graph, delete_all_data, server_version
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.settings import Neo4jSettings
from reliability import access, balanced, combined, disk, events, faults, fuzz, load, report, shed
from reliability.outcome import Outcome
from reliability.serving import served

SCENARIOS = (
    "fuzz",
    "access",
    "load",
    "neo4j_restart",
    "neo4j_crash",
    "service_kill",
    "events_replicas",
    "replicas_nginx",
    "shed_load",
    "correction_crash",
    "otlp_service_kill",
    "lost_batch",
    "disk_full",
    "slow_neo4j",
)


@dataclass(frozen=True)
class Sizes:
    """How big a run is: fuzzing requests, seconds of each load (shed load's steps and the events
    scenario follow it), concurrent load clients."""

    examples: int
    seconds: float
    clients: int


FULL = Sizes(examples=2000, seconds=60.0, clients=8)
"""The sizes of the figures of record (docs/reliability.md): about ten minutes on 2 cores."""
QUICK = Sizes(examples=200, seconds=10.0, clients=4)
"""The sizes CI runs on every landing (``--quick``): every scenario, about 13 minutes on 2 cores."""
QUICK_REPORT = Path(__file__).parents[1] / "build" / "reliability-quick"


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    out: Path | None = args.out
    chosen = args.only or list(SCENARIOS)

    started = time.monotonic()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="decisiontrail-reliability-") as name:
        scratch = Path(name)
        settings = Neo4jSettings.from_env()
        if settings.uri is None:
            settings = replace(settings, data_dir=scratch / "neo4j", bolt_port=0, heap_mb=1024, pagecache_mb=256)
        with open_graph(settings, progress=_say) as graph:
            if count_graph(graph).nodes and not args.wipe:
                _say(f"{graph.uri} holds data; the harness needs an empty database (pass --wipe to delete it)")
                return 2
            delete_all_data(graph)
            versions = {"python": sys.version.split()[0], "neo4j": server_version(graph), **_versions()}
            token_file = scratch / "tokens.json"
            tokens = access.issue_tokens(token_file)
            admin = next(tokens[c.key] for c in access.CALLERS if c.role is Role.ADMIN and c.project is None)
            app = create_app(
                graph=graph, tokens=TokenRegistry.load(token_file), runtime_workers=0
            )  # runs stay queued: the matrix judges what each request changed
            with served(app) as url:
                shared: list[tuple[str, Callable[[], Outcome]]] = [
                    ("fuzz", lambda: fuzz.run(url, graph, examples=args.examples, seed=args.seed, token=admin, progress=_say)),
                    ("access", lambda: access.run(url, graph, tokens, progress=_say)),
                    (
                        "load",
                        lambda: load.run(
                            url,
                            graph,
                            seconds=args.seconds,
                            clients=args.clients,
                            out=scratch / "load.jsonl",
                            token=admin,
                            seed=args.seed,
                        ),
                    ),
                ]
                for scenario, run in shared:
                    if scenario in chosen:
                        outcomes.append(_checked(scenario, run, graph))
        # The fault scenarios bring their own Neo4j and service processes, to stop and kill.
        if "neo4j_restart" in chosen:
            outcomes.append(
                _checked(
                    "neo4j_restart",
                    lambda: faults.neo4j_restart(
                        scratch / "neo4j-restart",
                        seconds=args.seconds,
                        clients=args.clients,
                        seed=args.seed,
                        progress=_say,
                    ),
                )
            )
        if "neo4j_crash" in chosen:
            outcomes.append(
                _checked(
                    "neo4j_crash",
                    lambda: faults.neo4j_restart(
                        scratch / "neo4j-crash",
                        seconds=args.seconds,
                        clients=args.clients,
                        seed=args.seed,
                        crash=True,
                        progress=_say,
                    ),
                )
            )
        if "service_kill" in chosen:
            outcomes.append(
                _checked(
                    "service_kill",
                    lambda: faults.service_kill(
                        scratch / "service-kill",
                        seconds=args.seconds,
                        clients=args.clients,
                        seed=args.seed,
                        progress=_say,
                    ),
                )
            )

        if "events_replicas" in chosen:
            outcomes.append(
                _checked(
                    "events_replicas",
                    lambda: events.replicas(scratch / "events-replicas", seconds=args.seconds / 2, seed=args.seed, progress=_say),
                )
            )
        if "replicas_nginx" in chosen:  # docs/deployment.md's recipe: two replicas behind nginx, their own Neo4j
            outcomes.append(
                _checked(
                    "replicas_nginx",
                    lambda: balanced.replicas_behind_nginx(
                        scratch / "replicas-nginx",
                        seconds=args.seconds,
                        clients=max(2, args.clients // 2),
                        seed=args.seed,
                        progress=_say,
                    ),
                )
            )
        if "shed_load" in chosen:  # its own Neo4j and service; it runs every check on that database itself
            outcomes.append(
                _checked(
                    "shed_load",
                    lambda: shed.shed_load(
                        scratch / "shed-load",
                        step_seconds=max(5.0, args.seconds / len(shed.STEPS)),
                        seed=args.seed,
                        progress=_say,
                    ),
                )
            )

        # Two faults at once, each aimed by a proxy at the moment it hurts most (reliability/combined.py).
        for name, combination in combined.SCENARIOS.items():
            if name in chosen:
                outcomes.append(
                    _checked(
                        name,
                        partial(
                            combination,
                            scratch / name.replace("_", "-"),
                            seconds=args.seconds,
                            clients=args.clients,
                            seed=args.seed,
                            progress=_say,
                        ),
                    )
                )
        if "disk_full" in chosen:  # Neo4j's data on a small filesystem, filled under load (root: it mounts a tmpfs)
            outcomes.append(
                _checked(
                    "disk_full",
                    lambda: disk.disk_full(
                        scratch / "disk-full", seconds=args.seconds, clients=args.clients, seed=args.seed, progress=_say
                    ),
                )
            )
        if "slow_neo4j" in chosen:  # Neo4j behind a latency proxy, the service shedding what it cannot serve
            outcomes.append(
                _checked(
                    "slow_neo4j",
                    lambda: shed.slow_neo4j(
                        scratch / "slow-neo4j", step_seconds=max(5.0, args.seconds / 2), seed=args.seed, progress=_say
                    ),
                )
            )
        if not all(o.passed for o in outcomes):  # the scratch goes with the run: what a failure needs, kept
            _say(f"the failed scenarios' logs and journals: {_keep_logs(scratch, [o.name for o in outcomes if not o.passed])}")

    run_result = {
        **({"quick": True} if args.quick else {}),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(),
        "machine": machine(),
        "versions": versions,
        "settings": {"examples": args.examples, "load seconds": args.seconds, "clients": args.clients, "seed": args.seed},
        "seconds": time.monotonic() - started,
        "outcomes": [o.as_json() for o in outcomes],
    }
    print(report.render(run_result))
    if not args.no_write:
        page, results = report.write(run_result, out)
        _say(f"wrote {page} and {results}")
    failed = [o.name for o in outcomes if not o.passed]
    if failed:
        _say("guarantees failed in: " + ", ".join(failed))
    return 1 if failed else 0


def options(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, sizes filled in: the full run's, or ``--quick``'s, each unless given; ``out``
    is the directory the report goes to (None: docs/, merged with the saved run).

    >>> quick = options(["--quick", "--seconds", "5"])
    >>> (quick.examples, quick.seconds, quick.clients, quick.out == QUICK_REPORT)
    (200, 5.0, 4, True)
    >>> full = options([])
    >>> (full.examples, full.seconds, full.clients, full.out)
    (2000, 60.0, 8, None)
    """
    parser = argparse.ArgumentParser(
        prog="python -m reliability",
        description=(
            "Fuzz the API, try every operation with every role, load it, stop Neo4j and kill the service "
            "under load, serve live events from two processes on one Neo4j, run two replicas behind nginx and "
            "kill one, inject two faults at once, fill Neo4j's disk and slow Neo4j down; check after each scenario that "
            "nothing acknowledged was lost or duplicated and that the database is valid. Writes "
            "docs/reliability.md and docs/reliability/results.json (the figures of record). With --quick, "
            "every scenario runs at a small size, as CI runs it on every landing (about 13 minutes), and the "
            "report goes to build/reliability-quick/ (or --out), never to docs/. Exits 1 if any guarantee "
            "failed, quick or not."
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=(
            f"every scenario at a small size ({QUICK.examples} fuzzing requests, {QUICK.seconds:.0f} s of load per "
            f"scenario, {QUICK.clients} clients unless given): what CI runs after make test; writes its report to "
            f"build/reliability-quick/ (or --out), never docs/reliability*"
        ),
    )
    parser.add_argument(
        "--examples", type=int, help=f"fuzzing requests to generate (default: {FULL.examples}, --quick {QUICK.examples})"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        help=f"how long each load runs (default: {FULL.seconds:.0f}, --quick {QUICK.seconds:.0f})",
    )
    parser.add_argument("--clients", type=int, help=f"concurrent load clients (default: {FULL.clients}, --quick {QUICK.clients})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fuzzing and the load (default: 0)")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, help="run only these scenarios")
    parser.add_argument(
        "--out",
        type=Path,
        help="write reliability.md and results.json into this directory, the run alone (default: docs/, merged "
        "with the saved run when --only; with --quick, build/reliability-quick/)",
    )
    parser.add_argument("--no-write", action="store_true", help="print the report, write no file")
    parser.add_argument(
        "--wipe",
        action="store_true",
        help="with NEO4J_URI set: delete everything in that database first (without it, a non-empty database is refused)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    args.examples = sizes.examples if args.examples is None else args.examples
    args.seconds = sizes.seconds if args.seconds is None else args.seconds
    args.clients = sizes.clients if args.clients is None else args.clients
    args.out = args.out or (QUICK_REPORT if args.quick else None)
    return args


def _checked(name: str, run: Callable[[], Outcome], graph: Graph | None = None) -> Outcome:
    """Run one scenario; a crash of the scenario itself is a failed outcome, not a lost report.
    On the shared database, every check rule runs afterwards: zero violations is required."""
    _say(f"{name}: starting")
    started = time.monotonic()
    try:
        outcome = run()
    except Exception as e:  # noqa: BLE001 - the report must say what broke, and the run go on
        outcome = Outcome(name, "the scenario did not finish")
        outcome.require(False, f"the scenario raised {type(e).__name__}: {e}")
    if graph is not None:
        checks = run_checks(load_graph(graph, LoadScope.ALL, progress=False), scope="the whole database")
        outcome.figures["violations after (check --all)"] = len(checks.violations)
        outcome.require(checks.ok, f"check --all after {name}: {checks.render()}")
    outcome.seconds = outcome.seconds or time.monotonic() - started
    _say(f"{name}: {'passed' if outcome.passed else 'FAILED: ' + '; '.join(outcome.failures)}")
    return outcome


FAILED_LOGS = Path(__file__).parents[1] / "build" / "reliability-failed"


def _keep_logs(scratch: Path, names: list[str]) -> Path:
    """Copy the logs (the service's, Neo4j's) and journals of the failed scenarios out of the run's
    scratch directory into build/reliability-failed/<scenario>/, before the scratch is deleted."""
    for name in names:
        found = scratch / name.replace("_", "-")
        kept = FAILED_LOGS / name
        if not found.is_dir():
            continue
        shutil.rmtree(kept, ignore_errors=True)
        for path in found.rglob("*"):
            if path.is_file() and (path.suffix in (".log", ".jsonl") or path.name == "debug.log"):
                target = kept / path.relative_to(found)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    return FAILED_LOGS


def _versions() -> dict[str, str]:
    found = {}
    for package in ("decisiontrail", "neo4j", "strawberry-graphql", "hypothesis", "hypothesis-graphql", "uvicorn", "httpx"):
        try:
            found[package if package != "neo4j" else "neo4j driver"] = version(package)
        except PackageNotFoundError:
            pass
    return found


def _say(message: str) -> None:
    print(f"reliability: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
