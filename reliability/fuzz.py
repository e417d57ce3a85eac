"""Bad input: the GraphQL API fuzzed from its own schema over real HTTP, and the database still valid after.

Documents come from hypothesis-graphql (valid queries and mutations, and documents with one
schema violation each) and from hand-made strategies it does not cover: recordings and plans
valid enough to be written but full of odd text (oversized, RTL, NUL, lone surrogates,
Cypher look-alikes), deep selections and literals, wrong variable types, malformed ids and
HTTP bodies that are not GraphQL at all, and ``decisionEvents`` subscriptions over WebSocket
(odd ids and cursors, odd selections, messages that break graphql-transport-ws). Every answer is
classified (``classify``); then a Cypher round trip and ``decisiontrail check --all`` over the
whole database.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import graphql
import httpx
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect
from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings, strategies as st
from hypothesis_graphql import Mode, from_schema, mutations, nodes, queries

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.api import schema
from decisiontrail.services import Trail, analysis
from decisiontrail.access import process
from reliability.outcome import Outcome

CLIENT_CODES = frozenset(
    {
        "VALIDATION_FAILED",
        "PHASE_VIOLATION",
        "NOT_FOUND",
        "CONFLICT",
        "IDEMPOTENCY_KEY_IN_USE",
        "IDEMPOTENCY_KEY_MISMATCH",
        "UNAVAILABLE",
        "UNAUTHENTICATED",
        "FORBIDDEN",
        "PAYLOAD_TOO_LARGE",
        "BAD_REQUEST",
        "METHOD_NOT_ALLOWED",
    }
)
"""The codes a client can act on (resolvers/errors.py, permissions.py, app.py)."""

GRAPHQL_PARSE = "GRAPHQL_PARSE_FAILED"
GRAPHQL_INVALID = "GRAPHQL_VALIDATION_FAILED"
MASKED = "MASKED_INTERNAL"
UNMASKED = "UNMASKED_INTERNAL"
MASKED_MESSAGE = "Unexpected error."  # what strawberry's MaskErrors answers in place of an internal error

# Text that only an internal failure puts in a message: Python exceptions and tracebacks, the
# driver's and the server's words. Matched only where the request did not bring the text itself.
LEAK = re.compile(
    r"Traceback|File \"|site-packages|\.py\b|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|object has no attribute|NoneType"
    r"|not subscriptable|positional argument|keyword argument|recursion|codec can't|neo4j|Neo\.\w+|Cypher"
    r"|\bMATCH\b|\bUNWIND\b|\bRETURN\b|pydantic|validation errors? for",
)
NOT_LEAKS = ("Syntax Error",)  # graphql-core's own prefix for a document that does not parse

ENDPOINT = "/graphql"
MAX_BODY = 1024 * 1024  # the app's request body limit (app.MAX_BODY_BYTES)


def _quiet(message: str) -> None:
    """The default progress: say nothing."""


@dataclass(frozen=True)
class Verdict:
    """What one response says: a code per GraphQL error, and every guarantee it broke."""

    status: int
    codes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    data: Any = None


def _leak(message: str, echo: str) -> str | None:
    """The internal-looking text in ``message`` the request did not bring itself, if any."""
    if message.startswith(NOT_LEAKS):
        return None
    for found in LEAK.finditer(message):
        if found.group(0) not in echo:
            return found.group(0)
    return None


def classify(status: int, text: str, *, echo: str = "") -> Verdict:
    """Judge one HTTP answer of the API; ``echo`` is the request's own text (input echoed back is no leak).

    >>> classify(200, '{"data": {"plan": null}}').problems
    ()
    >>> classify(200, '{"data": null, "errors": [{"message": "plan X does not exist", "extensions": {"code": "NOT_FOUND"}}]}').codes
    ('NOT_FOUND',)
    >>> classify(200, '{"errors": [{"message": "Unexpected error.", "path": ["plan"]}]}').codes
    ('MASKED_INTERNAL',)
    >>> classify(500, "Internal Server Error").problems
    ('HTTP 500', 'a response that is not JSON: Internal Server Error')
    >>> v = classify(200, '{"errors": [{"message": "\\'NoneType\\' object has no attribute \\'id\\'", "path": ["plan"]}]}')
    >>> v.codes, v.problems[0][:28]
    (('UNMASKED_INTERNAL',), 'an unmasked internal error: ')
    """
    problems: list[str] = []
    if status >= 500:
        problems.append(f"HTTP {status}")
    try:
        body = json.loads(text)
    except ValueError:
        return Verdict(status, problems=(*problems, f"a response that is not JSON: {text[:200]}"))
    if not isinstance(body, dict) or not ({"data", "errors"} & body.keys()):
        return Verdict(status, problems=(*problems, f"a response that is not a GraphQL result: {text[:200]}"))
    errors = body.get("errors") or []
    if not isinstance(errors, list):
        return Verdict(status, problems=(*problems, f"errors that are not a list: {text[:200]}"))
    codes: list[str] = []
    for error in errors:
        code, problem = _classify_error(error, echo)
        codes.append(code)
        if problem:
            problems.append(problem)
    return Verdict(status, tuple(codes), tuple(problems), body.get("data"))


def _classify_error(error: Any, echo: str) -> tuple[str, str | None]:
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return UNMASKED, f"an error without a message: {str(error)[:200]}"
    message: str = error["message"]
    extensions = error.get("extensions") or {}
    code = extensions.get("code") if isinstance(extensions, dict) else None
    leaked = _leak(message, echo)
    if leaked is not None:
        return UNMASKED, f"an unmasked internal error: {message[:300]!r} (shows {leaked!r})"
    if code is not None:
        if code not in CLIENT_CODES:
            return str(code), f"an error with an unknown code {code!r}: {message[:200]!r}"
        return str(code), None
    if message == MASKED_MESSAGE:
        # Masked from the client, as it should be, but still a bug: the server logged its traceback.
        return MASKED, "a masked internal error (the service's log has the traceback)"
    if error.get("path"):
        # Execution errors a client should expect carry a code; one without is an internal error let through.
        return UNMASKED, f"an execution error without a code: {message[:300]!r} at {error['path']}"
    return (GRAPHQL_PARSE if message.startswith("Syntax Error") else GRAPHQL_INVALID), None


# --- what the fuzzing knows: ids the server handed out --------------------------------------------------------------


@dataclass
class Known:
    """Ids seen in answers, so generated documents can name records that exist."""

    plans: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)

    def pick(self, pool: list[str], i: int) -> str:
        return pool[i % len(pool)] if pool else "01ARZ3NDEKTSV4RRFFQ69G5FAV"

    def any(self, i: int) -> str:
        return self.pick(self.plans + self.decisions + self.reviews, i)

    def harvest(self, data: Any) -> None:
        """Remember the ids of plans, decisions and reviews anywhere in ``data``."""
        for node in _objects(data):
            found = node.get("id")
            if not isinstance(found, str) or not ULID.fullmatch(found):
                continue
            if "reason" in node:  # of the types with an id, only Review has a reason
                pool = self.reviews
            elif "decisionType" in node or "sequenceNumber" in node or "chosenOption" in node:
                pool = self.decisions
            elif "description" in node or "automationProfile" in node or "invariants" in node:
                pool = self.plans
            else:
                continue
            if found not in pool and len(pool) < 500:
                pool.append(found)


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _objects(value)
    elif isinstance(data, list):
        for value in data:
            yield from _objects(value)


ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")


# --- strategies ---------------------------------------------------------------------------------------------------

CYPHER_LOOKALIKES = (
    "'}) MATCH (n) DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n //',
    "x' OR 1=1 WITH 1 AS x MATCH (m) DETACH DELETE m RETURN '",
    "$param",
    "$question }) RETURN 1 //",
    "`Decision`:`Plan` {decision_id: $id}",
    "CALL db.labels() YIELD label RETURN label",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "MATCH (n:Decision) SET n.question = 'pwned' RETURN n",
    "\\'\\\" // /* */ ;",
    "{{decision_id}} ${plan_id} %s %(x)s {0}",
    "UNWIND range(1, 100000000) AS i CREATE (:Decision)",
    "(?i).*[( unbalanced regex \\",
    "שלום }) MATCH (n) \u202eDELETE n",
    "🙂'}) DETACH DELETE n RETURN `🙂`",
)
"""Strings a query built from input would execute; stored and read back, they must come back verbatim."""

ODD_TEXT = (
    "",
    " ",
    "\t\r\n",
    "\u202eevil\u202c",
    "مرحبا بالعالم",
    "\u200f\u200e\u200b",
    "e\u0301\u0301\u0301\u0301",
    "𝕳𝖊𝖑𝖑𝖔",
    "🙂👍🏽\u200d👩‍👩‍👧",
    "\ufeffBOM",
    "\u2028\u2029",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\U0010ffff",
    "null",
    "undefined",
    "__proto__",
)
"""Unicode and control characters: RTL overrides, combining marks, NUL, lone surrogates, BOM."""

SIZES = (1_000, 10_000, 100_000, 600_000, 1_100_000)


def odd_text() -> st.SearchStrategy[str]:
    """Any unicode, odd samples, Cypher look-alikes and oversized strings (up to past the 1 MB body limit)."""
    samples = st.sampled_from(ODD_TEXT + CYPHER_LOOKALIKES)
    return st.one_of(
        st.text(max_size=30),
        samples,
        st.tuples(st.text(max_size=8), samples, st.text(max_size=8)).map("".join),
        st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "🙂", "\x00", "'", "\\"]), st.sampled_from(SIZES)),
    )


def plain_text() -> st.SearchStrategy[str]:
    """Text that passes every check: non-blank, short, any script."""
    return st.text(min_size=1, max_size=20).map(lambda s: s if s.strip() else f"{s}x")


def ulids() -> st.SearchStrategy[str]:
    """Well-formed ULIDs that name nothing."""
    return st.from_regex(ULID, fullmatch=True)


def id_values(known: Known) -> st.SearchStrategy[Any]:
    """Ids as a client sends them: known ones (often), unknown, lower-case, malformed, of the wrong type."""
    real = st.integers(min_value=0, max_value=10_000)
    return st.one_of(
        real.map(known.any),
        real.map(lambda i: known.any(i).lower()),
        ulids(),
        st.sampled_from(["", " ", "0" * 27, "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01ARZ3NDEKTSV4RRFFQ69G5FA!", "ÖÄÜ" * 9, "I" * 26]),
        st.builds(lambda n: "0" * n, st.sampled_from([100, 10_000])),
        st.sampled_from(CYPHER_LOOKALIKES),
        st.integers(),
    )


def _value_node(value: Any) -> graphql.ValueNode:
    """A JSON value as a GraphQL literal (object keys turned into names)."""
    if value is None:
        return nodes.Null
    if isinstance(value, bool):
        return nodes.Boolean(value)
    if isinstance(value, int):
        return nodes.Int(value)
    if isinstance(value, float):
        return nodes.Float(value)
    if isinstance(value, str):
        return nodes.String(value)
    if isinstance(value, list):
        return nodes.List([_value_node(v) for v in value])
    return nodes.Object([graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=_value_node(v)) for k, v in value.items()])


NAMES = st.from_regex(r"[_A-Za-z][_0-9A-Za-z]{0,8}", fullmatch=True)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(NAMES, children, max_size=4),
    max_leaves=20,
)


def datetimes() -> st.SearchStrategy[graphql.ValueNode]:
    """DateTime literals: valid with and without a zone, and not dates at all."""
    return st.one_of(
        st.datetimes().map(lambda d: nodes.String(d.isoformat())),
        st.sampled_from(["", "2024-13-45T25:61:00", "yesterday", "9999-12-31T23:59:59.999999+14:00", "0001-01-01"]).map(
            nodes.String
        ),
        st.integers().map(nodes.Int),
    )


def scalars(known: Known) -> dict[str, st.SearchStrategy[graphql.ValueNode]]:
    """The scalar strategies hypothesis-graphql uses: DateTime and JSON, and ours for ID and String (odd text too)."""
    return {
        "ID": id_values(known).map(lambda v: nodes.Int(v) if isinstance(v, int) else nodes.String(v)),
        "DateTime": datetimes(),
        "JSON": JSON_VALUES.map(_value_node),
        "String": st.one_of(plain_text(), plain_text(), odd_text()).map(nodes.String),
    }


# --- hand-made documents --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """One request: its kind (for the figures), the body and how it is sent."""

    kind: str
    body: bytes
    content_type: str = "application/json"
    method: str = "POST"
    chunked: bool = False
    query: str = ""  # the URL's query string

    @classmethod
    def graphql(cls, kind: str, query: str, variables: Mapping[str, Any] | None = None) -> Probe:
        payload: dict[str, Any] = {"query": query}
        if variables is not None:
            payload["variables"] = variables
        return cls(kind, _json(payload))


def _json(payload: Any) -> bytes:
    # ASCII escapes carry lone surrogates and NaN through, which a UTF-8 encoder would refuse.
    return json.dumps(payload, ensure_ascii=True).encode()


INSTANTIATE = """mutation($input: InstantiatePlanInput!) {
  instantiatePlan(input: $input) { id description arguments phase invariants { name statement scope }
    automationProfile { editCode executeCommand } rootDecision { id decisionType sequenceNumber } }
}"""

RECORD = """mutation($input: RecordDecisionInput!) {
  recordDecision(input: $input) {
    decision { id planId decisionType question chosenOption rationale alternativesConsidered sequenceNumber
      contextSnapshot { hotContextRef relevantResources { resourceId path } actorStateRef { threadId checkpointNs checkpointId } } }
    review { id planId status decisionType reason question chosenOption }
  }
}"""

RECORD_MANY = """mutation($inputs: [RecordDecisionInput!]!) {
  recordDecisions(inputs: $inputs) { decision { id decisionType sequenceNumber } review { id planId status decisionType reason } }
}"""

READ_BACK = """query($plan: ID!, $decision: ID!, $text: String) {
  plan(id: $plan) { id description arguments invariants { name statement scope }
    decisions(filter: {text: $text}) { nodes { id } } }
  decision(id: $decision) { id question chosenOption rationale alternativesConsidered
    contextSnapshot { hotContextRef relevantResources { resourceId path } actorStateRef { threadId checkpointNs checkpointId } }
    corrections { guidance reason } }
}"""

ID_OPERATIONS = (
    "query($id: ID!) { decision(id: $id) { id question plan { id } parent { id } children { id } } }",
    "query($id: ID!) { plan(id: $id) { id decisions(first: 5) { totalCount nodes { id } } tree { depth } } }",
    "query($id: ID!) { impact(decisionId: $id) { decisions { id } plans { id } countsByType { decisionType count } } }",
    "query($id: ID!) { lineage(decisionId: $id) { decisions { id } plans { id } } }",
    "query($id: ID!) { pendingReviews(planId: $id) { id status } }",
    "query($id: ID!) { plan(id: $id) { analytics(scope: HIERARCHY) { decisions { total } shape { decisionDepth } } } }",
    "mutation($id: ID!) { advancePhase(planId: $id, phase: EXECUTE) { id phase } }",
    "mutation($id: ID!, $other: ID!) { addDependency(decisionId: $id, dependsOnId: $other) { id dependsOn { id } } }",
)


def snapshot(text: str, *, own: bool = True, **odd: Any) -> dict[str, Any]:
    """A context snapshot that passes validation: its hash a real SHA-256, and ``own`` puts the
    context itself in the service's store (else the reference names another store)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    found = {
        "hotContextHash": digest,
        "hotContextRef": odd.get("ref", f"decisiontrail:context/{digest}" if own else f"fuzz://context/{digest}"),
        "actorStateRef": {"threadId": odd.get("thread", "fuzz"), "checkpointId": odd.get("checkpoint", "cp-1")},
        "relevantResources": [{"resourceId": odd.get("resource", "repo:app"), "path": odd.get("path", "src/app.py")}],
    }
    if own:
        found["hotContext"] = text
    return found


