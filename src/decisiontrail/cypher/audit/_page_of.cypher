// The audit trail's filters, order and page, composed after each way of finding its entries: newest
// first (at, then entry id, descending), after a cursor; by plan, principal, time and request id. A
// caller limited to a project reads only entries whose every plan is in it (one about no plan is in none).
  AND ($since IS NULL OR entry.at >= $since)
  AND ($until IS NULL OR entry.at < $until)
  AND ($request_id IS NULL OR entry.request_id = $request_id)
  AND ($principal IS NULL OR entry.principal = $principal)
  AND ($plan_id IS NULL OR $plan_id IN entry.plan_ids)
  AND ($project IS NULL OR (size(entry.projects) > 0 AND all(p IN entry.projects WHERE p = $project)))
  AND ($after_at IS NULL OR entry.at < $after_at OR (entry.at = $after_at AND entry.entry_id < $after_id))
RETURN entry { .* } AS entry
ORDER BY entry.at DESC, entry.entry_id DESC
LIMIT $first
