"""Access over real HTTP: every caller against every operation, allowed and refused.

The matrix is every query and mutation of the schema (``tests/test_access_matrix.py`` fails
when one has no entry) and every export route, tried by each role, by no token and a bad
token, and by tokens limited to a project against a plan of another. What ``MAY`` (restated here) and the
caller's scope permit must succeed; everything else is refused, a refused request writes
nothing, no answer names a record the caller may not see, and a refusal about something that
exists but is not the caller's reads exactly like one about something that does not exist.

Run it alone against its server: it counts the whole database's nodes and relationships
around every request.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from decisiontrail.access import Action, Role, issue_token, process
from decisiontrail.domain import AutomationProfile, ContextSnapshot, Phase
from decisiontrail.domain.decision import CheckpointRef
from decisiontrail.domain.ids import new_ulid
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.domain.invariants import Scope
from decisiontrail.domain.runs import RunRequest
from decisiontrail.services import correction, invariants, lifecycle, recording, runs
from decisiontrail.services import Trail
from reliability.outcome import Outcome

OWNER = "agent"  # who instantiated the fixture's plans
FIXTURE = process("reliability")
"""Who records the fixture, in process, for ``OWNER``."""
ALPHA, BETA = "alpha", "beta"  # the fixture's plans are in ALPHA, except its one BETA plan
BAD_TOKEN = "dt_not-a-token-anyone-was-given"

ALLOWED_ = "allowed"
HIDDEN = "hidden"  # answered as absent (null, or left out of a list) rather than with an error


def _quiet(message: str) -> None:
    """The default progress: say nothing."""


# What each role may do, written here from docs/graphql.md's role table rather than imported from
# decisiontrail.access: the matrix is an independent oracle, so a wrong production table fails it.
MAY: dict[Role, frozenset[Action]] = {
    Role.ACTOR: frozenset({Action.READ, Action.RECORD}),
    Role.REVIEWER: frozenset({Action.READ, Action.REVIEW, Action.CORRECT}),
    Role.ANALYST: frozenset({Action.READ}),
    Role.ADMIN: frozenset({Action.READ, Action.RECORD, Action.REVIEW, Action.CORRECT, Action.CONFIGURE}),
}


@dataclass(frozen=True)
class Caller:
    """Who asks: a token's role, name and project; no role means no token (or ``bad`` one)."""

    key: str
    role: Role | None = None
    name: str = OWNER
    project: str | None = None
    bad: bool = False

    def sees(self, owner: str, project: str) -> bool:
        """The visibility rule, restated: actors see their own plans, a project token only that project's."""
        return (self.role is not Role.ACTOR or owner == self.name) and self.project in (None, project)


CALLERS: tuple[Caller, ...] = (
    Caller("no token"),
    Caller("bad token", bad=True),
    Caller("admin", Role.ADMIN, "admin-1"),
    Caller("reviewer", Role.REVIEWER, "reviewer-1"),
    Caller("analyst", Role.ANALYST, "analyst-1"),
    Caller("actor (owner)", Role.ACTOR, OWNER),
    Caller("actor (not owner)", Role.ACTOR, "someone-else"),
    Caller("actor @alpha (owner)", Role.ACTOR, OWNER, ALPHA),
    Caller("reviewer @alpha", Role.REVIEWER, "reviewer-a", ALPHA),
    # The owner's own name, in another project: refused by the project alone.
    Caller("actor @beta (owner's name)", Role.ACTOR, OWNER, BETA),
    Caller("reviewer @beta", Role.REVIEWER, "reviewer-b", BETA),
    Caller("analyst @beta", Role.ANALYST, "analyst-b", BETA),
    Caller("admin @beta", Role.ADMIN, "admin-b", BETA),
)