RECORDING_FIELDS = (
    "planId",
    "decisionType",
    "question",
    "chosenOption",
    "rationale",
    "hotContext",
    "ref",
    "thread",
    "checkpoint",
    "resource",
    "path",
    "ownRef",
    "alternativesConsidered",
    "confidenceScore",
    "parentDecisionId",
    "dependsOn",
    "idempotencyKey",
    "wrongType",
)
"""What a hand-made recording may get wrong (a few at a time)."""

ACTOR_TYPES = (
    "STRATEGY_CHOICE",
    "INVARIANT_ENFORCED",
    "RESOURCE_SELECTION",
    "IMPLEMENTATION_CHOICE",
    "TOOL_INVOCATION",
    "ERROR_RECOVERY",
    "VALIDATION_RESPONSE",
    "SUBPLAN_SPAWN",
)
BAD_ENUMS = ("strategy_choice", "PROMPT_DEFINITION", "USER_INTERVENTION", "DROP_ALL", "", "Strategy Choice", "1")
WRONG_TYPES: tuple[Any, ...] = (0, -1, 2**80, 1.5, True, [], ["a"], {}, {"a": 1}, None, math.nan, math.inf, "")


def recordings(known: Known) -> st.SearchStrategy[Probe]:
    """recordDecision with a real plan and odd values: many are written, some refused."""
    real = st.integers(min_value=0, max_value=10_000)

    @st.composite
    def build(draw: st.DrawFn) -> Probe:
        # Valid but for a few fields, so most reach the store and each odd value is judged alone.
        odd = set(draw(st.lists(st.sampled_from(RECORDING_FIELDS), max_size=2)))

        def text(name: str) -> str:
            return draw(odd_text() if name in odd else plain_text())

        fields: dict[str, Any] = {
            "planId": draw(id_values(known) if "planId" in odd else real.map(lambda i: known.pick(known.plans, i))),
            "decisionType": draw(st.sampled_from(BAD_ENUMS) if "decisionType" in odd else st.sampled_from(ACTOR_TYPES)),
            "question": text("question"),
            "chosenOption": text("chosenOption"),
            "rationale": text("rationale"),
            "contextSnapshot": snapshot(
                text("hotContext"),
                own=draw(st.booleans()),
                **{name: text(name) for name in ("ref", "thread", "checkpoint", "resource", "path") if name in odd},
            ),
        }
        if "ownRef" in odd:  # the service's own reference without the context it names: refused
            fields["contextSnapshot"].pop("hotContext", None)
            fields["contextSnapshot"]["hotContextRef"] = "decisiontrail:context/" + fields["contextSnapshot"]["hotContextHash"]
        if draw(st.booleans()) or "alternativesConsidered" in odd:
            fields["alternativesConsidered"] = [text("alternativesConsidered") for _ in range(draw(st.integers(0, 3)))]
        if draw(st.booleans()) or "confidenceScore" in odd:
            fields["confidenceScore"] = draw(
                st.sampled_from([-0.0, 1.0000001, -1.0, 1e308, math.nan, math.inf, 2])
                if "confidenceScore" in odd
                else st.floats(0, 1)
            )
        if "parentDecisionId" in odd:
            fields["parentDecisionId"] = draw(real.map(lambda i: known.pick(known.decisions, i)) | id_values(known))
        if "dependsOn" in odd:
            fields["dependsOn"] = draw(
                st.lists(real.map(lambda i: known.pick(known.decisions, i)) | id_values(known), max_size=3)
            )
        if draw(st.booleans()) or "idempotencyKey" in odd:
            fields["idempotencyKey"] = text("idempotencyKey")
        if "wrongType" in odd:
            fields[draw(st.sampled_from(sorted(fields)))] = draw(st.sampled_from(WRONG_TYPES))
        if draw(st.integers(0, 4)) == 0:
            return Probe.graphql("hand-made", RECORD_MANY, {"inputs": [fields] * draw(st.integers(0, 3))})
        return Probe.graphql("hand-made", RECORD, {"input": fields})

    return build()


