"""Every Query field and every object field, walked by introspection as callers some plans are hidden from:
nothing of a hidden plan leaks, and a caller limited to a project still sees its own (issue 46, Build 2).

The data, built over HTTP by an admin: projects alpha and beta alike (a plan with its root prompt, strategy
decisions, a subplan_spawn and its child plan, a tool invocation with its stored context and artifacts,
guidance, a plan gated for review with pending, approved, cancelled, lapsed and reopened reviews, a
correction with its attempt and replay, a cancelled run, the project's invariants), linked both ways by
DEPENDS_ON and corrected across the link: a correction in one project invalidates decisions and a child plan
of the other, cancels a review there and lapses an approval. And a plan of another actor's. Every text sent
carries a marker of whose it is (``beta-secret-7``; ``beta-setting-9`` in a project's settings).

The walk: the served schema is read by introspection (``schema_walk``). Each Query field with each argument
set of its recipe (``RECIPES``: about alpha's records, about beta's, or about neither) is a root. From a
root, every object type reachable is expanded once: all its scalar and enum fields, and each of its object
fields with theirs, at the path (among the first found, repeating no type) where the admin's answer holds
the most distinct objects. A field with a required argument and no recipe fails the walk ("no argument
recipe for <Type.field>"). Each document is asked whole and again with ids alone for leaves (the server
takes shortcuts for such selections).

The callers: the admin (the reference), an analyst limited to alpha, and two outsiders: an analyst limited
to gamma (where nothing is) and an actor of another owner. Every answer a limited caller gets names no id and
no text of a record hidden from it (in cursors neither); a root about hidden records answers NOT_FOUND, null
or empty; a root about alpha's records shows the alpha analyst every alpha id and text the admin's answer
holds through visible records alone; totals, counts by type, a correction's invalidated counts and blast
radii count nothing hidden. Each finding is one caller's about one field
(``test_nothing_hidden_leaks[<caller>-<Type.field>]``); the leaks known today are ``LEAKS``, strict xfails.

Out of scope: mutations and subscriptions (tests/test_access_matrix.py tries each as every caller); the object
types only they answer with, which no Query field reaches, are ``COVERED_ELSEWHERE``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.api import schema as served_schema
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services.relay import RELAY_THREAD
from schema_walk import INTROSPECTION, Field, Leaf, Node, Recipes, Selector, Shape, argument_sets, key_at, leaves, objects
from schema_walk import objects_at, packed, render
from serving import served

# The walk runs once, for the module's first case (with Neo4j's start, a few minutes); the cases read its findings.
pytestmark = pytest.mark.timeout(900)

ALPHA, BETA, OUTSIDER = "alpha", "beta", "outsider"  # whose records: the two projects, and another actor's plan


@dataclass(frozen=True)
class Caller:
    name: str  # its token's
    role: Role
    project: str | None
    plans: frozenset[str]  # whose plans it sees, with all they hold (docs/graphql.md, Access)
    settings: frozenset[str]  # whose project settings (invariantSet) it reads: every project's, unless limited to one

    def sees(self, marker: str) -> bool:
        whose, kind, _ = marker.split("-")
        return whose in (self.plans if kind == "secret" else self.settings)


ADMIN, ALPHA_ANALYST, GAMMA_ANALYST, OTHER_ACTOR = "admin", "analyst@alpha", "analyst@gamma", "actor-of-another-owner"
CALLERS: dict[str, Caller] = {
    ADMIN: Caller("walk-admin", Role.ADMIN, None, frozenset({ALPHA, BETA, OUTSIDER}), frozenset({ALPHA, BETA})),
    ALPHA_ANALYST: Caller("walk-alpha", Role.ANALYST, ALPHA, frozenset({ALPHA}), frozenset({ALPHA})),
    GAMMA_ANALYST: Caller("walk-gamma", Role.ANALYST, "gamma", frozenset(), frozenset()),
    OTHER_ACTOR: Caller("walk-outsider", Role.ACTOR, None, frozenset({OUTSIDER}), frozenset({ALPHA, BETA})),
}
LIMITED = (ALPHA_ANALYST, GAMMA_ANALYST, OTHER_ACTOR)


@dataclass
class Records:
    """One project's records by name (``plan``, ``dependent``, ...): what the recipes take their arguments from."""

    project: str
    ids: dict[str, str] = field(default_factory=dict)
    before: str = ""  # a moment before the corrections

    def __getitem__(self, name: str) -> str:
        return self.ids[name]


