"""``python -m bench.checkpointers``: our Neo4j checkpointer beside langchain-neo4j's and langgraph-checkpoint-neo4j's.

Needs the ``bench`` extra (``.venv/bin/pip install -c constraints.txt -e '.[bench]'``). Each saver
gets an embedded Neo4j of its own, started alike (the two others use the labels ``Checkpoint`` and
``CheckpointWrite`` too, so they cannot share a database with ours). One thread of 1,000 checkpoints
is written to each, the savers interleaved checkpoint by checkpoint (who goes first rotates), after
a warm-up thread; every saver stores the same checkpoints (same ids, values, metadata and writes).
Then reads are timed the same way: the latest checkpoint, and one by id (the same random ids for
all), each read compared with what was written. Bytes per checkpoint: the growth of the database's
store files over the 1,000 (after a Neo4j checkpoint, transaction logs excluded). Last, LangGraph's
conformance suite runs against each. Results: docs/benchmarks/checkpointers.json (docs/checkpoints.md).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import random
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import neo4j
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint
from langgraph.checkpoint.base.id import uuid6

from bench import report
from bench.harness import Stats, git_commit
from decisiontrail.graphdb import open_graph
from decisiontrail.graphdb.checkpoints import Neo4jCheckpointSaver
from decisiontrail.graphdb.connection import create_driver
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, free_port
from decisiontrail.settings import Neo4jSettings

RESULTS = report.RESULTS_DIR / "checkpointers.json"
THREAD = "bench-thread"
PLAN_ID = "plan-bench"
PEERS = {"langchain-neo4j": "langchain_neo4j.checkpoint", "langgraph-checkpoint-neo4j": "langgraph.checkpoint.neo4j"}
"""The other savers by distribution, and the module whose ``Neo4jSaver(driver)`` each is."""


@dataclass
class Subject:
    """One saver under test, on a Neo4j of its own."""

    name: str
    saver: BaseCheckpointSaver[Any] | None
    driver: neo4j.Driver
    embedded: EmbeddedNeo4j
    problem: str | None = None
    store_bytes_before: int = 0
    store_bytes_after: int = 0
    versions: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None
    samples: dict[str, list[float]] = field(
        default_factory=lambda: {"put": [], "put_writes": [], "get_latest": [], "get_by_id": []}
    )
    wrong_reads: int = 0


def payload(step: int) -> tuple[dict[str, Any], set[str]]:
    """An actor's channels at ``step``, and the channels that step changed: the last 20 messages
    (about 6 kB, every step), the step (every step) and a plan (about 1 kB, every tenth step)."""
    messages = [
        {"role": "ai" if k % 2 else "human", "content": f"message {k}: " + "x" * 280} for k in range(max(0, step - 19), step + 1)
    ]
    plan = {"plan_id": PLAN_ID, "steps": [f"step {k}: " + "y" * 80 for k in range(10)], "revision": step // 10}
    changed = {"messages", "step"} | ({"plan"} if step % 10 == 0 else set())
    return {"messages": messages, "plan": plan, "step": step}, changed


def put_one(subject: Subject, step: int, checkpoint_id: str, thread_id: str = THREAD) -> tuple[float, float]:
    """Store checkpoint ``step`` and a task's writes against it; the seconds each call took."""
    saver = subject.saver
    assert saver is not None
    values, changed = payload(step)
    new_versions = {ch: saver.get_next_version(subject.versions.get(ch), None) for ch in sorted(changed)}
    subject.versions.update(new_versions)
    checkpoint = Checkpoint(
        v=1,
        id=checkpoint_id,
        ts=datetime.now(UTC).isoformat(),
        channel_values=values,
        channel_versions=dict(subject.versions),
        versions_seen={"agent": dict(subject.versions)},
        updated_channels=sorted(changed),
    )
    configurable = {"thread_id": thread_id, "checkpoint_ns": "", "plan_id": PLAN_ID}
    config: RunnableConfig = {"configurable": {**configurable, **({"checkpoint_id": subject.parent} if subject.parent else {})}}
    metadata: Any = {"source": "loop", "step": step, "parents": {}, "run_id": f"run-{step // 100}"}
    started = time.perf_counter()
    stored = saver.put(config, checkpoint, metadata, new_versions)
    put_seconds = time.perf_counter() - started
    subject.parent = stored["configurable"]["checkpoint_id"]
    writes = [("messages", [{"role": "tool", "content": f"result {step}"}]), ("step", step + 1)]
    started = time.perf_counter()
    saver.put_writes(stored, writes, f"task-{step}")
    return put_seconds, time.perf_counter() - started