def instantiations(known: Known) -> st.SearchStrategy[Probe]:
    """instantiatePlan with odd descriptions, deep or odd arguments, invariants and automation profiles."""

    @st.composite
    def build(draw: st.DrawFn) -> Probe:
        text = odd_text()
        fields: dict[str, Any] = {"description": draw(plain_text() | text)}
        if draw(st.booleans()):
            depth = draw(st.sampled_from([1, 10, 64, 200, 1000]))
            fields["arguments"] = draw(
                st.sampled_from([{"nested": _nested(depth, "list")}, {"nested": _nested(depth, "object")}])
                | JSON_VALUES
                | st.dictionaries(text, JSON_VALUES, max_size=3)
            )
        if draw(st.booleans()):
            fields["invariants"] = draw(
                st.lists(st.fixed_dictionaries({"name": plain_text() | text, "statement": plain_text() | text}), max_size=3)
            )
        if draw(st.booleans()):
            number = st.floats(0, 1) | st.sampled_from([-1.0, 2.0, 1e308, math.nan, math.inf])
            fields["automationProfile"] = {"editCode": draw(number), "executeCommand": draw(number)}
        if draw(st.booleans()):
            fields["parentDecisionId"] = draw(id_values(known))
        return Probe.graphql("hand-made", INSTANTIATE, {"input": fields})

    return build()


