// A page of one request's audit entries (a request's writes are few), newest first.
MATCH (entry:AuditEntry {request_id: $request_id})
USING INDEX entry:AuditEntry(request_id)
WHERE entry.at <= $latest
// include: audit/_page_of
