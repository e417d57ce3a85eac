"""The actors' LangGraph checkpointer in Neo4j: LangGraph's conformance suite, dump and restore, retention."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES, Capability
from langgraph.checkpoint.conformance.report import CapabilityReport
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.graphdb.checkpoints import Neo4jCheckpointSaver
from decisiontrail.services import Trail, backup
from decisiontrail.services.retention import prune
from decisiontrail.access import LOCAL
from test_backup import canonical, empty, no_restore_leftovers
from test_retention import POLICY, _finished_work, _later

IMPLEMENTED = {c.value for c in BASE_CAPABILITIES} | {Capability.COPY_THREAD.value}


def conformance(saver_class: type[Neo4jCheckpointSaver], graph: Graph, capability: str) -> CapabilityReport:
    """LangGraph's conformance suite for one capability, on a saver of ``saver_class`` over ``graph``."""

    @checkpointer_test(name=saver_class.__name__)
    async def saver() -> AsyncIterator[Neo4jCheckpointSaver]:
        yield saver_class(graph)

    return asyncio.run(validate(saver, capabilities={capability}))


@pytest.mark.parametrize("capability", [c.value for c in Capability])
def test_the_saver_passes_langgraphs_conformance_suite(store: Trail, graph: Graph, capability: str) -> None:
    report = conformance(Neo4jCheckpointSaver, graph, capability)

    result = report.results[capability]
    if capability in IMPLEMENTED:
        assert result.detected and result.passed and result.tests_failed == 0, result.failures
        assert result.tests_passed > 0
    else:
        # Optional, and not implemented (docs/checkpoints.md says why): the suite must say so, not skip quietly.
        assert not result.detected and result.passed is None


class ForgetfulSaver(Neo4jCheckpointSaver):
    """A saver that loses every pending write: the suite must notice."""

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        return None


def test_the_suite_fails_a_saver_that_loses_writes(store: Trail, graph: Graph) -> None:
    report = conformance(ForgetfulSaver, graph, Capability.PUT_WRITES.value)

    result = report.results[Capability.PUT_WRITES.value]
    assert result.passed is False and result.tests_failed >= 5, result.failures


# -- an actor checkpointed in Neo4j ---------------------------------------------------------------------


class State(TypedDict):
    notes: list[str]
    raw: bytes


def _note(state: State) -> dict[str, Any]:
    return {"notes": [*state["notes"], f"step {len(state['notes'])}"], "raw": state["raw"] + b"\x00\xff"}


def actor(saver: BaseCheckpointSaver[Any]) -> Any:
    """A two-step LangGraph graph whose state holds text and bytes."""
    builder = StateGraph(State)
    builder.add_node("first", _note)
    builder.add_node("second", _note)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile(checkpointer=saver)


def run_actor(saver: BaseCheckpointSaver[Any], thread_id: str, plan_id: str | None) -> RunnableConfig:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, **({"plan_id": plan_id} if plan_id else {})}}
    actor(saver).invoke({"notes": [thread_id], "raw": b"\x01"}, config)
    return config


def history(saver: BaseCheckpointSaver[Any], thread_id: str) -> list[CheckpointTuple]:
    return list(saver.list({"configurable": {"thread_id": thread_id}}))


def _count(graph: Graph, label: str) -> int:
    records, _, _ = graph.driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS n", database_=graph.database)
    return int(records[0]["n"])


def _run_and_replay(saver: BaseCheckpointSaver[Any]) -> tuple[Any, list[tuple[Any, ...]]]:
    """An actor's run, then a replay from the checkpoint before its last step: what it returned,
    and its thread's history as (source, step, values, pending writes' channels), newest first."""
    config = run_actor(saver, "thread-a", "plan-a")
    before_last = history(saver, "thread-a")[1].config
    replayed = actor(saver).invoke(None, before_last)
    steps = [
        (t.metadata["source"], t.metadata["step"], t.checkpoint["channel_values"], [w[1] for w in t.pending_writes or []])
        for t in history(saver, config["configurable"]["thread_id"])
    ]
    return replayed, steps


def test_an_actor_runs_and_replays_as_with_langgraphs_own_saver(store: Trail, graph: Graph) -> None:
    saver = Neo4jCheckpointSaver(graph)

    ours = _run_and_replay(saver)

    assert ours == _run_and_replay(InMemorySaver())
    state = actor(Neo4jCheckpointSaver(graph)).get_state({"configurable": {"thread_id": "thread-a"}})  # another replica
    assert state.values == {"notes": ["thread-a", "step 1", "step 2"], "raw": b"\x01\x00\xff\x00\xff"}
    # The replay's checkpoints name no plan in their config: they are their parents' plan's, for retention.
    records, _, _ = graph.driver.execute_query("MATCH (c:Checkpoint) RETURN collect(DISTINCT c.plan_id) AS plans, count(c) AS n")
    assert (records[0]["plans"], records[0]["n"]) == (["plan-a"], len(ours[1]))