RECIPES: Recipes = {
    # A Query field's argument sets are roots of their own: about alpha's records and about beta's alike, or
    # about nobody's when alpha's and beta's are the same.
    "Query.decision": lambda r: [{"id": r[n]} for n in ("dependent", "upstream", "strategy", "tool", "approved", "childRoot")],
    "Query.plan": lambda r: [{"id": r[n]} for n in ("plan", "child", "gated", "running", "invalidatedChild")],
    "Query.plans": lambda r: [
        {},
        {"first": 1},
        {"search": f"{r.project}-secret"},
        {"newestFirst": True, "hasPendingReviews": True},
        {"project": r.project, "hasCorrections": True, "maxConfidence": 0.95},
    ],
    # By the words every text of a project carries, by an id in lower case, and narrowed to a plan a page at a time.
    "Query.searchDecisions": lambda r: [
        {"text": f"{r.project}-secret"},
        {"text": r["strategy"].lower()},
        {"text": "secret", "planId": r["plan"], "first": 5},
    ],
    "Query.impact": lambda r: [{"decisionId": r["strategy"]}, {"decisionId": r["upstream"], "asOf": r.before}],
    "Query.reviews": lambda r: [{}, {"project": r.project}, {"planId": r["gated"]}],
    "Query.review": lambda r: [{"id": r[n]} for n in ("pending", "resolved", "cancelled", "lapsed", "reopened")],
    "Query.pendingReviews": lambda r: [{"planId": r["gated"]}],
    "Query.invariantSet": lambda r: [{"scope": "GLOBAL"}, {"scope": "PROJECT", "project": r.project}],
    "Query.lineage": lambda r: [{"decisionId": r["dependent"]}, {"decisionId": r["childStrategy"], "asOf": r.before}],
    "Query.run": lambda r: [{"id": r["run"]}],
    "Query.correctionDataset": lambda r: [{"project": r.project}],
    "Query.trends": lambda r: [{}, {"project": r.project, "since": "2000-01-01T00:00:00+00:00", "until": r.before}],
    # A plan's entries (its correction's attempt among them), the gated plan's (its reviews), and the newest of all.
    "Query.auditTrail": lambda r: [{"planId": r["plan"]}, {"planId": r["gated"]}, {"first": 100}],
    # An object field's argument sets are aliases of it wherever it is selected.
    "Plan.analytics": lambda r: [{}, {"scope": "HIERARCHY"}],
    "Plan.correctionExamples": lambda r: [{}, {"hierarchy": True}],
    "Plan.tree": lambda r: [{}, {"asOf": r.before}],
}

# Query fields whose arguments name a project's settings rather than its plans (who reads them: Caller.settings).
SETTINGS = {"Query.invariantSet"}

# Query fields only an admin may ask (docs/security.md): every limited caller here has another role, and is
# refused FORBIDDEN, with no data and nothing named.
ADMINS_ONLY = {"Query.auditTrail"}

# Object types no Query field reaches, and where their access is tried instead.
COVERED_ELSEWHERE: dict[str, str] = {
    "CorrectionPayload": "tests/test_access_matrix.py (correctDecision, removeInvariant), tests/test_access.py (cancelledReviews)",
    "RecordDecisionPayload": "tests/test_access_matrix.py (recordDecision, recordDecisions)",
    "ResolveReviewPayload": "tests/test_access_matrix.py (resolveReview)",
    "DecisionEvent": "tests/test_access_matrix.py (test_live_events_follow_the_same_access_rules)",
}

# The leaks the walk finds today, (caller, Type.field): what leaks. Strict xfails: fixing one fails its case.
# Was: (ALPHA_ANALYST, "Decision.supersededById"), an alpha decision superseded by a correction in beta
# named that correction's decision, a beta id (supersededBy itself answered null).
LEAKS: dict[tuple[str, str], str] = {}

# Fields no admin's answer fills (null or empty wherever asked), and why.
NEVER_FILLED: dict[str, str] = {
    **{
        f"PlanRun.{name}": "the runs never run: the app is served without runtime workers, so the walk reads still data"
        for name in ("currentActor", "waitingFor", "pendingReplays", "parentRunId")
    },
    "Viewer.project": "the admin's token is limited to no project (the analyst's is: tests/test_viewer.py reads it)",
    "AuditEntry.principalProject": "the walk's data is written by the admin, whose token is limited to no project "
    "(tests/test_audit.py has a project's admin)",
}

ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
MARKER = re.compile(r"\b(?:alpha|beta|outsider)-(?:secret|setting)-\d+\b")


# -- the data set ---------------------------------------------------------------------------------------------