def _nested(depth: int, kind: str) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def id_operations(known: Known) -> st.SearchStrategy[Probe]:
    """Every operation that takes an id, with known, unknown and malformed ids (and ids of the wrong kind)."""
    return st.builds(
        lambda query, a, b: Probe.graphql("hand-made", query, {"id": a, "other": b} if "$other" in query else {"id": a}),
        st.sampled_from(ID_OPERATIONS),
        id_values(known),
        id_values(known),
    )


def reviews_and_corrections(known: Known) -> st.SearchStrategy[Probe]:
    """resolveReview and correctDecision on real reviews and decisions, with odd options, guidance and modes."""
    real = st.integers(min_value=0, max_value=10_000)
    resolve = st.builds(
        lambda review, action, option: Probe.graphql(
            "hand-made",
            "mutation($input: ResolveReviewInput!) { resolveReview(input: $input) { review { id status } decision { id chosenOption } } }",
            {"input": {"reviewId": review, "action": action, "option": option}},
        ),
        real.map(lambda i: known.pick(known.reviews, i)) | id_values(known),
        st.sampled_from(["APPROVE", "SELECT_ALTERNATIVE", "CUSTOM", "REJECT", ""]),
        st.none() | plain_text() | odd_text(),
    )
    correct = st.builds(
        lambda decision, mode, guidance, reason: Probe.graphql(
            "hand-made",
            "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) {"
            " correction { id } invalidated { id } invalidatedPlans { id } attempt { attemptNumber } } }",
            {"input": {"decisionId": decision, "mode": mode, "guidance": guidance, "reason": reason}},
        ),
        real.map(lambda i: known.pick(known.decisions, i)) | id_values(known),
        st.sampled_from(["REVERT", "APPEND", "revert", "DELETE"]),
        plain_text() | odd_text(),
        plain_text() | odd_text(),
    )
    return resolve | correct


