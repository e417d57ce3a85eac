"""The plan runtime from the command line: `run` (queue a plan's run, or drive it here with --wait) and `plans`."""

from __future__ import annotations

import argparse
import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from decisiontrail.access import Principal, operator
from decisiontrail.cli.arguments import Commands, at_least_one, name_and_statement
from decisiontrail.cli.recording import describe_review
from decisiontrail.exceptions import DecisionTrailError, ValidationFailed
from decisiontrail.settings import Neo4jSettings

if TYPE_CHECKING:
    from pydantic import JsonValue

    from decisiontrail.actors.runtime import Runtime
    from decisiontrail.domain import Plan
    from decisiontrail.domain.runs import PlanRun
    from decisiontrail.services import Trail

__all__ = ["COMMANDS", "SETTLE_SLICE", "add_plans", "add_run", "execute"]

log = logging.getLogger("decisiontrail")

COMMANDS = frozenset({"run", "plans"})

SETTLE_SLICE = 1.0
"""Seconds `run --wait` drives runs before looking whether a plan below its own waits for a person."""


def add_run(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        help="instantiate a plan and have the runtime's actors run it (--wait: here, to the end)",
        description=(
            "Instantiate a plan from a description and queue its run: the runtime's actors (strategy, execution, "
            "invariant reconciliation) take it from Strategize to Apply, spawning and running child plans as they "
            "decide. Prints the plan id (first line, alone) and the run id. Without --wait the run is queued for the "
            "runtime workers of a serving process (decisiontrail serve); with --wait it runs in this process, its "
            "progress on stderr, and the exit status says how it settled: 0 succeeded, 1 failed, 2 waits for a "
            "person's review (or the command was refused), 3 still running at --timeout."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("description", help="what the plan is to do, in words")
    run.add_argument(
        "--arg",
        action="append",
        default=[],
        type=_plan_argument,
        metavar="KEY=VALUE",
        help='a plan argument (repeat); VALUE is read as JSON when it is JSON (600, true, ["a","b"], "600"), '
        "else taken as a string; the scripted model reads depth (default 2), parallel, approach and resources",
    )
    run.add_argument("--project", help="the project the plan belongs to (its child plans inherit it)")
    run.add_argument(
        "--invariant",
        action="append",
        default=[],
        metavar="NAME=STATEMENT",
        help="an invariant the plan declares (repeat), besides the global and its project's",
    )
    run.add_argument(
        "--review-below",
        type=_confidence,
        default=0.0,
        metavar="CONFIDENCE",
        help="decisions recorded with a lower confidence wait for a person's review (the plan's automation "
        "thresholds in Strategize and Execute; default 0: none waits)",
    )
    run.add_argument(
        "--model",
        metavar="MODEL",
        help="the actors' chat model: scripted, or provider:model such as openai:gpt-4.1 "
        "(default: DECISIONTRAIL_CHAT_MODEL, else scripted)",
    )
    run.add_argument("--wait", action="store_true", help="run the plan in this process until it settles, instead of queuing it")
    run.add_argument(
        "--timeout",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="with --wait: how long to drive the run before leaving it queued for a serving process (default: 300)",
    )


def add_plans(commands: Commands) -> None:
    plans = commands.add_parser(
        "plans",
        help="list plans, newest first, with their phase and run status: the ids `tree` and the others take",
        description="List plans newest first, one a line: id, phase, the status of its run (- when the runtime "
        "does not run it), project (- for none) and description; a plan a correction invalidated is marked. "
        "The ids are what `tree`, `check`, `analyze` and `export` take. When more plans match than --limit "
        "shows, or none does, stderr says so (not with -q).",
    )
    plans.add_argument("--project", help="only this project's plans")
    plans.add_argument("--phase", choices=["strategize", "execute", "apply"], help="only plans in this phase")
    plans.add_argument("--top-level", action="store_true", help="only plans that are no other plan's child")
    plans.add_argument("--search", metavar="TEXT", help="only plans whose description, id or project holds TEXT, in any case")
    plans.add_argument("--oldest-first", action="store_true", help="oldest first instead (the GraphQL plans' order)")
    plans.add_argument("--limit", type=at_least_one, default=20, metavar="N", help="how many (default: 20)")
    plans.add_argument("--json", action="store_true", help="print a JSON array of the plans, each with its run")


def execute(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    """`run` and `plans`, over a trail whose actors keep their checkpoints in the same Neo4j."""
    from decisiontrail.actors.runtime import Runtime
    from decisiontrail.domain.invariants import Invariant
    from decisiontrail.domain.runs import check_model_name
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
    from decisiontrail.services import open_trail
    from decisiontrail.settings import RuntimeSettings

    if args.command == "run":  # refused before anything opens
        args.model = check_model_name(args.model or RuntimeSettings.from_env().chat_model)
        args.arguments = _plan_arguments(args.arg)
        args.invariants = [
            Invariant(name=name, statement=statement) for name, statement in map(name_and_statement, args.invariant)
        ]
    with open_trail(settings, progress=log.info) as trail:
        if args.command == "plans":
            _list_plans(args, trail)
            return 0
        return _run(args, Runtime(trail, checkpointer_of(trail)))


def _run(args: argparse.Namespace, runtime: Runtime) -> int:
    from decisiontrail.domain import AutomationProfile
    from decisiontrail.domain.runs import RunRequest
    from decisiontrail.services.lifecycle import instantiate_plan
    from decisiontrail.services.runs import runs_of_plans

    caller = operator()
    gate = AutomationProfile(edit_code=args.review_below, execute_command=args.review_below)
    plan, _ = instantiate_plan(
        runtime.trail,
        args.description,
        args.arguments,
        automation_profile=gate,
        invariants=args.invariants,
        project=args.project,
        principal=caller,
        run=RunRequest(model=args.model),
    )
    run = runs_of_plans(runtime.trail, [plan.plan_id])[0]
    assert run is not None  # queued with the plan, in its transaction
    print(plan.plan_id)
    print(f"run {run.run_id} {run.status.value} (model {run.model})", flush=True)
    if not args.wait:
        log.info(
            "the run is queued for the runtime workers of a serving process (decisiontrail serve); "
            "follow it with `decisiontrail plans` or `decisiontrail tree %s`",
            plan.plan_id,
        )
        return 0
    settled = _settle(runtime, plan.plan_id, args.timeout, caller)
    return _report_run(runtime.trail, plan.plan_id, settled is None, args.timeout, caller)


def _settle(runtime: Runtime, plan_id: str, timeout: float, caller: Principal) -> PlanRun | None:
    """Drive runs here until the plan's has finished or its hierarchy waits for a person, following
    them on stderr (as ``caller`` reads them); None if it has not settled within ``timeout`` seconds."""
    progress = _Progress(runtime.trail, plan_id, caller) if log.isEnabledFor(logging.INFO) else None
    stop = threading.Event()
    follower = threading.Thread(target=progress.follow, args=(stop,), daemon=True) if progress else None
    deadline = time.monotonic() + timeout
    from decisiontrail.actors.workers import Workers

    # No worker threads (this thread drives the runs): only the heartbeat keeping their leases, so
    # that a serving process on the same database does not claim a run this one is driving.
    with (
        Workers(runtime, count=0).running(),
        _quieted("decisiontrail.actors.runtime") if progress else contextlib.nullcontext(),
    ):
        if follower is not None:
            follower.start()
        try:
            while True:
                # The runtime settles on the plan's own run; a child plan's review leaves it waiting
                # for its children, so between slices the hierarchy is asked whether a person is awaited.
                try:
                    return runtime.run_until_settled(plan_id, timeout=min(SETTLE_SLICE, max(0.0, deadline - time.monotonic())))
                except TimeoutError:
                    waiting = _awaiting_a_person(runtime.trail, plan_id, caller)
                    if waiting is not None:
                        return waiting
                    if time.monotonic() >= deadline:
                        return None
        finally:
            stop.set()
            if follower is not None and progress is not None:
                follower.join()
                progress.look()  # the hierarchy as it settled


def _awaiting_a_person(trail: Trail, plan_id: str, caller: Principal) -> PlanRun | None:
    """A run of the hierarchy that waits for a review while no run of it can go on; else None."""
    from decisiontrail.domain.runs import RunStatus

    found = [run for _, run in _hierarchy(trail, plan_id, caller) if run is not None]
    if any(run.status in (RunStatus.QUEUED, RunStatus.RUNNING) for run in found):
        return None
    return next((run for run in found if run.status is RunStatus.WAITING and run.waiting_for == "review"), None)


def _report_run(trail: Trail, plan_id: str, timed_out: bool, timeout: float, caller: Principal) -> int:
    """The run's outcome on stdout, and its exit status: 0 succeeded, 1 failed, 2 waits for a person, 3 timed out."""
    from collections import Counter

    from decisiontrail.domain.runs import RunStatus
    from decisiontrail.services import reading

    hierarchy = _hierarchy(trail, plan_id, caller)
    (plan, run), current = hierarchy[0], [p for p, _ in hierarchy if not p.is_invalidated]
    assert run is not None
    decisions = [d for p in current for d in reading.list_decisions(trail, p.plan_id, caller, current_only=True)]
    counts = Counter(d.decision_type.value for d in decisions)
    print(f"run {run.run_id} {_run_state(plan, run)}")
    print(f"{len(decisions)} decision(s) in {len(current)} plan(s): " + ", ".join(f"{n} {t}" for t, n in counts.items()))
    if run.status is RunStatus.SUCCEEDED:
        return 0
    if run.status in (RunStatus.FAILED, RunStatus.CANCELLED):
        return 1
    pending = [review for p in current for review in reading.pending_reviews(trail, p.plan_id, caller)]
    if pending and not timed_out:
        print(f"waiting for a person: {len(pending)} review(s) pending")
        for review in pending:
            print(f"  {describe_review(review)}")
        print(
            "resolve each with `decisiontrail resolve REVIEW_ID` (--action approve, select_alternative or custom, "
            "--option TEXT); the run is then queued again, for the runtime workers of a serving process"
        )
        return 2
    print(f"not settled within {timeout:g} s: the run is left to the runtime workers of a serving process")
    return 3


class _Progress:
    """`run --wait` on stderr: each plan of the hierarchy as it is spawned and as its phase or run changes."""

    def __init__(self, trail: Trail, plan_id: str, caller: Principal) -> None:
        self.trail = trail
        self.plan_id = plan_id
        self.caller = caller
        self.said: dict[str, str] = {}

    def look(self) -> None:
        changed = []
        for plan, run in _hierarchy(self.trail, self.plan_id, self.caller):
            if plan.plan_id not in self.said and plan.parent_plan_id is not None:
                log.info("plan %s spawned child plan %s: %s", plan.parent_plan_id, plan.plan_id, _headline(plan.description))
            state = _run_state(plan, run)
            if self.said.get(plan.plan_id) != state:
                self.said[plan.plan_id] = state
                changed.append((run.updated_at if run is not None else plan.created_at, plan.plan_id, state))
        # Changes seen in one look are said in the order they were made (a child's run ends before its parent's).
        for _, plan_id, state in sorted(changed):
            log.info("plan %s: %s", plan_id, state)

    def follow(self, stop: threading.Event, every: float = 0.2) -> None:
        while not stop.wait(every):
            try:
                self.look()
            except DecisionTrailError as e:  # only the progress is missed; the outcome is read again at the end
                log.debug("progress: %s", e.message)


@contextlib.contextmanager
def _quieted(logger: str) -> Iterator[None]:
    """The logger's information held back (its warnings kept) while the progress says it instead."""
    quieted = logging.getLogger(logger)
    level = quieted.level
    quieted.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        quieted.setLevel(level)


def _hierarchy(trail: Trail, plan_id: str, caller: Principal) -> list[tuple[Plan, PlanRun | None]]:
    """The plan and every plan below it that ``caller`` may see, level by level, each with its run
    (None where it has none)."""
    from decisiontrail.services import reading, runs

    plans: list[Plan] = []
    level = [plan_id]
    while level:
        found = [p for p in reading.get_plans(trail, level, caller) if p is not None]
        plans += found
        level = [child for children in reading.child_plans_of(trail, [p.plan_id for p in found]) for child in children]
    return list(zip(plans, runs.runs_of_plans(trail, [p.plan_id for p in plans]), strict=True))


def _run_state(plan: Plan, run: PlanRun | None) -> str:
    """Where a plan is: its phase, and its run's status with the actor it is in or what it waits for.

    >>> from decisiontrail.domain import Plan
    >>> from decisiontrail.domain.runs import PlanRun, RunStatus
    >>> plan = Plan(description="d")
    >>> _run_state(plan, PlanRun(plan_id=plan.plan_id, status=RunStatus.WAITING, waiting_for="children"))
    'strategize, waiting for children'
    """
    if run is None:
        return plan.phase.value
    state = f"{plan.phase.value}, {run.status.value}"
    if run.waiting_for and run.status.value == "waiting":
        state += f" for {run.waiting_for}"
    elif run.actor is not None and run.status.value == "running":
        state += f": {run.actor.value} actor"
    elif run.error:
        state += f": {run.error}"
    return state


def _list_plans(args: argparse.Namespace, trail: Trail) -> None:
    import json

    from decisiontrail.domain import Phase
    from decisiontrail.domain.pages import MAX_PAGE, PlanPage
    from decisiontrail.services import reading, runs

    caller = operator()
    wanted = args.limit + 1  # one more than shown, to tell whether more match
    ids: list[str] = []
    while len(ids) < wanted:
        size = min(MAX_PAGE, wanted - len(ids))
        page = PlanPage(
            first=size,
            after=ids[-1] if ids else None,
            phase=Phase(args.phase) if args.phase else None,
            top_level=True if args.top_level else None,
            project=args.project,
            search=args.search,
            count=False,
            newest_first=not args.oldest_first,
        )
        found = reading.page_plans(trail, page, caller)[1]
        ids += found
        if len(found) < size:
            break
    more, ids = len(ids) > args.limit, ids[: args.limit]
    if not ids:
        log.info(
            "no plans match" if _filtered(args) else "no plans yet: `decisiontrail run` or `decisiontrail demo` records some"
        )
    elif more:
        log.info("%d plan(s) shown; more match (--limit N shows more)", len(ids))
    listed = [
        (p, r)
        for p, r in zip(reading.get_plans(trail, ids, caller), runs.runs_of_plans(trail, ids), strict=True)
        if p is not None
    ]
    if args.json:
        print(json.dumps([_plan_json(plan, run) for plan, run in listed], indent=2))
        return
    width = max((len(plan.project or "-") for plan, _ in listed), default=1)
    for plan, run in listed:
        mark = "  [invalidated]" if plan.is_invalidated else ""
        status = run.status.value if run is not None else "-"
        print(
            f"{plan.plan_id}  {plan.phase.value:<10} {status:<9}  {plan.project or '-':<{width}}  {_headline(plan.description)}{mark}"
        )


def _filtered(args: argparse.Namespace) -> bool:
    """Whether `plans` was told to leave some out."""
    return bool(args.project or args.phase or args.top_level or args.search)


def _plan_json(plan: Plan, run: PlanRun | None) -> dict[str, object]:
    return {
        "plan_id": plan.plan_id,
        "phase": plan.phase.value,
        "project": plan.project,
        "description": plan.description,
        "parent_plan_id": plan.parent_plan_id,
        "created_at": plan.created_at.isoformat(),
        "invalidated": plan.is_invalidated,
        "run": run.model_dump(mode="json") if run is not None else None,
    }


def _headline(description: str, width: int = 80) -> str:
    """A description on one line, cut at ``width`` characters.

    >>> _headline("Add rate limiting\\n  to the API", width=20)
    'Add rate limiting t…'
    """
    line = " ".join(description.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _plan_argument(text: str) -> tuple[str, JsonValue]:
    """``--arg KEY=VALUE``: VALUE as JSON when it is JSON (a number, a list, a quoted string), else as text.

    >>> _plan_argument("limit=600"), _plan_argument("service=billing-api"), _plan_argument('code="007"')
    (('limit', 600), ('service', 'billing-api'), ('code', '007'))
    """
    import json

    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} is not JSON")  # NaN and Infinity: kept as the text

    try:
        parsed: JsonValue = json.loads(value, parse_constant=no_constant)
    except ValueError:
        parsed = value
    return key.strip(), parsed


def _plan_arguments(pairs: Sequence[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    arguments: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in arguments:
            raise ValidationFailed(f"--arg: {key} is given twice", field="arg")
        arguments[key] = value
    return arguments


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a confidence from 0 to 1, not {value:g}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"more than 0 seconds, not {value:g}")
    return value
