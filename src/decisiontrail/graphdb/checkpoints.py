"""LangGraph checkpoints in Neo4j: the actors' checkpointer, in the same database as their decisions.

So a checkpoint is in every dump and restore, visible to every replica, and deleted by retention
with its plan (``retention/delete_plans``). The model (docs/checkpoints.md)::

    (:Checkpoint {thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
                  metadata, plan_id})-[:HOLDS]->(:CheckpointBlob {channel, version, type, blob})
    (:CheckpointWrite {thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob})

A checkpoint's body (without its channel values) and every value are serialized by the saver's
``serde`` and stored as Neo4j byte arrays beside their serde type. A put stores a blob for each
channel whose version it changed and holds, for each channel it kept, the blob its parent holds
(Postgres keys blobs by thread, channel and version; here the checkpoints holding one are its key,
so a copied thread shares them and a blob goes when the last checkpoint holding it goes).
Pending writes are keyed by their checkpoint's key rather than linked to its node: LangGraph may
store them before the checkpoint itself. Metadata is stored as JSON object members, one term per
key (``"step":3``), so a ``list`` filter is a containment test in Cypher before its limit.

Every statement goes through ``Database``: its time limit, contention retries and translated errors.
The async methods run the sync ones in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from decisiontrail.cypher import query
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.database import Database, Rows, Transaction

EMPTY = "empty"
"""The type of a channel's blob at a version where the channel held nothing (it has no bytes)."""
PLAN_ID = "plan_id"
"""The ``configurable`` (or metadata) key naming the plan a checkpoint belongs to."""
UNLIMITED = 4611686018427387904
"""``list_checkpoints``' limit when none is given (Cypher's LIMIT needs a number)."""