def deep_documents() -> st.SearchStrategy[Probe]:
    """Selections 50 and more deep, fragment cycles, nested list literals, alias and token floods."""

    def selection(depth: int) -> str:
        return '{ decision(id: "x") ' + "{ parent " * depth + "{ id }" + " }" * depth + " }"

    def literal(depth: int) -> str:
        return "{ decision(id: " + "[" * depth + '"x"' + "]" * depth + ") { id } }"

    def aliases(n: int) -> str:
        return "{ " + " ".join(f"a{i}: plans {{ totalCount }}" for i in range(n)) + " }"

    def breadth(n: int) -> str:
        return "{ plans { nodes { " + " ".join(["id description"] * n) + " } } }"

    cycle = 'query { decision(id: "x") { ...A } } fragment A on Decision { parent { ...A } }'
    documents = st.one_of(
        st.sampled_from([50, 100, 1_000]).map(selection),
        st.sampled_from([50, 500, 2_400, 10_000]).map(literal),
        st.sampled_from([31, 200]).map(aliases),
        st.sampled_from([100, 3_000]).map(breadth),
        st.just(cycle),
    )
    return documents.map(lambda query: Probe.graphql("hand-made", query))


def wrong_variables(known: Known) -> st.SearchStrategy[Probe]:
    """Variables of the wrong type, missing, extra or null where required."""
    operations = st.sampled_from(
        [
            ("query($id: ID!) { plan(id: $id) { id } }", "id"),
            ("query($first: Int) { plans(first: $first) { totalCount } }", "first"),
            ("query($after: String) { plans(after: $after) { totalCount } }", "after"),
            ("query($phase: Phase) { plans(phase: $phase) { totalCount } }", "phase"),
            ("mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id } }", "input"),
            ("mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }", "input"),
            ("mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id } }", "phase"),
        ]
    )
    values = st.one_of(
        st.sampled_from(WRONG_TYPES),
        st.sampled_from(BAD_ENUMS),
        st.integers(),
        st.sampled_from([{"description": 5}, {"description": "d", "extra": 1}, {"planId": None}, [[[[[]]]]]]),
        st.sampled_from(["bm90IGEgY3Vyc29y", base64.urlsafe_b64encode(b"plan:x").decode(), "plan:", "%%%"]),
    )
    return st.builds(
        lambda op, value, plan: Probe.graphql("hand-made", op[0], {op[1]: value, "id": plan}),
        operations,
        values,
        st.integers(0, 10_000).map(lambda i: known.pick(known.plans, i)),
    )


def malformed_http() -> st.SearchStrategy[Probe]:
    """Bodies that are not a GraphQL request: not JSON, deep JSON, wrong shapes, wrong content types, oversized."""
    query = "{ plans { totalCount } }"
    bodies = [
        Probe("hand-made", b""),
        Probe("hand-made", b"{"),
        Probe("hand-made", b"\xff\xfe\x00"),
        Probe("hand-made", b"null"),
        Probe("hand-made", b"[]"),
        Probe("hand-made", _json([{"query": query}, {"query": query}])),
        Probe("hand-made", _json({"query": 5})),
        Probe("hand-made", _json({"query": None})),
        Probe("hand-made", _json({"variables": {}})),
        Probe("hand-made", _json({"query": query, "variables": [1]})),
        Probe("hand-made", _json({"query": query, "variables": "x"})),
        Probe("hand-made", _json({"query": query, "operationName": "Missing"})),
        Probe("hand-made", _json({"query": "query A { plans { totalCount } } query B { plans { totalCount } }"})),
        Probe("hand-made", _json({"query": query, "extensions": "x"})),
        Probe("hand-made", b'{"query": "{ plans { totalCount } }", "variables": {"a": NaN}}'),
        Probe("hand-made", query.encode(), content_type="text/plain"),
        Probe("hand-made", query.encode(), content_type="application/graphql"),
        Probe("hand-made", b"query=%7B%7D", content_type="application/x-www-form-urlencoded"),
        Probe("hand-made", b"--x\r\n\r\n--x--", content_type="multipart/form-data; boundary=x"),
        Probe(
            "hand-made",
            b"",
            method="GET",
            content_type="",
            query="query=mutation%7BadvancePhase(planId%3A%22x%22%2Cphase%3AAPPLY)%7Bid%7D%7D",
        ),
        Probe(
            "hand-made",
            b"",
            method="GET",
            content_type="",
            query="query=%7Bplans%7BtotalCount%7D%7D&variables=%5B%5B%5B1%5D%5D%5D",
        ),
        Probe("hand-made", b"", method="PUT"),
    ]
    deep = st.sampled_from([1_000, 100_000, 400_000]).map(
        lambda n: Probe("hand-made", b'{"query": "{ plans { totalCount } }", "variables": {"a": ' + b"[" * n + b"]" * n + b"}}")
    )
    oversized = st.sampled_from([MAX_BODY + 1, 3 * MAX_BODY]).flatmap(
        lambda n: st.sampled_from(
            [
                Probe("hand-made", _json({"query": query, "variables": {"a": "x" * n}})),
                Probe("hand-made", _json({"query": query, "variables": {"a": "x" * n}}), chunked=True),
            ]
        )
    )
    return st.sampled_from(bodies) | deep | oversized


