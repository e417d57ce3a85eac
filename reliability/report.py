"""docs/reliability.md, written from a run's outcomes (and the JSON beside it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parents[1] / "docs" / "reliability" / "results.json"
MARKDOWN = Path(__file__).parents[1] / "docs" / "reliability.md"

INTRO = """\
# Reliability

Written by the harness in `reliability/` (`make reliability`, about ten minutes), never by hand.
Every figure below comes from that run: the harness fuzzes the API, loads it, stops Neo4j and
kills the service under load, injects two faults at once, slows Neo4j down, tries every
operation with every role, and after each scenario
loads the whole database into networkx and runs every `decisiontrail check` rule. The raw results
are in `docs/reliability/results.json`; each scenario below names the git commit its figures were
measured at. A run of some scenarios (`python -m reliability --only load`) replaces those and keeps
the others, each with its own date and commit.

CI checks the same guarantees on every landing: after `make test`, `.ci/run` runs
`make reliability-quick` (`python -m reliability --quick`: every scenario at a small size, about
13 minutes on 2 cores and bounded at 20), and a guarantee that does not hold there fails CI. Run it yourself with
`make reliability-quick`. It writes its report to `build/reliability-quick/`, never to this page:
the figures here stay the full run's, from the commits named. The quick part of each scenario also
runs in `make test` (`tests/test_fuzz.py`, `tests/test_reliability_load.py`,
`tests/test_access_matrix.py`).
"""

QUICK_INTRO = """\
# Reliability: a quick run

Written by `make reliability-quick` (`python -m reliability --quick`), as CI runs it on every
landing: every scenario of the harness in `reliability/` at a small size (the settings below).
It says whether every guarantee held at this commit; the figures of record, at full size, are the
full run's (`make reliability`) in docs/reliability.md.
"""

NOTES = """\
## What each scenario guarantees

- **fuzz**: documents generated from the API's own schema by hypothesis-graphql, with valid and
  invalid values, oversized strings, deep nesting, unicode and malformed ids, plus Cypher-looking
  strings recorded and read back, and `decisionEvents` subscriptions over WebSocket (odd ids,
  cursors and selections, messages that break the protocol; closing as the server's own failure
  counts as one). No answer is a 5xx, every error carries one of the API's codes
  or is GraphQL's own validation error, no request meets an internal error (its text never
  reaches a client, and a masked one still fails the run: it is a bug), Cypher-looking
  strings come back byte for byte, and the database is valid afterwards.
- **access**: every query and mutation of the schema and every export endpoint, tried by every
  role, by no token and a bad token, and by project-scoped tokens against another project's plan.
  What the role table allows succeeds, everything else is refused, a refused request writes
  nothing, and what exists but is not the caller's answers exactly as what does not exist.
- **load**: a generator in its own process records, corrects and reads concurrently through the
  API for a fixed time and stops by itself. Its clients race each other: they instantiate child
  plans from spawns of executing plans (and record into them) while others correct those spawns,
  propose decisions held for review and resolve them while others correct the decisions the
  reviews wait under, and record under and correct each other's decisions in shared plans; a
  refusal a race explains is expected, any other is not. Every acknowledged decision, child plan
  and review resolution is stored exactly once (ids and idempotency keys compared), sequence
  numbers are unique per plan, and no current decision is left under a superseded one, no active
  child plan under a superseded spawn, no pending review that can never be resolved. An
  UNAVAILABLE is expected only for an answer lost between the service and Neo4j: the service gives a
  connection up when Neo4j sends nothing on it for 10 s and logs it as silent, and the run may
  have at most as many UNAVAILABLEs as the service logged silent connections (a figure below; see
  docs/embedded-neo4j.md). The same holds under shed load and when the service is killed.
- **neo4j restart**: Neo4j is stopped under that load and started again. While it is down every
  request is answered UNAVAILABLE within the bound, nothing half-written appears, the service
  recovers by itself, and retries with the same idempotency keys are recorded exactly once. An
  UNAVAILABLE is excused only inside the fault's window: the request was in flight at some moment
  from the fault until the service answered again, or within a second of that. Outside every
  window, as under load, there are at most as many as the service logged silent connections
  ("unavailable outside a fault's window" counts them all).
