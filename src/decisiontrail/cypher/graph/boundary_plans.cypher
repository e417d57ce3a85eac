// Plans outside a loaded scope that plans or decisions inside it point at.
UNWIND $plan_ids AS plan_id
MATCH (p:Plan {plan_id: plan_id})
RETURN p {.*, next_sequence: null} AS plan