class Neo4jCheckpointSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer over ``graph``: ``put``, ``put_writes``, ``get_tuple``, ``list``,
    ``delete_thread`` and ``copy_thread``, each one statement, and their async forms."""

    def __init__(self, graph: Graph, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.database = Database(graph)

    # -- reading -----------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or its thread's latest in its namespace; None when there is none."""
        configurable = config["configurable"]
        key = {"thread_id": configurable["thread_id"], "checkpoint_ns": configurable.get("checkpoint_ns", "")}
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            rows = self.database.read(_rows, "checkpoint/get_checkpoint", **key, checkpoint_id=checkpoint_id)
        else:
            rows = self.database.read(_rows, "checkpoint/get_latest_checkpoint", **key)
        return self._tuple(rows[0]) if rows else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """A thread's checkpoints, newest first: in ``config``'s namespace when it names one (every
        namespace otherwise), older than ``before``, whose metadata holds every item of ``filter``.

        A thread is required: listing every thread's checkpoints would read them all, which no
        caller in LangGraph asks for.
        """
        if config is None or not config.get("configurable", {}).get("thread_id"):
            raise ValueError("Neo4jCheckpointSaver.list needs a config with a thread_id: it lists one thread's checkpoints")
        configurable = config["configurable"]
        rows = self.database.read(
            _rows,
            "checkpoint/list_checkpoints",
            thread_id=configurable["thread_id"],
            checkpoint_ns=configurable.get("checkpoint_ns"),
            checkpoint_id=get_checkpoint_id(config),
            before=get_checkpoint_id(before) if before else None,
            filter=metadata_terms(filter) if filter else None,
            limit=limit,
        )
        return iter([self._tuple(row) for row in rows])

    # -- writing -----------------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` after the one ``config`` names: a blob for each channel in
        ``new_versions``, its parent's for the others. Its config, as ``get_tuple`` takes it."""
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        body = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        values = checkpoint["channel_values"]
        kind, data = self.serde.dumps_typed(body)
        stored_metadata = get_serializable_checkpoint_metadata(config, metadata)
        blobs = [
            {"channel": channel, "version": str(version), **self._blob(values, channel)}
            for channel, version in new_versions.items()
        ]
        kept = [
            {"channel": channel, "version": str(version)}
            for channel, version in checkpoint["channel_versions"].items()
            if channel not in new_versions
        ]
        properties = {
            "parent_checkpoint_id": configurable.get("checkpoint_id"),
            "type": kind,
            "checkpoint": data,
            "metadata": metadata_terms(stored_metadata),
            "plan_id": plan_of(configurable, stored_metadata),
        }
        self.database.write(
            _run,
            "checkpoint/put_checkpoint",
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint["id"],
            parent_id=configurable.get("checkpoint_id"),
            properties=properties,
            blobs=Rows(blobs),
            kept=Rows(kept),
        )
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes against the checkpoint ``config`` names (idempotent by task and index)."""
        configurable = config["configurable"]
        rows = []
        for idx, (channel, value) in enumerate(writes):
            kind, data = self.serde.dumps_typed(value)
            properties = {"task_path": task_path, "channel": channel, "type": kind, "blob": data}
            rows.append({"idx": WRITES_IDX_MAP.get(channel, idx), "properties": properties})
        self.database.write(
            _run,
            "checkpoint/put_writes",
            thread_id=configurable["thread_id"],
            checkpoint_ns=configurable.get("checkpoint_ns", ""),
            checkpoint_id=configurable["checkpoint_id"],
            task_id=task_id,
            writes=Rows(rows),
        )

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes, every namespace, and the blobs only they held."""
        self.database.write(_run, "checkpoint/delete_thread", thread_id=thread_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's checkpoints and writes to another thread, whose copies hold the same blobs."""
        self.database.write(_run, "checkpoint/copy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """A version after ``current``, unique to this call: two forks of one checkpoint never share one.

        As LangGraph's in-memory and Postgres savers make them (a zero-padded counter, a random fraction).
        """
        number = 0 if current is None else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # -- async: the same work in a worker thread ---------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    # -- rows to values ----------------------------------------------------------------------------

    def _blob(self, values: Mapping[str, Any], channel: str) -> dict[str, Any]:
        if channel not in values:
            return {"type": EMPTY, "blob": None}
        kind, data = self.serde.dumps_typed(values[channel])
        return {"type": kind, "blob": data}

    def _tuple(self, row: Mapping[str, Any]) -> CheckpointTuple:
        stored = row["checkpoint"]
        key = {"thread_id": stored["thread_id"], "checkpoint_ns": stored["checkpoint_ns"]}
        body = self.serde.loads_typed((stored["type"], bytes(stored["checkpoint"])))
        versions = body["channel_versions"]
        # Only the blobs at the versions the checkpoint names (a blob's value, not the "empty" mark).
        values = {
            blob["channel"]: self.serde.loads_typed((blob["type"], bytes(blob["blob"])))
            for blob in row["blobs"]
            if blob["type"] != EMPTY and blob["channel"] in versions and str(versions[blob["channel"]]) == blob["version"]
        }
        writes = sorted(row["writes"], key=lambda w: writes_sort_key(w["task_path"] or "", w["task_id"], w["idx"]))
        pending: list[PendingWrite] = [
            (w["task_id"], w["channel"], self.serde.loads_typed((w["type"], bytes(w["blob"])))) for w in writes
        ]
        parent = stored["parent_checkpoint_id"]
        body["channel_values"] = values
        return CheckpointTuple(
            config={"configurable": {**key, "checkpoint_id": stored["checkpoint_id"]}},
            checkpoint=body,
            metadata=stored_metadata(stored["metadata"]),
            parent_config={"configurable": {**key, "checkpoint_id": parent}} if parent else None,
            pending_writes=pending,
        )


def metadata_terms(metadata: Mapping[str, Any]) -> list[str]:
    """Metadata as the terms it is stored as and filtered by: each key and value, a JSON object member.

    A value is compared by its JSON text (keys of a map sorted), so 1 and 1.0 or True differ.

    >>> metadata_terms({"source": "loop", "step": 3, "parents": {"": "1ef"}})
    ['"source":"loop"', '"step":3', '"parents":{"":"1ef"}']
    >>> stored_metadata(metadata_terms({"step": -1, "writes": None}))
    {'step': -1, 'writes': None}
    """
    return [f"{_json(key)}:{_json(value)}" for key, value in metadata.items()]


def stored_metadata(terms: Sequence[str] | None) -> CheckpointMetadata:
    """Metadata from its stored terms."""
    metadata: CheckpointMetadata = json.loads("{" + ",".join(terms or ()) + "}")
    return metadata


def plan_of(configurable: Mapping[str, Any], metadata: Mapping[str, Any]) -> str | None:
    """The plan a checkpoint belongs to: ``plan_id`` in ``configurable``, else in its metadata."""
    plan_id = configurable.get(PLAN_ID) or metadata.get(PLAN_ID)
    return str(plan_id) if plan_id else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _rows(tx: Transaction, name: str, /, **parameters: Any) -> list[dict[str, Any]]:
    # Not ``Record.data()``: it walks every value, byte arrays byte by byte (8 ms a checkpoint here).
    return [dict(record) for record in tx.run(query(name), parameters)]


def _run(tx: Transaction, name: str, /, **parameters: Any) -> None:
    tx.run(query(name), parameters).consume()