def read_one(subject: Subject, config: RunnableConfig, step: int | None) -> float:
    """Read a checkpoint; the seconds it took. A read whose values differ from what was written counts as wrong."""
    assert subject.saver is not None
    started = time.perf_counter()
    found = subject.saver.get_tuple(config)
    seconds = time.perf_counter() - started
    expected = payload(step)[0] if step is not None else None
    if found is None or (expected is not None and found.checkpoint["channel_values"] != expected) or not found.pending_writes:
        subject.wrong_reads += 1
    return seconds


def measure(subjects: list[Subject], checkpoints: int, warmup: int, reads: int, say: Callable[[str], None]) -> list[str]:
    """Interleave the savers over one thread of ``checkpoints``; the checkpoint ids written."""
    ids = [str(uuid6(clock_seq=step)) for step in range(checkpoints + warmup)]

    def rotated(i: int) -> list[Subject]:
        live = [s for s in subjects if s.problem is None]
        return live[i % len(live) :] + live[: i % len(live)] if live else []

    def guarded(subject: Subject, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as e:  # a peer that fails is reported, not measured
            subject.problem = f"{type(e).__name__}: {e}"
            say(f"{subject.name} failed: {subject.problem}\n{traceback.format_exc()}")

    for step in range(warmup):
        for subject in rotated(step):

            def warm_up(s: Subject = subject, k: int = step) -> None:
                put_one(s, k, ids[checkpoints + k], "warm-up")

            guarded(subject, warm_up)
    for subject in subjects:
        subject.versions, subject.parent = {}, None
        subject.store_bytes_before = store_bytes(subject)
    for step in range(checkpoints):
        for subject in rotated(step):

            def timed_put(s: Subject = subject, k: int = step) -> None:
                put_seconds, writes_seconds = put_one(s, k, ids[k])
                s.samples["put"].append(put_seconds * 1000)
                s.samples["put_writes"].append(writes_seconds * 1000)

            guarded(subject, timed_put)
        if step % 100 == 99:
            say(f"put {step + 1:,}/{checkpoints:,}")
    for subject in subjects:
        subject.store_bytes_after = store_bytes(subject)
    chosen = random.Random(7).choices(range(checkpoints), k=reads)
    for i, step in enumerate(chosen[: min(20, reads)] + chosen):  # the first 20 warm the restarted servers up
        timed = i >= min(20, reads)
        for subject in rotated(i):

            def timed_reads(s: Subject = subject, k: int = step, timed: bool = timed) -> None:
                latest: RunnableConfig = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
                by_id: RunnableConfig = {"configurable": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": ids[k]}}
                latest_ms, by_id_ms = read_one(s, latest, checkpoints - 1) * 1000, read_one(s, by_id, k) * 1000
                if timed:
                    s.samples["get_latest"].append(latest_ms)
                    s.samples["get_by_id"].append(by_id_ms)

            guarded(subject, timed_reads)
    return ids


def store_bytes(subject: Subject) -> int:
    """The size of the database's store files (transaction logs excluded) with the server stopped, so
    that everything is written out (Community has no ``db.checkpoint``); the server is started again
    on the same port, where the saver's driver finds it."""
    subject.embedded.stop()
    store = subject.embedded.data_dir / "data" / "databases" / "neo4j"
    size = sum(path.stat().st_size for path in store.rglob("*") if path.is_file())
    subject.embedded.start()
    return size


def counts(driver: neo4j.Driver) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "CALL () { MATCH (n) RETURN count(n) AS nodes } CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships } "
        "RETURN nodes, relationships",
        database_="neo4j",
    )
    return {"nodes": records[0]["nodes"], "relationships": records[0]["relationships"]}


Factory = Callable[[], AsyncIterator[BaseCheckpointSaver[Any]]]


def conformance(name: str, factory: Factory) -> dict[str, Any]:
    """LangGraph's conformance suite, every capability, on the savers ``factory`` yields."""
    from langgraph.checkpoint.conformance import checkpointer_test, validate

    try:
        return asyncio.run(validate(checkpointer_test(name=name)(factory))).to_dict()
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


class Threaded(BaseCheckpointSaver[Any]):
    """A sync saver's methods as the async ones the suite calls, each in a worker thread (as ours
    does): so the suite checks the sync code the benchmark times."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config: RunnableConfig) -> Any:
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, **kwargs: Any) -> AsyncIterator[Any]:
        for item in await asyncio.to_thread(lambda: list(self.inner.list(config, **kwargs))):
            yield item

    async def aput(self, *args: Any) -> Any:
        return await asyncio.to_thread(self.inner.put, *args)

    async def aput_writes(self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = "") -> None:
        await asyncio.to_thread(self.inner.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.inner.delete_thread, thread_id)


def peer_factories(module: str, uri: str, driver: neo4j.Driver) -> dict[str, Factory]:
    """A peer's sync saver through ``Threaded``, and its own async saver (``<module>.aio.AsyncNeo4jSaver``)."""

    async def threaded() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield Threaded(importlib.import_module(module).Neo4jSaver(driver))

    async def native() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        async with neo4j.AsyncGraphDatabase.driver(uri) as async_driver:
            saver = importlib.import_module(f"{module}.aio").AsyncNeo4jSaver(async_driver)
            await saver.setup()
            yield saver

    return {"sync, in threads": threaded, "async": native}


@contextmanager
def server(scratch: Path, name: str, say: Callable[[str], None]) -> Iterator[tuple[EmbeddedNeo4j, neo4j.Driver]]:
    defaults = Neo4jSettings.from_env()
    port = free_port()  # kept across the restarts that measure its store
    with EmbeddedNeo4j(
        scratch / name, cache_dir=defaults.cache_dir, bolt_port=port, heap_mb=1024, pagecache_mb=256, progress=say
    ) as embedded:
        assert embedded.uri is not None
        with create_driver(embedded.uri, None, None) as driver:
            yield embedded, driver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.checkpointers", description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=1000, help="checkpoints in the measured thread (1,000)")
    parser.add_argument("--reads", type=int, default=200, help="timed reads of each kind (200)")
    parser.add_argument("--warmup", type=int, default=50, help="checkpoints in the warm-up thread (50)")
    parser.add_argument("--no-write", action="store_true", help=f"print the results, do not write {RESULTS.name}")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="decisiontrail-bench-checkpointers-") as scratch, ExitStack() as stack:
        subjects: list[Subject] = []
        suites: dict[str, dict[str, Factory]] = {}
        embedded, driver = stack.enter_context(server(Path(scratch), "ours", say))
        settings = replace(Neo4jSettings.from_env(), uri=embedded.uri)
        graph = stack.enter_context(open_graph(settings, progress=say))  # our migrations, as at start-up

        async def ours() -> AsyncIterator[BaseCheckpointSaver[Any]]:
            yield Neo4jCheckpointSaver(graph)

        suites["decisiontrail"] = {"async (sync methods in threads)": ours}
        subjects.append(Subject("decisiontrail", Neo4jCheckpointSaver(graph), driver, embedded))
        for name, module in PEERS.items():
            embedded, driver = stack.enter_context(server(Path(scratch), name, say))
            subject = Subject(name, None, driver, embedded)
            try:
                saver_class = importlib.import_module(module).Neo4jSaver
                made = saver_class(driver)
                made.setup()
                subject.saver = made
                assert embedded.uri is not None
                suites[name] = peer_factories(module, embedded.uri, driver)
            except Exception as e:
                subject.problem = f"cannot be used: {type(e).__name__}: {e}"
            subjects.append(subject)
        measure(subjects, args.checkpoints, args.warmup, args.reads, say)
        rows = {}
        for subject in subjects:
            row: dict[str, Any] = {"version": _version(subject.name), "problem": subject.problem}
            if subject.problem is None:
                grown = subject.store_bytes_after - subject.store_bytes_before
                row |= {name: Stats(tuple(samples)).as_json() for name, samples in subject.samples.items()} | {
                    "bytes_per_checkpoint": round(grown / args.checkpoints),
                    "wrong_reads": subject.wrong_reads,
                    **counts(subject.driver),
                }
            say(f"{subject.name}: conformance suite")
            row["conformance"] = {
                how: conformance(f"{subject.name} ({how})", f) for how, f in suites.get(subject.name, {}).items()
            }
            rows[subject.name] = row
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(),
        "machine": report.machine(),
        "versions": {p: _version(p) for p in ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-conformance", "neo4j")},
        "neo4j_server": "embedded Neo4j Community, one per saver, heap 1024 MB, page cache 256 MB",
        "checkpoints": args.checkpoints,
        "warmup": args.warmup,
        "reads": args.reads,
        "seconds": round(time.monotonic() - started),
        "savers": rows,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text + "\n", encoding="utf-8")
        say(f"wrote {RESULTS}")
    return 0


def _version(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
