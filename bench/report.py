"""Results as JSON (docs/benchmarks/<sizes>.json) and as the tables of docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parents[1] / "docs" / "benchmarks"
MARKDOWN = Path(__file__).parents[1] / "docs" / "benchmarks.md"

INTRO = """\
# Benchmarks

Measured by the harness in `bench/` (`make bench` for the quick sizes, `make bench-full` for
the whole range), never by tests. Every scenario runs our path and its baseline against the
same Neo4j in the same run, **interleaved sample by sample** after warm-up runs of both (who
goes first alternates), so a slow moment of the machine falls on both. Each row gives the
median (p50) and, from 20 samples or more, the p95 (rows with fewer say so), and the ratio to
the baseline: for latency rows ours / baseline (lower is better), for throughput rows our
operations per second over the baseline's (higher is better). Before timing, the two answers
are compared in full (the same decisions and plans for a walk, the same tree with the same
children and dependencies for the nested query, the same count of stored decisions for
writes); each correction's superseded set, ours and the baseline's, is checked against the
closure read before either ran. The raw results, with the git commit they were measured at,
are in `docs/benchmarks/*.json`; this page, the analysis included, is written from them. A run
of some scenarios (`python -m bench --only offline`) or of the sizes up to one
(`--largest 1000000`) replaces the rows it measured and keeps the others, each part with its
date, commit and machine.

