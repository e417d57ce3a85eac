// A page of the whole audit trail, newest first: the index on time read backwards from $latest (the
// page's cursor or until, else the end of time), so a page reads about as many entries as it shows.
MATCH (entry:AuditEntry)
USING INDEX entry:AuditEntry(at)
WHERE entry.at <= $latest
// include: audit/_page_of
