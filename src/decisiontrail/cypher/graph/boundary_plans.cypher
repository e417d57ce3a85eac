// Plans outside a loaded scope that plans or decisions inside it point at.
UNWIND $plan_ids AS plan_id
MATCH (p:Plan {plan_id: plan_id})
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN p {.*, next_sequence: null, announced: null, created_at: toString(p.created_at), invalidated_at: toString(p.invalidated_at)} AS plan
