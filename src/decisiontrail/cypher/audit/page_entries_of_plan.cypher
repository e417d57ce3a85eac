// A page of one plan's audit trail, newest first: the entries linked to it.
MATCH (:Plan {plan_id: $plan_id})<-[:AUDITS]-(entry:AuditEntry)
WHERE entry.at <= $latest
// include: audit/_page_of
