"""Recording and reading a plan's decisions: `demo`, `tree`, `guide`, `reviews`, `resolve`, `phase` and `invariants`."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from decisiontrail.access import Principal, operator
from decisiontrail.cli.arguments import (
    DECISION_REFERENCE,
    PLAN_REFERENCE,
    Commands,
    moment,
    name_and_statement,
    plan_reference,
    resolve_decision,
)
from decisiontrail.cli.correction import describe_correction

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from decisiontrail.domain.recording import Review
    from decisiontrail.services import Trail

__all__ = [
    "COMMANDS",
    "add_demo",
    "add_guide",
    "add_invariants",
    "add_phase",
    "add_resolve",
    "add_reviews",
    "add_tree",
    "describe_review",
    "execute",
]

log = logging.getLogger("decisiontrail")

COMMANDS = frozenset({"demo", "tree", "guide", "reviews", "resolve", "phase", "invariants"})


def add_demo(commands: Commands) -> None:
    commands.add_parser(
        "demo",
        help="run a plan hierarchy with the scripted model, review, correct and replay it; print it from Neo4j",
        description=(
            "Run the demonstration plan (rate limiting for the billing API) in the plan runtime, in this "
            "process, with the scripted model (scripted:demonstration, no network): invariant "
            "reconciliation, the strategy actor, whose spawn a scripted reviewer resolves, the child plan "
            "it spawns, the execution actor, Apply. One execution decision is then corrected and the "
            "runtime replays it from the actor's checkpoint. The hierarchy is printed as read back from "
            "Neo4j, which also keeps the runs and the actors' checkpoints."
        ),
    )


def add_tree(commands: Commands) -> None:
    tree = commands.add_parser(
        "tree",
        help="print a plan's decision tree",
        description="Print a plan's decision tree, each decision with its sequence number #N and its ULID: every "
        "command that takes a decision takes either, the number as PLAN_ID#N. `decisiontrail plans` lists the plans, "
        "newest first.",
    )
    tree.add_argument("plan_id", type=plan_reference, metavar="PLAN", help="the plan: " + PLAN_REFERENCE)
    tree.add_argument("--history", action="store_true", help="also show superseded decisions, marked, under what replaced them")
    tree.add_argument(
        "--as-of", type=moment, metavar="TIME", help="the tree as it stood at this ISO 8601 time (UTC if no offset)"
    )


def add_guide(commands: Commands) -> None:
    guide = commands.add_parser(
        "guide",
        help="give a plan guidance without correcting anything (ADR-033's `agents plan prompt`)",
        description="Record a user's guidance as a user_intervention under a decision of the plan; the actor's next "
        "decisions can depend on it. Nothing is superseded.",
    )
    guide.add_argument(
        "decision_id",
        help="the decision to hang the guidance under: " + DECISION_REFERENCE,
    )
    guide.add_argument("--guidance", required=True, help="the guidance, in words")
    guide.add_argument("--reason", default="", help="why it is given")
    guide.add_argument("--by", default="cli", help="who gives it (default: cli)")


def add_reviews(commands: Commands) -> None:
    inbox = commands.add_parser(
        "reviews",
        help="list reviews across plans (pending by default): the reviewer's inbox",
        description="List reviews across plans, oldest first.",
    )
    inbox.add_argument(
        "--status",
        choices=["pending", "approved", "alternative_selected", "custom", "cancelled", "lapsed", "all"],
        default="pending",
        help="which reviews (default: pending)",
    )
    inbox.add_argument("--plan", help="only this plan's reviews")
    inbox.add_argument("--project", help="only this project's reviews")
    inbox.add_argument("--first", type=int, default=100, help="how many (1 to 100, default 100)")


def add_resolve(commands: Commands) -> None:
    resolve = commands.add_parser(
        "resolve",
        help="resolve a pending review",
        description="Approve, select an alternative, or give a custom choice. The review records you as "
        "cli:<your login name> and the digest of the decision it resolved as.",
    )
    resolve.add_argument("review_id", help="the review's ULID (as `reviews` prints)")
    resolve.add_argument("--action", choices=["approve", "select_alternative", "custom"], default="approve")
    resolve.add_argument("--option", help="the alternative chosen, or the custom choice")
    resolve.add_argument(
        "--digest",
        help="the review's digest as `reviews` printed it: refused unless the review still proposes exactly that action",
    )


def add_phase(commands: Commands) -> None:
    phase = commands.add_parser(
        "phase",
        help="move a plan to another phase (strategize -> execute -> apply, or back to strategize)",
        description="Advance a plan's phase, recording who and why; refused while reviews are pending.",
    )
    phase.add_argument("plan_id", help="the plan's ULID")
    phase.add_argument("phase", choices=["strategize", "execute", "apply"])
    phase.add_argument("--reason", default="", help="why")
    phase.add_argument("--by", default="cli", help="who asks (default: cli)")


def add_invariants(commands: Commands) -> None:
    invariants = commands.add_parser(
        "invariants",
        help="the global and project invariants, and a plan's (ADR-007: add a missing one, remove one that should not apply)",
        description="Set or show the global or a project's invariants (plans instantiated afterwards gather them), or "
        "add an invariant to a plan in Strategize or remove one from a plan (its invariant_enforced is corrected away).",
    )
    invariant_commands = invariants.add_subparsers(dest="invariants_command", required=True, metavar="command")
    set_ = invariant_commands.add_parser("set", help="replace the global set or a project's")
    show = invariant_commands.add_parser("show", help="print the global set or a project's")
    for which in (set_, show):
        where = which.add_mutually_exclusive_group(required=True)
        where.add_argument("--global", dest="global_set", action="store_true", help="the global set")
        where.add_argument("--project", help="that project's set")
    set_.add_argument("invariant", nargs="*", metavar="NAME=STATEMENT", help="the set's invariants (none: an empty set)")
    add = invariant_commands.add_parser("add", help="add a missing invariant to a plan in Strategize")
    add.add_argument("plan_id", help="the plan's ULID")
    add.add_argument("name")
    add.add_argument("statement")
    add.add_argument("--scope", choices=["plan", "action"], default="plan", help="where it is declared (default: plan)")
    add.add_argument("--reason", default="", help="why it was missing")
    add.add_argument("--by", default="cli", help="who adds it (default: cli)")
    remove = invariant_commands.add_parser("remove", help="remove an invariant that should not apply to a plan")
    remove.add_argument("plan_id", help="the plan's ULID")
    remove.add_argument("name")
    remove.add_argument("--reason", required=True, help="why it should not apply")
    remove.add_argument("--by", default="cli", help="who asks (default: cli)")


def execute(args: argparse.Namespace, trail: Trail, checkpointer: BaseCheckpointSaver[Any]) -> int:
    """One of ``COMMANDS``, over an open trail whose actors keep their checkpoints in ``checkpointer``."""
    from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
    from decisiontrail.domain import Phase
    from decisiontrail.domain.pages import ReviewPage, page_size
    from decisiontrail.domain.recording import ReviewAction
    from decisiontrail.services import lifecycle, reading, reviews

    caller = operator()
    if args.command == "demo":
        demo = record_demonstration(trail, checkpointer, log=log.info)
        log.info(
            "recorded by run %s of the runtime (model %s): %d review(s) resolved, %d Execute checkpoint group(s); "
            "reading the hierarchy back from Neo4j",
            demo.run.run_id,
            demo.run.model,
            len(demo.reviews_resolved),
            demo.checkpoint_groups,
        )
        print(render_demonstration(trail, demo))
        print()
        print(describe_correction(demo.correction))
        print(
            f"replayed by the runtime in generation {demo.run.generation} of run {demo.run.run_id}: "
            f"{len(demo.replayed)} new decision(s): " + ", ".join(demo.replayed)
        )
    elif args.command == "tree":
        found = reading.get_tree(trail, args.plan_id, caller, as_of=args.as_of, history=args.history)
        if found is None:
            at = f" at {args.as_of.isoformat()}" if args.as_of else ""
            print(f"plan {args.plan_id} has no current decisions{at} (a correction invalidated it); see --history")
        else:
            print(found.render(ids=True))
    elif args.command == "invariants":
        _invariants(args, trail, caller)
    elif args.command == "guide":
        parent = reading.get_decision(trail, resolve_decision(trail, args.decision_id, caller), caller)
        guided = lifecycle.add_guidance(
            trail,
            parent.plan_id,
            args.guidance,
            parent_decision_id=parent.decision_id,
            reason=args.reason,
            principal=caller,
            given_by=args.by,
        )
        print(f"recorded guidance {guided.decision_id} (#{guided.sequence_number} user_intervention) in plan {guided.plan_id}")
    elif args.command == "reviews":
        status = None if args.status == "all" else args.status
        _, inbox = reading.page_reviews(
            trail,
            ReviewPage(first=page_size(args.first), status=status, plan_id=args.plan, project=args.project, count=False),
            caller,
        )
        for waiting in inbox:
            print(describe_review(waiting))
    elif args.command == "resolve":
        review, decision = reviews.resolve_review(
            trail, args.review_id, ReviewAction(args.action), args.option, principal=caller, digest=args.digest
        )
        print(
            f"review {review.review_id} {review.status.value} by {review.resolved_by}: recorded "
            f"{decision.decision_id} ({decision.chosen_option}), approved digest {review.approved_digest}"
        )
    else:
        plan = lifecycle.advance_phase(trail, args.plan_id, Phase(args.phase), args.reason, principal=caller, by=args.by)
        print(f"plan {plan.plan_id} is in {plan.phase.value}")
    return 0


def _invariants(args: argparse.Namespace, trail: Trail, caller: Principal) -> None:
    from decisiontrail.domain.invariants import Invariant, InvariantSet, Scope
    from decisiontrail.services import invariants

    command = args.invariants_command
    if command in ("set", "show"):
        scope, project = (Scope.GLOBAL, None) if args.global_set else (Scope.PROJECT, args.project)
        found: InvariantSet | None
        if command == "set":
            declared = [Invariant(name=name, statement=statement) for name, statement in map(name_and_statement, args.invariant)]
            found = invariants.set_invariants(trail, scope, project, declared, principal=caller)
        else:
            found = invariants.invariant_set(trail, scope, project, caller)
        where = "global" if scope is Scope.GLOBAL else f"project {project}"
        if found is None:
            print(f"no {where} invariants are set")
            return
        print(f"{where} invariants ({len(found.invariants)}):")
        for invariant in found.invariants:
            print(f"  {invariant.name}: {invariant.statement}")
    elif command == "add":
        added = invariants.add_invariant(
            trail, args.plan_id, args.name, args.statement, Scope(args.scope), args.reason, principal=caller, added_by=args.by
        )
        print(f"recorded {added.decision_id} (#{added.sequence_number} invariant_enforced) in plan {added.plan_id}")
    else:
        print(
            describe_correction(
                invariants.remove_invariant(trail, args.plan_id, args.name, args.reason, principal=caller, requested_by=args.by)
            )
        )


def describe_review(review: Review) -> str:
    proposal = review.proposal
    return (
        f"{review.review_id} {review.status.value} plan {review.plan_id}: "
        f"{proposal.decision_type.value}: {proposal.question} -> {proposal.chosen_option} ({review.reason}) "
        f"digest {review.digest}"
        + (f"; resolved by {review.resolved_by}, approved {review.approved_digest}" if review.approved_digest else "")
        + (f"; lapsed by correction {review.lapsed_by}" if review.lapsed_by else "")
        + (f"; asked again as review {review.reopened_by}" if review.reopened_by else "")
    )
