"""docs/actors.md's examples, run: a plan run, followed, corrected and cancelled over GraphQL against
a served API with its runtime workers; ``decisiontrail run`` and ``plans`` as real processes, their
output against the page's."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
import docs_examples
from docs_examples import ID, Cli, commands, example, numbered, run_graphql
from serving import served

PAGE = "docs/actors.md"
FOLLOW = "query($id: ID!) {"

cli = docs_examples.cli  # the fixture: the command line on the test's database


def _until(check: Callable[[], Any], what: str, timeout: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what} did not get there within {timeout:.0f} s"
        time.sleep(0.2)
    return found


def test_a_plan_run_over_graphql_goes_to_apply_and_replays_its_correction(api: httpx.Client, store: Trail) -> None:
    started = run_graphql(api, example(PAGE, "mutation {"))["runPlan"]
    # "The plan answers at once, in Strategize, its run QUEUED."
    assert started["phase"] == "STRATEGIZE" and started["run"]["status"] in ("QUEUED", "RUNNING")
    assert started["run"]["modelName"] == "scripted"
    follow = example(PAGE, FOLLOW)

    def settled() -> dict[str, Any] | None:
        plan: dict[str, Any] = run_graphql(api, follow, id=started["id"])["plan"]
        return plan if plan["run"]["status"] == "SUCCEEDED" and not plan["run"]["pendingReplays"] else None

    applied = _until(settled, "the run")
    assert applied["phase"] == "APPLY" and applied["run"]["generation"] == 0 and applied["run"]["error"] is None
    assert applied["childPlans"] and all(
        c["phase"] == "APPLY" and c["run"] == {"status": "SUCCEEDED"} for c in applied["childPlans"]
    )

    decisions = api.post(
        "/graphql",
        json={
            "query": "query($id: ID!) { plan(id: $id) { decisions { nodes { id decisionType } } } }",
            "variables": {"id": started["id"]},
        },
    ).json()["data"]["plan"]["decisions"]["nodes"]
    strategy = next(d["id"] for d in decisions if d["decisionType"] == "STRATEGY_CHOICE")
    corrected = run_graphql(api, example(PAGE, "mutation($id: ID!) {"), id=strategy)["correctDecision"]
    assert corrected["attempt"]["replayOutcome"] == "PENDING"

    # "nothing more is needed from the client": the runtime replays it.
    replayed = _until(lambda: (p := settled()) and p["run"]["generation"] == 1 and p, "the replay")
    assert replayed["phase"] == "APPLY"


@pytest.fixture
def idle_url(store: Trail, graph: Graph) -> Iterator[str]:
    """The service without runtime workers: a run it queues stays queued."""
    with served(create_app(graph=graph, runtime_workers=0)) as url:
        yield url


def test_cancel_run_stops_a_run_that_has_not_finished(idle_url: str) -> None:
    with httpx.Client(base_url=idle_url, timeout=30) as api:
        started = run_graphql(api, example(PAGE, "mutation {"))["runPlan"]

        cancelled = run_graphql(
            api,
            example(PAGE, 'mutation($id: ID!) { cancelRun(runId: $id, reason: "not needed") { status error } }'),
            id=started["run"]["id"],
        )["cancelRun"]
        plan = run_graphql(api, example(PAGE, FOLLOW), id=started["id"])["plan"]

    assert cancelled["status"] == "CANCELLED" and "not needed" in (cancelled["error"] or ""), cancelled
    assert plan["phase"] == "STRATEGIZE" and plan["run"]["status"] == "CANCELLED"  # "its plan stays as far as it got"


def _masked(text: str) -> list[str]:
    return ID.sub("<id>", text).splitlines()


def test_the_run_commands_and_plans_print_what_the_page_shows(cli: Cli, graph: Graph) -> None:
    rate_limiting = cli.shell(example(PAGE, 'decisiontrail run "Add rate limiting to the public billing API" \\'))
    assert rate_limiting.code == 0, rate_limiting.err
    assert numbered(rate_limiting.out).splitlines() == numbered(example(PAGE, "01M91CYD14M7TW3VBD78XBRZV9")).splitlines()
    # stderr: states are looked at five times a second, so a short one may not show and one may show
    # again; every line is one the page shows or one of the kinds its "..." leaves out
    progress = numbered(rate_limiting.err).splitlines()
    block = example(PAGE, "decisiontrail: plan 01M91CYD14M7TW3VBD78XBRZV9: strategize, running: reconciliation actor")
    shown = [line for line in numbered(block).splitlines() if line != "..."]
    elided = re.compile(r"decisiontrail: plan <id \d>: (strategize|execute|apply), (queued|running(: [a-z]+ actor)?)")
    assert all(line in shown or elided.fullmatch(line) for line in progress), rate_limiting.err
    # the spawn, then the child's success, then the parent's, last (states between may recur)
    must = [line for line in shown if "spawned" in line or "apply, succeeded" in line]
    assert len(must) == 3 and set(must) <= set(progress) and progress[-1] == shown[-1], rate_limiting.err
    assert sorted(must, key=progress.index) == must, rate_limiting.err

    rotate = cli.shell(
        example(PAGE, 'PLAN=$(decisiontrail -q run "Rotate the API signing keys" --arg depth=1 --project security | head -1)')
    )
    # `run` may print its second line after `head -1` has gone: it then ends quietly, the plan queued.
    assert rotate.code == 0 and "Traceback" not in rotate.err, rotate.err
    assert re.fullmatch(r"#0 \w{26} prompt_definition: .*Rotate the API signing keys.*", rotate.out.splitlines()[0]), rotate.out
    # Queued, for a serving process's workers (the page lists it succeeded); "--arg depth=1 spawns none".
    with served(create_app(graph=graph)):
        _until(lambda: "apply      succeeded  security" in cli.run("plans").out, "the rotation's run")
    assert "subplan_spawn" not in cli.run("tree", rotate.out.split()[1]).out

    audit = cli.shell(example(PAGE, 'decisiontrail -q run "Audit the billing logs" --project billing --review-below 0.95 --wait'))
    assert audit.code == 2, audit.err  # waits for a person
    digest = re.compile(r"sha256:[0-9a-f]{64}")  # of the proposal: its plan's id and time in it
    shown_audit = example(PAGE, "01M91D0EZQH68369WT1HX3HYH0")
    assert digest.search(shown_audit) and digest.search(audit.out), audit.out
    assert numbered(digest.sub("sha256:…", audit.out)).splitlines() == numbered(digest.sub("sha256:…", shown_audit)).splitlines()

    listed = [
        cli.run(*words) for words in commands(example(PAGE, "decisiontrail plans                                # the 20 newest"))
    ]
    assert all(said.code == 0 for said in listed), listed
    newest, billing, executing, as_json = listed
    shown_plans = example(PAGE, "01M91D0EZQH68369WT1HX3HYH0  strategize waiting    billing   Audit the billing logs")
    assert _masked(newest.out) == _masked(shown_plans)
    ids = [line.split()[0] for line in newest.out.splitlines()]
    assert ids[0] == audit.out.split()[0] and ids[3] == rate_limiting.out.split()[0]
    assert [line.split()[0] for line in billing.out.splitlines()] == [ids[0], ids[3]]
    assert executing.out == ""
    plans = json.loads(as_json.out)
    assert [p["plan_id"] for p in plans] == ids and all(p["run"]["status"] for p in plans), as_json.out
