// How many decisions the plans hold: the size of a load, for its progress bar.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:IN_PLAN]-(d:Decision)
RETURN count(d) AS decisions
