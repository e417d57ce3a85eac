// A prompt correction: the plan's description and arguments become the corrected prompt's (the
// original prompt stays readable in the prompt_definition it superseded).
MATCH (plan:Plan {plan_id: $plan_id})
SET plan.description = $description, plan.arguments = $arguments