@dataclass(frozen=True)
class Operation:
    """One request of the matrix.

    ``field`` is the schema field it exercises (``Query.plan``), None for an export route;
    ``request`` is a GraphQL document, or an export path whose ``{placeholders}`` name the
    fixture's records; ``absent`` is how a target the caller may not see is answered.
    """

    name: str
    field: str | None
    action: Action
    request: str
    writes: bool = False
    consumes: bool = False  # once allowed, it cannot be repeated on the same records (resolved, superseded, ...)
    absent: str = "NOT_FOUND"
    targeted: bool = True  # names the fixture's records (else: only the ALPHA project)
    by_project: bool = False  # about the ALPHA project itself: any caller not limited to another project
    # Whether a refusal must read the same when the records named do not exist; not for a
    # list, whose answer depends on everything else there is.
    compare_missing: bool = True
    about_caller: bool = False  # about the caller itself (viewer): every caller with a token, whatever it sees

    @property
    def over_graphql(self) -> bool:
        return self.field is not None

    def expected(self, caller: Caller) -> str:
        """``allowed``, ``hidden`` or the error code this caller must get."""
        if caller.role is None:
            return "UNAUTHENTICATED"
        if self.action not in MAY[caller.role]:
            return "FORBIDDEN"
        if self.about_caller:
            return ALLOWED_
        if self.by_project:
            return ALLOWED_ if caller.project in (None, ALPHA) else self.absent
        if not self.targeted:
            return ALLOWED_ if caller.project in (None, ALPHA) else "VALIDATION_FAILED"
        return ALLOWED_ if caller.sees(OWNER, ALPHA) else self.absent


_SNAPSHOT = (
    'contextSnapshot: {hotContextHash: "%s", hotContextRef: "matrix", actorStateRef: {threadId: "t", checkpointId: "c"}}'
    % hashlib.sha256(b"matrix").hexdigest()
)
_RECORD_INPUT = '{planId: $plan, decisionType: STRATEGY_CHOICE, question: "q", chosenOption: "o", rationale: "r", %s}' % _SNAPSHOT

