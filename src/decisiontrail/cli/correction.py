"""Correction and replay: `impact`, `correct`, `history` and `replay` (ADR-007), and how a correction is told."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from decisiontrail.access import operator
from decisiontrail.cli.arguments import DECISION_REFERENCE, Commands, json_object, resolve_decision

if TYPE_CHECKING:
    from decisiontrail.domain.correction import CorrectionAttempt, CorrectionResult, Impact
    from decisiontrail.services import Trail

__all__ = [
    "COMMANDS",
    "add_correct",
    "add_history",
    "add_impact",
    "add_replay",
    "describe_attempt",
    "describe_correction",
    "describe_impact",
    "execute",
]

COMMANDS = frozenset({"impact", "correct", "history", "replay"})


def add_impact(commands: Commands) -> None:
    impact = commands.add_parser(
        "impact",
        help="preview what correcting a decision would invalidate (writes nothing)",
        description="Preview what correcting a decision would invalidate: decisions, plans, counts by type.",
    )
    impact.add_argument(
        "decision_id",
        help=DECISION_REFERENCE,
    )


def add_correct(commands: Commands) -> None:
    correct = commands.add_parser(
        "correct",
        help="correct a decision: supersede it and exactly its downstream",
        description=(
            "Correct a decision (ADR-007): a correction decision is recorded, and the decision and its whole "
            "downstream, across child plans, are superseded in one transaction. Prints what was invalidated, "
            "the replay frontier (the actor checkpoints to re-run from) and the correction attempt's id, which "
            "`replay` takes to report how the re-run went."
        ),
    )
    correct.add_argument(
        "decision_id",
        help=DECISION_REFERENCE,
    )
    correct.add_argument(
        "--mode",
        choices=["revert", "append"],
        default="revert",
        help="revert: re-run from the decision's checkpoint; append: keep the plan's state and add the fix at the end "
        "of the corrected decision's branch, under its parent (default: revert)",
    )
    correct.add_argument("--guidance", required=True, help="the corrected decision, in words")
    correct.add_argument("--reason", default="", help="why the decision was wrong")
    correct.add_argument("--by", default="cli", help="who asks for the correction (default: cli)")
    correct.add_argument("--description", help="a prompt correction's new description (default: the guidance)")
    correct.add_argument(
        "--arguments", type=json_object, help="a prompt correction's new arguments, a JSON object (default: the plan's)"
    )
    correct.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="run again with the same key and arguments, prints what the first run did instead of refusing the decision "
        "as already superseded; the key with other arguments is refused",
    )


def add_history(commands: Commands) -> None:
    corrections = commands.add_parser(
        "history",
        help="list the correction attempts on a decision's chain, with their ids",
        description="List the correction attempts on the chain a decision belongs to (the decision, the corrections "
        "of it and what replaced it), oldest first: each attempt's number and id (as `replay` takes it), when, by "
        "whom, the guidance, what it invalidated and how its replay went. A decision never corrected says so.",
    )
    corrections.add_argument(
        "decision_id",
        help=DECISION_REFERENCE,
    )


def add_replay(commands: Commands) -> None:
    replay = commands.add_parser(
        "replay",
        help="report how a correction's replay went",
        description="Record a correction attempt's replay outcome and the decisions the replay recorded.",
    )
    replay.add_argument("attempt_id", help="the correction attempt's ULID (as `correct` and `history` print it)")
    replay.add_argument("outcome", choices=["replayed", "failed", "not_needed"])
    replay.add_argument(
        "--decision",
        action="append",
        default=[],
        metavar="DECISION",
        help="a decision the replay recorded (repeat): " + DECISION_REFERENCE,
    )
    replay.add_argument("--detail", help="a note on how it went")


def execute(args: argparse.Namespace, trail: Trail) -> int:
    """One of ``COMMANDS``, over an open trail."""
    from decisiontrail.domain.correction import ReplayOutcome
    from decisiontrail.services.correction import correct, history, preview, record_replay

    caller = operator()
    if args.command == "impact":
        print(describe_impact(preview(trail, resolve_decision(trail, args.decision_id, caller), principal=caller)))
    elif args.command == "correct":
        decision_id = resolve_decision(trail, args.decision_id, caller)
        result = correct(
            trail,
            decision_id,
            args.mode,
            args.guidance,
            args.reason,
            principal=caller,
            requested_by=args.by,
            description=args.description,
            arguments=args.arguments,
            idempotency_key=args.idempotency_key,
        )
        print(describe_correction(result))
        print(_who_replays(trail, result))
    elif args.command == "replay":
        replayed = [resolve_decision(trail, reference, caller) for reference in args.decision]
        attempt = record_replay(trail, args.attempt_id, ReplayOutcome(args.outcome), args.detail, replayed, principal=caller)
        print(f"attempt {attempt.attempt_id}: replay {attempt.replay_outcome.value}")
    else:
        decision_id = resolve_decision(trail, args.decision_id, caller)
        attempts = history(trail, decision_id, caller)
        if not attempts:
            named = decision_id if decision_id == args.decision_id else f"{args.decision_id} ({decision_id})"
            print(f"decision {named} has never been corrected: no correction attempts on its chain")
        for attempt in attempts:
            print(describe_attempt(attempt))
    return 0


def _who_replays(trail: Trail, result: CorrectionResult) -> str:
    """The attempt's id, and who reports its replay: the runtime, for a plan it runs (the correction
    queued the replay on the plan's run), else whoever re-runs the actors, through `replay`."""
    from decisiontrail.services.runs import runs_of_plans

    attempt = result.attempt
    run = runs_of_plans(trail, [result.correction.plan_id])[0]
    if run is not None:
        return f"attempt {attempt.attempt_id}: replay queued on run {run.run_id}; the runtime replays it and reports how it went"
    return (
        f"attempt {attempt.attempt_id}: replay {attempt.replay_outcome.value} "
        f"(report it: decisiontrail replay {attempt.attempt_id} replayed|failed|not_needed)"
    )


