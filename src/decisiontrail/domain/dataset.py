"""Corrections as evaluation examples: what the actor decided, what the user wanted instead, and about the correction.

One example per correction attempt, in the shape LangSmith, Langfuse and Arize Phoenix import a
dataset item: ``input``, ``expected_output`` and ``metadata``, each a JSON object (Langfuse's names;
LangSmith calls the first two ``inputs`` and ``outputs``, Phoenix takes them as input, output and
metadata keys).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from decisiontrail.domain.correction import CorrectionAttempt
from decisiontrail.domain.decision import Decision

SOURCE = "decisiontrail"
"""What every example's metadata names as where it comes from."""


@dataclass(frozen=True)
class CorrectionExample:
    """One correction attempt with the decisions an evaluation example is made of."""

    attempt: CorrectionAttempt
    plan_id: str  # the plan the corrected decision is in
    project: str | None
    corrected: Decision  # the decision as the actor made it
    correction: Decision  # the user's guidance as recorded (or a prompt correction's new root)
    replayed: tuple[Decision, ...] = ()  # what the replay recorded, as far as the reader may see it
    replacement_id: str | None = None  # the replayed decision that took the corrected one's place
    invalidated_decision_count: int = 0  # as far as the reader may see them
    invalidated_plan_count: int = 0

    @property
    def replacement(self) -> Decision | None:
        return next((d for d in self.replayed if d.decision_id == self.replacement_id), None)

    def record(self) -> dict[str, JsonValue]:
        """The example as one JSON object: ``input``, ``expected_output``, ``metadata``."""
        attempt = self.attempt
        replacement = self.replacement
        return {
            "input": decision_record(self.corrected),
            "expected_output": {
                "guidance": attempt.guidance,
                "reason": attempt.reason,
                "correction": decision_record(self.correction),
                "replacement": decision_record(replacement) if replacement is not None else None,
                "replayed": [decision_record(d) for d in self.replayed],
            },
            "metadata": {
                "source": SOURCE,
                "attempt_id": attempt.attempt_id,
                "attempt_number": attempt.attempt_number,
                "mode": attempt.mode.value,
                "replay_outcome": attempt.replay_outcome.value,
                "replay_detail": attempt.replay_detail,
                "corrected_at": attempt.at.isoformat(),
                "requested_by": attempt.requested_by,
                "plan_id": self.plan_id,
                "project": self.project,
                "decision_type": self.corrected.decision_type.value,
                "original_decision_id": attempt.original_decision_id,
                "corrected_decision_id": attempt.corrected_decision_id,
                "correction_decision_id": attempt.correction_decision_id,
                "invalidated_decision_count": self.invalidated_decision_count,
                "invalidated_plan_count": self.invalidated_plan_count,
            },
        }


def decision_record(decision: Decision) -> dict[str, JsonValue]:
    """A decision as an example carries it: the choice, its reasons, and where its context is."""
    snapshot = decision.context_snapshot
    state = snapshot.actor_state_ref
    return {
        "decision_id": decision.decision_id,
        "plan_id": decision.plan_id,
        "decision_type": decision.decision_type.value,
        "phase": decision.phase.value,
        "question": decision.question,
        "chosen_option": decision.chosen_option,
        "alternatives_considered": list(decision.alternatives_considered),
        "confidence_score": decision.confidence_score,
        "rationale": decision.rationale,
        "context_snapshot": {
            "hot_context_ref": snapshot.hot_context_ref,
            "hot_context_hash": snapshot.hot_context_hash,
            "actor_state_ref": None
            if state is None
            else {"thread_id": state.thread_id, "checkpoint_ns": state.checkpoint_ns, "checkpoint_id": state.checkpoint_id},
        },
    }