OPERATIONS: tuple[Operation, ...] = (
    Operation("viewer", "Query.viewer", Action.READ, "query { viewer { name role project may } }", about_caller=True),
    Operation(
        "decision",
        "Query.decision",
        Action.READ,
        "query($decision: ID!) { decision(id: $decision) { id planId plan { id project } dependsOn { id planId }"
        " dependents { id planId } downstreamDecisionIds downstreamPlanIds children { id } } }",
        absent=HIDDEN,
    ),
    Operation(
        "plan",
        "Query.plan",
        Action.READ,
        "query($plan: ID!) { plan(id: $plan) { id project childPlans { id } descendants { id }"
        " decisions { totalCount nodes { id dependsOn { id } dependents { id } downstreamDecisionIds downstreamPlanIds } }"
        " tree { decision { id } } analytics(scope: HIERARCHY) { decisions { total } mostCritical { decisionId }"
        " plans { planId } } correctionExamples(hierarchy: true) { input { decisionId } metadata { planId } record } } }",
        absent=HIDDEN,
    ),
    Operation(
        "plans",
        "Query.plans",
        Action.READ,
        "query($after: String) { plans(first: 1, after: $after) { totalCount nodes { id project } } }",
        absent=HIDDEN,
        compare_missing=False,
    ),
    Operation(
        "searchDecisions",
        "Query.searchDecisions",
        Action.READ,
        "query($decision: String!) { searchDecisions(text: $decision) { totalCount nodes { id planId } } }",
        absent=HIDDEN,  # found by its id only by a caller who may see its plan; else an empty page
        compare_missing=False,
    ),
    Operation(
        "impact",
        "Query.impact",
        Action.READ,
        "query($decision: ID!) { impact(decisionId: $decision) { decisions { id planId } plans { id }"
        " countsByType { decisionType count } paths { decisionId steps { relationship nodeId } } } }",
    ),
    Operation(
        "pendingReviews",
        "Query.pendingReviews",
        Action.READ,
        "query($gated: ID!) { pendingReviews(planId: $gated) { id planId decision { id } } }",
    ),
    Operation(
        "reviews",
        "Query.reviews",
        Action.READ,
        "query($gated: ID!) { reviews(planId: $gated) { totalCount nodes { id planId status } } }",
        absent=HIDDEN,
    ),
    Operation(
        "review",
        "Query.review",
        Action.READ,
        "query($review: ID!) { review(id: $review) { id planId status digest reopens { id } decision { id } } }",
        absent=HIDDEN,
    ),
    Operation(
        "lineage",
        "Query.lineage",
        Action.READ,
        "query($decision: ID!) { lineage(decisionId: $decision) { decisions { id planId } plans { id project } } }",
    ),
    Operation(
        "correctionDataset",
        "Query.correctionDataset",
        Action.READ,
        'query { correctionDataset(project: "%s") { input { decisionId planId } expectedOutput { guidance'
        " correction { decisionId } replayed { decisionId planId } } metadata { attemptId planId invalidatedDecisionCount"
        " invalidatedPlanCount } record } }" % ALPHA,
        absent=HIDDEN,  # an empty list: no plan of the project the caller may see has a correction
    ),
    Operation(
        "trends",
        "Query.trends",
        Action.READ,
        'query { trends(project: "%s") { projects decisionsPerDay { day decisions corrections }'
        " correctionRateByActor { actor decisions corrected } topInvalidating { decisionId planId invalidatedDecisions } } }"
        % ALPHA,
        absent=HIDDEN,  # empty trends: no plan of the project the caller may see
    ),
    Operation(
        "instantiatePlan",
        "Mutation.instantiatePlan",
        Action.RECORD,
        'mutation { instantiatePlan(input: {description: "matrix", project: "%s"}) { id project } }' % ALPHA,
        writes=True,
        targeted=False,
    ),
    Operation(
        "runPlan",
        "Mutation.runPlan",
        Action.RECORD,
        'mutation { runPlan(input: {description: "matrix", project: "%s", arguments: {depth: 1}}) { id project run { status } } }'
        % ALPHA,
        writes=True,
        targeted=False,
    ),
    Operation(
        "run",
        "Query.run",
        Action.READ,
        "query($run: ID!) { run(id: $run) { id status plan { id project } } }",
        absent=HIDDEN,
    ),
    Operation(
        "cancelRun",
        "Mutation.cancelRun",
        Action.RECORD,
        'mutation($run: ID!) { cancelRun(runId: $run, reason: "matrix") { id status } }',
        writes=True,
        consumes=True,
    ),
    Operation(
        "instantiatePlan (child)",
        "Mutation.instantiatePlan",
        Action.RECORD,
        'mutation($liveSpawn: ID!) { instantiatePlan(input: {description: "child", parentDecisionId: $liveSpawn})'
        " { id project parentPlan { id } } }",
        writes=True,
    ),
    Operation(
        "recordDecision",
        "Mutation.recordDecision",
        Action.RECORD,
        "mutation($plan: ID!) { recordDecision(input: %s) { decision { id planId } review { id } } }" % _RECORD_INPUT,
        writes=True,
    ),
    Operation(
        "recordDecisions",
        "Mutation.recordDecisions",
        Action.RECORD,
        "mutation($plan: ID!) { recordDecisions(inputs: [%s]) { decision { id planId } review { id } } }" % _RECORD_INPUT,
        writes=True,
    ),
    Operation(
        "addDependency",
        "Mutation.addDependency",
        Action.RECORD,
        "mutation($other: ID!, $decision: ID!) { addDependency(decisionId: $other, dependsOnId: $decision)"
        " { id dependsOn { id } } }",
        writes=True,
        consumes=True,
    ),
    Operation(
        "resolveReview",
        "Mutation.resolveReview",
        Action.REVIEW,
        "mutation($review: ID!) { resolveReview(input: {reviewId: $review, action: APPROVE}) { review { id } decision { id } } }",
        writes=True,
        consumes=True,
    ),
    Operation(
        "correctDecision",
        "Mutation.correctDecision",
        Action.CORRECT,
        'mutation($decision: ID!) { correctDecision(input: {decisionId: $decision, mode: REVERT, guidance: "g", reason: "r"})'
        " { correction { id } invalidated { id planId } invalidatedPlans { id } } }",
        writes=True,
        consumes=True,
    ),
    Operation(
        "attachArtifacts",
        "Mutation.attachArtifacts",
        Action.RECORD,
        'mutation($tool: ID!) { attachArtifacts(decisionId: $tool, artifacts: [{artifactPath: "out.txt", artifactType: "file"}])'
        " { id artifactsProduced { artifactPath } } }",
        writes=True,
    ),
    Operation(
        "invariantSet",
        "Query.invariantSet",
        Action.READ,
        'query { invariantSet(scope: PROJECT, project: "%s") { scope project invariants { name } } }' % ALPHA,
        absent=HIDDEN,
        by_project=True,
    ),
    Operation(
        "setInvariants",
        "Mutation.setInvariants",
        Action.CONFIGURE,
        'mutation { setInvariants(scope: PROJECT, project: "%s", invariants: [{name: "matrix-project", statement: "kept"}])'
        " { scope project } }" % ALPHA,
        writes=True,
        by_project=True,
        absent="VALIDATION_FAILED",
    ),
    Operation(
        "addInvariant",
        "Mutation.addInvariant",
        Action.CORRECT,
        'mutation($plan: ID!) { addInvariant(input: {planId: $plan, name: "matrix-added", statement: "s", reason: "r"})'
        " { id decisionType } }",
        writes=True,
        consumes=True,
    ),
    Operation(
        "removeInvariant",
        "Mutation.removeInvariant",
        Action.CORRECT,
        'mutation($plan: ID!) { removeInvariant(planId: $plan, name: "matrix", reason: "r") { correction { id } } }',
        writes=True,
        consumes=True,
    ),
    Operation(
        "advancePhase",
        "Mutation.advancePhase",
        Action.RECORD,
        "mutation($plan: ID!) { advancePhase(planId: $plan, phase: EXECUTE) { id phase } }",
        writes=True,
        consumes=True,
    ),
    Operation(
        "recordReplay",
        "Mutation.recordReplay",
        Action.RECORD,
        'mutation($attempt: ID!) { recordReplay(input: {attemptId: $attempt, outcome: REPLAYED, detail: "d"})'
        " { attemptId replayOutcome replayDetail } }",
        writes=True,
    ),
    Operation(
        "addGuidance",
        "Mutation.addGuidance",
        Action.CORRECT,
        'mutation($plan: ID!, $root: ID!) { addGuidance(input: {planId: $plan, parentDecisionId: $root, guidance: "g"})'
        " { id planId decisionType } }",
        writes=True,
    ),
    Operation(
        "auditTrail",
        "Query.auditTrail",
        Action.CONFIGURE,
        "query($plan: ID!) { auditTrail(planId: $plan, first: 5) { nodes { id principal operation requestId planIds"
        " decisionIds reviewIds otherIds } } }",
        absent=HIDDEN,  # an admin limited to another project reads an empty page
    ),
    Operation("export plan", None, Action.READ, "/export/plans/{plan}.graphml"),
    Operation("export hierarchy", None, Action.READ, "/export/plans/{plan}.json?scope=hierarchy"),
    Operation("export lineage", None, Action.READ, "/export/decisions/{decision}/lineage.graphml"),
    Operation("export impact", None, Action.READ, "/export/decisions/{decision}/impact.cyjs"),
)