class Api:
    def __init__(self, client: httpx.Client, tokens: dict[str, str]) -> None:
        self.client = client
        self.tokens = tokens
        self.requests = 0

    def ask(self, caller: str, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        self.requests += 1
        response = self.client.post(
            "/graphql",
            json={"query": document, "variables": variables or {}},
            headers={"Authorization": f"Bearer {self.tokens[caller]}"},
        )
        if not response.headers["content-type"].startswith("application/json"):  # the server failed: a finding
            message = f"HTTP {response.status_code}: {response.text[:200]}"
            return {"data": None, "errors": [{"message": message, "extensions": {"code": f"HTTP_{response.status_code}"}}]}
        body: dict[str, Any] = response.json()
        return body

    def do(self, caller: str, document: str, **variables: Any) -> dict[str, Any]:
        body = self.ask(caller, document, variables)
        assert not body.get("errors"), (document, variables, body)
        data: dict[str, Any] = body["data"]
        return data


@dataclass
class World:
    records: dict[str, Records]  # alpha's and beta's
    owner: dict[str, str] = field(default_factory=dict)  # a record's id -> whose (ALPHA, BETA, OUTSIDER)
    invalidated: dict[str, list[str]] = field(default_factory=dict)  # attempt id -> the decisions it invalidated
    invalidated_plans: dict[str, list[str]] = field(default_factory=dict)  # attempt id -> the plans it invalidated

    def ids(self, caller: str, *, hidden: bool) -> set[str]:
        return {i for i, whose in self.owner.items() if (whose in CALLERS[caller].plans) != hidden}


class Secrets:
    """Texts carrying a marker of whose they are: ``alpha-secret-3`` in a plan, ``alpha-setting-4`` in a project's settings."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, whose: str, what: str, kind: str = "secret") -> str:
        self.count += 1
        return f"{what} {whose}-{kind}-{self.count}"


RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } review { id } } }"
INSTANTIATE = "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"
ADVANCE = 'mutation($plan: ID!, $phase: Phase!) { advancePhase(planId: $plan, phase: $phase, reason: "walk") { phase } }'


def build(api: Api) -> World:
    """The data set, over HTTP: see the module's docstring."""
    secret = Secrets()
    world = World({ALPHA: Records(ALPHA), BETA: Records(BETA)})

    def record(whose: str, plan: str, decision_type: str, parent: str | None, **more: Any) -> tuple[str | None, str | None]:
        context = secret(whose, "the actor's messages")
        digest = hashlib.sha256(context.encode()).hexdigest()
        entry = {
            "planId": plan,
            "decisionType": decision_type,
            "question": secret(whose, "which way?"),
            "chosenOption": secret(whose, "this way"),
            "rationale": secret(whose, "because"),
            "alternativesConsidered": [secret(whose, "that way")],
            "confidenceScore": 0.9,
            "actorReasoning": secret(whose, "thinking"),
            "parentDecisionId": parent,
            "contextSnapshot": {
                "hotContextHash": digest,
                "hotContextRef": f"decisiontrail:context/{digest}",
                "hotContext": context,
                "actorStateRef": {"threadId": secret(whose, "thread").replace(" ", "-"), "checkpointId": secret(whose, "cp")},
                "relevantResources": [{"resourceId": secret(whose, "resource"), "path": secret(whose, "path")}],
            },
        } | more
        answer = api.do(ADMIN, RECORD, input=entry)["recordDecision"]
        return (answer["decision"] or {}).get("id"), (answer["review"] or {}).get("id")

    def decision(whose: str, plan: str, decision_type: str, parent: str | None, **more: Any) -> str:
        made, held = record(whose, plan, decision_type, parent, **more)
        assert made is not None and held is None
        world.owner[made] = whose
        return made

    def review(whose: str, plan: str, parent: str, **more: Any) -> str:
        made, held = record(whose, plan, "STRATEGY_CHOICE", parent, **more)
        assert made is None and held is not None
        world.owner[held] = whose
        return held

    def instantiate(whose: str, **entry: Any) -> tuple[str, str]:
        made = api.do(ADMIN if whose != OUTSIDER else OTHER_ACTOR, INSTANTIATE, input=entry)["instantiatePlan"]
        world.owner[made["id"]] = world.owner[made["rootDecision"]["id"]] = whose
        return made["id"], made["rootDecision"]["id"]

    for whose, r in world.records.items():
        ids = r.ids
        ids["plan"], ids["root"] = instantiate(
            whose,
            description=secret(whose, "a plan"),
            project=whose,
            arguments={"note": secret(whose, "argument")},
            invariants=[{"name": secret(whose, "inv").replace(" ", "-"), "statement": secret(whose, "holds")}],
        )
        ids["strategy"] = decision(whose, ids["plan"], "STRATEGY_CHOICE", ids["root"])
        ids["upstream"] = decision(whose, ids["plan"], "STRATEGY_CHOICE", ids["root"])
        ids["spawn"] = decision(whose, ids["plan"], "SUBPLAN_SPAWN", ids["strategy"])
        api.do(ADMIN, ADVANCE, plan=ids["plan"], phase="EXECUTE")
        ids["child"], ids["childRoot"] = instantiate(
            whose, description=secret(whose, "a child plan"), parentDecisionId=ids["spawn"]
        )
        ids["childStrategy"] = decision(whose, ids["child"], "STRATEGY_CHOICE", ids["childRoot"])
        ids["tool"] = decision(
            whose,
            ids["plan"],
            "TOOL_INVOCATION",
            ids["strategy"],
            artifactsProduced=[{"artifactPath": secret(whose, "out").replace(" ", "/"), "artifactType": "file"}],
        )
        api.do(
            ADMIN,
            "mutation($d: ID!, $a: [ArtifactInput!]!) { attachArtifacts(decisionId: $d, artifacts: $a) { id } }",
            d=ids["tool"],
            a=[
                {
                    "artifactPath": secret(whose, "report").replace(" ", "/"),
                    "artifactType": "report",
                    "digest": "sha256:" + "0" * 64,
                }
            ],
        )
        guidance = api.do(
            ADMIN,
            "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }",
            input={
                "planId": ids["plan"],
                "parentDecisionId": ids["strategy"],
                "guidance": secret(whose, "guide"),
                "reason": secret(whose, "why"),
            },
        )
        ids["guidance"] = guidance["addGuidance"]["id"]
        world.owner[ids["guidance"]] = whose
        ids["gated"], ids["gatedRoot"] = instantiate(
            whose, description=secret(whose, "a gated plan"), project=whose, automationProfile={"editCode": 1.0}
        )
        ids["pending"] = review(whose, ids["gated"], ids["gatedRoot"])
        ids["resolved"] = review(whose, ids["gated"], ids["gatedRoot"])
        api.do(
            ADMIN,
            "mutation($r: ID!) { resolveReview(input: {reviewId: $r, action: APPROVE}) { review { id } } }",
            r=ids["resolved"],
        )

    # Across the projects, both ways: each project's decisions and reviews depend on the other's.
    for whose, other in ((ALPHA, BETA), (BETA, ALPHA)):
        ids, theirs = world.records[whose].ids, world.records[other].ids
        ids["dependent"] = decision(whose, ids["plan"], "IMPLEMENTATION_CHOICE", ids["strategy"], dependsOn=[theirs["upstream"]])
        api.do(
            ADMIN,
            "mutation($d: ID!, $on: ID!) { addDependency(decisionId: $d, dependsOnId: $on) { id } }",
            d=ids["tool"],
            on=theirs["strategy"],
        )
        ids["cancelled"] = review(whose, ids["gated"], ids["gatedRoot"], dependsOn=[theirs["upstream"]])
        ids["lapsed"] = review(whose, ids["gated"], ids["gatedRoot"], dependsOn=[theirs["upstream"]])
        resolved = api.do(
            ADMIN,
            "mutation($r: ID!) { resolveReview(input: {reviewId: $r, action: APPROVE}) { decision { id question } } }",
            r=ids["lapsed"],
        )["resolveReview"]["decision"]
        ids["approved"] = resolved["id"]
        ids["lapsedQuestion"] = resolved["question"]
        world.owner[ids["approved"]] = whose
        # A plan spawned by a decision that depends on the other project's: invalidated by the other's correction.
        ids["spawner"], spawner_root = instantiate(whose, description=secret(whose, "a spawning plan"), project=whose)
        spawner_strategy = decision(whose, ids["spawner"], "STRATEGY_CHOICE", spawner_root)
        spawn = decision(whose, ids["spawner"], "SUBPLAN_SPAWN", spawner_strategy, dependsOn=[theirs["upstream"]])
        api.do(ADMIN, ADVANCE, plan=ids["spawner"], phase="EXECUTE")
        ids["invalidatedChild"], _ = instantiate(whose, description=secret(whose, "a doomed child plan"), parentDecisionId=spawn)

    before = datetime.now(UTC).isoformat()
    for r in world.records.values():
        r.before = before

    # Each project's upstream corrected: the other's dependent is invalidated, its review cancelled, its approval lapsed.
    for whose in (ALPHA, BETA):
        ids = world.records[whose].ids
        corrected = api.do(
            ADMIN,
            """mutation($d: ID!, $g: String!) { correctDecision(input: {decisionId: $d, mode: REVERT, guidance: $g, reason: "walk"}) {
                correction { id } invalidated { id } invalidatedPlans { id } attempt { attemptId } } }""",
            d=ids["upstream"],
            g=secret(whose, "do it otherwise"),
        )["correctDecision"]
        ids["correction"] = corrected["correction"]["id"]
        ids["attempt"] = attempt = corrected["attempt"]["attemptId"]
        world.owner[ids["correction"]] = world.owner[attempt] = whose
        world.invalidated[attempt] = [d["id"] for d in corrected["invalidated"]]
        world.invalidated_plans[attempt] = [p["id"] for p in corrected["invalidatedPlans"]]

    for whose in (ALPHA, BETA):
        ids = world.records[whose].ids
        # The lapsed approval's question asked again: a review reopening it.
        made, held = record(whose, ids["gated"], "STRATEGY_CHOICE", ids["gatedRoot"], question=ids["lapsedQuestion"])
        assert made is None and held is not None
        ids["reopened"] = held
        world.owner[held] = whose
        # What the correction's replay records.
        phase = api.do(ADMIN, "query($p: ID!) { plan(id: $p) { phase } }", p=ids["plan"])["plan"]["phase"]
        replay_type = "STRATEGY_CHOICE" if phase == "STRATEGIZE" else "IMPLEMENTATION_CHOICE"
        ids["replayed"] = decision(whose, ids["plan"], replay_type, ids["root"] if phase == "STRATEGIZE" else ids["strategy"])
        ran = api.do(
            ADMIN,
            "mutation($input: RunPlanInput!) { runPlan(input: $input) { id rootDecision { id } run { id } } }",
            input={"description": secret(whose, "a run"), "project": whose, "arguments": {"depth": 1}},
        )["runPlan"]
        ids["running"], ids["run"] = ran["id"], ran["run"]["id"]
        world.owner[ran["id"]] = world.owner[ran["run"]["id"]] = world.owner[ran["rootDecision"]["id"]] = whose
        api.do(
            ADMIN,
            "mutation($r: ID!, $why: String!) { cancelRun(runId: $r, reason: $why) { id } }",
            r=ids["run"],
            why=secret(whose, "enough"),
        )
        api.do(
            ADMIN,
            "mutation($p: String!, $i: [InvariantInput!]!) { setInvariants(scope: PROJECT, project: $p, invariants: $i) { scope } }",
            p=whose,
            i=[{"name": secret(whose, "rule", "setting").replace(" ", "_"), "statement": secret(whose, "always", "setting")}],
        )
    for whose, other in ((ALPHA, BETA), (BETA, ALPHA)):
        ids, theirs = world.records[whose].ids, world.records[other].ids
        # The correction's replay, said to have recorded a decision in each project.
        api.do(
            ADMIN,
            "mutation($input: RecordReplayInput!) { recordReplay(input: $input) { attemptId } }",
            input={
                "attemptId": ids["attempt"],
                "outcome": "REPLAYED",
                "decisionIds": [ids["replayed"], theirs["replayed"]],
                "detail": secret(whose, "replayed"),
            },
        )
    api.do(
        ADMIN, 'mutation { setInvariants(scope: GLOBAL, invariants: [{name: "walk", statement: "everyone\'s rule"}]) { scope } }'
    )
    instantiate(OUTSIDER, description=secret(OUTSIDER, "another owner's plan"))
    return world


def _own(obj: dict[str, Any]) -> str | None:
    """The id an answer's object is known by."""
    return next((obj[k] for k in ("id", "attemptId", "decisionId", "reviewId") if isinstance(obj.get(k), str)), None)


def attribute(world: World, answers: list[dict[str, Any]]) -> None:
    """Whose each record the admin's answers name is (its plan's): those ``build`` made, and those the service
    made (invariant_enforced decisions, ...). An attempt's plan is its corrected decision's."""
    plan_of: dict[str, str] = {}
    for _ in range(3):  # a record's plan may be learnt from a later answer
        for body in answers:
            for obj in objects(body.get("data")):
                plan = obj.get("id") if obj.get("__typename") == "Plan" else obj.get("planId")
                if plan is None:
                    plan = next((plan_of[v] for k, v in obj.items() if k.endswith("DecisionId") and v in plan_of), None)
                own = _own(obj)
                if plan is not None and own is not None:
                    plan_of[own] = plan
                    if plan in world.owner:
                        world.owner.setdefault(own, world.owner[plan])


def named_in(value: Any) -> tuple[set[str], set[str]]:
    """The ids and the markers a value holds, inside a cursor's encoding too."""
    if value is None:
        return set(), set()
    texts = [value if isinstance(value, str) else json.dumps(value)]
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_=-]{8,}", value):
        try:
            texts.append(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("utf-8", "replace"))
        except (binascii.Error, ValueError):
            pass
    return {m for t in texts for m in ULID.findall(t)}, {m.group(0) for t in texts for m in MARKER.finditer(t)}


