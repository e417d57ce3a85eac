Feature: Correcting what proved wrong (ADR-007's correction scenarios)
  A reviewer corrects a decision through the API. The decision and exactly its downstream, across
  child plans, are superseded; the plan's tree still reads, no review is left waiting on a decision
  that is gone, and the whole database passes every check.

  Background:
    Given the project "billing" requires "compat": "No breaking changes to public endpoints"
    And a plan "Add rate limiting to the billing API" in project "billing"
    And its strategy "A token bucket in the API gateway"
    And a child plan "Per-client quotas" spawned by that strategy once the plan executes, with its own strategy "A quota table"
    And a review waits on a resource choice under the child plan's strategy

  Scenario: The original request was too vague
    When the reviewer corrects the plan's prompt_definition to "Rate-limit only the public endpoints"
    Then the plan's description is "Rate-limit only the public endpoints"
    And the plan's current tree is its new prompt_definition, with the invariant "compat" enforced again under it
    And the child plan is invalidated
    And the plan's tree reads, no review is stranded and every check passes

  Scenario: The strategy actor made a bad specific choice
    When the reviewer corrects the plan's strategy to "A sliding window per client"
    Then the strategy, the spawn and the child plan are invalidated, and nothing else
    And the plan is back in Strategize
    And the plan's tree reads, no review is stranded and every check passes

  Scenario: The parent gave the child a bad prompt
    When the reviewer corrects the child plan's prompt_definition to "Quotas per API key, not per client"
    Then the child plan's description is "Quotas per API key, not per client"
    And the parent plan's decisions are all still current
    And the plan's tree reads, no review is stranded and every check passes

  Scenario: An invariant should not apply
    When the reviewer removes the invariant "compat" from the plan because "the endpoints are internal"
    Then the plan no longer declares "compat" and its invariant_enforced is superseded
    And the plan's tree reads, no review is stranded and every check passes

  Scenario: A missing constraint should be added
    When the reviewer moves the plan back to Strategize because "a constraint is missing"
    And the reviewer adds the invariant "latency": "p95 under 50 ms" to the plan because "the SLO"
    Then the plan declares "latency" and an invariant_enforced enforces "p95 under 50 ms"
    And the plan's tree reads, no review is stranded and every check passes

  Scenario: Sequential children should be parallel
    When the reviewer corrects the plan's spawn to "Spawn the quota and the limiter plans in parallel"
    And the strategy actor replays it as a subplan_parallel_spawn and reports the replay
    Then the child plan is invalidated
    And the correction's attempt reports the replay as REPLAYED
    And once the plan executes again, a new child plan can be spawned by the parallel spawn
    And the plan's tree reads, no review is stranded and every check passes