- **neo4j crash**: as neo4j restart (the same window), but Neo4j's JVM is killed (SIGKILL) under
  load: commits cut off mid-way. It recovers from its transaction log at the next start; every
  acknowledged decision is stored exactly once, nothing is half-written, the same service process
  answers again without a restart, and every check rule passes on what was recovered.
- **service kill**: the service process is killed (SIGKILL) under load and started again; nothing
  it acknowledged is lost.
- **events replicas**: two `decisiontrail serve` processes on one Neo4j; writers record and
  correct through both at random; each plan has a subscriber on each process that stays, and one
  that drops its connection every second or so and reconnects with its last cursor. Every
  subscriber receives its plan's events exactly as the outbox committed them (none missed, none
  twice, in commit order), and every acknowledged write has its event. The quick part is
  `tests/test_events_outbox.py`.
- **replicas nginx**: docs/deployment.md's recipe on one machine (`reliability/balanced.py`): two
  `decisiontrail serve` replicas behind nginx (Debian's package) on one Neo4j. Through the balancer
  only: the load's clients, live subscribers (staying, and reconnecting every second or so with
  their cursor) and plans run by the replicas' runtimes, each corrected so that it is replayed;
  one replica killed (SIGKILL) with the replays in flight and started again. Everything the load
  requires; every subscriber's stream exactly as committed; every replay REPLAYED and run once
  (one replayed strategy, one replay generation), though the replica driving it died. The quick
  part is `tests/test_runtime_replicas.py` and `tests/test_deployment.py` (`nginx -t` on its
  configuration).
- **shed load**: `decisiontrail serve --max-in-flight 8` under 2, 4, 8, 16, 32 and 64 clients, each
  sending its next request (a recording or a read, in a plan of its own) as soon as the last is
  answered, and after a refusal waiting as `Retry-After` says. The clients speak a lean HTTP/1.1 of
  the harness's own (`reliability/wire.py`), and each step reports how late their event loop ran
  (`client_loop_lag`): with httpx they were the bottleneck at 64 clients. Nothing is shed with fewer clients
  than the limit ("sheds from clients" is the first step that shed), every refusal is a 503 with
  `Retry-After`, the median latency of admitted requests at 64 clients stays within 3x of that at 8
  clients and their p95 under 2 s (a server queueing without bound would hold all 64 at once: about
  8x slower; the p95 ratio is reported, not required: on 2 cores it moves with the noise), every
  acknowledged recording is stored once, a refused one not at all, and every check passes. The
  quick part is `tests/test_shed_load.py`.
- **correction crash** (`reliability/combined.py`, like the next two): two plans run by the
  service's runtime and corrected under the load; while the first correction's replay runs,
  Neo4j is killed (SIGKILL) the instant the second correction's COMMIT has reached it, placed by
  a proxy between the service and Neo4j that knows the statement by its text and the COMMIT by
  its bytes (`reliability/proxy.py`), and started again. The client cannot tell whether the
  correction was made: it reads back before sending it again. Each correction is made once and
  wholly (nothing half superseded, check --all clean), each replay REPLAYED and run once though
  the first lost its database mid-turn, the same service process answers again, the load's
  guarantees hold and its UNAVAILABLEs only inside the fault's window.
- **otlp service kill**: OTLP exports of 20 traces of 41 spans each, under the load; the service
  killed (SIGKILL) while the first export's import transaction runs in Neo4j, and again the
  instant the second's COMMIT has reached Neo4j (made, its answer lost); the exporter sends each
  again until answered, as OTLP exporters do. No trace is ever half imported (counted while the
  service is dead), each is imported once and whole, the load's guarantees hold.
- **lost batch**: answers lost on both sides of the service while clients record batches
  (`recordDecisions`): every second batch's HTTP answer dropped before its client (the connection
  closed: sent again with its keys), and Neo4j's answers to two recordings' COMMITs swallowed
  before the service (its driver gives the silent connection up, the request is UNAVAILABLE and
  sent again). Every acknowledged decision stored once, nothing half-written, UNAVAILABLE no
  more than the silent connections the service logged.