def _empty(value: Any, echoed: set[str]) -> bool:
    """Nothing but nulls, empty lists, zeros, falses, enum values and what the request said."""
    if value is None or value is False or value == 0 or value == []:
        return True
    if isinstance(value, dict):
        return all(k == "__typename" or _empty(v, echoed) for k, v in value.items())
    if isinstance(value, str):
        return json.dumps(value) in echoed or re.fullmatch(r"[A-Z_]+", value) is not None
    return False


# -- the walk -------------------------------------------------------------------------------------------------


@dataclass
class Document:
    """One request of the walk: a root with (some of) its selections, whole or with ids alone for leaves."""

    root: Field
    arguments: dict[str, Any]
    about: str | None  # whose records the arguments name (None: nobody's)
    tree: Node
    thin: bool
    text: str = field(init=False)
    variables: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.text, self.variables = render(self.tree, thin=self.thin)

    @property
    def label(self) -> str:
        shown = ", ".join(f"{k}: {v}" for k, v in self.arguments.items())
        return f"{self.root.key}({shown}){' with ids alone' if self.thin else ''}"

    def leaves(self, body: dict[str, Any]) -> list[Leaf]:
        return list(leaves(self.tree, body.get("data"), thin=self.thin))


@dataclass
class Findings:
    """What the walk found, by (caller, Type.field), and what it did."""

    problems: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    filled: set[str] = field(default_factory=set)  # fields some admin's answer holds a value in
    expanded: set[str] = field(default_factory=set)  # object types expanded where the admin's answer holds one
    checked: Counter[str] = field(default_factory=Counter)  # how often each rule was applied
    roots: int = 0
    documents: int = 0
    requests: int = 0
    served_shape: dict[str, Any] = field(default_factory=dict)

    def add(self, caller: str, key: str, problem: str) -> None:
        if len(self.problems[(caller, key)]) < 5:  # enough to fix it by
            self.problems[(caller, key)].append(problem)