def hand_made(known: Known) -> st.SearchStrategy[Probe]:
    return st.one_of(
        recordings(known),
        recordings(known),
        instantiations(known),
        id_operations(known),
        reviews_and_corrections(known),
        deep_documents(),
        wrong_variables(known),
        malformed_http(),
    )


SUBSCRIPTION_FIELDS = (
    "kind",
    "planId",
    "decisionId",
    "reviewId",
    "at",
    "cursor",
    "decision { id chosenOption status plan { id } }",
    "nonsense",
    "__typename",
)
PROTOCOL = ("normal", "normal", "normal", "no_init", "not_json", "unknown_type", "no_id", "twice", "complete_first")


@st.composite
def subscriptions(draw: st.DrawFn, known: Known) -> Probe:
    """``decisionEvents`` over graphql-transport-ws: ids and cursors as a client sends them (known,
    unknown, malformed), odd selections, and messages that break the protocol."""
    fields = draw(st.lists(st.sampled_from(SUBSCRIPTION_FIELDS), max_size=4, unique=True)) or ["kind"]
    variables: dict[str, Any] = {"id": draw(id_values(known))}
    after = draw(st.one_of(st.none(), st.sampled_from(["0", "1", "-1", "999999999999", "1e3", " 7", ""]), plain_text()))
    if after is not None:
        variables["after"] = after
    query = f"subscription($id: ID!, $after: String) {{ decisionEvents(planId: $id, after: $after) {{ {' '.join(fields)} }} }}"
    subscribe: Any = {"id": "1", "type": "subscribe", "payload": {"query": query, "variables": variables}}
    messages: list[Any] = [{"type": "connection_init"}, subscribe]
    broken = draw(st.sampled_from(PROTOCOL))
    if broken == "no_init":
        messages = [subscribe]
    elif broken == "not_json":
        messages = [{"type": "connection_init"}, "{not json"]
    elif broken == "unknown_type":
        messages = [{"type": "connection_init"}, {"id": "1", "type": draw(st.sampled_from(["start", "", "ping!", "data"]))}]
    elif broken == "no_id":
        messages = [{"type": "connection_init"}, {"type": "subscribe", "payload": subscribe["payload"]}]
    elif broken == "twice":
        messages = [{"type": "connection_init"}, subscribe, subscribe]
    elif broken == "complete_first":
        messages = [{"type": "connection_init"}, {"id": "1", "type": "complete"}, subscribe]
    body = json.dumps([m if isinstance(m, str) else json.dumps(m, ensure_ascii=True) for m in messages]).encode()
    return Probe("subscription", body, content_type="", method="WS")


# Closing codes of graphql-transport-ws a client may be given: 4400 bad message, 4401 unauthorized,
# 4403 forbidden, 4406 subprotocol, 4408 init timeout, 4409 subscriber for that id exists, 4429
# too many init requests; 1000 a normal close. 4500 (and 1011) are the server's own failure.
INTERNAL_CLOSES = frozenset({1011, 4500})


MAX_DOCUMENT = 20_000
"""Characters of a generated document sent: a selection through the schema's self-referencing types
(Review.reopens, Decision.parent, ...) can nest to megabytes, which only the body and token limits
would see (the hand-made probes try those), and whose repr Hypothesis refuses to build."""


def generated(known: Known) -> Mapping[str, st.SearchStrategy[Probe]]:
    """Documents generated from the served schema, by kind, each at most ``MAX_DOCUMENT`` characters."""
    sdl = schema.as_str()
    custom = scalars(known)

    def sent(kind: str, documents: st.SearchStrategy[Any]) -> st.SearchStrategy[Probe]:
        return documents.map(str).filter(lambda text: len(text) <= MAX_DOCUMENT).map(lambda text: Probe.graphql(kind, text))

    return {
        "query": sent("query", queries(sdl, custom_scalars=custom)),
        "mutation": sent("mutation", mutations(sdl, custom_scalars=custom)),
        "invalid": sent("invalid", from_schema(sdl, custom_scalars=custom, mode=Mode.NEGATIVE)),
        "subscription": subscriptions(known),
    }


# --- sending and judging -------------------------------------------------------------------------------------------