How each scenario is built, and what its baseline is, is in [the notes](#notes) below.
"""


def analysis(runs: list[dict[str, Any]]) -> str:
    """Where the time goes and what was done.

    Every figure of a measured row is ``cite``'s, read from the JSON a run wrote, so the page
    cannot claim a row's figure the harness did not measure. The figures said to be "in the lab"
    are typed: profiles and A/B runs of two builds made while changing the code, not in any
    results file (the harness does not yet record a breakdown of where a row's time goes).
    """

    def c(scenario: str, case: str, sizes: str = "quick") -> str:
        return cite(runs, sizes, scenario, case)

    def peak(case: str) -> str:
        return cite_peak(runs, "full", case)

    return f"""\
## Where the time goes, and what was done

The rows' figures in this section are cited from the results files
(`docs/benchmarks/<sizes>.json`) by `bench/report.py`. Figures said to be *in the lab* are not:
they come from profiles (cProfile and py-spy of the served process and of the service calls)
and from A/B runs of two builds taken while changing the code, typed here with the commit that
made the change; the harness does not record them, and a run of it does not check them.

- **Walks no longer explode.** Lineage and impact are one breadth-first walk with a visited set
  in Cypher (`decision/lineage.cypher`, `correction/downstream.cypher`), so a 50-level hierarchy
  of plans costs what its nodes and edges cost: lineage of its deepest decision
  {c("lineage", "lineage of the deepest decision")}, impact of its top strategy
  {c("impact", "impact of the top strategy")}; the 1,000-decision chain:
  {c("lineage", "lineage of the last of")} and {c("impact", "impact of the head of")}.
- **Lineage and impact through GraphQL.** Each is one statement: lineage (whether the decision
  exists, when it was recorded, the walk), impact (the decision, what supersedes it, the walk;
  an `asOf` impact reads the decision first). A selection of ids only is answered at once from
  the ids the walk returned, and the answer is completed directly (`schema/execution.py`): a
  field that only reads its object (an attribute, or a method of `self`) and whole selections of
  such fields are completed in one pass, without graphql-core's per-field steps (a path, a
  resolve info, strawberry's resolver wrapper, an awaitable check at each one); anything else,
  and every error, goes graphql-core's usual way. A read's statements are now each an
  auto-commit transaction in one session (`graphdb.database.Statements`): the statement and its
  records in one round trip, where an explicit read transaction added one to begin and one to
  commit (Neo4j's transactions are read committed, so a read gained nothing by one; in the lab,
  served, alternating the two builds: lineage 4.85 -> 4.34, impact 4.67 -> 4.14 ms p50). The
  baseline, the driver's `execute_query`, sends its BEGIN with the statement and then commits:
  two round trips. At a handful of decisions what remains is the fixed cost of a request
  (Starlette's middleware, strawberry's view, the hop to a worker thread for the driver):
  {c("lineage", "lineage of a deep decision")},
  {c("impact", "impact of a deep decision")}; at 1,000, building and completing one object per
  decision in Python: {c("lineage", "lineage of the last of")} (the id-only plans are now built in
  one step, as the decisions were: 2.6 to 1.2 us each). A profile of the served lineage of 149
  decisions puts a sixth of the process's work in the objects answering the ids, a fifth in
  completing them, and most of the rest in the request's fixed path (the HTTP server,
  Starlette's middleware, strawberry's view, the two thread hops to and from the driver's
  worker). The service now runs on uvicorn's fast event loop and HTTP parser (uvloop and
  httptools, dependencies of the package: asyncio's loop and the pure Python h11 cost about 0.3
  ms more a request in the lab, an empty query 1.15 against 0.85 ms p50, the two builds
  alternating; the bench's ratios moved by less than their run-to-run spread). What would close
  it: a request path that skips what a read of ids does not need (the worker-thread hop,
  strawberry's view), and ids answered as a list of strings rather than objects.
- **Nested tree.** `Plan.tree` looks ahead at its selection; ids, types and relations are
  served from one statement of outlines, returned as one row (a row per decision cost a driver
  message and a lookup per column each), and completed directly as above. Per decision, what
  was left of Python's work was then cut where a profile put it: a direct read's resolve info
  is built only if the read looks at it (an outline's children and dependencies never do), text
  and enum values are completed without graphql-core's per-value steps (strawberry's enum
  serialisation scans its members for each), the partial decisions of the outline are built in
  one step instead of pydantic's copy and update, and the statement leaves out the plan id and
  (but in an as-of read) the times. Then: a list of objects (a tree's entries, a decision's
  children) takes its selection once for all its items; a response path is made only for a
  read that looks at its info (strawberry's `Info` is then built too), where one was made for
  every field and item; the statement returns each outline as a list (a map's keys were decoded
  again per decision); in the lab the in-process tree went from about 68 to 56 ms, the
  statement from 10.8 to 9.3 ms: {c("nested tree", "plan -> decisions")}. What remains is
  the statement's own work (each decision's parent, dependencies and supersession) and one
  Python object per decision, tree entry and field in the answer. What would close more: the
  statement shaped by the selection, so only what is asked is read, and the answer serialised
  from its rows.
- **The tail of every request** was Python's full cycle collections in the served process:
  each walked everything the process had built at start-up (modules, the schema, the driver),
  110-130 ms a time, about every sixth request of a 1,000-decision tree (a p95 of 170 ms where
  the median was 40 ms, in the lab). Once started, the service freezes that heap out of them
  (`app.settle_heap`, `gc.freeze`): 11-25 ms a time, the tree's p95 65 ms in the lab; the tables'
  p95 columns are measured with it.
- **Recording.** A recording locks its plan, reads the facts it is judged by and writes; that
  is two statements and a commit against the baseline's one statement and commit:
  {c("recording", "recordDecision over HTTP, sequential")}. What would close it: one round trip
  fewer (the read and the write in one statement, with placement's rules in Cypher) and a
  cheaper fixed path for a request (in the lab an empty `{{ __typename }}` costs 1.9 ms over
  HTTP with the harness's client, about a third of the raw write). Its events now ride on the write
  statement (`event/append_events`' subquery at its end) where they were a third statement (in
  the lab, in process, alternating the two builds over five rounds: 6.4 -> 5.5 ms p50 a
  recording), and the served process's event relay reads nothing while nobody is subscribed,
  where it read the outbox's end after every commit, in a thread beside the next request (in the
  lab, served, alternating: 9.3 -> 7.7 ms p50 a recording, three rounds of 300). One run of the
  bench does not resolve changes of this size here: the same served build measured 7.8 ms p50 and,
  half an hour later, 11-12 ms in the lab, and this run's baseline rows are slower than the
  previous run's (its results file, in git history) by about as much as ours. Batches are two statements for the
  whole batch (`read_placements`, `create_decisions`). Input objects are now built by a plan
  made once per type (`schema/inputs.py`, strawberry's `from_input` hook) instead of
  strawberry's generic conversion (a third of a large batch's time), canonical ULIDs are
  recognised by a pattern rather than decoded, placement facts come back as one map per item,
  and creation times go to Neo4j as ISO text (the driver's own conversion of a `datetime` was
  a sixth of a large batch). Then: the placement read reads each plan's facts once (its row,
  its root) and answers in one row (a row per recording cost the server and the driver a
  message each: 47 to 31 ms for 1,000 in the lab); the batch's events are one outbox run (a
  node per event was 32 ms of 1,000's writes and commit, 6 ms as a run); the two JSON
  properties of each decision are written by one encoder (`json.dumps` with options built an
  encoder per call: 14 ms of 1,000), and the served process's event relay, woken by every
  commit, stopped reading the events back while nobody is subscribed (it read a batch's 1,000
  rows for no one: in the lab, alternating the two builds, a served batch of 1,000 went from
  336-367 to 296-301 ms), and now reads nothing then (above):
  {c("recording", "recordDecisions over HTTP, batches of 100")}
  at batches of 100, {c("recording", "recordDecisions over HTTP, batches of 1,000")} at 1,000.
  In the lab, of a batch of 1,000 in process: the placement read 31-58 ms, the create statement
  60-90 ms (the baseline's statement alone: 52 ms), the commit 50-60 ms, graphql-core's
  coercion of the variables 21-33 ms, the proposals' validation 15 ms, the judging 12 ms. Each
  decision was validated as a Proposal, then its draft again as a Decision; the draft is now
  built from the proposal's validated fields (`Proposal.draft`; tested equal to the validated
  Decision for every type): 17.5 to 13 ms for the 1,000 recordings' drafts and request
  digests in the lab. The placement read's lookups of a plan's root and of parent candidates
  are hinted as index seeks (`USING INDEX SEEK`): on a freshly loaded database the planner
  scanned the whole index instead, reading every decision of the database for each recording.
  The Neo4j driver formats each statement's parameters for a debug log message even when
  debug logging is off: a batch's rows now go as `graphdb.database.Rows`, a list that message
  shows by its count (7.7 ms of the create statement of 1,000 was that formatting, 1.3 MB of
  text, in the lab; the baseline still pays it for its rows). The placement read looks a
  recording's key up among the plan's reviews only when one of them holds a key (most plans:
  none), where it made an index seek per recording there (in the lab, the statement alone for
  1,000: 63.5 -> 54.6 ms; the two changes together, a batch of 1,000 in process, the builds
  alternating: 340-404 -> 312-365 ms). Then (c1b51ba) the placement read takes the facts of each
  parent a batch names once (a batch's recordings mostly share one or two), where every
  recording sought its parent again (in the lab, the statement for 1,000: 63.4 -> 52.6 ms p50),
  and (4bdad50) a list variable is coerced by a plan made once per type (`schema/variables.py`):
  the checks and values of graphql-core's coercion, whatever the plan would refuse left to
  graphql-core and its errors (tested equal both ways), and no walk of the value for its depth,
  which a type that cannot contain itself does not need (in the lab, the executor's build for
  1,000 inputs: 24 -> 7 ms; served, the two builds alternating batch by batch: 314 -> 294 ms
  p50). The rate the target asks at 1,000, 5,000 decisions a second, is 200 ms a batch: about
  the baseline's own time on this machine. What remains (lab, a batch of 1,000): the
  placement read, 40-55 ms, which the baseline does not do; the create statement and the commit
  about what the baseline's statement and commit cost (a statement writing only each node and
  its two links, with the same rows, measured within the spread of ours); and about 80 ms of
  Python in the served process (py-spy: the judging and the drafts a quarter of it, then the
  proposals' validation, the rows' properties, the driver's packing, the JSON in and out).
  What would close it: the placement read folded into the write statement, which needs
  placement's rules in Cypher (as the correction's would), and one pass from each input to its
  row where a proposal, a draft and a row are built now. (A faster JSON parser for request
  bodies was tried and not kept: orjson reads integers past 64 bits as floats, silently, and
  refuses UTF-16 bodies.)
- **Concurrent recording** (no target): {c("recording", "16 concurrent clients")}. Every write
  numbers its events under one lock, the outbox counter's, which it takes at the end of its last
  statement and holds until its commit, so that numbers follow commit order; writes into different plans
  therefore queue for each other for that statement and the commit. In the lab, with the outbox
  append taken out of a served build (an experiment, not a build to ship: nothing would be
  announced), 16 clients went from 67-89 to 172-183 recordings a second and one client's
  recording from 12.4 to 9.6 ms p50. What would close it: events numbered after their commit,
  many at a time, by the relay under the counter's lock (still gapless, and a reader still never
  sees a later number before an earlier one), so a write holds no lock beyond its plans'.
- **Correction.** Two statements and a commit, against the baseline's one statement and commit,
  without locks: the reads in one (lock the decision and its plan, walk, lock the plans the walk
  touched, walk again under those locks, and read the decision, the pending reviews, append
  mode's anchor, the downstream summarised, and what placing the correction decision is judged
  by: the plan's counter, automation profile and current root, and the decision it will hang
  under); the supersession, which writes the correction decision, walks the downstream again
  where it is, under the same locks, and writes what it reaches, with the phase move, the moot
  reviews' cancellation, the attempt and, at its end, the events:
  {c("correction", "downstream of 1")}, {c("correction", "downstream of 100")},
  {c("correction", "downstream of 10,000")}; at the full sizes {c("correction", "downstream of 10,000", "full")},
  {c("correction", "downstream of 100,000", "full")}. The correction decision's placement read
  and its write were two statements of their own before de4591a (each a round trip: in the
  lab, a `RETURN 1` in a transaction costs 2.0 ms against 1.2 ms for an empty one, the driver's
  Python included); the reads now take those facts (`tests/test_correction.py` checks they are
  what `decision/read_placements` reads) and the supersession writes it with
  `decision/create_decisions`' Cypher (verbatim, checked by `tests/test_cypher.py`): in the lab,
  in process, the builds alternating, a correction of 1 went from 12.7-13.0 to 10.2-11.2 ms p50
  and of 100 from 18.7-20.9 to 16.7 ms. The events of what it supersedes are
  written as runs, plan by plan, taken from the downstream's runs as the reads returned them,
  where an event object and an outbox row were built for each superseded decision and grouped
  back into the same runs (16 ms of 10,000 for the objects alone). Earlier: the superseded ids
  no longer travel back to Neo4j (the supersession walks, as the baseline does, and what it
  reached is counted back and compared with what was judged), the reads return each plan's ids
  in sequence order, the count of each type and each actor run's earliest decision with a
  checkpoint rather than a row per decision, no outbox node per superseded decision, a second
  walk only when the first reached another plan, and only the idempotency keys that exist
  retired. What remains at 1 (lab, in process, p50): the two statements 2.1-2.8 ms each, and
  about 5 ms besides (the transaction's start and commit, and the Python around them, the
  driver's the largest share); at 10,000 (lab, ms, before the last two rounds): the reads about 90 (the walk 20, the summary
  40, locks and the rest), the supersession about 100 (the walk 20, the attempt's ids sorted 15,
  the writes), the commit 150-200 (the baseline's as much: the same supersession, plus our
  attempt and outbox lists). What would close it: at small sizes the reads and the supersession
  in one statement, which needs the judging (the rules of `domain.correction` and placement) in
  Cypher; at large ones the outbox's runs of a supersession stored as a reference to the
  attempt's ids rather than a second copy of them (sent to Neo4j once more, in the
  announcement; the outbox's readers would expand it).
- **Offline.** At scale the offline work goes group by group (a hierarchy, with those it shares
  an edge with): `check --all` and, in GraphML, DOT and both JSON formats, `export --all` load
  one group, check or write it and drop it, so memory holds the largest group rather than the
  database (the export's GraphML body waits in a temporary file until its typed keys are known,
  and the JSON formats' edges until every node is written). On the full sizes' 1M decisions:
  `check --all` {c("offline", "999,950 decisions: check --all group by group, --jobs 1", "full")}
  in one process ({peak("999,950 decisions: check --all group by group, --jobs 1")}),
  {c("offline", "999,950 decisions: check --all group by group, --jobs 2", "full")} with two
  workers; `export --all` {c("offline", "999,950 decisions: export --all", "full")}
  ({peak("999,950 decisions: export --all")}). On 10M: `check --all`
  {c("offline", "9,999,850 decisions: check --all", "full")} ({peak("9,999,850 decisions: check --all")}),
  `export --all` {c("offline", "9,999,850 decisions: export --all", "full")}
  ({peak("9,999,850 decisions: export --all")}), measured at 67cde99 on another machine, before
  the changes below, and not run again (over an hour; `--largest 1000000` leaves them out). For
  reference, the whole database loaded as one graph, checked and exported in one process:
  {c("offline", "999,950 decisions as one graph", "full")} ({peak("999,950 decisions as one graph")});
  on the quick sizes {c("offline", "rules, GraphML export")}. What made it cheaper, round by round:
  the rows are one per plan, holding its decisions, with times as ISO text (hydrating the
  driver's `DateTime`s was most of a load; the baseline streams those same rows and got cheaper
  by the same change); loading holds Python's garbage collector off while it builds the graph
  (the collector ran again and again over the growing graph: two fifths of building one); the
  rules read the graph's own adjacency where an edge view per call cost ten times as much; small
  groups are loaded together, up to 200 plans a load (`graphdb.loading.loads_of`; with workers,
  loads of at most a worker's share of the plans: at the quick sizes each of the 29 hierarchies
  of 7 plans had been read by six statements of its own and checked by the 16 rules on its own,
  and now the 203 plans are two loads). Then (d030346, e05bec9): the rules run with the collector held off
  too (it ran over the loaded graph again and again as the rules built their own dicts and
  lists: a third of the rules' time), the cycle rules peel off the nodes that are on no cycle
  before searching what is left (`tree_per_plan`, the costliest rule, built a graph of every
  PARENT edge to search), and GraphML writes a value as it is when it holds nothing to escape
  (the escapes, run on every value, were two fifths of an export; the document is the same byte
  for byte; DOT's quoting and the JSON formats' values take the same shortcut, not measured
  here: the bench exports GraphML). The 1M rows above are measured with all of it, on this machine, whose baseline
  streamed the rows more slowly than the machine of the 10M rows did: compare ratios within a
  part, not across. At the quick sizes `check --all`
  {c("offline", "check --all group by group, --jobs 1")}, `export --all`
  {c("offline", "export --all group by group")}. At these sizes two workers lose to one,
  {c("offline", "check --all group by group, --jobs 2")}: starting the worker processes (each
  imports the package, 0.6 s, and opens its own connection) costs more than the second core saves
  on a second of work. The quick group-by-group rows are medians of five runs each way,
  interleaved after a warm-up of each (single runs of a few seconds moved by half from one run
  of the bench to the next); the reference rows and the full sizes' rows are single runs. What
  remains (a profile at 100k): building the graph costs about as much again as receiving its
  rows (networkx's `add_node` and `add_edge` half of that, the rows' properties a quarter), and
  the 16 rules half as much again as that, spread over all of them (the costliest a tenth),
  where the baseline only receives the rows. 2x leaves building and judging together no more
  time than receiving the rows: the rules would have to run on arrays (or in Cypher) instead of
  a graph of Python objects.
- **Live events.** A correction writes its events to the outbox in its own transaction (its
  supersessions in one plan as one run, numbered one by one); the
  serving process's relay, woken by the commit, reads them and hands them to every subscriber's
  queue, and each WebSocket sends on its own. The delay runs from the write (the event's `at`,
  stamped in the transaction before its commit) to receipt: {c("events", "a correction")}
  (no baseline; the figure is the p50 delay, the table has the p95). Events written by another
  process on the same Neo4j reach this process's subscribers at the relay's next read, at most
  100 ms later. A process nobody is subscribed to reads nothing from the outbox; a subscription
  reads where it begins (the outbox's end), and its process's relay begins there.
- **Lineage on the 1M-decision database** (`make bench-full`, whose walk shapes are built
  beside the 1M decisions): the deepest decision of 50 levels of plans,
  {c("lineage", "lineage of the deepest decision", "full")}; its p95, against the target of 150 ms
  at depth 20, is the full table's row "p95 on the 1M-decision database".
- **Parsing and validation** of a GraphQL document happen once per distinct document
  (`ParserCache`, `ValidationCache`).
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
    for run in runs:
        if run["sizes"] != sizes:
            continue
        for row in run["rows"]:
            if row["scenario"] == scenario and case in row["case"]:
                base = f" against {_ms(row['baseline']['p50_ms'])}" if row.get("baseline") else ""
                measured = f"{_ms(row['ours']['p50_ms'])}{base} p50, {sizes}.json"
                return f"{_ratio(row)} ({measured})" if row.get("ratio") is not None else f"{measured}"
    return f"(not in the saved {sizes} results)"


def cite_peak(runs: list[dict[str, Any]], sizes: str, case: str) -> str:
    """An offline row's peak resident memory, from the saved run at ``sizes``.

    >>> run = {"sizes": "full", "rows": [{"scenario": "offline", "case": "1 decisions: x", "extra": {"peak_rss_mb": 120.8}}]}
    >>> cite_peak([run], "full", "1 decisions: x"), cite_peak([run], "quick", "1 decisions: x")
    ('peak 121 MB, full.json', 'peak memory not in the saved quick results')
    """
    for run in runs:
        if run["sizes"] != sizes:
            continue
        for row in run["rows"]:
            if row["scenario"] == "offline" and case in row["case"] and "peak_rss_mb" in row.get("extra", {}):
                return f"peak {row['extra']['peak_rss_mb']:,.0f} MB, {sizes}.json"
    return f"peak memory not in the saved {sizes} results"


NOTES = """\
## Notes

- **Workload.** `bench/workload.py` generates seeded plan forests (hierarchies of plans with
  depth and fan-out, a type mix as real runs produce it, DEPENDS_ON edges, superseded history)
  and loads them with batched `UNWIND` writes; the generated data passes every rule of
  `decisiontrail check`.
- **Recording.** Ours is `decisiontrail serve` in its own process, called over HTTP with
  httpx; each recording is one transaction that locks the plan, judges the rules and writes
  the decision with its relationships. The baseline writes the same node and relationships
  with the driver, no rules. Concurrent clients each record into a plan of their own.
- **Correction.** Ours is `services.correction.correct` (what `correctDecision` and the CLI
  call): lock, read the closure, write the correction, supersede, record the attempt. The
  baseline is one hand-written statement that finds the same closure and supersedes it. Each
  run corrects a fresh copy of the fixture, after a warm-up correction of each on a copy of its
  own (checked, not measured). The networkx row computes the same closure in memory on a graph
  already loaded.
- **Lineage and impact.** Ours is the GraphQL query over HTTP; the baseline is the same Cypher
  sent with the driver.
- **Nested tree.** Ours is `plan { tree { decision { children { dependsOn } } } }` over HTTP;
  the peer is @neo4j/graphql serving the same nesting from a minimal Node HTTP server
  (`bench/peer/`), installed from npm by the harness. Both answers are compared before timing.
- **Offline.** `bench/offline.py` runs each row in a process of its own and reports its peak
  resident memory (with worker processes, the largest of any one process; over a row's runs,
  the largest): `check --all` group by group in one and in two worker processes, `export --all` as GraphML (group by group, to
  `/dev/null`), and, for reference and only up to 1M decisions, `load_graph` of the whole
  database, every rule and a GraphML export. The baseline streams the same rows through the
  driver without building a graph. `make bench-full` ends with a database of its own of 10M
  decisions, where only `check --all` (one process) and `export --all` run. At the quick sizes
  each group-by-group row is five runs of ours and of the stream, interleaved (who goes first
  alternates) after a warm-up run of each; at the full sizes, one of each.
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

    def still_shown(part: dict[str, Any], scenario: str) -> bool:
        # A part's scenario stays while rows it measured do: one not run now, or the larger sizes
        # of one run now up to ``largest`` (a part that itself went no further has none left).
        if scenario not in ran:
            return True
        return bool(larger) and largest is not None and (part.get("largest") is None or part["largest"] > largest)

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


_ORDER = ["offline", "recording", "lineage", "correction", "tree", "events", "explorer"]


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
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RESULTS_DIR.glob("*.json"))]
    MARKDOWN.write_text(render(runs), encoding="utf-8")
    return path


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
        "| scenario | case | ours p50 / p95 | baseline | baseline p50 / p95 | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in run["rows"]:
        lines.append(
            f"| {row['scenario']} | {row['case']} | {_cell(row['ours'], row['compare'])} | {row['baseline_name']} | "
            f"{_cell(row['baseline'], row['compare']) if row['baseline'] else ''} | {_ratio(row)} | {row['target']} | "
            f"{_met(row['met'])} |"
        )
    notes = [row for row in run["rows"] if row.get("note") or row.get("extra")]
    if notes:
        lines.append("")
        for row in notes:
            details = "; ".join(f"{k} {json.dumps(val)}" for k, val in row.get("extra", {}).items())
            text = " ".join(t for t in (row.get("note", ""), details) if t)
            lines.append(f"- {row['scenario']}, {row['case']}: {text}")
    if run.get("misses"):
        lines += ["", "### Targets missed, and why", ""] + [f"- {m}" for m in run["misses"]]
    return "\n".join(lines) + "\n"


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
    ratio = row.get("ratio")
    if ratio is None:
        return ""
    return f"{ratio:.2f}x" + (" throughput" if row["compare"] == "throughput" else "")


def _met(met: bool | None) -> str:
    return "" if met is None else ("yes" if met else "**no**")