def walk(api: Api, world: World, shape: Shape, findings: Findings) -> None:
    """Every root's documents, asked by the admin and by every limited caller, each answer judged."""
    documents: list[Document] = []
    for root in shape.objects[shape.query].values():
        alphas, betas = (argument_sets(RECIPES, root, world.records[whose]) for whose in (ALPHA, BETA))
        for alpha, beta in zip(alphas, betas, strict=True):
            for about, arguments in [(ALPHA, alpha), (BETA, beta)] if alpha != beta else [(None, alpha)]:
                findings.roots += 1
                documents += root_documents(
                    api, Selector(shape, RECIPES, world.records[about or ALPHA]), root, arguments, about, findings
                )
    admin = {id(d): api.ask(ADMIN, d.text, d.variables) for d in documents}
    attribute(world, list(admin.values()))
    judge = Judge(world, findings, api)
    for d in documents:
        judge.errors(ADMIN, d, admin[id(d)], refusing=False)
        if _empty((admin[id(d)].get("data") or {}).get(d.root.name), set()):
            if d.about is not None:
                findings.add(ADMIN, d.root.key, f"{d.label}: the admin's answer is empty, so the walk proves nothing with it")
        findings.filled |= {leaf.key for leaf in d.leaves(admin[id(d)]) if leaf.value not in (None, [])}
        for caller in LIMITED:
            if d.about == BETA and caller != ALPHA_ANALYST:
                continue  # the outsiders are asked about alpha's records (beta's are as hidden from them)
            body = api.ask(caller, d.text, d.variables)
            whose = CALLERS[caller].settings if d.root.key in SETTINGS else CALLERS[caller].plans
            refusing = d.about is not None and d.about not in whose
            judge.leaks(caller, d, body)
            if d.root.key in ADMINS_ONLY:
                judge.forbidden(caller, d, body)
                continue
            judge.errors(caller, d, body, refusing=refusing)
            if refusing:
                judge.refused(caller, d, body)
            else:
                judge.sees(caller, d, body, admin[id(d)])
            if not d.thin:  # whose leaves are ids alone: no counts
                judge.counts(caller, d, body)
    findings.documents = len(documents)