- **disk full** (`reliability/disk.py`): Neo4j's data directory on a 256 MB tmpfs (the harness mounts
  it, as root), its transaction log neither preallocated nor in big files, so that a commit needs
  new blocks; the filesystem filled under the load, then freed. The commit that meets the full
  disk is refused and not applied; Neo4j then takes no transaction until restarted (its
  database "panics"; it does not come back by itself, and a clean stop leaves a log it will not
  start from, so the harness, as an operator would, kills and starts it). Clients get
  UNAVAILABLE saying the disk may be full (never an internal error) and retry with their keys;
  `/readyz` says not ready while the database takes no transaction; nothing half-written,
  every acknowledged write stored once, the same service process answers again, UNAVAILABLE only
  inside the fault's window.
- **slow neo4j** (`reliability/shed.py`): the service reaches Neo4j through a proxy that holds
  every answer back 50 ms, with `--max-in-flight 8` and a 10 s time limit
  (`DECISIONTRAIL_QUERY_TIMEOUT`), under 8 and then 32 clients. Load is shed (503 with
  `Retry-After`), every request is answered within its transactions' time limits (a recording
  reads, then writes: 20 s, and a second), nothing
  acknowledged is lost, a recording refused or of unknown outcome is sent again with its key and
  stored once, nothing half-written.

## Tests that cannot hide

A test that passes only after another, or only on the examples it drew last time, hides a bug.
`make test` (which CI runs) therefore draws one seed per run and uses it twice: pytest-randomly
shuffles the modules and the tests within each module with it (`--randomly-seed`), and Hypothesis
draws every property test's examples from it (`--hypothesis-seed`; Hypothesis's own CI profile,
which would draw the same examples on every run, is redefined in `tests/conftest.py` without
`derandomize`). The fuzzing test (`tests/test_fuzz.py`) fuzzes from the same seed. The seed is
printed first (`test seed N`) and again under the results (`test order: --randomly-seed=N;
Hypothesis: --hypothesis-seed=N`). To run a failing order again:

    make test SEED=N          # or, for the suite alone: make test-random SEED=N
    .venv/bin/python -m pytest --randomly-seed=N --hypothesis-seed=N tests/test_x.py tests/test_y.py