class Session:
    """The fuzzing's client: sends probes, judges every answer into the outcome, learns ids."""

    def __init__(self, base_url: str, outcome: Outcome, *, token: str | None, progress: Callable[[str], None]) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.client = httpx.Client(base_url=base_url, timeout=120, headers=headers)
        self.outcome = outcome
        self.progress = progress
        self.known = Known()
        self.kinds: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.writes: Counter[str] = Counter()  # mutations answered without an error, by kind
        self.problems: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def close(self) -> None:
        self.client.close()

    def send(self, probe: Probe) -> Verdict:
        self.kinds[probe.kind] += 1
        if probe.method == "WS":
            return self._judge(probe, self._over_websocket(probe))
        headers = {"content-type": probe.content_type} if probe.content_type else {}
        content: bytes | Iterator[bytes] = probe.body
        if probe.chunked:
            content = iter([probe.body[i : i + 65536] for i in range(0, len(probe.body), 65536)])
        try:
            url = f"{ENDPOINT}?{probe.query}" if probe.query else ENDPOINT
            response = self.client.request(probe.method, url, content=content, headers=headers)
        except httpx.HTTPError as e:
            verdict = Verdict(0, problems=(f"no answer ({type(e).__name__}: {e})",))
        else:
            echo = probe.body.decode("utf-8", "replace")
            try:  # the strings of the request as the server read them, escapes undone
                echo += json.dumps(json.loads(probe.body), ensure_ascii=False)
            except (ValueError, RecursionError):
                pass
            verdict = classify(response.status_code, response.text, echo=echo)
        return self._judge(probe, verdict)

    def _over_websocket(self, probe: Probe) -> Verdict:
        """Send a probe's messages over graphql-transport-ws; judge every result it is sent back, and how it closes."""
        url = str(self.client.base_url).replace("http", "ws", 1).rstrip("/") + ENDPOINT
        headers = {k: v for k, v in self.client.headers.items() if k.lower() == "authorization"}
        codes: list[str] = []
        problems: list[str] = []
        echo = probe.body.decode("utf-8", "replace")
        try:
            with connect(url, subprotocols=["graphql-transport-ws"], additional_headers=headers, open_timeout=10) as ws:  # type: ignore[list-item]
                for message in json.loads(probe.body):
                    ws.send(message)
                deadline = time.monotonic() + 0.5
                while time.monotonic() < deadline:
                    try:
                        reply = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
                    except TimeoutError:
                        break
                    if reply.get("type") in ("next", "error"):
                        payload = reply.get("payload")
                        result = payload if reply["type"] == "next" else {"errors": payload}
                        judged = classify(200, json.dumps(result), echo=echo)
                        codes += judged.codes
                        problems += judged.problems
                    if reply.get("type") in ("error", "complete"):
                        break
        except ConnectionClosed as e:
            if e.rcvd is not None and e.rcvd.code in INTERNAL_CLOSES:
                problems.append(f"the server closed the subscription as its own failure ({e.rcvd.code} {e.rcvd.reason})")
        except (OSError, TimeoutError, InvalidHandshake) as e:
            problems.append(f"no WebSocket answer ({type(e).__name__}: {e})")
        return Verdict(101, codes=tuple(codes), problems=tuple(problems))

    def _judge(self, probe: Probe, verdict: Verdict) -> Verdict:
        self.statuses[str(verdict.status)] += 1
        for code in verdict.codes:
            self.outcome.count(code)
        for problem in verdict.problems:
            self.problems[problem[:60]] += 1
            # One example of each kind of failure is enough to act on; the counts say how often.
            self.examples.setdefault(problem[:60], f"{problem} <- {probe.body[:300]!r}")
        self.known.harvest(verdict.data)
        if (
            b"mutation" in probe.body[:200]
            and not verdict.codes
            and isinstance(verdict.data, dict)
            and any(verdict.data.values())
        ):
            self.writes[probe.kind] += 1
        total = sum(self.kinds.values())
        if total % 100 == 0:
            self.progress(f"fuzz: {total} requests, {sum(self.problems.values())} broken guarantees")
        return verdict

    def ok(self, query: str, variables: Mapping[str, Any]) -> Any:
        """Send a request that must succeed; its data, or None (the failure recorded)."""
        verdict = self.send(Probe.graphql("setup", query, variables))
        if verdict.codes or verdict.problems:
            self.outcome.require(False, f"a valid request failed ({', '.join(verdict.codes + verdict.problems)}): {query[:80]}")
            return None
        return verdict.data


def seed_plans(session: Session) -> None:
    """A few real plans, decisions and a pending review, so generated documents can reach the store."""
    for n, profile in enumerate([None, {"editCode": 0.9, "executeCommand": 0.9}]):
        variables: dict[str, Any] = {"input": {"description": f"fuzz seed {n}", "arguments": {"n": n}}}
        if profile:
            variables["input"]["automationProfile"] = profile
        data = session.ok(INSTANTIATE, variables)
        if not data:
            continue
        plan = data["instantiatePlan"]["id"]
        for i, kind in enumerate(("STRATEGY_CHOICE", "RESOURCE_SELECTION", "STRATEGY_CHOICE")):
            session.ok(
                RECORD,
                {
                    "input": {
                        "planId": plan,
                        "decisionType": kind,
                        "question": f"{kind} {i}?",
                        "chosenOption": "this",
                        "rationale": "seed",
                        "alternativesConsidered": ["that"],
                        "confidenceScore": 0.5,
                        "contextSnapshot": snapshot(f"{plan}{kind}{i}"),
                    }
                },
            )