@dataclass
class Fixture:
    """Records in ALPHA plans owned by OWNER, and one BETA plan linked to them both ways.

    ``D`` depends on a BETA decision and a BETA decision depends on ``D``: lineage and impact
    of ``D`` cross into BETA, and what ALPHA callers get back must not show it.
    """

    ids: dict[str, str]  # name -> id: plan, gated, child, beta, decision, other, spawn, review, ...
    plan_of: dict[str, str]  # record name -> the name of its plan
    projects: dict[str, str] = field(default_factory=dict)  # plan name -> project

    def hidden_from(self, caller: Caller) -> set[str]:
        """The ids of every record in a plan the caller may not see."""
        hidden = {p for p, project in self.projects.items() if not caller.sees(OWNER, project)}
        return {self.ids[name] for name, plan in self.plan_of.items() if plan in hidden}

    def variables(self, document: str) -> dict[str, str]:
        names = set(re.findall(r"\$(\w+)", document))
        values = {k: v for k, v in self.ids.items() if k in names}
        if "after" in names:  # a prefix of the plan's id sorts just before it: the page starts there
            values["after"] = _plan_cursor(self.ids["plan"][:-1])
        return values

    def ghost(self) -> Fixture:
        """The same names, each with an id nothing has."""
        return Fixture({k: new_ulid() for k in self.ids}, self.plan_of, self.projects)


def _plan_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(f"plan:{value}".encode()).decode()


def _snapshot(text: str) -> ContextSnapshot:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return ContextSnapshot(
        hot_context_hash=digest,
        hot_context_ref=f"s3://matrix/contexts/{digest}",  # a store of its own: no context to bring
        actor_state_ref=CheckpointRef(thread_id="matrix", checkpoint_id=new_ulid()),
    )


