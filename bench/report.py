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
same Neo4j in the same run; each row gives medians (p50) and p95 over repeated runs and the
ratio to the baseline. For latency rows the ratio is ours / baseline (lower is better); for
throughput rows it is our operations per second over the baseline's (higher is better).
The raw results are in `docs/benchmarks/*.json`; this page is written from them.

How each scenario is built, and what its baseline is, is in [the notes](#notes) below.
"""

ANALYSIS = """\
## Where the time goes, and what was done

Measured with the profiler (cProfile and `PROFILE`) on this machine while writing the harness:

- **A transaction's floor.** On this VM an empty write transaction (`RETURN 1` through
  `execute_write`) takes about 11 ms: session, BEGIN, RUN and COMMIT are round trips of 2–3 ms
  each on loopback. The raw single write, one statement, is 9 ms. A recording needs to read
  the plan's facts under its lock before it writes, so it cannot be one statement, and the
  HTTP and GraphQL layers come on top: **the 10 ms single-recording target is below what this
  machine gives the engine itself** (see the ratio in the table). Recording no longer reads the
  plan and the parent through the API's DataLoaders first when the caller may see every plan
  (only actors are limited; the store's own checks answer for what does not exist), which
  took the p50 from 48 to 28 ms.
- **Batches.** `recordDecisions` was one placement read and one create per decision (200 round
  trips for 100); it is now two statements for the whole batch (`read_placements`,
  `create_decisions`), with each proposal judged as if the earlier ones were written; with the
  pre-reads gone too, throughput went from 0.07x to about 0.3x the raw `UNWIND`. What remains
  is mostly Python: strawberry converting 100 nested inputs, the proposals' validation,
  placing and mapping.
  Next: convert inputs without strawberry's generic converter, and build the rows for the
  create statement straight from the validated proposals. The ratio moves between runs on this
  VM (0.17x to 0.32x): an A/B of this commit against the one before it, in the same hour, gave
  208 and 190 ms per batch of 100, so no change of this round made batches slower.
- **Writers into one plan.** Neo4j 5 aborts a transaction *waiting* for a node's lock with
  `DeadlockDetected` whenever the holder links a relationship to that node. The plan's lock was
  its `:Plan` node, and every recording links its decision to it, so concurrent writers into one
  plan never queued: they aborted and retried (8 writers x 50 decisions into one plan took
  47–120 s, and after a Neo4j restart such storms held requests past 30 s). Writers now queue on
  a `:PlanLock` node that nothing links to: the same 400 writes take 4 s.
- **Correction.** Ours reads the closure twice (plan ids to lock, then the whole closure
  under the locks) and writes the correction, the attempt and the supersession in separate
  statements; the hand-written baseline does one walk and no locking, and would let a
  concurrent recording escape the supersession. The second full read and the per-row
  validation of the closure were removed (3.9x to ~3x at 10k), then the round trips cut from
  nine to six (`begin_correction` locks, reads the decision whole and the plans to lock in one
  statement; `lock_and_read_downstream` locks and reads the closure in one): at a downstream
  of 1 the ratio went from 4.6x to 2.5x. What remains at 1 is those six statements against one;
  at 10k it is the closure's 10,000 rows travelling to Python and back as ids. On the full
  run's 1M-decision database the fixed part weighs more: 7.3x at 1 (66 against 9 ms), 4.5x at
  100, 3.0x at 10k and 3.1x at 100k (19.3 against 6.2 s). Next: supersede
  from the walk itself inside the locked transaction instead of sending the ids back.
- **Nested tree.** @neo4j/graphql compiles the whole selection into one Cypher statement.
  Ours resolved field by field in Python (graphql-core): three round trips, ~1,000 decisions
  decoded into full records (a third of the time: the driver's datetime hydration and
  pydantic's validation of ids), and ~6,300 field resolutions, 2,000 of them async
  (`children`, `dependsOn`: a coroutine and a task each, half the execution time). Now
  `Plan.tree` looks ahead at its selection: when it asks only for what an outline holds (ids,
  type, phase, status, sequence, `children` and `dependsOn` at any depth;
  `schema/selection.py`), one statement (`decision/plan_outline`) reads the plan's decisions
  as outlines built without validation, and `children`/`dependsOn` answer synchronously from
  them; dependencies in other plans still go through the loaders and their visibility
  filter, and `asOf` is served too. Any other field takes the field-by-field path. Two
  statements at any tree size instead of three, and on this (shared, loaded) machine the
  same process measured 3.8 s → 1.1 s p50 over HTTP, 0.9 s → 0.3 s of Python CPU in process;
  `--only tree` went from 5.5x to 3.4x the peer (both runs on that loaded machine), and the
  quick run on a quiet machine from 9.3x to 2.8x (1,036 ms to 297 ms p50).
  What remains is strawberry's cost per field (an `Info` object, argument conversion and the
  extension chain for every resolver-backed scalar such as `id`); next: serve the outline's
  scalars as plain attributes.
- **Lineage and impact** pay the same GraphQL and record-decoding cost per decision returned.
- **Parsing and validation** of a GraphQL document now happen once per distinct document
  (`ParserCache`, `ValidationCache`), not per request.
"""

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
  run corrects a fresh copy of the fixture. The networkx row computes the same closure in
  memory on a graph already loaded.
- **Lineage and impact.** Ours is the GraphQL query over HTTP; the baseline is the same Cypher
  sent with the driver.
- **Nested tree.** Ours is `plan { tree { decision { children { dependsOn } } } }` over HTTP;
  the peer is @neo4j/graphql serving the same nesting from a minimal Node HTTP server
  (`bench/peer/`), installed from npm by the harness. Both answers are compared before timing.
- **Offline.** `bench/offline.py` runs in a process of its own: `load_graph` of the whole
  database, every rule, and a GraphML export; its peak resident memory is reported. The
  baseline streams the same rows through the driver without building a graph.
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
_SCENARIO_OF = {"impact": "lineage", "nested tree": "tree"}


def merge(previous: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A run of some scenarios (``--only``) replaces those scenarios' rows in the previous run at
    the same sizes and keeps the others, with the date, workload and duration of each part.

    >>> old = {"date": "d1", "scenarios": ["offline", "tree"], "workload": "w1", "seconds": 10.0,
    ...        "versions": {"node": "20"}, "rows": [{"scenario": "offline"}, {"scenario": "nested tree"}], "misses": []}
    >>> new = {"date": "d2", "scenarios": ["tree"], "workload": "w2", "seconds": 5.0,
    ...        "versions": {"neo4j": "5"}, "rows": [{"scenario": "nested tree", "n": 2}], "misses": ["tree: 2x"]}
    >>> merged = merge(old, new)
    >>> merged["rows"], merged["scenarios"], merged["versions"], merged["seconds"]
    ([{'scenario': 'offline'}, {'scenario': 'nested tree', 'n': 2}], ['offline', 'tree'], {'node': '20', 'neo4j': '5'}, 15.0)
    >>> [(part["date"], part["scenarios"]) for part in merged["parts"]]
    [('d1', ['offline']), ('d2', ['tree'])]
    """
    ran = set(result["scenarios"])
    kept = [row for row in previous["rows"] if _SCENARIO_OF.get(row["scenario"], row["scenario"]) not in ran]
    if not kept:
        return result
    parts = [
        {**part, "scenarios": [s for s in part["scenarios"] if s not in ran]}
        for part in previous.get("parts") or [_part(previous)]
    ]
    parts = [part for part in parts if part["scenarios"]] + [_part(result)]
    kept_misses = [m for m in previous.get("misses", []) if m.split(",")[0] in {row["scenario"] for row in kept}]
    return {
        **result,
        "versions": {**previous.get("versions", {}), **result["versions"]},
        "scenarios": sorted({s for part in parts for s in part["scenarios"]}, key=_ORDER.index),
        "seconds": sum(part["seconds"] for part in parts),
        "rows": kept + result["rows"],
        "misses": kept_misses + result["misses"],
        "parts": parts,
    }


_ORDER = ["offline", "recording", "lineage", "correction", "tree"]


def _part(run: dict[str, Any]) -> dict[str, Any]:
    return {key: run[key] for key in ("date", "scenarios", "workload", "seconds")}


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
            "correction at 100k, the offline scenario at 100k and 1M decisions and its 8 GB target are "
            "not measured here.\n"
        )
    parts.append(ANALYSIS)
    parts.append(NOTES)
    return "\n".join(parts)


def _run(run: dict[str, Any]) -> str:
    m, v = run["machine"], run["versions"]
    lines = [
        f"## `{run['sizes']}` sizes, {run['date']}",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}.  ",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".  ",
        *(
            [f"Workload: {run['workload']}. Whole run: {run['seconds']:.0f} s."]
            if not run.get("parts")
            else ["Run in parts:  "]
            + [
                f"{', '.join(part['scenarios'])} on {part['date']} ({part['seconds']:.0f} s; workload: {part['workload']}).  "
                for part in run["parts"]
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
    text = f"{_ms(stats['p50_ms'])} / {_ms(stats['p95_ms'])}"
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
