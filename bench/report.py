"""Results as JSON (docs/benchmarks/<sizes>.json) and as the tables of docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path
from typing import Any

from decisiontrail.graphdb import loading
from decisiontrail.services import analysis as services_analysis

RESULTS_DIR = Path(__file__).parents[1] / "docs" / "benchmarks"
MARKDOWN = Path(__file__).parents[1] / "docs" / "benchmarks.md"

INTRO = """\
# Benchmarks

Measured by the harness in `bench/` (`make bench` for the quick sizes, `make bench-full` for
the whole range), never by tests. Every scenario runs our path and its baseline against the
same Neo4j in the same run, **interleaved sample by sample** after warm-up runs of both (who
goes first alternates), so a slow moment of the machine falls on both. Each row gives the
median (p50) and, from 20 samples or more, the p95 (rows with fewer say so), and the ratio to
the anchor it names: for latency rows ours / anchor (lower is better), for throughput rows our
operations per second over the anchor's (higher is better). Each served row is measured against
the anchors a user would pick instead, interleaved in the same run: the same Cypher behind a
minimal HTTP endpoint (`bench/anchor.py`: Starlette, the driver, the rows as JSON; the limit for
any HTTP API on this Neo4j), @neo4j/graphql on the same Neo4j where it can answer (the peer), and
the driver alone (the engine's limit, for reference, no target). A verdict is given from the
ratio's 95% interval (2,000 bootstrap resamplings of both sides' samples): *yes* when the whole
interval meets the target, *no* when none of it does, and *too close to call* when it holds the
target's bound, so that a verdict does not flip between runs. Beside each time, Neo4j's db hits
of ours and of the anchor's statement, as PROFILE counts them, taken once per row outside the
timed runs (ours: the row's GraphQL document executed once in process with every statement
profiled, `graphdb.timing(profile=True)`). The two answers are compared
in full: before timing, the same decisions and plans for a walk and the same tree with the same
children and dependencies for the nested query; after the runs, for writes, every decision
each side stored, field by field, against what it sent, and nothing else stored under the same
parent. Each correction's superseded set, ours and the baseline's, is checked against the
closure read before either ran. The offline rows compare the count of decisions checked or
exported with the workload's; at every size the first export is also read back whole, as a
stream, and compared decision by decision with the rows the baseline streams (every property
and every edge), and every other run's document, whatever its `--jobs`, is the same byte for
byte (each export row's `compared` says how its documents were compared: rows measured
earlier compared up to 20,000 decisions only); `check --all`'s answer, a report of violations, has no counterpart in the
baseline's. The raw results, with the git commit they were measured at,
are in `docs/benchmarks/*.json`; this page, the analysis included, is written from them. A run
of some scenarios (`python -m bench --only offline`) or of the sizes up to one
(`--largest 1000000`) replaces the rows it measured and keeps the others, each part with its
date, commit and machine.