The second line runs a few modules in the order the seed gives them; Hypothesis's examples
depend only on the seed and the test, not on what ran before. A failing property test also
prints its smallest failing example and, in CI, a `@reproduce_failure` line that replays it.
Tests that change the schema (`tests/test_migrations.py` drops indexes and forgets the migration
ledger) run on an embedded Neo4j of their own, started for that module, never on the session's.
"""


def write(run: dict[str, Any], directory: Path | None = None) -> tuple[Path, Path]:
    """Save a run and write its page; returns both paths.

    By default into docs/, the run merged into the saved one when it ran only some scenarios; into
    ``directory`` (``reliability.md`` and ``results.json``), the run alone, as it is.
    """
    results, markdown = (RESULTS, MARKDOWN) if directory is None else (directory / RESULTS.name, directory / MARKDOWN.name)
    results.parent.mkdir(parents=True, exist_ok=True)
    if directory is None and results.exists():
        run = merge(json.loads(results.read_text(encoding="utf-8")), run)
    results.write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    markdown.write_text(render(run), encoding="utf-8")
    return markdown, results


def merge(previous: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """A run of some scenarios (``--only``) replaces those scenarios' outcomes in the saved run and
    keeps the others, each outcome with the date and commit it was measured at.

    >>> old = {"date": "d1", "commit": "c1", "seconds": 10.0, "outcomes": [{"name": "fuzz"}, {"name": "load"}]}
    >>> new = {"date": "d2", "commit": "c2", "seconds": 4.0, "outcomes": [{"name": "load", "n": 2}]}
    >>> merged = merge(old, new)
    >>> [(o["name"], o["date"], o["commit"]) for o in merged["outcomes"]]
    [('fuzz', 'd1', 'c1'), ('load', 'd2', 'c2')]
    >>> merged["seconds"], merged["date"]
    (14.0, 'd2')
    """
    ran = {o["name"] for o in run["outcomes"]}
    stamp = {"date": run["date"], "commit": run.get("commit")}
    kept = [
        {"date": previous.get("date"), "commit": previous.get("commit"), **o}
        for o in previous.get("outcomes", [])
        if o["name"] not in ran
    ]
    if not kept:
        return {**run, "outcomes": [{**stamp, **o} for o in run["outcomes"]]}
    earlier = [o["name"] for o in previous["outcomes"]]
    order = earlier + [o["name"] for o in run["outcomes"] if o["name"] not in earlier]
    outcomes = kept + [{**stamp, **o} for o in run["outcomes"]]
    outcomes.sort(key=lambda o: order.index(o["name"]) if o["name"] in order else len(order))
    return {**run, "seconds": previous.get("seconds", 0.0) + run["seconds"], "outcomes": outcomes}


def render(run: dict[str, Any]) -> str:
    """The page: the run, a summary row per scenario, then each scenario's figures.

    >>> outcome = {"name": "load", "description": "concurrent load", "passed": False, "seconds": 3.0,
    ...            "figures": {"requests": 10, "acknowledged": 9, "stored": 8, "lost": 1, "duplicated": 0},
    ...            "errors_by_code": {"UNAVAILABLE": 1}, "failures": ["1 acknowledged decision is missing"]}
    >>> run = {"date": "d", "seconds": 3.0, "machine": {"cpu": "c", "cores": 2, "memory_gb": 1, "os": "x"},
    ...        "versions": {"neo4j": "5"}, "settings": {"examples": 1}, "outcomes": [outcome]}
    >>> text = render(run)
    >>> "| load | 10 | UNAVAILABLE 1 | 9 / 8 (1 lost, 0 duplicated) |  | **failed** |" in text
    True
    >>> "- 1 acknowledged decision is missing" in text
    True
    >>> _figure({"record": {"n": 2, "p50_ms": 9.25}, "errors": 0})
    'record (n 2, p50_ms 9.2), errors 0'
    """
    m = run["machine"]
    outcomes = run["outcomes"]
    passed = all(o["passed"] for o in outcomes)
    quick = bool(run.get("quick"))  # a quick run's page lies beside its results, outside docs/
    results = "`results.json` beside this page" if quick else "`docs/reliability/results.json`"
    lines = [
        QUICK_INTRO if quick else INTRO,
        f"## {'Quick run' if quick else 'Run'} of {run['date']}: {'every guarantee held' if passed else '**guarantees failed**'}",
        "",
        f"Commit: `{run.get('commit') or 'not recorded'}` (results: {results}).  ",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}.  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items()) + ".  ",
        "Settings: " + ", ".join(f"{k} {v}" for k, v in run["settings"].items()) + f". Whole run: {run['seconds']:.0f} s.",
        "",
        "| scenario | requests | errors by code | acknowledged / stored | faults injected / survived | result |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        f = o["figures"]
        errors = ", ".join(f"{code} {n:,}" for code, n in o["errors_by_code"].items()) or "none"
        stored = (
            f"{f['acknowledged']:,} / {f['stored']:,} ({f.get('lost', 0):,} lost, {f.get('duplicated', 0):,} duplicated)"
            if "acknowledged" in f and "stored" in f
            else ""
        )
        faults = f"{f['faults_injected']} / {f['faults_survived']}" if "faults_injected" in f else ""
        requests = f"{f['requests']:,}" if isinstance(f.get("requests"), int) else ""
        lines.append(
            f"| {o['name']} | {requests} | {errors} | {stored} | {faults} | {'passed' if o['passed'] else '**failed**'} |"
        )
    for o in outcomes:
        when = f" Run on {o['date']} at `{o.get('commit') or 'commit not recorded'}`." if o.get("date") else ""
        lines += ["", f"### {o['name']}: {o['description']}", "", f"Took {o['seconds']:.0f} s.{when}", ""]
        lines += [f"- {key.replace('_', ' ')}: {_figure(value)}" for key, value in o["figures"].items()]
        if o["failures"]:
            lines += ["", "Guarantees that did not hold:", ""] + [f"- {failure}" for failure in o["failures"]]
    lines += ["", NOTES]
    return "\n".join(lines)


def _figure(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, dict):
        # One level down (latency by operation, say) each entry keeps its figures in parentheses.
        return (
            ", ".join(f"{k} ({_figure(v)})" if isinstance(v, dict) else f"{k} {_figure(v)}" for k, v in value.items()) or "none"
        )
    return str(value)