def make_fixture(store: Trail) -> Fixture:
    """Write the records the matrix asks about (through the services, as an unscoped owner would)."""

    def record(plan_id: str, decision_type: str, parent: str | None = None, depends_on: tuple[str, ...] = ()) -> Any:
        arguments: dict[str, Any] = {
            "decision_type": decision_type,
            "question": f"which {decision_type}?",
            "chosen_option": "this",
            "rationale": "r",
        }
        if parent is not None:
            arguments["parent_decision_id"] = parent
        return recording.record_decision(
            store,
            arguments,
            plan_id=plan_id,
            snapshot=_snapshot(decision_type + new_ulid()),
            depends_on=depends_on,
            principal=FIXTURE,
        )

    # The ALPHA project's set exists (for invariantSet) and is empty: setInvariants, tried as every
    # caller, may have filled it, and the plans below would gather what nothing here reconciles.
    invariants.set_invariants(store, Scope.PROJECT, ALPHA, [], principal=FIXTURE)
    plan, root = lifecycle.instantiate_plan(store, "matrix plan", owner=OWNER, project=ALPHA, principal=FIXTURE)
    beta, beta_root = lifecycle.instantiate_plan(store, "matrix beta plan", owner=OWNER, project=BETA, principal=FIXTURE)
    upstream = record(beta.plan_id, "strategy_choice", beta_root.decision_id)
    d = record(plan.plan_id, "strategy_choice", root.decision_id, depends_on=(upstream.decision_id,))
    downstream = record(beta.plan_id, "strategy_choice", beta_root.decision_id, depends_on=(d.decision_id,))
    other = record(plan.plan_id, "strategy_choice", root.decision_id)
    spawn = record(plan.plan_id, "subplan_spawn", other.decision_id)
    lifecycle.advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=FIXTURE)  # a child plan runs once its parent executes
    child, child_root = lifecycle.instantiate_plan(
        store, "matrix child", owner=OWNER, spawned_by_decision_id=spawn.decision_id, principal=FIXTURE
    )
    assert child.project == ALPHA, "a child plan is in its parent plan's project"
    lifecycle.advance_phase(
        store, plan.plan_id, Phase.STRATEGIZE, principal=FIXTURE
    )  # reverted: the matrix records strategy into it
    gated, gated_root = lifecycle.instantiate_plan(
        store,
        "matrix gated plan",
        automation_profile=AutomationProfile(edit_code=1.0),
        owner=OWNER,
        project=ALPHA,
        principal=FIXTURE,
    )
    review = record(gated.plan_id, "strategy_choice", gated_root.decision_id)
    corrected = record(plan.plan_id, "strategy_choice", root.decision_id)
    attempt = correction.correct(store, corrected.decision_id, "revert", "matrix guidance", "matrix", principal=FIXTURE).attempt
    # A plan in Execute with a tool_invocation (for attachArtifacts).
    executing, executing_root = lifecycle.instantiate_plan(
        store, "matrix executing plan", owner=OWNER, project=ALPHA, principal=FIXTURE
    )
    plan_strategy = record(executing.plan_id, "strategy_choice", executing_root.decision_id)
    # For instantiatePlan (child): a parallel spawn, whose group takes a child from every caller allowed
    # (a subplan_spawn spawns one, and refuses a second).
    live_spawn = record(executing.plan_id, "subplan_parallel_spawn", plan_strategy.decision_id)
    lifecycle.advance_phase(store, executing.plan_id, Phase.EXECUTE, principal=FIXTURE)
    tool = record(executing.plan_id, "tool_invocation", plan_strategy.decision_id)
    # A run that waits for a person (every decision is reviewed), for run and cancelRun.
    running, _ = lifecycle.instantiate_plan(
        store,
        "matrix run",
        {"depth": 1},
        automation_profile=AutomationProfile(edit_code=1.0),
        owner=OWNER,
        project=ALPHA,
        run=RunRequest(),
        principal=FIXTURE,
    )
    run = runs.runs_of_plans(store, [running.plan_id])[0]
    assert run is not None
    # An invariant the plan enforces (for removeInvariant).
    invariants.add_invariant(store, plan.plan_id, "matrix", "the matrix holds", reason="matrix", principal=FIXTURE)
    ids = {
        "plan": plan.plan_id, "root": root.decision_id, "decision": d.decision_id, "other": other.decision_id,
        "spawn": spawn.decision_id, "child": child.plan_id, "childRoot": child_root.decision_id,
        "gated": gated.plan_id, "gatedRoot": gated_root.decision_id, "review": review.review_id,
        "beta": beta.plan_id, "betaRoot": beta_root.decision_id, "upstream": upstream.decision_id,
        "downstream": downstream.decision_id, "attempt": attempt.attempt_id,
        "executing": executing.plan_id, "tool": tool.decision_id, "liveSpawn": live_spawn.decision_id,
        "running": running.plan_id, "run": run.run_id,
    }  # fmt: skip
    plan_of = {
        "plan": "plan", "root": "plan", "decision": "plan", "other": "plan", "spawn": "plan",
        "child": "child", "childRoot": "child", "gated": "gated", "gatedRoot": "gated", "review": "gated",
        "beta": "beta", "betaRoot": "beta", "upstream": "beta", "downstream": "beta", "attempt": "plan",
        "executing": "executing", "tool": "executing", "liveSpawn": "executing",
        "running": "running", "run": "running",
    }  # fmt: skip
    projects = {"plan": ALPHA, "child": ALPHA, "gated": ALPHA, "beta": BETA, "executing": ALPHA, "running": ALPHA}
    return Fixture(ids, plan_of, projects)


