// The owner and project of the plan each given plan, decision or review belongs to: what a
// caller's visibility is judged by. One row per target, in the order given; found is false for
// an id that does not exist.
UNWIND range(0, size($targets) - 1) AS index
WITH index, $targets[index] AS target
CALL (target) {
  OPTIONAL MATCH (d:Decision {decision_id: target.id}) WHERE target.kind = 'decision'
  OPTIONAL MATCH (r:Review {review_id: target.id}) WHERE target.kind = 'review'
  WITH CASE target.kind WHEN 'plan' THEN target.id WHEN 'decision' THEN d.plan_id ELSE r.plan_id END AS plan_id
  OPTIONAL MATCH (plan:Plan {plan_id: plan_id})
  RETURN plan
}
RETURN target.kind AS kind, target.id AS id, plan IS NOT NULL AS found, plan.owner AS owner, plan.project AS project
ORDER BY index