def describe_attempt(attempt: CorrectionAttempt) -> str:
    """One line of `history`: the attempt's number and id (what `replay` takes), and what it did."""
    return (
        f"attempt {attempt.attempt_number} {attempt.attempt_id} at {attempt.at:%Y-%m-%d %H:%M:%S} by {attempt.requested_by} "
        f"({attempt.mode.value}): {attempt.guidance!r}; invalidated {len(attempt.invalidated_decision_ids)} "
        f"decision(s), {len(attempt.invalidated_plan_ids)} plan(s); replay {attempt.replay_outcome.value}"
    )


def describe_impact(impact: Impact) -> str:
    counts = ", ".join(f"{n} {t}" for t, n in impact.counts_by_type.items())
    lines = [f"correcting {impact.decision_id} would invalidate {len(impact.decisions)} decision(s) ({counts})"]
    lines += [f"  {d.decision_id} {d.decision_type.value} in plan {d.plan_id}" for d in impact.decisions]
    lines.append(f"and {len(impact.plan_ids)} child plan(s)" + (": " + ", ".join(impact.plan_ids) if impact.plan_ids else ""))
    return "\n".join(lines)


def describe_correction(result: CorrectionResult) -> str:
    attempt = result.attempt
    again = f" (made at {attempt.at.isoformat()} by an earlier request with this key; nothing written now)"
    lines = [
        f"correction {result.correction.decision_id} ({result.correction.decision_type.value}) "
        f"supersedes {attempt.corrected_decision_id}, attempt {attempt.attempt_number}" + (again if result.repeated else ""),
        f"invalidated {len(result.invalidated)} decision(s): " + ", ".join(f"{n} {t}" for t, n in attempt.counts_by_type.items()),
        f"invalidated {len(result.invalidated_plans)} child plan(s)"
        + (": " + ", ".join(result.invalidated_plans) if result.invalidated_plans else ""),
    ]
    if result.lapsed_reviews:
        lines.append(f"approvals lapsed: {', '.join(result.lapsed_reviews)} (asked again when the plan reaches their questions)")
    for point in result.replay_frontier:
        where = f"checkpoint {point.checkpoint.checkpoint_id}" if point.checkpoint else "its latest state"
        lines.append(f"replay: thread {point.thread_id} in plan {point.plan_id} from {where}")
    return "\n".join(lines)