How each scenario is built, and what its baseline is, is in [the notes](#notes) below.
"""


def analysis(runs: list[dict[str, Any]]) -> str:
    """Where the time goes and what was done.

    Every figure is cited from the JSON a run wrote: a row's measurement (``cite``), where its
    time went (``cite_time``: the breakdown the harness records from the service's own counts),
    an offline row's phases or peak memory (``cite_phases``, ``cite_peak``). So the page cannot
    claim a figure the harness did not measure; the changes' before/after measurements, taken in
    the lab while changing the code, are left to their commit messages.
    """

    def c(scenario: str, case: str, sizes: str = "quick") -> str:
        return cite(runs, sizes, scenario, case)

    def t(scenario: str, case: str, sizes: str = "quick") -> str:
        return cite_time(runs, sizes, scenario, case)

    def hits(scenario: str, case: str, sizes: str = "quick") -> str:
        return cite_hits(runs, sizes, scenario, case)

    def extra(scenario: str, case: str, *keys: str) -> str:
        return cite_extra(runs, "quick", scenario, case, *keys)

    def peak(case: str) -> str:
        return cite_peak(runs, "full", case)

    def phases(case: str, sizes: str = "quick") -> str:
        return cite_phases(runs, sizes, case)

    return f"""\
## Where the time goes, and what was done

Every figure in this section is cited from the results files (`docs/benchmarks/<sizes>.json`)
by `bench/report.py`: a row's measurement, or where its time went, which each run's table
*Where the time went* shows for every row that records it (what the served process's
`Server-Timing` header, or in process `graphdb.timing`, said of each measured run, and what
Neo4j reported the baseline's statement took). The before/after measurements of the changes
described here (profiles, and A/B runs of two builds alternating, taken in the lab while
changing the code) are in the commit messages that made them; a run of the harness does not
check them, so they are not repeated here.

- **The anchors.** Each served row is judged against the same statement behind a minimal HTTP
  endpoint (Starlette, the driver, the rows as JSON), the limit for any HTTP API on this Neo4j:
  what is left between the two is what our API itself costs (the GraphQL document's execution,
  the middleware: load shedding, rate limits, authentication, Server-Timing; the hop to a worker
  thread and back) and whatever Neo4j work ours does beyond the statement, which the db hits
  column shows. The driver's own rows stay beside them, for the engine's limit, without a target.
  The smallest GraphQL request (`{{ __typename }}`: no resolver, no statement) beside the lineage
  statement through the driver: {c("lineage", "the request's fixed path")},
  {t("lineage", "the request's fixed path")}.
- **Lineage and impact.** Each is one statement, a breadth-first walk with a visited set
  (`decision/lineage.cypher`, `correction/downstream.cypher`), the same one the anchors run, so
  Neo4j's work is the same on both sides: a deep decision's lineage
  {c("lineage", "lineage of a deep decision")}, {hits("lineage", "lineage of a deep decision")};
  impact {c("impact", "impact of a deep decision")}, {hits("impact", "impact of a deep decision")};
  the 50-level hierarchy {c("lineage", "deepest decision of 50 levels")} and
  {c("impact", "top strategy of 50 levels")}; the 1,000-decision chain
  {c("lineage", "lineage of the last of")}, {t("lineage", "lineage of the last of")}, and
  {c("impact", "impact of the head of")}; impact of a downstream of 1, 100 and 10,000:
  {c("impact", "a downstream of 1 ")}, {c("impact", "a downstream of 100 ")},
  {c("impact", "a downstream of 10,000")}. A selection of ids only is answered from the ids the walk
  returned (`schema.execution.Identities`), completed directly (`schema/execution.py`: a field that
  only reads its object, and whole selections of such fields, in one pass, without graphql-core's
  per-field steps), so the answer is smaller than the anchor's (which sends the statement's rows
  whole) and from some size on ours is the faster. At a handful of decisions the difference is
  the request's path above. What would close it: a compiled path for the documents clients
  actually send (built once per validated document, falling back to the ordinary executor) and a
  request path without the worker-thread hop for a read of ids; neither is built.
- **Against @neo4j/graphql.** Its `@cypher` fields run our walk statements (read from
  `src/decisiontrail/cypher/` when the peer starts), one union-typed list per walk, each node
  then projected by the library: {c("lineage", "lineage of a deep decision && against @neo4j/graphql")};
  {c("impact", "impact of a deep decision && against @neo4j/graphql")};
  {c("lineage", "deepest decision of 50 levels && against @neo4j/graphql")};
  {c("lineage", "lineage of the last of && against @neo4j/graphql")};
  {c("impact", "a downstream of 10,000 && against @neo4j/graphql")}.
- **Nested tree.** `Plan.tree` looks ahead at its selection; ids, types and relations are served
  from one statement of outlines, returned as one row, and completed directly as above:
  {c("nested tree", "plan -> decisions")}, {t("nested tree", "plan -> decisions")},
  {hits("nested tree", "plan -> decisions")} (the peer's generated statements are not profiled).
  What remains is the statement's own work and one Python object per decision, tree entry and
  field in the answer; what would close more: the statement shaped by the selection and the
  answer serialised from its rows.
- **Recording.** A recording locks its plan, reads the facts it is judged by (placement: the
  plan's counter and automation profile, the parent, idempotency keys) and writes the decision,
  its events and its audit entry: {c("recording", "recordDecision over HTTP, sequential")},
  {t("recording", "recordDecision over HTTP, sequential")}; Neo4j's work against the anchor's
  single write: {hits("recording", "recordDecision over HTTP, sequential")}. Against the driver:
  {c("recording", "sequential: against the driver")}. What would close it: the placement read folded
  into the write statement (placement's rules in Cypher, with the Python rules kept as the tests'
  reference) and the audit entry carried by the write, one round trip each. Batches are two
  statements for the whole batch (`read_placements`, which takes each plan's facts and each named
  decision once, and `create_decisions`, which matches each plan and each named decision once:
  in a statement that writes, a unique index seek locks the entry it reads), the batch's events
  one outbox run: {c("recording", "batches of 100")}, {t("recording", "batches of 100")},
  {hits("recording", "batches of 100")}; at 1,000 {c("recording", "batches of 1,000")},
  {t("recording", "batches of 1,000")}, {hits("recording", "batches of 1,000")}. The rate the
  target asks at 1,000, 5,000 decisions a second, is 200 ms a batch.
- **Concurrent recording.** `serve` runs one worker process per core by default (`--workers`,
  docs/deployment.md), each with its own connections, relay and runtime threads; the outbox
  carries events across them. Three rounds each way: {c("recording", "16 concurrent clients")};
  the interval is the rounds' lowest and highest ratio. The clients, the two workers and Neo4j
  share the machine's two cores, where the baseline's threads only send a statement each.
- **OTLP import.** An agent trace of 1,000 decision spans posted whole:
  {c("recording", "OTLP import")}, {t("recording", "OTLP import")},
  {hits("recording", "OTLP import")}. A trace whose root arrives is imported from the request
  itself (its spans were kept as nodes, read back and dropped in the same transaction before
  0b7ae49). What remains beyond the anchor's one statement: decoding OTLP/JSON through protobuf's
  JSON mapping, the spans' mapping to plans and decisions (`domain.traces.steps`), each plan's
  placement as a recording's (three placements: the plan's root, then its decisions in order),
  the trace's marker and the audit entry; what would close it: decoding OTLP/JSON directly, and
  one placement for a trace's decisions.
- **Correction.** Two statements and a commit against the anchor's one: the reads (lock the
  decision and its plan, walk, lock the plans the walk touched, walk again under those locks,
  read what the rules judge) and the supersession (the correction decision, the walk again where
  it is, the attempt, the phase, the moot reviews, the events as runs, the audit entry). The
  anchor writes what ours writes, without locks or judging. Downstream of 1:
  {c("correction", "downstream of 1")}, {t("correction", "downstream of 1")},
  {hits("correction", "downstream of 1")}; of 100: {c("correction", "downstream of 100")},
  {hits("correction", "downstream of 100")}; of 10,000: {c("correction", "downstream of 10,000")},
  {t("correction", "downstream of 10,000")}, {hits("correction", "downstream of 10,000")}. At small
  sizes the gap is the second round trip and the request's path; from 10,000 on it is in the
  statements, by Neo4j's count: the downstream walked three times (before the locks, under them,
  and in the supersession, where the anchor walks once) and each superseded decision's review
  looked up. Across 1,000 levels of plans, against impact of the same decision:
  {c("correction", "across 1,000 levels")}, {t("correction", "across 1,000 levels")},
  {hits("correction", "across 1,000 levels")}; by Neo4j's count
  {extra("correction", "across 1,000 levels", "begin_correction_memory_bytes")} (its reads' statement, linear
  in what it supersedes: tests/test_deep_correction.py). Impact walks once and writes nothing; the correction
  walks three times, locks a thousand plans, supersedes and links every decision, invalidates
  every plan and announces a run of events for each, then commits all of it. What would close
  it: the walk made once (its result carried from the reads to the supersession rather than
  walked again), and one event run for the whole correction rather than one per plan.
- **Live events.** A correction writes its events to the outbox in its own transaction; the
  serving process's relay, woken by the commit, numbers what is pending, reads it and hands it to
  every subscriber's queue, and each WebSocket sends on its own. The delay runs from the write to
  receipt, read as each frame comes off the socket, at 1,000 subscribers over the service's worker
  processes: {c("events", "a correction")} (p50; the table has the p95), each correction's event
  reaching its first and its last subscriber after
  {extra("events", "a correction", "first_subscriber_ms", "last_subscriber_ms")}: the tail is the
  fan-out. An event's answer is executed and encoded once for all the subscriptions of one
  principal with the same document and variables (`schema/sharing.py`; each subscriber's message
  is its own id around the shared text), and the event bus wakes each event loop once per event;
  what is left per subscriber is its queue's wake-up, strawberry's handling of each result and the
  send on its socket, in turn (a correction sends two events, RECORDED then SUPERSEDED, and the
  last subscriber's SUPERSEDED waits behind both). What would close it: the send path below
  strawberry's per-result handling (a shared message written to each socket directly). Messages go uncompressed (permessage-deflate is off: the events are a few hundred bytes),
  and `serve` raises its limit of open files to the system's (a subscriber holds a socket).
- **Explorer.** Opening a hierarchy draws its plan cards only (each with its counts), so it costs
  per plan, not per decision: {c("explorer", "open a hierarchy")}, the page's main thread
  {extra("explorer", "open a hierarchy", "task_ms", "script_ms")}. Expanding a plan fetches its
  decisions, lays them out and draws them: {c("explorer", "expand a plan")}, the main thread
  {extra("explorer", "expand a plan", "task_ms", "script_ms", "style_ms", "layout_ms")}.
- **Offline.** `check --all` and `export --all` go group by group (a hierarchy, with those it
  shares an edge with: memory holds the largest group, not the database), in `--jobs N` worker
  processes from {services_analysis.WORKERS_FROM:,} decisions (`services.analysis.WORKERS_FROM`),
  loading up to {loading.PLANS_PER_LOAD} plans a load (`graphdb.loading.loads_of`). Each row is now the
  whole command as a user runs it, against a process of its own streaming the same rows, and
  memory is summed over the command's processes: `check --all`
  {c("offline", "check --all group by group, --jobs 1")}, with two workers
  {c("offline", "check --all group by group, --jobs 2")}; `export --all`
  {c("offline", "export --all group by group, GraphML")}. Where the time goes, from the whole
  database loaded as one graph in one process: {c("offline", "rules, GraphML export")},
  {phases("rules, GraphML export")}: building the graph of Python objects, then the 16 rules, where
  the baseline only receives the rows; 2x would need the rules on arrays (or in Cypher). At the
  full sizes, timed and summed the same way (one run each way): at 1M `check --all`
  {c("offline", "999,950 decisions: check --all group by group, --jobs 1", "full")}
  ({peak("999,950 decisions: check --all group by group, --jobs 1")}), with two workers
  {c("offline", "999,950 decisions: check --all group by group, --jobs 2", "full")}
  ({peak("999,950 decisions: check --all group by group, --jobs 2")}); at 10M `check --all`
  {c("offline", "9,999,850 decisions: check --all", "full")} ({peak("9,999,850 decisions: check --all")})
  and `export --all` {c("offline", "9,999,850 decisions: export --all", "full")}
  ({peak("9,999,850 decisions: export --all")}). Memory is the largest group's whatever the
  database holds, far inside what the targets allow at 1M and 10M; the time misses 2x at every
  size, for the same reason as at the quick sizes.
- **Lineage on the 1M-decision database** (`make bench-full`): the deepest decision of 50 levels
  of plans, {c("lineage", "lineage of the deepest decision", "full")}; its p95, against the target
  of 150 ms at depth 20, is the full table's row "p95 on the 1M-decision database".
- **The tail of every request** was Python's full cycle collections in the served process, each
  walking everything the process built at start-up; once started, the service freezes that heap
  out of them (`app.settle_heap`). **Parsing and validation** of a GraphQL document happen once per
  distinct document (`ParserCache`, `ValidationCache`).
"""


def cite(runs: list[dict[str, Any]], sizes: str, scenario: str, case: str) -> str:
    """A row's measurement as the analysis quotes it, from the saved run at ``sizes``.

    >>> run = {"sizes": "quick", "rows": [{"scenario": "lineage", "case": "lineage of x", "compare": "latency",
    ...        "ratio": 2.5, "ours": {"p50_ms": 5.0}, "baseline": {"p50_ms": 2.0}}]}
    >>> cite([run], "quick", "lineage", "lineage of")
    '2.50x (5.0 ms against 2.0 ms p50, quick.json)'
    >>> cite([run], "full", "lineage", "lineage of")
    '(not in the saved full results)'
    """
    row = _saved_row(runs, sizes, scenario, case)
    if row is None:
        return f"(not in the saved {sizes} results)"
    base = f" against {_ms(row['baseline']['p50_ms'])}" if row.get("baseline") else ""
    measured = f"{_ms(row['ours']['p50_ms'])}{base} p50, {sizes}.json"
    return f"{_ratio(row)} ({measured})" if row.get("ratio") is not None else f"{measured}"


def cite_time(runs: list[dict[str, Any]], sizes: str, scenario: str, case: str) -> str:
    """Where a row's time went, as the analysis quotes it, from the saved run at ``sizes``.

    >>> run = {"sizes": "quick", "rows": [{"scenario": "recording", "case": "one", "ours": {"p50_ms": 6.0},
    ...        "extra": {"breakdown": {"ours": {"served_ms": 4.0, "database_ms": 3.0, "neo4j_ms": 1.0, "commit_ms": 1.0,
    ...        "transactions": 1.0, "statements": 2.0}, "baseline": {"neo4j_ms": 1.0}}}}]}
    >>> cite_time([run], "quick", "recording", "one")
    "of its 6.0 ms p50, 4.0 in the service, 3.0 in the unit of work (1 transaction, 2 statements, 1 ms by Neo4j's count; the commit 1.0), the baseline's statement 1 ms by Neo4j's count (medians, quick.json)"
    >>> cite_time([run], "full", "recording", "one")
    '(no breakdown in the saved full results)'
    """
    row = _saved_row(runs, sizes, scenario, case, holding="breakdown")
    if row is None:
        return f"(no breakdown in the saved {sizes} results)"
    ours = row["extra"]["breakdown"]["ours"]
    baseline = row["extra"]["breakdown"].get("baseline")
    where = f"{ours['served_ms']:,.1f} in the service, " if "served_ms" in ours else ""
    transactions = f"{ours['transactions']:g} transaction" + ("" if ours["transactions"] == 1 else "s")
    statements = f"{ours['statements']:g} statement" + ("" if ours["statements"] == 1 else "s")
    commit = f"; the commit {ours['commit_ms']:,.1f}" if ours["commit_ms"] else ""
    theirs = f", the baseline's statement {baseline['neo4j_ms']:,.0f} ms by Neo4j's count" if baseline else ""
    return (
        f"of its {_ms(row['ours']['p50_ms'])} p50, {where}{ours['database_ms']:,.1f} in the unit of work "
        f"({transactions}, {statements}, {ours['neo4j_ms']:,.0f} ms by Neo4j's count{commit}){theirs} (medians, {sizes}.json)"
    )


def cite_phases(runs: list[dict[str, Any]], sizes: str, case: str) -> str:
    """An offline reference row's phases, against the stream of the same rows, from the saved run at ``sizes``.

    >>> run = {"sizes": "full", "rows": [{"scenario": "offline", "case": "1 decisions as one graph", "baseline": {"p50_ms": 900.0},
    ...        "extra": {"load_ms": 2000.0, "checks_ms": 1500.0, "export_ms": 2500.0}}]}
    >>> cite_phases([run], "full", "as one graph")
    'the load 2,000.0 ms (the stream of its rows 900.0 ms), the rules 1,500.0 ms, the export 2,500.0 ms (full.json)'
    >>> cite_phases([run], "quick", "as one graph")
    '(no phases in the saved quick results)'
    """
    row = _saved_row(runs, sizes, "offline", case, holding="load_ms")
    if row is None:
        return f"(no phases in the saved {sizes} results)"
    extra = row["extra"]
    stream = f" (the stream of its rows {_ms(row['baseline']['p50_ms'])})" if row.get("baseline") else ""
    return (
        f"the load {_ms(extra['load_ms'])}{stream}, the rules {_ms(extra['checks_ms'])}, "
        f"the export {_ms(extra['export_ms'])} ({sizes}.json)"
    )


def cite_peak(runs: list[dict[str, Any]], sizes: str, case: str) -> str:
    """An offline row's peak resident memory, from the saved run at ``sizes``.

    >>> run = {"sizes": "full", "rows": [{"scenario": "offline", "case": "1 decisions: x", "extra": {"peak_rss_mb": 120.8}},
    ...        {"scenario": "offline", "case": "1 decisions: y", "extra": {"peak_rss_mb_summed": 250.2}}]}
    >>> cite_peak([run], "full", "1 decisions: x"), cite_peak([run], "quick", "1 decisions: x")
    ('peak 121 MB (the largest process), full.json', 'peak memory not in the saved quick results')
    >>> cite_peak([run], "full", "1 decisions: y")
    'peak 250 MB summed over its processes, full.json'
    """
    row = _saved_row(runs, sizes, "offline", case, holding="peak_rss_mb_summed") or _saved_row(
        runs, sizes, "offline", case, holding="peak_rss_mb"
    )
    if row is None:
        return f"peak memory not in the saved {sizes} results"
    if "peak_rss_mb_summed" in row["extra"]:
        return f"peak {row['extra']['peak_rss_mb_summed']:,.0f} MB summed over its processes, {sizes}.json"
    return f"peak {row['extra']['peak_rss_mb']:,.0f} MB (the largest process), {sizes}.json"


def _saved_row(
    runs: list[dict[str, Any]], sizes: str, scenario: str, case: str, *, holding: str | None = None
) -> dict[str, Any] | None:
    """The first row of the saved run at ``sizes`` of ``scenario`` whose case contains ``case`` (each
    of its parts, where ``case`` joins several with `` && ``), and whose extras hold ``holding`` if
    given; or None.

    >>> runs = [{"sizes": "quick", "rows": [{"scenario": "s", "case": "walk of x"}, {"scenario": "s", "case": "walk of x: against y"}]}]
    >>> _saved_row(runs, "quick", "s", "walk of x")["case"], _saved_row(runs, "quick", "s", "walk of && against y")["case"]
    ('walk of x', 'walk of x: against y')
    """
    parts = case.split(" && ")
    for run in runs:
        if run["sizes"] != sizes:
            continue
        row: dict[str, Any]
        for row in run["rows"]:
            if (
                row["scenario"] == scenario
                and all(part in row["case"] for part in parts)
                and (holding is None or holding in row.get("extra", {}))
            ):
                return row
    return None


def cite_hits(runs: list[dict[str, Any]], sizes: str, scenario: str, case: str) -> str:
    """A row's db hits, ours and its anchor's statement's, as the analysis quotes them.

    >>> run = {"sizes": "quick", "rows": [{"scenario": "lineage", "case": "x", "extra": {"db_hits": {"ours": 2144, "baseline": 2144}}}]}
    >>> cite_hits([run], "quick", "lineage", "x"), cite_hits([run], "full", "lineage", "x")
    ('2,144 db hits against 2,144 (quick.json)', '(no db hits in the saved full results)')
    """
    row = _saved_row(runs, sizes, scenario, case, holding="db_hits")
    if row is None:
        return f"(no db hits in the saved {sizes} results)"
    hits = row["extra"]["db_hits"]
    theirs = f" against {hits['baseline']:,}" if "baseline" in hits else ""
    return f"{hits['ours']:,} db hits{theirs} ({sizes}.json)"


def cite_extra(runs: list[dict[str, Any]], sizes: str, scenario: str, case: str, *keys: str) -> str:
    """Figures a row keeps in its extras (a profile the harness recorded), named by their keys.

    >>> run = {"sizes": "quick", "rows": [{"scenario": "events", "case": "x", "extra": {"first_ms": 12.5, "last_ms": 300.0}}]}
    >>> cite_extra([run], "quick", "events", "x", "first_ms", "last_ms")
    'first 12.5 ms, last 300.0 ms (quick.json)'
    >>> cite_extra([run], "quick", "events", "x", "gone_ms")
    '(no gone_ms in the saved quick results)'
    """
    row = _saved_row(runs, sizes, scenario, case, holding=keys[0])
    if row is None or any(key not in row["extra"] for key in keys):
        return f"(no {', '.join(keys)} in the saved {sizes} results)"
    shown = []
    for key in keys:
        name, _, unit = key.rpartition("_")
        value = row["extra"][key]
        if unit == "bytes":
            shown.append(f"{name.replace('_', ' ')} {value / 1_000_000:,.1f} MB")
        else:
            shown.append(f"{name.replace('_', ' ')} {value:,.1f} {unit}" if unit in ("ms", "mb") else f"{key} {value:,}")
    return ", ".join(shown) + f" ({sizes}.json)"


NOTES = """\
## Notes

- **Workload.** `bench/workload.py` generates seeded plan forests (hierarchies of plans with
  depth and fan-out, a type mix as real runs produce it, DEPENDS_ON edges, superseded history)
  and loads them with batched `UNWIND` writes; the generated data passes every rule of
  `decisiontrail check`.
- **Recording.** Ours is `decisiontrail serve` in its own process, as users run it (one worker
  process per core, `--workers`; with `--server-timing`, for the breakdown: what its counting
  costs is in our figures, as for every served row), called over HTTP with httpx; each recording
  is one transaction that locks the plan, judges the rules and writes the decision with its
  relationships, its events and its audit entry. The anchors write the same node and
  relationships, no rules: behind the minimal HTTP endpoint (the target) and with the driver.
  Every side's decisions are read back and compared with what it sent. Concurrent clients each
  record into a plan of their own, three rounds of ours and of the driver's threads, who goes
  first alternating; the row's throughput is the median round's, its interval the rounds' lowest
  and highest ratio. The OTLP import posts one agent trace of 1,000 decision spans to
  `/v1/traces` (OTLP/JSON, `bench/spans.py`) against one statement writing the same rows: the
  plan and the decisions ours stored for an import of the same spans, every property, with their
  parent links.
- **Correction.** Ours is `correctDecision` over HTTP (lock, read the closure, write the
  correction, supersede, record the attempt, the events and the audit entry). The anchors are one
  hand-written statement that finds the same closure and writes what ours writes (the correction
  decision as ours places it, its context, every superseded decision linked to it, the attempt
  with its ids in order, its counts by type and replay frontier, the invalidated plans, the
  events, the audit entry; checked shape by shape against ours' after the runs), behind the
  minimal HTTP endpoint (the target) and through the driver; it takes no plan locks, which one
  statement does not need. Each run corrects a fresh copy of the fixture, after a warm-up
  correction of each on a copy of its own (checked, not measured). The 1,000-level row corrects
  the top strategy of a chain of 1,000 plans (each spawned by the one above it), each run just
  after impact of the same decision over HTTP, and records begin_correction's memory as Neo4j
  counts it. The networkx row computes the same closure in memory on a graph already loaded,
  against the same closure read in Cypher (`correction/downstream`), interleaved, its answer
  compared with it: a read against a read.
- **Lineage and impact.** Ours is the GraphQL query over HTTP; the anchors are the same Cypher
  behind the minimal HTTP endpoint, @neo4j/graphql's `@cypher` fields running the same walk
  statements (read from `src/decisiontrail/cypher/` at the peer's start, so they cannot drift;
  one union-typed list per walk, one statement per request), and the driver; each answer is
  compared in full with ours before timing.
- **Nested tree.** Ours is `plan { tree { decision { children { dependsOn } } } }` over HTTP;
  the peer is @neo4j/graphql serving the same nesting from a minimal Node HTTP server
  (`bench/peer/`), installed from npm by the harness. Both answers are compared before timing.
- **Offline.** Each row is the whole command as a user runs it, timed from its spawn to its exit
  (`decisiontrail check --all --format json`, `decisiontrail export --all --format graphml
  --output FILE`, with `--jobs 1` and `--jobs 2`), against a process of its own streaming the
  same rows through the driver (`bench/stream.py`), timed the same way; memory is summed over the
  command's processes (each one's own high-water mark, `VmHWM`, read from /proc while it runs:
  an upper bound, shared pages counted in each). Rows measured before f58ee91 timed inside the
  process, after its start and imports, and gave the largest single process's memory. For
  reference, and only up to 1M decisions, `bench/offline.py` loads the whole database as one
  graph, runs every rule and writes a GraphML export, its phases timed inside it. `make
  bench-full` ends with a database of its own of 10M decisions, where only `check --all` (one
  process) and `export --all` run. At the quick sizes each group-by-group row is five runs of
  ours and of the stream, interleaved (who goes first alternates) after a warm-up run of each; at
  the full sizes, one of each.
- **Runtime.** `bench/runtime.py`. Ours is `runPlan` of a 3-level hierarchy (`depth: 3`) on the
  served process's runtime workers with the scripted model, polled until its run has SUCCEEDED:
  reconciliation, the strategy and execution actors (LangGraph graphs, each step checkpointed in
  Neo4j), the child plans and their runs, the phase changes. The baseline records the same plans
  and decisions as a client would over the same API, in the same order (instantiatePlan,
  recordDecision one by one, advancePhase): what the runtime adds to the recording alone. Both are
  given per decision; each run's hierarchy, ours and the baseline's, is read back and compared with
  the first run's, plan by plan and type by type. The
  replay row has no baseline: it is the time from a strategy correction's transaction to the
  replay's outcome written, read from the attempt in Neo4j (a whole plan re-run from the corrected
  actor's checkpoint, a child plan spawned anew, Apply), over 20 corrections after a warm-up one.
"""


def machine() -> dict[str, Any]:
    cpu = ""
    memory_gb = 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {"cpu": cpu or platform.processor(), "cores": os.cpu_count(), "memory_gb": memory_gb, "os": platform.platform()}


# The scenario (``--only`` name) each row's scenario label belongs to.
_SCENARIO_OF = {"impact": "lineage", "nested tree": "tree", "events": "events"}


def merge(previous: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A run of some scenarios (``--only``) replaces those scenarios' rows in the previous run at
    the same sizes and keeps the others, with the date, workload and duration of each part. A run
    that left out the larger sizes (``--largest``) replaces only the rows it measured: the
    previous run's rows of the sizes left out stay, after its own, with the part they came from.

    >>> old = {"date": "d1", "scenarios": ["offline", "tree"], "workload": "w1", "seconds": 10.0,
    ...        "versions": {"node": "20"}, "rows": [{"scenario": "offline"}, {"scenario": "nested tree"}], "misses": []}
    >>> new = {"date": "d2", "scenarios": ["tree"], "workload": "w2", "seconds": 5.0,
    ...        "versions": {"neo4j": "5"}, "rows": [{"scenario": "nested tree", "n": 2}], "misses": ["tree: 2x"]}
    >>> merged = merge(old, new)
    >>> merged["rows"], merged["scenarios"], merged["versions"], merged["seconds"]
    ([{'scenario': 'offline'}, {'scenario': 'nested tree', 'n': 2}], ['offline', 'tree'], {'node': '20', 'neo4j': '5'}, 15.0)
    >>> [(part["date"], part["scenarios"]) for part in merged["parts"]]
    [('d1', ['offline']), ('d2', ['tree'])]

    Up to a size: the rows measured replace theirs, the larger one stays after them.

    >>> old = {"date": "d1", "scenarios": ["offline"], "workload": "w1", "seconds": 10.0, "versions": {},
    ...        "rows": [{"scenario": "offline", "case": "1M"}, {"scenario": "offline", "case": "10M"}],
    ...        "misses": ["offline, 1M: 8x", "offline, 10M: 9x"]}
    >>> new = {"date": "d2", "scenarios": ["offline"], "workload": "w2", "seconds": 5.0, "versions": {}, "largest": 1,
    ...        "rows": [{"scenario": "offline", "case": "1M", "n": 2}], "misses": ["offline, 1M: 4x"]}
    >>> merged = merge(old, new)
    >>> merged["rows"], merged["misses"]
    ([{'scenario': 'offline', 'case': '1M', 'n': 2}, {'scenario': 'offline', 'case': '10M'}], ['offline, 10M: 9x', 'offline, 1M: 4x'])
    >>> [(part["date"], part["scenarios"], part.get("largest")) for part in merged["parts"]]
    [('d1', ['offline'], None), ('d2', ['offline'], 1)]
    >>> again = merge(merged, {**new, "date": "d3"})
    >>> [(part["date"], part["scenarios"]) for part in again["parts"]], len(again["rows"])
    ([('d1', ['offline']), ('d3', ['offline'])], 2)

    Only the scenario whose larger rows survive keeps the older part in the header.

    >>> old = {"date": "d1", "scenarios": ["offline", "correction"], "workload": "w1", "seconds": 10.0, "versions": {},
    ...        "rows": [{"scenario": "offline", "case": "1M"}, {"scenario": "offline", "case": "10M"},
    ...                 {"scenario": "correction", "case": "1"}], "misses": []}
    >>> new = {"date": "d2", "scenarios": ["offline", "correction"], "workload": "w2", "seconds": 5.0, "versions": {},
    ...        "largest": 1, "rows": [{"scenario": "offline", "case": "1M"}, {"scenario": "correction", "case": "1"}],
    ...        "misses": []}
    >>> [(part["date"], part["scenarios"]) for part in merge(old, new)["parts"]]
    [('d1', ['offline']), ('d2', ['offline', 'correction'])]
    """
    ran = set(result["scenarios"])
    measured = {(row["scenario"], row.get("case")) for row in result["rows"]}
    largest = result.get("largest")

    def kept_as(row: dict[str, Any]) -> str | None:
        if _SCENARIO_OF.get(row["scenario"], row["scenario"]) not in ran:
            return "other"
        return "larger" if largest is not None and (row["scenario"], row.get("case")) not in measured else None

    other = [row for row in previous["rows"] if kept_as(row) == "other"]
    larger = [row for row in previous["rows"] if kept_as(row) == "larger"]
    kept = other + larger
    with_larger = {_SCENARIO_OF.get(row["scenario"], row["scenario"]) for row in larger}

    def still_shown(part: dict[str, Any], scenario: str) -> bool:
        # A part's scenario stays while rows it measured do: one not run now, or the larger sizes
        # of that scenario, run now up to ``largest`` (a part that itself went no further has none
        # left). Was: any scenario's larger row kept every scenario of the older part in the header.
        if scenario not in ran:
            return True
        return scenario in with_larger and largest is not None and (part.get("largest") is None or part["largest"] > largest)

    if not kept:
        return result
    parts = [
        {**part, "scenarios": [s for s in part["scenarios"] if still_shown(part, s)]}
        for part in previous.get("parts") or [_part(previous)]
    ]
    parts = [part for part in parts if part["scenarios"]] + [_part(result)]
    kept_cases = {f"{row['scenario']}, {row.get('case')}:" for row in kept}
    kept_misses = [m for m in previous.get("misses", []) if any(m.startswith(case) for case in kept_cases)]
    return {
        **result,
        "versions": {**previous.get("versions", {}), **result["versions"]},
        "scenarios": sorted({s for part in parts for s in part["scenarios"]}, key=_ORDER.index),
        "seconds": sum(part["seconds"] for part in parts),
        "rows": other + result["rows"] + larger,
        "misses": kept_misses + result["misses"],
        "parts": parts,
    }


_ORDER = ["offline", "recording", "lineage", "correction", "tree", "events", "explorer", "runtime"]


def _part(run: dict[str, Any]) -> dict[str, Any]:
    part = {key: run.get(key) for key in ("date", "commit", "machine", "scenarios", "workload", "seconds")}
    return part | ({"largest": run["largest"]} if run.get("largest") is not None else {})


def _machine(m: dict[str, Any] | None) -> str:
    """A machine as the page names it.

    >>> _machine({"cpu": "AMD EPYC", "cores": 2, "memory_gb": 23.5, "os": "Linux"})
    'AMD EPYC, 2 cores, 23.5 GB, Linux'
    >>> _machine(None)
    'a machine not recorded'
    """
    return f"{m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}" if m else "a machine not recorded"


def write(result: dict[str, Any]) -> Path:
    """Save one run's results (merged into an earlier run of the other scenarios at the same sizes)
    and rewrite docs/benchmarks.md from every saved run."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{result['sizes']}.json"
    if path.exists():
        result = merge(json.loads(path.read_text(encoding="utf-8")), result)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    MARKDOWN.write_text(render(saved_runs()), encoding="utf-8")
    return path


def saved_runs() -> list[dict[str, Any]]:
    """Every saved run of the sizes (``quick.json``, ``full.json``); the other results files beside
    them (``checkpointers.json``) are their own benchmarks' and have pages of their own."""
    found = (RESULTS_DIR / f"{sizes}.json" for sizes in ("quick", "full"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in found if p.exists()]


def render(runs: list[dict[str, Any]]) -> str:
    parts = [INTRO]
    for run in sorted(runs, key=lambda r: r["sizes"] != "quick"):
        parts.append(_run(run))
    if not any(run["sizes"] == "full" for run in runs):
        parts.append(
            "## `full` sizes\n\nNot run yet on this machine (`make bench-full`, an hour or more): the "
            "correction at 100k, the offline scenario at 100k, 1M and 10M decisions and its memory targets are "
            "not measured here.\n"
        )
    parts.append(analysis(runs))
    parts.append(NOTES)
    return "\n".join(parts)


def _run(run: dict[str, Any]) -> str:
    m, v = run["machine"], run["versions"]
    parts = run.get("parts") or []
    # Parts run on other machines say which: their ratios are not comparable with this one's.
    elsewhere = any(part.get("machine") != m for part in parts)
    lines = [
        f"## `{run['sizes']}` sizes, {run['date']}",
        "",
        f"Commit: `{run.get('commit') or 'not recorded'}` (results: `docs/benchmarks/{run['sizes']}.json`).  ",
        f"Machine{' of the latest part' if elsewhere else ''}: {_machine(m)}.  ",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".  ",
        *(
            [f"Workload: {run['workload']}. Whole run: {run['seconds']:.0f} s."]
            if not parts
            else ["Run in parts:  "]
            + [
                f"{', '.join(part['scenarios'])}"
                + (
                    f", up to {part['largest']:,} decisions (the rows of larger sizes from the part above)"
                    if part.get("largest") is not None
                    else ""
                )
                + f" on {part['date']} at `{part.get('commit') or 'commit not recorded'}` "
                + (f"on {_machine(part.get('machine'))} " if part.get("machine") != m else "")
                + f"({part['seconds']:.0f} s; workload: {part['workload']}).  "
                for part in parts
            ]
        ),
        *(
            [f"Scenarios run: {', '.join(run['scenarios'])} (the others were not run at these sizes)."]
            if run.get("scenarios") and len(run["scenarios"]) < len(_ORDER)
            else []
        ),
        "",
        "| scenario | case | ours p50 / p95 | anchor | anchor p50 / p95 | ratio (95% interval) | db hits, ours / anchor "
        "| target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in run["rows"]:
        lines.append(
            f"| {row['scenario']} | {row['case']} | {_cell(row['ours'], row['compare'])} | {row['baseline_name']} | "
            f"{_cell(row['baseline'], row['compare']) if row['baseline'] else ''} | {_ratio(row)}{_interval(row)} | "
            f"{_hits(row)} | {row['target']} | {_met(row['met'], row['target'])} |"
        )
    notes = [row for row in run["rows"] if row.get("note") or _details(row)]
    if notes:
        lines.append("")
        for row in notes:
            details = "; ".join(f"{k} {json.dumps(val)}" for k, val in _details(row).items())
            text = " ".join(t for t in (row.get("note", ""), details) if t)
            lines.append(f"- {row['scenario']}, {row['case']}: {text}")
    lines += _breakdowns(run)
    if run.get("misses"):
        lines += ["", "### Targets missed, and why", ""] + [f"- {m}" for m in run["misses"]]
    return "\n".join(lines) + "\n"


def _details(row: dict[str, Any]) -> dict[str, Any]:
    """A row's extras but its breakdown and db hits, which have columns of their own."""
    return {k: v for k, v in row.get("extra", {}).items() if k not in ("breakdown", "db_hits")}


def _interval(row: dict[str, Any]) -> str:
    """The ratio's interval, where the row's verdict was judged by one.

    >>> _interval({"interval": [1.31, 1.62]}), _interval({"interval": None}), _interval({})
    (' (1.31-1.62)', '', '')
    """
    interval = row.get("interval")
    return f" ({interval[0]:.2f}-{interval[1]:.2f})" if interval else ""


def _hits(row: dict[str, Any]) -> str:
    """Neo4j's db hits of ours and of the anchor's statement, profiled once outside the timed runs.

    >>> _hits({"extra": {"db_hits": {"ours": 1234, "baseline": 1000}}}), _hits({"extra": {"db_hits": {"ours": 5}}}), _hits({})
    ('1,234 / 1,000', '5 / -', '')
    """
    hits = row.get("extra", {}).get("db_hits")
    if not hits:
        return ""
    theirs = hits.get("baseline")
    return f"{hits['ours']:,} / " + (f"{theirs:,}" if theirs is not None else "-")


BREAKDOWN_INTRO = """\
### Where the time went

Medians over each row's measured runs (so the parts need not add up), as the service counted
them: served rows from each response's `Server-Timing` header (`serve --server-timing`: *in the
service* from the request's arrival to its response's start), the correction in process
(`graphdb.timing`). *In the unit of work* is the wall time inside the service's transactions:
sessions, statements, the records' decoding and mapping, the judging a use-case does between
its reads and its writes, and commits; *Neo4j's statements* what Neo4j itself reports they took
(to the first record, then to the last, in whole milliseconds each, so a statement under 1 ms
counts 0), for ours and for the baseline's statement."""


def _breakdowns(run: dict[str, Any]) -> list[str]:
    """The table of where each row's time went, for the rows that recorded it.

    >>> row = {"scenario": "lineage", "case": "x", "ours": {"p50_ms": 5.0}, "baseline": {"p50_ms": 2.0},
    ...        "extra": {"breakdown": {"runs": 30, "ours": {"served_ms": 4.0, "database_ms": 2.5, "neo4j_ms": 1.0,
    ...        "commit_ms": 0.0, "transactions": 1.0, "statements": 2.0}, "baseline": {"neo4j_ms": 1.0}}}}
    >>> print(_breakdowns({"rows": [row]})[-1])
    | lineage | x | 5.0 ms | 4.0 ms | 2.5 ms | 1 / 2 | 1 ms | 0.0 ms | 2.0 ms | 1 ms |
    """
    rows = [row for row in run["rows"] if "breakdown" in row.get("extra", {})]
    if not rows:
        return []
    lines = [
        "",
        BREAKDOWN_INTRO,
        "",
        "| scenario | case | ours p50 | in the service | in the unit of work | transactions / statements "
        "| Neo4j's statements | commits | baseline p50 | baseline's statements |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        ours = row["extra"]["breakdown"]["ours"]
        baseline = row["extra"]["breakdown"].get("baseline")
        served = _ms(ours["served_ms"]) if "served_ms" in ours else "in process"
        theirs = f"{baseline['neo4j_ms']:,.0f} ms" if baseline else ""
        lines.append(
            f"| {row['scenario']} | {row['case']} | {_ms(row['ours']['p50_ms'])} | {served} | {_ms(ours['database_ms'])} | "
            f"{ours['transactions']:g} / {ours['statements']:g} | {ours['neo4j_ms']:,.0f} ms | {_ms(ours['commit_ms'])} | "
            f"{_ms(row['baseline']['p50_ms']) if row.get('baseline') else ''} | "
            f"{theirs} |"
        )
    return lines


def _cell(stats: dict[str, Any], compare: str) -> str:
    """p50 / p95 (or the sample count where there were too few for a p95).

    >>> _cell({"runs": 30, "p50_ms": 2.0, "p95_ms": 3.5, "ops_per_second": 500.0}, "latency")
    '2.0 ms / 3.5 ms'
    >>> _cell({"runs": 5, "p50_ms": 2.0, "p95_ms": None, "ops_per_second": 500.0}, "latency")
    '2.0 ms / n=5, no p95'
    """
    p95 = stats.get("p95_ms")
    text = f"{_ms(stats['p50_ms'])} / " + (_ms(p95) if p95 is not None else f"n={stats['runs']}, no p95")
    if compare == "throughput":
        text += f" ({stats['ops_per_second']:,.0f}/s)"
    return text


def _ms(value: float) -> str:
    return f"{value:,.1f} ms" if value < 10_000 else f"{value / 1000:,.1f} s"


def _ratio(row: dict[str, Any]) -> str:
    """The ratio to two places, or to three where two would print the target's own bound for a
    ratio on either side of it (0.496 beside "no" read as 0.50x against ">= 0.5x").

    >>> _ratio({"ratio": 0.496, "compare": "throughput", "target": ">= 0.5x the raw throughput"})
    '0.496x throughput'
    >>> _ratio({"ratio": 0.512, "compare": "throughput", "target": ">= 0.5x the raw throughput"})
    '0.51x throughput'
    >>> _ratio({"ratio": 1.504, "compare": "latency", "target": "<= 1.5x"}), _ratio({"ratio": 1.5, "compare": "latency", "target": "<= 1.5x"})
    ('1.504x', '1.50x')
    """
    ratio = row.get("ratio")
    if ratio is None:
        return ""
    shown = f"{ratio:.2f}"
    bound = re.search(r"[<>]= ([\d.]+)x", row.get("target") or "")
    if bound and float(shown) == float(bound.group(1)) and ratio != float(bound.group(1)):
        shown = f"{ratio:.3f}"
    return f"{shown}x" + (" throughput" if row["compare"] == "throughput" else "")


def _met(met: bool | None, target: str = "") -> str:
    """The verdict: yes, no, or, for a target whose ratio's interval holds its bound, too close to call.

    >>> _met(True, "<= 1.2x"), _met(False, "<= 1.2x"), _met(None, "<= 1.2x"), _met(None, "")
    ('yes', '**no**', 'too close to call', '')
    """
    if met is None:
        return "too close to call" if target else ""
    return "yes" if met else "**no**"
