// The attempt a correction under this idempotency key made in this plan (the corrected decision's),
// if any: a key is unique in its plan, as a recording's is. Read under the plan's lock, so a
// request sent twice at once finds the first's attempt once that one has committed.
MATCH (attempt:CorrectionAttempt {idempotency_key: $idempotency_key})-[:ATTEMPT_ON]->(:Decision {plan_id: $plan_id})
RETURN attempt {.*} AS attempt
LIMIT 1