@dataclass(frozen=True)
class Answer:
    status: int
    text: str

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def ask(client: httpx.Client, operation: Operation, fixture: Fixture, credential: str | None) -> tuple[Answer, set[str]]:
    """Send the operation about ``fixture``'s records; the answer and the ids the request named."""
    headers = {"Authorization": f"Bearer {credential}"} if credential is not None else {}
    if operation.over_graphql:
        variables = fixture.variables(operation.request)
        response = client.post("/graphql", json={"query": operation.request, "variables": variables}, headers=headers)
    else:
        path = operation.request.format(**fixture.ids)
        variables = {k: v for k, v in fixture.ids.items() if v in path}
        response = client.get(path, headers=headers)
    return Answer(response.status_code, response.text), set(variables.values())


def observe(operation: Operation, answer: Answer, fixture: Fixture) -> str:
    """What the answer was: ``allowed``, ``hidden`` (answered as absent) or an error code."""
    body = answer.json()
    errors = body.get("errors") if isinstance(body, dict) else None
    if errors:
        return str((errors[0].get("extensions") or {}).get("code", "NO_CODE"))
    if answer.status != 200:
        return f"HTTP_{answer.status}"
    if operation.absent != HIDDEN:
        return ALLOWED_
    data = (body.get("data") or {}) if isinstance(body, dict) else {}
    if operation.field == "Query.plans":
        nodes = (data.get("plans") or {}).get("nodes") or []
        return ALLOWED_ if [n["id"] for n in nodes][:1] == [fixture.ids["plan"]] else HIDDEN
    if operation.field == "Query.searchDecisions":
        nodes = (data.get("searchDecisions") or {}).get("nodes") or []
        return ALLOWED_ if [n["id"] for n in nodes][:1] == [fixture.ids["decision"]] else HIDDEN
    if operation.field == "Query.auditTrail":
        nodes = (data.get("auditTrail") or {}).get("nodes") or []
        return ALLOWED_ if any(fixture.ids["plan"] in n["planIds"] for n in nodes) else HIDDEN
    if operation.field == "Query.reviews":
        nodes = (data.get("reviews") or {}).get("nodes") or []
        return ALLOWED_ if [n["id"] for n in nodes] == [fixture.ids["review"]] else HIDDEN
    if operation.field == "Query.trends":
        return ALLOWED_ if (data.get("trends") or {}).get("decisionsPerDay") else HIDDEN
    return ALLOWED_ if data.get(operation.field.split(".")[1] if operation.field else "") else HIDDEN