def root_documents(
    api: Api, selector: Selector, root: Field, arguments: dict[str, Any], about: str | None, findings: Findings
) -> list[Document]:
    """A root's documents: each type expanded at the path where the admin's answer holds the most distinct
    objects (the root alone, with all its fields, when the admin's answer holds nothing)."""
    reached = selector.shape.sites(root)
    probes = [path for paths in reached.values() for path in paths]
    richness: Counter[tuple[Field, ...]] = Counter()
    for tree in packed(selector, root, arguments, probes, expand=False):
        text, variables = render(tree)
        answer = api.ask(ADMIN, text, variables)
        for path in probes:
            found = objects_at(answer.get("data"), [root.name, *(f.name for f in path)])
            distinct = {_own(o) or json.dumps({k: v for k, v in o.items() if not isinstance(v, dict | list)}) for o in found}
            richness[path] = max(richness[path], len(distinct))
    expanded = []
    for typename, paths in reached.items():
        best = max(paths, key=lambda p: richness[p])  # the first of the richest
        if richness[best] > 0:
            expanded.append(best)
            findings.expanded.add(typename)
    trees = packed(selector, root, arguments, expanded or [()], expand=True)
    return [Document(root, arguments, about, tree, thin) for tree in trees for thin in (False, True)]


class Judge:
    """A limited caller's answers, against what it may see and against the admin's answers."""

    def __init__(self, world: World, findings: Findings, api: Api) -> None:
        self.world = world
        self.findings = findings
        self.api = api
        self.hidden = {c: world.ids(c, hidden=True) for c in CALLERS}
        self.visible = {c: world.ids(c, hidden=False) for c in CALLERS}
        self.impacts: dict[str, set[str] | None] = {}

    def is_hidden(self, caller: str, obj: dict[str, Any]) -> bool:
        return _own(obj) in self.hidden[caller] or obj.get("planId") in self.hidden[caller]

    def leaks(self, caller: str, document: Document, body: dict[str, Any]) -> None:
        """No value names a hidden id or text: blamed on the field that led into a hidden record, or else on the
        field whose value it is."""
        sees = CALLERS[caller].sees
        for leaf in document.leaves(body):
            if leaf.is_object:
                continue
            self.findings.checked["values scanned for hidden ids and texts"] += 1
            ids, markers = named_in(leaf.value)
            leaked = ids & self.hidden[caller] | {m for m in markers if not sees(m)}
            if leaked:
                entry = next(((k, o) for k, o in leaf.chain if self.is_hidden(caller, o)), None)
                hidden = entry and (_own(entry[1]) or entry[1].get("planId"))
                key, what = (entry[0], f"the hidden record {hidden}") if entry else (leaf.key, "its value")
                self.findings.add(caller, key, f"{document.label}: {what} names {sorted(leaked)[:4]} (at {leaf.key})")
        named = {v for v in document.variables.values() if isinstance(v, str)}
        for error in body.get("errors") or []:
            ids, markers = named_in(error.get("message"))
            leaked = (ids & self.hidden[caller]) - named | {m for m in markers if not sees(m)}
            if leaked:
                self.findings.add(caller, document.root.key, f"{document.label}: an error names {sorted(leaked)}")

    def errors(self, caller: str, document: Document, body: dict[str, Any], *, refusing: bool) -> None:
        """No errors, but NOT_FOUND for a root about hidden records."""
        for error in body.get("errors") or []:
            code = (error.get("extensions") or {}).get("code")
            if refusing and code == "NOT_FOUND" and error.get("path") == [document.root.name]:
                continue
            key = key_at(document.tree, error.get("path") or []) or document.root.key
            self.findings.add(caller, key, f"{document.label}: error {code} {error.get('message')!r} at {error.get('path')}")

    def forbidden(self, caller: str, document: Document, body: dict[str, Any]) -> None:
        """A root only an admin may ask answers a limited caller FORBIDDEN, and nothing else."""
        self.findings.checked["admins' roots refused"] += 1
        codes = [(e.get("extensions") or {}).get("code") for e in body.get("errors") or []]
        if codes != ["FORBIDDEN"] or body.get("data") is not None:
            self.findings.add(caller, document.root.key, f"{document.label}: not refused FORBIDDEN: {json.dumps(body)[:300]}")

    def refused(self, caller: str, document: Document, body: dict[str, Any]) -> None:
        """A root about hidden records answers null, NOT_FOUND or nothing."""
        value = (body.get("data") or {}).get(document.root.name)
        self.findings.checked["roots about hidden records"] += 1
        if not _empty(value, {json.dumps(v) for v in document.arguments.values()}):
            self.findings.add(
                caller, document.root.key, f"{document.label} about hidden records answered {json.dumps(value)[:300]}"
            )

    def sees(self, caller: str, document: Document, body: dict[str, Any], admin: dict[str, Any]) -> None:
        """Each field shows the caller every visible id and text it shows the admin through visible records."""
        sees = CALLERS[caller].sees

        def seen(answer: dict[str, Any], *, through_hidden: bool) -> dict[str, set[str]]:
            found: dict[str, set[str]] = defaultdict(set)
            for leaf in document.leaves(answer):
                if leaf.is_object or not through_hidden and any(self.is_hidden(caller, o) for _, o in leaf.chain):
                    continue
                ids, markers = named_in(leaf.value)
                found[leaf.key] |= ids & self.visible[caller] | {m for m in markers if sees(m)}
            return found

        expected, got = seen(admin, through_hidden=False), seen(body, through_hidden=True)
        self.findings.checked["own ids and texts expected"] += sum(len(names) for names in expected.values())
        for key, names in expected.items():
            missing = names - got[key]
            if missing:
                self.findings.add(caller, key, f"{document.label} does not show the caller its own {sorted(missing)[:4]}")

    def counts(self, caller: str, document: Document, body: dict[str, Any]) -> None:
        """Totals, counts by type, a correction's counts and blast radii count nothing hidden."""
        hidden = self.hidden[caller]
        for obj in objects(body.get("data")):
            typename = obj.get("__typename", "?")
            if {"totalCount", "nodes", "pageInfo"} <= obj.keys():
                self.findings.checked["totalCount against its nodes"] += 1
                whole = not (obj["pageInfo"] or {}).get("hasNextPage")
                if obj["totalCount"] < len(obj["nodes"]) or whole and obj["totalCount"] != len(obj["nodes"]):
                    self.problem(
                        caller, f"{typename}.totalCount", document, f"{obj['totalCount']}, for {len(obj['nodes'])} nodes"
                    )
            if "countsByType" in obj and isinstance(obj.get("decisions"), list):
                self.findings.checked["countsByType against its decisions"] += 1
                total = sum(c["count"] for c in obj["countsByType"])
                if total != len(obj["decisions"]):
                    self.problem(caller, f"{typename}.countsByType", document, f"{total}, for {len(obj['decisions'])} decisions")
            attempt = obj.get("attemptId")
            if attempt in self.world.invalidated:
                self.findings.checked["a correction's counts against what it invalidated"] += 1
                decisions = [d for d in self.world.invalidated[attempt] if d not in hidden]
                plans = [p for p in self.world.invalidated_plans[attempt] if p not in hidden]
                by_type = sum(c["count"] for c in obj.get("countsByType", [])) if "countsByType" in obj else None
                for name, count, expected in (
                    ("invalidatedDecisionCount", obj.get("invalidatedDecisionCount"), len(decisions)),
                    ("invalidatedPlanCount", obj.get("invalidatedPlanCount"), len(plans)),
                    ("countsByType", by_type, len(decisions)),
                ):
                    if count is not None and count != expected:
                        self.problem(caller, f"{typename}.{name}", document, f"attempt {attempt}: {count}, of {expected} visible")
            if typename == "CriticalDecision" and "blastRadius" in obj:
                # Counted within the analytics' scope: at most what the whole impact holds that the caller may see.
                impact = self.impact(obj["decisionId"])
                visible = impact - hidden if impact is not None else None
                self.findings.checked["blastRadius against the visible impact"] += 1
                if visible is not None and obj["blastRadius"] > len(visible):
                    message = f"{obj['decisionId']}: {obj['blastRadius']}, of {len(visible)} visible"
                    self.problem(caller, "CriticalDecision.blastRadius", document, message)

    def problem(self, caller: str, key: str, document: Document, what: str) -> None:
        self.findings.add(caller, key, f"{document.label}: {what}")

    def impact(self, decision: str) -> set[str] | None:
        """What correcting ``decision`` would invalidate, as the admin sees it (None, and a finding, if it fails)."""
        if decision not in self.impacts:
            body = self.api.ask(ADMIN, "query($d: ID!) { impact(decisionId: $d) { decisions { id } } }", {"d": decision})
            if body.get("errors"):
                self.findings.add(ADMIN, "Query.impact", f"impact({decision}), for a blast radius: {body['errors']}")
                self.impacts[decision] = None
            else:
                self.impacts[decision] = {d["id"] for d in body["data"]["impact"]["decisions"]}
        return self.impacts[decision]


