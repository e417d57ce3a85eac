// Takes the write lock of every plan a correction touches, so nothing is recorded into them
// while the closure is read again and superseded.
UNWIND $plan_ids AS plan_id
MATCH (plan:Plan {plan_id: plan_id})
SET plan.next_sequence = plan.next_sequence + 0
RETURN count(plan) AS locked
