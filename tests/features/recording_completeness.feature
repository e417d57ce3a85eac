Feature: Strategize records what ADR-033 expects
  Every plan starts with its prompt_definition, the Invariant Reconciliation Actor records one
  invariant_enforced per enforced invariant, and the strategy actor at least one strategy_choice
  before the plan moves to Execute.

  Scenario: A plan with invariants at several scopes
    Given the global invariants require "coverage": "Test coverage stays at or above 80%"
    When an actor instantiates a plan "Add rate limiting" declaring "coverage": "New code is covered at 95%"
    And the actor records a strategy_choice "A token bucket in the API gateway"
    Then the plan has exactly one current prompt_definition
    And an invariant_enforced enforces "New code is covered at 95%" over "Test coverage stays at or above 80%"
    And the plan has at least one strategy_choice
    And the plan moves to Execute

  Scenario: A plan without a strategy stays in Strategize
    When an actor instantiates a plan "Add rate limiting" declaring no invariants
    Then the plan has exactly one current prompt_definition
    And moving the plan to Execute is refused with PHASE_VIOLATION

  Scenario: Execute decisions hang under the strategy and carry a checkpoint group
    When an actor instantiates a plan "Add rate limiting" declaring no invariants
    And the actor records a strategy_choice "A token bucket in the API gateway"
    And the plan moves to Execute
    And the actor records a tool_invocation "pytest"
    Then the tool_invocation hangs under the strategy and has a checkpoint group
    And recording a tool_invocation directly under the prompt_definition is refused with PHASE_VIOLATION
