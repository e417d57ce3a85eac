"""The graph vocabulary: the allow-list of node labels and relationship types; no label or type comes from input."""

from __future__ import annotations

from enum import StrEnum


class Label(StrEnum):
    DECISION = "Decision"
    PLAN = "Plan"
    REVIEW = "Review"
    CONTEXT = "Context"
    CHECKPOINT_GROUP = "CheckpointGroup"
    PHASE_CHANGE = "PhaseChange"
    CORRECTION_ATTEMPT = "CorrectionAttempt"
    SCHEMA_MIGRATION = "SchemaMigration"
    PLAN_LOCK = "PlanLock"  # a plan's write lock, linked to nothing (see cypher/decision/read_placements)
    INVARIANT_SET = "InvariantSet"  # the global or a project's invariants (setInvariants), linked to nothing
    TRACE = "Trace"  # an OTLP trace: the lock its imports take, and when it was imported; linked to nothing
    SPAN = "Span"  # an OTLP span kept until its trace's root span arrives, linked to nothing
    PENDING_EVENT = "PendingEvent"  # the outbox: events written with the change they announce, not numbered yet
    EVENT = "Event"  # the outbox: events numbered, in commit order (graphdb.outbox.number)
    EVENT_COUNTER = "EventCounter"  # the outbox's sequence, and the lock those numbering it take
    EVENT_CURSOR = "EventCursor"  # how far a plan's announcing writes are numbered, linked to nothing
    RESTORING = "Restoring"  # marks the nodes a restore is writing (cypher/backup); never in a finished database
    CHECKPOINT = "Checkpoint"  # a LangGraph checkpoint (graphdb.checkpoints), keyed by thread, namespace and id
    CHECKPOINT_BLOB = "CheckpointBlob"  # one channel's value at one version, held by the checkpoints that have it
    CHECKPOINT_WRITE = "CheckpointWrite"  # a task's pending write against a checkpoint, keyed like it plus task and index
    PLAN_RUN = "PlanRun"  # the runtime running a plan: its durable work, claimed by one worker (graphdb/runs)
    AUDIT_ENTRY = "AuditEntry"  # who wrote what, when, in which request: one per write (graphdb/audit)


class Rel(StrEnum):
    """Relationship types, each pointing from the dependent end to what it hangs on."""

    PARENT = "PARENT"  # (child:Decision)-[:PARENT]->(parent:Decision): the plan's tree
    DEPENDS_ON = "DEPENDS_ON"  # (dependent:Decision)-[:DEPENDS_ON {ordinal}]->(dependency:Decision)
    IN_PLAN = "IN_PLAN"  # (:Decision)-[:IN_PLAN]->(:Plan)
    CHILD_OF = "CHILD_OF"  # (child:Plan)-[:CHILD_OF]->(parent:Plan)
    SPAWNED_BY = "SPAWNED_BY"  # (child:Plan)-[:SPAWNED_BY]->(spawning:Decision)
    CORRECTS = "CORRECTS"  # (correction:Decision)-[:CORRECTS]->(original:Decision)
    REPLACES = "REPLACES"  # (replacement:Decision)-[:REPLACES]->(corrected:Decision): a replay's decision in its place
    SUPERSEDED_BY = "SUPERSEDED_BY"  # (original:Decision)-[:SUPERSEDED_BY {at}]->(successor:Decision)
    CAPTURED = "CAPTURED"  # (:Decision|:Review)-[:CAPTURED]->(:Context): the full context snapshot
    CHECKPOINTED_IN = "CHECKPOINTED_IN"  # (:Decision)-[:CHECKPOINTED_IN]->(:CheckpointGroup), Execute only
    FOR_PLAN = "FOR_PLAN"  # (:Review)-[:FOR_PLAN]->(:Plan)
    RESOLVED_AS = "RESOLVED_AS"  # (:Review)-[:RESOLVED_AS]->(:Decision)
    REOPENS = "REOPENS"  # (asked:Review)-[:REOPENS]->(lapsed:Review): a lapsed approval's question asked again
    OF_PLAN = "OF_PLAN"  # (:PhaseChange)-[:OF_PLAN]->(:Plan)
    ATTEMPT_ON = "ATTEMPT_ON"  # (:CorrectionAttempt)-[:ATTEMPT_ON]->(corrected:Decision)
    PRODUCED = "PRODUCED"  # (:CorrectionAttempt)-[:PRODUCED]->(correction:Decision)
    INVALIDATED_BY = "INVALIDATED_BY"  # (child:Plan)-[:INVALIDATED_BY]->(:CorrectionAttempt)
    HOLDS = "HOLDS"  # (:Checkpoint)-[:HOLDS]->(:CheckpointBlob): a channel value of the checkpoint, shared while unchanged
    RUNS = "RUNS"  # (:PlanRun)-[:RUNS]->(:Plan)
    AUDITS = "AUDITS"  # (:AuditEntry)-[:AUDITS]->(:Plan): a plan a write wrote in (its entry goes with it)


class LoadScope(StrEnum):
    """How much of the database a load takes."""

    PLAN = "plan"  # one plan's decisions, reviews and correction attempts
    HIERARCHY = "hierarchy"  # a plan and every plan below it
    ALL = "all"  # the whole database