def cypher_round_trip(session: Session, graph: Graph) -> int:
    """Record plans and decisions whose every free-text field looks like Cypher; read them back verbatim.

    Returns how many strings came back byte for byte; each mismatch, and a drop in the node
    count, is a failure of the outcome.
    """
    outcome = session.outcome
    before = count_graph(graph).nodes
    matched = 0
    for n, text in enumerate(CYPHER_LOOKALIKES):
        plan_input = {
            "description": text,
            "arguments": {"cypher": text, "list": [text], "nested": {"q": text}},
            "invariants": [{"name": text, "statement": text, "scope": "PLAN"}],
        }
        plan = session.ok(INSTANTIATE, {"input": plan_input})
        if not plan:
            continue
        plan_id = plan["instantiatePlan"]["id"]
        odd = {"ref": text, "thread": text, "checkpoint": text, "resource": text, "path": text}
        record = {
            "planId": plan_id,
            "decisionType": "STRATEGY_CHOICE",
            "question": text,
            "chosenOption": text,
            "rationale": text,
            "alternativesConsidered": [text, f"{text}{n}"],
            "idempotencyKey": f"{text}{n}",
            "contextSnapshot": snapshot(text, own=False, **odd),
        }
        recorded = session.ok(RECORD, {"input": record})
        if not recorded or not recorded["recordDecision"]["decision"]:
            outcome.require(False, f"the Cypher-looking recording {text!r} was not recorded")
            continue
        decision_id = recorded["recordDecision"]["decision"]["id"]
        corrected = session.ok(
            "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }",
            {"input": {"decisionId": decision_id, "mode": "APPEND", "guidance": text, "reason": text}},
        )
        back = session.ok(READ_BACK, {"plan": plan_id, "decision": decision_id, "text": text})
        if not back or not back["plan"] or not back["decision"]:
            outcome.require(False, f"the Cypher-looking records of {text!r} could not be read back")
            continue
        expected = {
            "description": text,
            "arguments": plan_input["arguments"],
            "invariants": plan_input["invariants"],
            "question": text,
            "chosenOption": text,
            "rationale": text,
            "alternativesConsidered": record["alternativesConsidered"],
            "contextSnapshot": {
                "hotContextRef": text,
                "relevantResources": [{"resourceId": text, "path": text}],
                "actorStateRef": {"threadId": text, "checkpointNs": "", "checkpointId": text},
            },
            "corrections": [{"guidance": text, "reason": text}] if corrected else [],
        }
        found = {**back["plan"], **back["decision"]}
        for name, value in expected.items():
            if found.get(name) == value:
                matched += 1
            else:
                outcome.require(False, f"{name} did not come back verbatim: sent {value!r}, read {found.get(name)!r}")
        searched = [d["id"] for d in back["plan"]["decisions"]["nodes"]]
        outcome.require(decision_id in searched, f"searching the plan for {text!r} did not find the decision that says it")
    after = count_graph(graph).nodes
    outcome.require(after >= before, f"the node count dropped from {before} to {after} during the Cypher round trip")
    return matched


SHARES = {"hand-made": 0.45, "query": 0.2, "mutation": 0.15, "invalid": 0.15, "subscription": 0.05}
"""What part of the examples each kind gets: hand-made probes reach the store most often."""


def fuzz(session: Session, kind: str, probes: st.SearchStrategy[Probe], *, examples: int, seed: int) -> None:
    """Send ``examples`` probes drawn from ``probes``; hypothesis only generates, it never shrinks."""

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(probes)
    def send(probe: Probe) -> None:
        session.send(probe)

    try:
        send()
    except Exception as e:  # noqa: BLE001  # a run is judged, never aborted
        session.outcome.require(False, f"the {kind} fuzzing stopped: {type(e).__name__}: {e}")


def run(
    base_url: str,
    graph: Graph,
    *,
    examples: int,
    seed: int = 0,
    token: str | None = None,
    progress: Callable[[str], None] = _quiet,
) -> Outcome:
    """Fuzz the API served at ``base_url`` (its Neo4j is ``graph``) with ``examples`` generated requests.

    Guarantees: no HTTP 5xx, every answer JSON, every error a client code or GraphQL's own
    validation, no internal error (masked or not: a masked one is still a bug), the server still up, the node count never lower,
    Cypher-looking text stored verbatim, and ``check --all`` clean afterwards.
    """
    outcome = Outcome("fuzz", f"{examples} generated GraphQL requests: valid, invalid, oversized, deep, unicode, malformed")
    started = time.perf_counter()
    nodes_before = count_graph(graph).nodes
    session = Session(base_url, outcome, token=token, progress=progress)
    try:
        seed_plans(session)
        strategies = {**generated(session.known), "hand-made": hand_made(session.known)}
        for kind, share in SHARES.items():
            # One run per kind, so each gets its share however few the examples.
            fuzz(session, kind, strategies[kind], examples=max(1, round(examples * share)), seed=seed)
        progress(f"fuzz: {sum(session.kinds.values())} requests sent; the Cypher round trip")
        roundtrips = cypher_round_trip(session, graph)
        alive = session.client.get("/healthz")
        outcome.require(alive.status_code == 200, f"the server does not answer /healthz after fuzzing: {alive.status_code}")
    finally:
        session.close()
    progress("fuzz: checking the whole database")
    report = analysis.check(Trail.on(graph), LoadScope.ALL, progress=False, principal=process("reliability"))
    nodes_after = count_graph(graph).nodes
    for problem, example in session.examples.items():
        outcome.require(False, f"{example} (x{session.problems[problem]})")
    outcome.require(nodes_after >= nodes_before, f"the node count dropped from {nodes_before} to {nodes_after}")
    outcome.require(report.ok, f"check --all found {len(report.violations)} violation(s): {report.by_rule()}")
    codes = outcome.errors_by_code
    outcome.figures.update(
        {
            "requests": sum(session.kinds.values()),
            "documents_by_kind": dict(sorted(session.kinds.items())),
            "responses_by_status": dict(sorted(session.statuses.items())),
            "mutations_written_by_kind": dict(sorted(session.writes.items())),
            "unmasked": codes.get(UNMASKED, 0),
            "masked_internal": codes.get(MASKED, 0),
            "violations": len(report.violations),
            "cypher_roundtrips": roundtrips,
            "decisions_checked": report.decisions,
            "plans_checked": report.plans,
        }
    )
    outcome.seconds = time.perf_counter() - started
    return outcome
