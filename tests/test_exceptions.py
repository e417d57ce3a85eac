"""decisiontrail's errors survive a trip between processes (check and export workers), whole."""

from __future__ import annotations

import pickle

import pytest

from decisiontrail.exceptions import (
    Conflict,
    DecisionTrailError,
    NotFound,
    RuleViolation,
    TimedOut,
    TooLarge,
    Unavailable,
    ValidationFailed,
)


@pytest.mark.parametrize(
    "error",
    [
        DecisionTrailError("it failed"),
        ValidationFailed("jobs: at least 1, not 0", field="jobs"),
        RuleViolation("a root has no parent", rule="single_root"),
        NotFound("plan", "01J"),
        Conflict("raced"),
        TimedOut("ran past 30 s"),
        TooLarge("needs more memory", limit="16.0 MiB, db.memory.transaction.max"),
        Unavailable("no Neo4j"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_error_pickles_back_with_its_kind_message_and_details(error: DecisionTrailError) -> None:
    back = pickle.loads(pickle.dumps(error))

    assert type(back) is type(error) and back.code == error.code
    assert back.message == error.message and str(back) == str(error) and back.args == (error.message,)
    assert vars(back) == vars(error)
