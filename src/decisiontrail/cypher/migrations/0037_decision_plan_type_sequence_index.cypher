// A plan's decisions of a type in sequence order: parent inference (the latest current decision of
// a parent type) and a plan's current root are an ordered seek from the end, whatever the plan's
// size. Replaces decision_plan_type (0039), whose seeks read every decision of the type.
CREATE INDEX decision_plan_type_sequence IF NOT EXISTS
FOR (d:Decision) ON (d.plan_id, d.decision_type, d.sequence_number)
