// Deletes one batch of pruned plans (their decisions went in earlier batches) with their reviews,
// phase changes, LangGraph checkpoints (with their pending writes, and the blobs only they held) and
// audit entries (those about no plan that stays), the markers of the traces they were the last plans
// imported from (with any span of such a trace still kept), then the context snapshots nothing
// captures any more.
UNWIND $plan_ids AS plan_id
MATCH (plan:Plan {plan_id: plan_id})
WITH collect(plan) AS plans, collect(plan.plan_id) AS deleted_ids
CALL (plans) {
  UNWIND plans AS plan
  MATCH (review:Review)-[:FOR_PLAN]->(plan)
  RETURN collect(review) AS reviews
}
CALL (reviews) {
  UNWIND reviews AS review
  MATCH (review)-[:CAPTURED]->(context:Context)
  RETURN collect(DISTINCT context) AS contexts
}
CALL (plans) {
  UNWIND plans AS plan
  MATCH (change:PhaseChange)-[:OF_PLAN]->(plan)
  DETACH DELETE change
  RETURN count(*) AS deleted_phase_changes
}
CALL (deleted_ids) {
  UNWIND deleted_ids AS plan_id
  MATCH (lock:PlanLock {plan_id: plan_id})
  DELETE lock
}
CALL (deleted_ids) {
  // A checkpoint names its plan (graphdb.checkpoints); one written with none stays for delete_thread.
  UNWIND deleted_ids AS plan_id
  MATCH (checkpoint:Checkpoint {plan_id: plan_id})
  OPTIONAL MATCH (checkpoint)-[:HOLDS]->(blob:CheckpointBlob)
  WITH collect(DISTINCT checkpoint) AS checkpoints, collect(DISTINCT blob) AS blobs
  CALL (checkpoints) {
    UNWIND checkpoints AS checkpoint
    MATCH (write:CheckpointWrite {
      thread_id: checkpoint.thread_id, checkpoint_ns: checkpoint.checkpoint_ns, checkpoint_id: checkpoint.checkpoint_id
    })
    WHERE write.task_id IS NOT NULL AND write.idx IS NOT NULL
    DELETE write
  }
  CALL (checkpoints) {
    UNWIND checkpoints AS checkpoint
    DETACH DELETE checkpoint
  }
  CALL (blobs) {
    UNWIND blobs AS blob
    WITH blob
    WHERE NOT EXISTS { ()-[:HOLDS]->(blob) }
    DELETE blob
  }
  RETURN size(checkpoints) AS deleted_checkpoints
}
CALL (plans) {
  // An entry about a plan that stays stays with it, keeping this plan's id as a property.
  UNWIND plans AS plan
  MATCH (entry:AuditEntry)-[:AUDITS]->(plan)
  WITH DISTINCT entry, plans
  WHERE all(other IN [(entry)-[:AUDITS]->(audited:Plan) | audited] WHERE other IN plans)
  DETACH DELETE entry
}
CALL (plans, deleted_ids) {
  // A trace's marker stays while a plan it was imported as stays: it tells a span sent again from a
  // new trace's (trace/mark_imported names each plan's trace, and the trace its plans).
  UNWIND plans AS plan
  WITH DISTINCT plan.trace_id AS trace_id, deleted_ids
  WHERE trace_id IS NOT NULL
  MATCH (t:Trace {trace_id: trace_id})
  WHERE all(id IN t.plan_ids WHERE id IN deleted_ids OR NOT EXISTS { MATCH (:Plan {plan_id: id}) })
  CALL (trace_id) {
    MATCH (span:Span {trace_id: trace_id})
    DETACH DELETE span
  }
  DETACH DELETE t
  RETURN count(*) AS deleted_traces
}
CALL (reviews, plans) {
  UNWIND reviews + plans AS gone
  DETACH DELETE gone
}
CALL (contexts) {
  UNWIND contexts AS context
  WITH context WHERE NOT EXISTS { ()-[:CAPTURED]->(context) }
  DETACH DELETE context
  RETURN count(*) AS deleted_contexts
}
RETURN deleted_ids, size(reviews) AS deleted_reviews, deleted_phase_changes, deleted_contexts, deleted_checkpoints,
  deleted_traces
