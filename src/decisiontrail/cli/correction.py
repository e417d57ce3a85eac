"""Correction and replay: `impact`, `correct`, `history` and `replay` (ADR-007), and how a correction is told."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from decisiontrail.access import operator
from decisiontrail.cli.arguments import DECISION_REFERENCE, Commands, json_object, resolve_decision

if TYPE_CHECKING:
    from decisiontrail.domain.correction import CorrectionResult, Impact
    from decisiontrail.services import Trail

__all__ = [
    "COMMANDS",
    "add_correct",
    "add_history",
    "add_impact",
    "add_replay",
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
            "downstream, across child plans, are superseded in one transaction. Prints what was invalidated "
            "and the replay frontier (the actor checkpoints to re-run from)."
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


def add_history(commands: Commands) -> None:
    corrections = commands.add_parser(
        "history", help="list the correction attempts on a decision's chain", description="List correction attempts."
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
    replay.add_argument("attempt_id", help="the correction attempt's ULID (as `correct` and `history` print)")
    replay.add_argument("outcome", choices=["replayed", "failed", "not_needed"])
    replay.add_argument("--decision", action="append", default=[], metavar="ID", help="a decision the replay recorded (repeat)")
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
        )
        print(describe_correction(result))
    elif args.command == "replay":
        attempt = record_replay(trail, args.attempt_id, ReplayOutcome(args.outcome), args.detail, args.decision, principal=caller)
        print(f"attempt {attempt.attempt_id}: replay {attempt.replay_outcome.value}")
    else:
        for attempt in history(trail, resolve_decision(trail, args.decision_id, caller), caller):
            print(
                f"attempt {attempt.attempt_number} at {attempt.at:%Y-%m-%d %H:%M:%S} by {attempt.requested_by} "
                f"({attempt.mode.value}): {attempt.guidance!r}; invalidated {len(attempt.invalidated_decision_ids)} "
                f"decision(s), {len(attempt.invalidated_plan_ids)} plan(s); replay {attempt.replay_outcome.value}"
            )
    return 0


def describe_impact(impact: Impact) -> str:
    counts = ", ".join(f"{n} {t}" for t, n in impact.counts_by_type.items())
    lines = [f"correcting {impact.decision_id} would invalidate {len(impact.decisions)} decision(s) ({counts})"]
    lines += [f"  {d.decision_id} {d.decision_type.value} in plan {d.plan_id}" for d in impact.decisions]
    lines.append(f"and {len(impact.plan_ids)} child plan(s)" + (": " + ", ".join(impact.plan_ids) if impact.plan_ids else ""))
    return "\n".join(lines)


def describe_correction(result: CorrectionResult) -> str:
    attempt = result.attempt
    lines = [
        f"correction {result.correction.decision_id} ({result.correction.decision_type.value}) "
        f"supersedes {attempt.corrected_decision_id}, attempt {attempt.attempt_number}",
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
