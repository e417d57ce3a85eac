"""A Python client of the GraphQL API: typed methods for its operations, our exceptions for its errors."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from websockets.sync.client import connect
from websockets.typing import Subprotocol

from decisiontrail.domain import ArtifactRef, ContextSnapshot
from decisiontrail.domain.recording import CapturedContext, derive_idempotency_key
from decisiontrail.exceptions import (
    Conflict,
    DecisionTrailError,
    Forbidden,
    IdempotencyKeyInUse,
    IdempotencyKeyMismatch,
    NotFound,
    RuleViolation,
    Unavailable,
    ValidationFailed,
)


class Unauthenticated(DecisionTrailError):
    code = "UNAUTHENTICATED"


@dataclass(frozen=True)
class Recorded:
    """What recording returned: the decision's id, or the review a person must resolve first."""

    decision_id: str | None
    review: dict[str, Any] | None = None


_DECISION_FIELDS = "id planId parentDecisionId sequenceNumber decisionType phase question chosenOption status"
_REVIEW_FIELDS = "id planId status decisionType question chosenOption alternativesConsidered confidenceScore reason"


class DecisionTrailClient:
    """Talks to ``decisiontrail serve``. Expected API errors are raised as the same exceptions
    the services raise (NotFound, Conflict, ValidationFailed, ...), with the server's message."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DecisionTrailClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, document: str, **variables: Any) -> dict[str, Any]:
        """Run any operation; returns ``data`` or raises the first error."""
        try:
            response = self._http.post("/graphql", json={"query": document, "variables": variables})
        except httpx.HTTPError as e:
            raise Unavailable(f"cannot reach the decisiontrail API: {e}") from e
        if response.status_code >= 500:
            raise Unavailable(f"the decisiontrail API answered {response.status_code}")
        body = response.json()
        if body.get("errors"):
            raise _error(body["errors"][0])
        data: dict[str, Any] = body["data"]
        return data

    # -- operations ----------------------------------------------------------------------

    def instantiate_plan(
        self,
        description: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        parent_decision_id: str | None = None,
        edit_code: float = 0.0,
        execute_command: float = 0.0,
        invariants: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        data = self.execute(
            "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id phase rootDecision { id } } }",
            input={
                "description": description,
                "arguments": dict(arguments or {}),
                "parentDecisionId": parent_decision_id,
                "automationProfile": {"editCode": edit_code, "executeCommand": execute_command},
                "invariants": [dict(i) for i in invariants],
            },
        )
        plan: dict[str, Any] = data["instantiatePlan"]
        return plan

    def record(
        self,
        arguments: Mapping[str, Any],
        *,
        plan_id: str,
        snapshot: ContextSnapshot,
        context: CapturedContext | None = None,
        depends_on: Sequence[str] = (),
        step_id: str | None = None,
        idempotency_key: str | None = None,
        actor_reasoning: str | None = None,
        artifacts_produced: Sequence[ArtifactRef] = (),
    ) -> Recorded:
        """record_decision through the API, with the same idempotency key the service would derive."""
        state = snapshot.actor_state_ref
        if idempotency_key is None and state is not None and "question" in arguments:
            idempotency_key = derive_idempotency_key(
                state.thread_id,
                state.checkpoint_ns,
                step_id or state.checkpoint_id,
                str(arguments.get("decision_type")),
                str(arguments["question"]),
            )
        payload: dict[str, Any] = {
            "planId": plan_id,
            "decisionType": str(arguments.get("decision_type", "")).upper(),
            "question": arguments.get("question"),
            "chosenOption": arguments.get("chosen_option"),
            "rationale": arguments.get("rationale"),
            "alternativesConsidered": arguments.get("alternatives_considered"),
            "confidenceScore": arguments.get("confidence_score"),
            "parentDecisionId": arguments.get("parent_decision_id"),
            "dependsOn": list(depends_on),
            "idempotencyKey": idempotency_key,
            "actorReasoning": actor_reasoning,
            "artifactsProduced": [
                {"artifactPath": a.artifact_path, "artifactType": a.artifact_type, "digest": a.digest} for a in artifacts_produced
            ],
            "contextSnapshot": {
                "hotContextHash": snapshot.hot_context_hash,
                "hotContextRef": snapshot.hot_context_ref,
                "hotContext": context.content if context else None,
                "relevantResources": [{"resourceId": r.resource_id, "path": r.path} for r in snapshot.relevant_resources],
                "actorStateRef": {
                    "threadId": state.thread_id,
                    "checkpointNs": state.checkpoint_ns,
                    "checkpointId": state.checkpoint_id,
                }
                if state
                else None,
            },
        }
        data = self.execute(
            f"""mutation($input: RecordDecisionInput!) {{ recordDecision(input: $input) {{
                  decision {{ {_DECISION_FIELDS} }} review {{ {_REVIEW_FIELDS} }} }} }}""",
            input=payload,
        )["recordDecision"]
        if data["decision"]:
            return Recorded(decision_id=data["decision"]["id"])
        review = dict(data["review"])
        return Recorded(decision_id=None, review={**review, "review_id": review["id"]})

    def resolve_review(self, review_id: str, action: str, option: str | None = None) -> dict[str, Any]:
        data = self.execute(
            f"""mutation($input: ResolveReviewInput!) {{ resolveReview(input: $input) {{
                  review {{ {_REVIEW_FIELDS} }} decision {{ {_DECISION_FIELDS} }} }} }}""",
            input={"reviewId": review_id, "action": action.upper(), "option": option},
        )
        resolved: dict[str, Any] = data["resolveReview"]
        return resolved

    def correct(
        self, decision_id: str, mode: str, guidance: str, reason: str = "", *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """correctDecision; with an ``idempotency_key``, sending it again (its answer lost, say) gets
        the first one's answer back instead of a conflict."""
        data = self.execute(
            """mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) {
                 correction { id } invalidated { id } invalidatedPlans { id }
                 attempt { attemptId attemptNumber } replayFrontier { planId threadId checkpoint { threadId checkpointNs checkpointId } }
               } }""",
            input={
                "decisionId": decision_id,
                "mode": mode.upper(),
                "guidance": guidance,
                "reason": reason,
                "idempotencyKey": idempotency_key,
            },
        )
        result: dict[str, Any] = data["correctDecision"]
        return result

    def decision(self, decision_id: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.execute(
            f"query($id: ID!) {{ decision(id: $id) {{ {_DECISION_FIELDS} }} }}", id=decision_id
        )["decision"]
        return found

    def impact(self, decision_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.execute(
            """query($id: ID!) { impact(decisionId: $id) {
                 decisions { id decisionType } plans { id } countsByType { decisionType count } } }""",
            id=decision_id,
        )["impact"]
        return found

    def lineage(self, decision_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.execute(
            "query($id: ID!) { lineage(decisionId: $id) { decisions { id decisionType } plans { id } } }", id=decision_id
        )["lineage"]
        return found

    def correction_of(self, decision_id: str) -> dict[str, Any] | None:
        """The decision with what it corrects (a correction decision's ``corrects``) and that one's
        correction attempts, each with its replay frontier."""
        found: dict[str, Any] | None = self.execute(
            """query($id: ID!) { decision(id: $id) { id planId decisionType corrects { id corrections {
                 attemptId mode guidance at replayOutcome correctionDecisionId
                 replayFrontier { planId threadId checkpoint { threadId checkpointNs checkpointId } firstInvalidatedDecisionId decisionType }
               } } } }""",
            id=decision_id,
        )["decision"]
        return found

    def record_replay(
        self, attempt_id: str, outcome: str, detail: str | None = None, decision_ids: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Report how a correction's replay went (REPLAYED, FAILED, NOT_NEEDED) and what it recorded."""
        data = self.execute(
            """mutation($input: RecordReplayInput!) { recordReplay(input: $input) { attemptId replayOutcome replayDetail } }""",
            input={"attemptId": attempt_id, "outcome": outcome.upper(), "detail": detail, "decisionIds": list(decision_ids)},
        )
        reported: dict[str, Any] = data["recordReplay"]
        return reported

    def advance_phase(self, plan_id: str, phase: str, reason: str = "") -> dict[str, Any]:
        """Move the plan to ``phase`` (STRATEGIZE from Execute is a reversion), with the reason."""
        data = self.execute(
            "mutation($id: ID!, $phase: Phase!, $reason: String!) { advancePhase(planId: $id, phase: $phase, reason: $reason) { id phase } }",
            id=plan_id,
            phase=phase.upper(),
            reason=reason,
        )
        moved: dict[str, Any] = data["advancePhase"]
        return moved

    def events(self, plan_id: str, after: str | None = None, *, timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """The plan's decision events over the API's WebSocket (graphql-transport-ws), in commit order,
        from the cursor ``after`` (each event's ``cursor``); ends when the connection does, or after
        ``timeout`` seconds without an event."""
        url = str(self._http.base_url).rstrip("/").replace("http://", "ws://").replace("https://", "wss://") + "/graphql"
        headers = {k: v for k, v in self._http.headers.items() if k.lower() == "authorization"}
        query = """subscription($id: ID!, $after: String) { decisionEvents(planId: $id, after: $after) {
                     kind planId decisionId reviewId at cursor } }"""
        with connect(url, subprotocols=[Subprotocol("graphql-transport-ws")], additional_headers=headers, open_timeout=10) as ws:
            ws.send(json.dumps({"type": "connection_init"}))
            if json.loads(ws.recv(timeout=10))["type"] != "connection_ack":
                raise Unavailable("the decisiontrail API did not acknowledge the subscription")
            ws.send(
                json.dumps(
                    {"id": "1", "type": "subscribe", "payload": {"query": query, "variables": {"id": plan_id, "after": after}}}
                )
            )
            while True:
                try:
                    message = json.loads(ws.recv(timeout=timeout))
                except TimeoutError:
                    return
                if message["type"] == "next":
                    if message["payload"].get("errors"):
                        raise _error(message["payload"]["errors"][0])
                    yield message["payload"]["data"]["decisionEvents"]
                elif message["type"] == "error":
                    raise _error(message["payload"][0])
                elif message["type"] == "complete":
                    return

    def pending_reviews(self, plan_id: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.execute(
            f"query($id: ID!) {{ pendingReviews(planId: $id) {{ {_REVIEW_FIELDS} }} }}", id=plan_id
        )["pendingReviews"]
        return found


_ERRORS: dict[str, type[DecisionTrailError]] = {
    "NOT_FOUND": NotFound,
    "CONFLICT": Conflict,
    "IDEMPOTENCY_KEY_IN_USE": IdempotencyKeyInUse,
    "IDEMPOTENCY_KEY_MISMATCH": IdempotencyKeyMismatch,
    "UNAVAILABLE": Unavailable,
    "UNAUTHENTICATED": Unauthenticated,
}


def _error(error: Mapping[str, Any]) -> DecisionTrailError:
    extensions = error.get("extensions") or {}
    code = extensions.get("code")
    message = str(error.get("message", "the API refused the request"))
    if code == "VALIDATION_FAILED" and extensions.get("rule"):
        return RuleViolation(message, rule=str(extensions["rule"]))
    if code == "PHASE_VIOLATION":
        return RuleViolation(message, rule=str(extensions.get("rule", "phase")))
    if code == "VALIDATION_FAILED" or code is None:
        return ValidationFailed(message, field=extensions.get("field"))
    if code == "FORBIDDEN":  # "the <role> role may not <action>", as the service said it
        role, _, action = message.removeprefix("the ").partition(" role may not ")
        refused = Forbidden(role, action)
        refused.message = message
        refused.args = (message,)
        return refused
    if code == "NOT_FOUND":
        found = NotFound("record", "?")
        found.message = message
        found.args = (message,)
        return found
    return _ERRORS.get(code, DecisionTrailError)(message)