# -- dump and restore -----------------------------------------------------------------------------------


def test_checkpoints_survive_dump_and_restore(store: Trail, graph: Graph, tmp_path: Path) -> None:
    saver = Neo4jCheckpointSaver(graph)
    config = run_actor(saver, "thread-a", "plan-a")
    latest = saver.get_tuple(config)
    assert latest is not None
    saver.put_writes(latest.config, [("notes", ["pending"]), (ERROR, "failed"), (INTERRUPT, {"ask": b"\x00"})], "task-1", "a:b")
    saver.copy_thread("thread-a", "thread-copy")
    before = [history(saver, t) for t in ("thread-a", "thread-copy")]
    graph_before = canonical(graph)
    path = tmp_path / "checkpoints.dump.gz"

    dumped = backup.dump(store, path, progress=False, principal=LOCAL)
    delete_all_data(graph)
    assert empty(graph)
    restored = backup.restore(store, path, progress=False, principal=LOCAL)

    assert (restored.nodes, restored.relationships) == (dumped.nodes, dumped.relationships)
    assert canonical(graph) == graph_before
    assert no_restore_leftovers(graph)
    after = [history(Neo4jCheckpointSaver(graph), t) for t in ("thread-a", "thread-copy")]
    assert after == before
    assert after[0][0].pending_writes == [
        ("task-1", INTERRUPT, {"ask": b"\x00"}),  # in writes_sort_key order: by index, the special ones first
        ("task-1", ERROR, "failed"),
        ("task-1", "notes", ["pending"]),
    ]
    # Byte arrays travel as tagged base64 in the file's JSON.
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    checkpoints = [r for r in records if "Checkpoint" in r.get("labels", [])]
    assert checkpoints and all(r["properties"]["checkpoint"]["$"] == "bytes" for r in checkpoints)
    # The restored actor goes on from where it was.
    resumed = actor(Neo4jCheckpointSaver(graph)).invoke({"notes": ["again"], "raw": b""}, config)
    assert resumed["notes"] == ["again", "step 1", "step 2"]


# -- retention -----------------------------------------------------------------------------------------


def test_retention_deletes_a_pruned_plans_checkpoints_and_keeps_the_others(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    gone, kept = work["child"].plan_id, work["plan"].plan_id  # the invalidated child goes whole; its parent stays
    saver = Neo4jCheckpointSaver(graph)
    run_actor(saver, "child-thread", gone)
    child = saver.get_tuple({"configurable": {"thread_id": "child-thread", "checkpoint_ns": ""}})
    assert child is not None
    saver.put_writes(child.config, [("notes", ["pending"])], "task-1")
    run_actor(saver, "parent-thread", kept)
    run_actor(saver, "no-plan-thread", None)
    saver.copy_thread("child-thread", "copied-thread")  # a copy holds the child's blobs, and names its plan
    kept_before = history(saver, "parent-thread")
    blobs_before = _count(graph, "CheckpointBlob")

    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    assert gone in result.plan_ids and kept not in result.plan_ids
    assert history(saver, "child-thread") == [] and history(saver, "copied-thread") == []
    assert history(saver, "parent-thread") == kept_before
    assert len(history(saver, "no-plan-thread")) == 4  # written with no plan: delete_thread's to delete
    assert _count(graph, "CheckpointWrite") == sum(len(t.pending_writes or []) for t in kept_before) + sum(
        len(t.pending_writes or []) for t in history(saver, "no-plan-thread")
    )
    assert 0 < _count(graph, "CheckpointBlob") < blobs_before


def test_a_blob_stays_while_a_checkpoint_holds_it(store: Trail, graph: Graph) -> None:
    saver = Neo4jCheckpointSaver(graph)
    run_actor(saver, "thread-a", "plan-a")
    saver.copy_thread("thread-a", "thread-b")
    copied = history(saver, "thread-b")

    saver.delete_thread("thread-a")

    assert history(saver, "thread-a") == []
    assert history(saver, "thread-b") == copied
    saver.delete_thread("thread-b")
    assert (_count(graph, "Checkpoint"), _count(graph, "CheckpointBlob"), _count(graph, "CheckpointWrite")) == (0, 0, 0)


def test_listing_every_thread_at_once_is_refused(store: Trail, graph: Graph) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        list(Neo4jCheckpointSaver(graph).list(None))