def _normalized(answer: Answer, fixture: Fixture) -> str:
    """The answer with every fixture id replaced by its name: what stays is what it reveals."""
    text = answer.text
    for name, value in sorted(fixture.ids.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(value, f"<{name}>")
    return f"{answer.status} {text}"


def issue_tokens(path: Path) -> dict[str, str]:
    """Issue a token for every caller that has one into the token file at ``path``; caller key -> token.

    Serve the app with this file (``TokenRegistry.load(path)``) before calling :func:`run`.
    """
    return {c.key: issue_token(path, c.name, c.role, c.project) for c in CALLERS if c.role is not None}


def _credential(caller: Caller, tokens: Mapping[str, str]) -> str | None:
    if caller.bad:
        return BAD_TOKEN
    return tokens[caller.key] if caller.role is not None else None


def run(
    base_url: str,
    graph: Graph,
    tokens: Mapping[str, str],
    *,
    progress: Callable[[str], None] = _quiet,
) -> Outcome:
    """Try every operation of ``OPERATIONS`` as every caller of ``CALLERS`` against the API at
    ``base_url`` (whose Neo4j is ``graph``, served with the tokens of :func:`issue_tokens`)."""
    outcome = Outcome(
        "access",
        "every query, mutation and export route tried by every role, no token, a bad token and "
        "project-scoped tokens against another project's plan",
    )
    started = time.monotonic()
    store = Trail.on(graph)
    tally = {"allowed as expected": 0, "refused as expected": 0, "unexpected": 0, "writes by refused requests": 0,
             "leaks": 0, "refusals unlike a missing record": 0}  # fmt: skip
    fixture: Fixture | None = None
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for operation in OPERATIONS:
            for caller in CALLERS:
                if fixture is None:
                    fixture = make_fixture(store)
                credential = _credential(caller, tokens)
                expected = operation.expected(caller)
                before = count_graph(graph)
                answer, named = ask(client, operation, fixture, credential)
                seen = observe(operation, answer, fixture)
                wrote = count_graph(graph) != before
                case = f"{operation.name} as {caller.key}"
                if seen not in (ALLOWED_, HIDDEN):
                    outcome.count(seen)
                if seen != expected:
                    tally["unexpected"] += 1
                    outcome.require(False, f"{case}: expected {expected}, got {seen}: {answer.text[:300]}")
                elif seen == ALLOWED_:
                    tally["allowed as expected"] += 1
                else:
                    tally["refused as expected"] += 1
                if wrote and not (seen == ALLOWED_ and operation.writes):
                    tally["writes by refused requests"] += 1
                    outcome.require(False, f"{case}: answered {seen} but the database changed")
                leaked = sorted(i for i in fixture.hidden_from(caller) - named if i in answer.text)
                if leaked:
                    tally["leaks"] += 1
                    outcome.require(False, f"{case}: the answer names records the caller may not see: {leaked}")
                if seen == ALLOWED_ and operation.field == "Mutation.instantiatePlan":
                    project = ((answer.json() or {}).get("data") or {}).get("instantiatePlan", {}).get("project")
                    outcome.require(project == ALPHA, f"{case}: the new plan is in project {project}, not {ALPHA}")
                if seen in ("NOT_FOUND", HIDDEN) and operation.compare_missing:
                    # The same request about records that do not exist must read the same (the
                    # other refusals come from the token alone, before anything is looked up).
                    ghost = fixture.ghost()
                    before = count_graph(graph)
                    twin, _ = ask(client, operation, ghost, credential)
                    if count_graph(graph) != before:
                        tally["writes by refused requests"] += 1
                        outcome.require(False, f"{case}: a request about missing records changed the database")
                    if _normalized(answer, fixture) != _normalized(twin, ghost):
                        tally["refusals unlike a missing record"] += 1
                        outcome.require(
                            False,
                            f"{case}: refused unlike a missing record: {_normalized(answer, fixture)[:200]}"
                            f" vs {_normalized(twin, ghost)[:200]}",
                        )
                if seen == ALLOWED_ and operation.consumes:
                    fixture = None  # the next case gets records this one has not used up
            progress(f"access: {operation.name}: {len(CALLERS)} callers")
    outcome.figures = {
        "operations": len(OPERATIONS),
        "callers": len(CALLERS),
        "cases": len(OPERATIONS) * len(CALLERS),
        **tally,
    }
    outcome.seconds = time.monotonic() - started
    return outcome