# -- the fixture and the cases ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def findings(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Findings:
    """The walk, once: on the database wiped, served with the callers' tokens, stopped (and wiped) before any
    other test's."""
    running = [t.name for t in threading.enumerate() if t.name == RELAY_THREAD]
    assert not running, f"{len(running)} event relay(s) still running"
    delete_all_data(graph)
    path: Path = tmp_path_factory.mktemp("walk") / "tokens.json"
    issued = {key: issue_token(path, c.name, c.role, c.project) for key, c in CALLERS.items()}
    found = Findings()
    # No runtime workers: the runs stay as they are, and nothing changes the data while it is walked.
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path), runtime_workers=0)) as url:
        with httpx.Client(base_url=url, timeout=120) as client:
            api = Api(client, issued)
            found.served_shape = api.do(ADMIN, INTROSPECTION)["__schema"]
            world = build(api)
            walk(api, world, Shape(found.served_shape), found)
            found.requests = api.requests
    delete_all_data(graph)
    return found


def _local_shape() -> Shape:
    result = served_schema.execute_sync(INTROSPECTION)
    assert result.errors is None and result.data is not None, result.errors
    return Shape(result.data["__schema"])


SHAPE = _local_shape()  # the cases are made from the package's schema; the walk reads the served one


@pytest.mark.parametrize(
    ("caller", "key"),
    [
        pytest.param(
            caller,
            key,
            id=f"{caller}-{key}",
            marks=[pytest.mark.xfail(strict=True, reason=f"leak: {LEAKS[(caller, key)]}")] if (caller, key) in LEAKS else [],
        )
        for caller in LIMITED
        for key in SHAPE.walked_fields()
    ],
)
def test_nothing_hidden_leaks(findings: Findings, caller: str, key: str) -> None:
    assert findings.problems.get((caller, key), []) == []


