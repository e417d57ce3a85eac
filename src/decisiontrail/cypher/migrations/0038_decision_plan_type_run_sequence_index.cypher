// The same, within one actor run (its LangGraph thread): parent inference prefers the same run's
// latest decision of a parent type. Holds only the decisions recorded with a thread.
CREATE INDEX decision_plan_type_run_sequence IF NOT EXISTS
FOR (d:Decision) ON (d.plan_id, d.decision_type, d.actor_state_thread_id, d.sequence_number)