def test_the_walk_covers_the_served_schema_and_the_admin_sees_everything(findings: Findings) -> None:
    served_shape = Shape(findings.served_shape)
    reachable = served_shape.reachable()
    query_fields = {f"{served_shape.query}.{name}" for name in served_shape.objects[served_shape.query]}

    assert served_shape.walked_fields() == SHAPE.walked_fields(), "the served schema is the package's"
    assert set(served_shape.objects) - reachable - {"Mutation", "Subscription"} == set(COVERED_ELSEWHERE)
    assert reachable - {served_shape.query} - findings.expanded == set(), "types no answer reaches: extend the data"
    never = set(served_shape.walked_fields()) - findings.filled - query_fields
    assert never == set(NEVER_FILLED), "fields no answer of the admin's fills: extend the data, or say why in NEVER_FILLED"
    assert {k: v for (c, k), v in findings.problems.items() if c == ADMIN} == {}, "the admin's answers"
    assert set(LEAKS) <= {(c, k) for c, k in findings.problems}, "LEAKS names a case that is not a finding"


def test_every_required_argument_has_a_recipe() -> None:
    required = [f.key for t in SHAPE.reachable() for f in SHAPE.objects[t].values() if any(a.required for a in f.args)]

    assert [k for k in required if k not in RECIPES] == [], "no argument recipe: add one to RECIPES"


def test_the_judge_finds_a_leak_a_record_withheld_and_a_count_too_high() -> None:
    """The rules themselves, on a schema of two types and answers written here (no server)."""
    import graphql

    from decisiontrail.domain.ids import new_ulid

    sdl = "type Query { decision(id: ID!): Decision } type Decision { id: ID! planId: ID! question: String! supersededById: ID dependsOn: [Decision!]! }"
    introspected = graphql.graphql_sync(graphql.build_schema(sdl), INTROSPECTION)
    shape = Shape(introspected.data["__schema"] if introspected.data else {})
    plan, mine, theirs_plan, theirs = new_ulid(), new_ulid(), new_ulid(), new_ulid()
    world = World({}, owner={plan: ALPHA, mine: ALPHA, theirs_plan: BETA, theirs: BETA})
    root = shape.objects["Query"]["decision"]
    tree = Selector(shape, {"Query.decision": lambda _: [{"id": mine}]}, None).tree(root, {"id": mine}, [()], expand=True)
    document = Document(root, {"id": mine}, ALPHA, tree, thin=False)

    def answer(superseded_by: str | None, depends_on: list[str]) -> dict[str, Any]:
        them = [{"__typename": "Decision", "id": theirs, "planId": theirs_plan, "question": "beta-secret-2"}]
        mine_ = {"__typename": "Decision", "id": mine, "planId": plan, "question": "q alpha-secret-1"}
        return {"data": {"decision": mine_ | {"supersededById": superseded_by, "dependsOn": them if depends_on else []}}}

    findings = Findings()
    judge = Judge(world, findings, api=None)  # type: ignore[arg-type]
    judge.leaks(ALPHA_ANALYST, document, answer(theirs, [theirs]))
    judge.sees(ALPHA_ANALYST, document, {"data": {"decision": None}}, answer(theirs, [theirs]))
    judge.refused(ALPHA_ANALYST, document, answer(None, []))
    judge.counts(
        ALPHA_ANALYST,
        document,
        {"data": {"c": {"__typename": "DecisionConnection", "totalCount": 3, "nodes": [{}], "pageInfo": {"hasNextPage": False}}}},
    )

    assert set(findings.problems) == {
        (ALPHA_ANALYST, "Decision.supersededById"),  # a visible record's field names a hidden one
        (ALPHA_ANALYST, "Decision.dependsOn"),  # a relation leads into a hidden record
        (ALPHA_ANALYST, "Decision.id"),  # its own record withheld
        (ALPHA_ANALYST, "Decision.planId"),
        (ALPHA_ANALYST, "Decision.question"),
        (ALPHA_ANALYST, "Query.decision"),  # a root about hidden records answered
        (ALPHA_ANALYST, "DecisionConnection.totalCount"),  # a total over more than the nodes
    }
