"""The lineage explorer at /explore, in a real headless Chromium driven by Playwright: what a person sees and does.

One served app (with tokens) and one browser for the module; each test opens its own tab. The
browser is Debian's ``chromium`` (``DECISIONTRAIL_CHROMIUM`` names another); without it these
tests are skipped on a workstation and fail under CI (``CI`` set), where ``.ci/run`` installs it.
``DECISIONTRAIL_SCREENSHOTS=docs`` also saves the screenshots docs/explorer.md shows.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services import Trail
from decisiontrail.services.checkpoints import checkpointer
from browser import CHROMIUM, FLAGS, close_settled, require_chromium
from serving import served

SCREENSHOTS = os.environ.get("DECISIONTRAIL_SCREENSHOTS")


require_chromium()

from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright  # noqa: E402


@dataclass(frozen=True)
class Site:
    url: str
    tokens: dict[str, str]
    demo: Demonstration

    def graphql(self, token: str, text: str, **variables: Any) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.url}/graphql",
            json={"query": text, "variables": variables},
            headers={"authorization": f"Bearer {token}"},
            timeout=30,
        ).json()
        assert not answer.get("errors"), answer["errors"]
        data: dict[str, Any] = answer["data"]
        return data


@pytest.fixture(scope="module")
def site(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The demonstration hierarchy served with tokens: an analyst sees it all, two actors only their own plans."""
    path = tmp_path_factory.mktemp("explorer-tokens") / "tokens.json"
    tokens = {
        "analyst": issue_token(path, "analyst-1", Role.ANALYST),
        "admin": issue_token(path, "admin-1", Role.ADMIN),
        "alice": issue_token(path, "alice", Role.ACTOR),
        "bob": issue_token(path, "bob", Role.ACTOR),
    }
    delete_all_data(graph)
    trail = Trail.on(graph)
    demo = record_demonstration(trail, checkpointer(trail))
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield Site(url, tokens, demo)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    """A fresh tab holding the analyst's token; fails the test if the console reports an error."""
    context = browser.new_context(viewport={"width": 1600, "height": 950}, accept_downloads=True)
    context.add_init_script(f"sessionStorage.setItem('decisiontrail.token', {site.tokens['analyst']!r})")
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda message: _console(errors, message))
    tab.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    yield tab
    close_settled(context)
    assert not errors, f"the browser console reported errors: {errors}"


def _console(errors: list[str], message: ConsoleMessage) -> None:
    if message.type in ("error", "warning") and "DevTools" not in message.text:
        errors.append(f"{message.type}: {message.text}")


def settle(page: Page) -> None:
    """Waits until the page has no request of its own in flight."""
    # A locator, not wait_for_function: the page's CSP forbids the eval a predicate string needs.
    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=30_000)


def shot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / f"explorer-{name}.png"))


def drawn(page: Page) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = page.evaluate("window.decisiontrailExplorer.graph()")
    return nodes


def outline_ids(page: Page, selector: str) -> set[str]:
    return set(page.locator(f"#outline li{selector}").evaluate_all("items => items.map(i => i.dataset.id)"))


def open_page(page: Page, site: Site, query: str = "") -> None:
    page.goto(f"{site.url}/explore{query}")
    settle(page)


def open_plan(page: Page, plan_id: str) -> None:
    """Opens a plan in the outline with the keyboard: focus it, Right arrow."""
    item = page.locator(f"#outline li[data-kind=plan][data-id='{plan_id}']")
    item.focus()
    item.press("ArrowRight")
    settle(page)
    expect(item).to_have_attribute("data-open", "true")


def plan_decisions(site: Site, plan_id: str) -> dict[str, str]:
    data = site.graphql(
        site.tokens["analyst"],
        "query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes { id status } } } }",
        id=plan_id,
    )
    return {d["id"]: d["status"] for d in data["plan"]["decisions"]["nodes"]}


def test_the_page_is_served_under_a_strict_content_security_policy(site: Site) -> None:
    page = httpx.get(f"{site.url}/explore")
    script = httpx.get(f"{site.url}/explore/explorer.js")

    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "connect-src 'self';" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    # No inline script: every <script> is a file of ours.
    assert all(' src="/explore/' in tag for tag in re.findall(r"<script[^>]*>", page.text))
    assert "cdn" not in page.text.lower() and "http" not in re.sub(r"<!doctype[^>]*>", "", page.text, flags=re.I)
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert script.headers["content-security-policy"] == policy
    assert httpx.get(f"{site.url}/explore/..%2Fpyproject.toml").status_code == 404
    assert httpx.get(f"{site.url}/explore/nothing.js").status_code == 404


def test_plans_are_listed_searchable_and_a_hierarchy_opens_collapsed(page: Page, site: Site) -> None:
    demo = site.demo
    open_page(page, site)

    listed = page.locator("#plan-list button[data-plan-id]")
    expect(listed.first).to_contain_text(re.compile(r"\d+ decisions"))
    page.fill("#search", "billing")  # the demonstration's project: its two plans, whatever other tests made
    expect(listed).to_have_count(2)
    page.fill("#search", demo.child_plan.plan_id)
    expect(listed).to_have_count(1)
    expect(listed.first).to_contain_text("per-client quotas")
    page.fill("#search", "no plan is called this")
    expect(listed).to_have_count(0)
    page.fill("#search", "billing")
    page.locator(f"#plan-list button[data-plan-id='{demo.child_plan.plan_id}']").click()
    settle(page)

    # The child plan opens its whole hierarchy, from the top, every plan collapsed.
    plans = page.locator("#outline li[data-kind=plan]")
    expect(plans).to_have_count(2)
    assert outline_ids(page, "[data-kind=plan][data-open=false]") == {demo.root_plan.plan_id, demo.child_plan.plan_id}
    # The child plan shows under its parent though the parent is closed: the hierarchy reads whole.
    expect(page.locator(f"#outline li[data-id='{demo.child_plan.plan_id}']")).to_be_visible()
    assert page.locator("#outline li[data-kind=decision]").count() == 0
    nodes = drawn(page)
    assert {n["id"] for n in nodes if n["kind"] == "plan"} == {demo.root_plan.plan_id, demo.child_plan.plan_id}
    assert not [n for n in nodes if n["kind"] == "decision"]


def test_many_plans_are_listed_a_page_at_a_time_and_searched_on_the_server(page: Page, site: Site) -> None:
    made = [
        site.graphql(
            site.tokens["admin"],
            'mutation($d: String!) { instantiatePlan(input: {description: $d, project: "paging"}) { id } }',
            d=f"Paged plan {i:03d}",
        )["instantiatePlan"]["id"]
        for i in range(105)
    ]
    open_page(page, site)
    page.fill("#search", "PAGING")
    settle(page)

    listed = page.locator("#plan-list button[data-plan-id]")
    expect(listed).to_have_count(100)
    expect(page.locator("#more-plans")).to_have_text("Show more (100 of 105)")
    page.locator("#more-plans").click()
    settle(page)
    expect(listed).to_have_count(105)
    # Newest first unless told otherwise.
    assert listed.evaluate_all("items => items.map(i => i.dataset.planId)") == made[::-1]
    expect(page.locator("#more-plans")).to_have_count(0)
    page.select_option("#plan-sort", "oldest")
    settle(page)
    expect(listed).to_have_count(100)
    assert listed.evaluate_all("items => items.map(i => i.dataset.planId)") == made[:100]

    page.fill("#search", "paged plan 104")
    settle(page)
    expect(listed).to_have_count(1)
    assert listed.first.get_attribute("data-plan-id") == made[-1]


def test_a_plan_expands_to_exactly_the_decisions_the_api_returns(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    open_page(page, site, f"?plan={root}")
    expected = plan_decisions(site, root)

    open_plan(page, root)

    inside = {n["id"]: n for n in drawn(page) if n["kind"] == "decision" and n["parent"] == root}
    assert set(inside) == set(expected)
    superseded = {i for i, status in expected.items() if status == "SUPERSEDED"}
    assert superseded == set(site.demo.correction.invalidated)
    assert {i for i, n in inside.items() if "superseded" in n["classes"]} == superseded
    assert outline_ids(page, "[data-kind=decision]") == set(expected)
    assert outline_ids(page, "[data-status=superseded]") == superseded
    # The other plan stays collapsed; its spawn link is drawn to it.
    assert not [n for n in drawn(page) if n["parent"] == site.demo.child_plan.plan_id]


def test_a_plan_is_drawn_as_its_tree_left_to_right_and_stays_put_when_another_opens(page: Page, site: Site) -> None:
    root, child = site.demo.root_plan.plan_id, site.demo.child_plan.plan_id
    parents = {
        d["id"]: d["parentDecisionId"]
        for d in site.graphql(
            site.tokens["analyst"],
            "query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes { id parentDecisionId } } } }",
            id=root,
        )["plan"]["decisions"]["nodes"]
    }
    open_page(page, site, f"?plan={root}")
    open_plan(page, root)

    at = {n["id"]: (n["x"], n["y"]) for n in drawn(page) if n["kind"] == "decision" and n["parent"] == root}
    assert set(at) == set(parents)
    children: dict[str, list[str]] = {}
    for decision, parent in parents.items():
        if parent in at:
            children.setdefault(parent, []).append(decision)
            assert at[decision][0] > at[parent][0], "a decision is drawn right of its parent"
    for parent, below in children.items():
        rows = [at[c][1] for c in below]
        assert min(rows) <= at[parent][1] <= max(rows), "a parent sits between its first and last child"
    assert len(set(at.values())) == len(at), "no two decisions drawn in one place"

    open_plan(page, child)
    again = {n["id"]: (n["x"], n["y"]) for n in drawn(page) if n["kind"] == "decision" and n["parent"] == root}
    first = min(at)
    shift = (again[first][0] - at[first][0], again[first][1] - at[first][1])
    moved = {d: (round(x - shift[0], 3), round(y - shift[1], 3)) for d, (x, y) in again.items()}
    assert moved == {d: (round(x, 3), round(y, 3)) for d, (x, y) in at.items()}, "opening another plan redrew this one"
    assert any(n["kind"] == "decision" and n["parent"] == child for n in drawn(page))


def test_clicking_a_decision_shows_every_field_in_the_side_panel(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    spawn = site.demo.child_plan.spawned_by_decision_id
    assert spawn is not None
    open_page(page, site, f"?plan={root}&open={root}")
    decision = site.graphql(
        site.tokens["analyst"],
        """query($id: ID!) { decision(id: $id) { question chosenOption alternativesConsidered confidenceScore rationale
           phase contextSnapshot { hotContextRef hotContextHash } } }""",
        id=spawn,
    )["decision"]

    where = page.evaluate("id => window.decisiontrailExplorer.position(id)", spawn)
    page.mouse.click(where["x"], where["y"])
    settle(page)

    panel = page.locator("#panel")
    expect(panel.locator("h2")).to_contain_text("subplan_spawn")
    field = lambda name: panel.locator(f"dd[data-field='{name}']")  # noqa: E731
    expect(field("question")).to_have_text(decision["question"])
    expect(field("chosen option")).to_have_text(decision["chosenOption"])
    for alternative in decision["alternativesConsidered"]:
        expect(field("alternatives considered")).to_contain_text(alternative)
    expect(field("confidence")).to_have_text(f"{decision['confidenceScore']:.2f}")
    expect(field("rationale")).to_have_text(decision["rationale"])
    expect(field("phase")).to_have_text(decision["phase"].lower())
    expect(field("context reference")).to_have_text(decision["contextSnapshot"]["hotContextRef"])
    expect(field("context hash")).to_have_text(decision["contextSnapshot"]["hotContextHash"])
    expect(field("recorded at")).not_to_be_empty()
    # A scripted reviewer chose the alternative for this one; nobody corrected it.
    expect(field("review")).to_contain_text("alternative selected")
    expect(field("correction history")).to_have_text("never corrected")
    expect(page.locator(f"#outline li[data-id='{spawn}']")).to_have_attribute("aria-selected", "true")
    shot(page, "panel")


def test_the_impact_highlight_marks_exactly_what_impact_returns(page: Page, site: Site) -> None:
    root, child = site.demo.root_plan.plan_id, site.demo.child_plan.plan_id
    open_page(page, site, f"?plan={root}&open={root},{child}")
    strategy = next(
        i for i, s in plan_decisions(site, root).items() if s == "CURRENT" and i in _of_type(site, root, "STRATEGY_CHOICE")
    )
    impact = site.graphql(
        site.tokens["analyst"],
        "query($id: ID!) { impact(decisionId: $id) { decisions { id planId } countsByType { decisionType count } } }",
        id=strategy,
    )["impact"]
    expected = {d["id"] for d in impact["decisions"]}
    assert {d["planId"] for d in impact["decisions"]} == {root, child}  # it reaches into the child plan

    page.locator(f"#outline li[data-id='{strategy}'] > .outline-label").click()
    settle(page)
    page.locator("#panel button[data-action=impact]").click()
    settle(page)

    lit = {n["id"] for n in drawn(page) if "lit-impact" in n["classes"]}
    assert lit == expected
    assert outline_ids(page, "[data-highlight=impact]") == expected
    counts = page.locator("#panel table[data-counts=type] tr").all_inner_texts()
    assert sorted(tuple(c.split("\t")) for c in counts) == sorted(
        (c["decisionType"].lower(), str(c["count"])) for c in impact["countsByType"]
    )
    assert page.locator("#panel table[data-counts=plan] tr").count() == 2
    shot(page, "impact")


def _of_type(site: Site, plan_id: str, decision_type: str) -> set[str]:
    data = site.graphql(
        site.tokens["analyst"],
        "query($id: ID!, $t: [DecisionType!]) { plan(id: $id) { decisions(first: 100, filter: {types: $t}) { nodes { id } } } }",
        id=plan_id,
        t=[decision_type],
    )
    return {d["id"] for d in data["plan"]["decisions"]["nodes"]}


def test_before_the_correction_the_superseded_decisions_are_current(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    invalidated = set(site.demo.correction.invalidated)
    correction = site.demo.correction.correction.decision_id
    first = sorted(invalidated)[0]
    open_page(page, site, f"?plan={root}&open={root}&decision={first}")
    assert outline_ids(page, "[data-status=superseded]") >= invalidated

    page.locator("#panel button[data-action=before]").click()
    settle(page)

    assert outline_ids(page, "[data-status=superseded]").isdisjoint(invalidated)
    assert outline_ids(page, "[data-status=current]") >= invalidated
    assert correction not in outline_ids(page, "")
    assert not {n["id"] for n in drawn(page) if "superseded" in n["classes"]} & invalidated
    # The panel says both: superseded today, current at the moment shown.
    expect(page.locator("#panel p.status")).to_have_text("superseded today")
    expect(page.locator("#panel p.status-at")).to_have_attribute("data-status", "current")
    slider = page.locator("#slider")
    assert int(slider.input_value()) < int(slider.get_attribute("max") or 0)
    shot(page, "before-correction")

    # One step later on the slider the correction has happened.
    slider.focus()
    slider.press("ArrowRight")
    expect(page.locator(f"#outline li[data-id='{correction}']")).to_have_count(1)
    settle(page)
    assert outline_ids(page, "[data-status=superseded]") >= invalidated
    expect(page.locator("#panel p.status-at")).to_have_attribute("data-status", "superseded")

    page.locator("#to-now").click()
    settle(page)
    expect(page.locator("#moment")).to_have_text("now")
    expect(page.locator("#panel p.status-at")).to_have_count(0)


def test_a_deep_link_reopens_the_same_view(page: Page, browser: Browser, site: Site) -> None:
    root, child = site.demo.root_plan.plan_id, site.demo.child_plan.plan_id
    chosen = sorted(site.demo.correction.invalidated)[0]
    open_page(page, site, f"?plan={root}")
    open_plan(page, root)
    open_plan(page, child)
    page.locator(f"#outline li[data-id='{chosen}'] > .outline-label").click()
    settle(page)
    page.locator("#panel button[data-action=before]").click()
    settle(page)
    link = page.url
    seen = (drawn(page), page.locator("#moment").inner_text(), page.locator("#panel h2").inner_text())

    again = page.context.new_page()
    again.goto(link)
    settle(again)

    assert "decision=" in link and "asOf=" in link and "open=" in link
    expect(again.locator(f"#outline li[data-id='{chosen}']")).to_have_attribute("aria-selected", "true")
    assert sorted(map(repr, drawn(again))) == sorted(map(repr, seen[0]))
    assert (again.locator("#moment").inner_text(), again.locator("#panel h2").inner_text()) == seen[1:]


def live_plan(site: Site, description: str) -> dict[str, Any]:
    plan: dict[str, Any] = site.graphql(
        site.tokens["admin"],
        "mutation($d: String!) { instantiatePlan(input: {description: $d}) { id rootDecision { id } } }",
        d=description,
    )["instantiatePlan"]
    return plan


def record_strategy(site: Site, plan: dict[str, Any], question: str) -> str:
    """Records a strategy choice under the plan's root through the API; its id."""
    digest = hashlib.sha256(question.encode()).hexdigest()
    recorded = site.graphql(
        site.tokens["admin"],
        """mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }""",
        input={
            "planId": plan["id"],
            "decisionType": "STRATEGY_CHOICE",
            "question": question,
            "chosenOption": "The live way",
            "rationale": "to be seen at once",
            "parentDecisionId": plan["rootDecision"]["id"],
            "contextSnapshot": {
                "hotContextHash": digest,
                "hotContextRef": f"decisiontrail:context/{digest}",
                "hotContext": question,
                "actorStateRef": {"threadId": "live-1", "checkpointId": "cp-1"},
            },
        },
    )["recordDecision"]["decision"]
    return str(recorded["id"])


def test_new_decisions_appear_live(page: Page, site: Site) -> None:
    plan = live_plan(site, "Live plan")
    open_page(page, site, f"?plan={plan['id']}&open={plan['id']}")
    decisions = page.locator("#outline li[data-kind=decision]")
    before = decisions.count()
    assert before >= 1

    recorded = record_strategy(site, plan, "Which way, live?")

    expect(page.locator(f"#outline li[data-id='{recorded}']")).to_have_count(1, timeout=15_000)
    expect(decisions).to_have_count(before + 1)
    settle(page)
    assert recorded in {n["id"] for n in drawn(page) if n["kind"] == "decision"}


def test_a_cursor_the_service_cannot_replay_from_reads_the_plan_again_and_stays_live(page: Page, site: Site) -> None:
    plan = live_plan(site, "Plan whose events were lost")
    open_page(page, site, f"?plan={plan['id']}&open={plan['id']}")
    # The connection drops and comes back with a cursor the service never published (as after a
    # restore): refused, so the page must read the plan instead, and follow it from now.
    page.evaluate("([plan, cursor]) => window.decisiontrailExplorer.reconnectAfter(plan, cursor)", [plan["id"], "999999999999"])
    meanwhile = record_strategy(site, plan, "Recorded while the page was away")
    expect(page.locator(f"#outline li[data-id='{meanwhile}']")).to_have_count(1, timeout=15_000)

    afterwards = record_strategy(site, plan, "Recorded after the page came back")
    expect(page.locator(f"#outline li[data-id='{afterwards}']")).to_have_count(1, timeout=15_000)
    settle(page)
    assert {meanwhile, afterwards} <= {n["id"] for n in drawn(page) if n["kind"] == "decision"}


def test_an_actors_token_shows_none_of_another_actors_plans(browser: Browser, site: Site) -> None:
    mine = site.graphql(site.tokens["alice"], 'mutation { instantiatePlan(input: {description: "Alice plan"}) { id } }')
    theirs = site.graphql(site.tokens["bob"], 'mutation { instantiatePlan(input: {description: "Bob plan"}) { id } }')
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: _console(errors, message))
    try:
        page.goto(f"{site.url}/explore?plan={theirs['instantiatePlan']['id']}")
        settle(page)
        expect(page.locator("#status")).to_contain_text("needs a token")

        page.fill("#token", site.tokens["alice"])
        page.locator("#token-form button").click()
        settle(page)

        listed = page.locator("#plan-list button")
        expect(listed).to_have_count(1)
        expect(listed).to_contain_text("Alice plan")
        assert mine["instantiatePlan"]["id"] in page.content()
        for hidden in (theirs["instantiatePlan"]["id"], site.demo.root_plan.plan_id, site.demo.child_plan.plan_id):
            assert hidden not in page.locator("#plan-list, #outline").all_inner_texts().__str__()
            assert hidden not in {n["id"] for n in drawn(page)}
        assert page.evaluate("sessionStorage.getItem('decisiontrail.token')") == site.tokens["alice"]
    finally:
        close_settled(context)
    assert not errors, errors


def test_export_downloads_the_view_in_every_format(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    open_page(page, site, f"?plan={root}&open={root}")
    page.select_option("#export-scope", "hierarchy")

    def download(button: str) -> bytes:
        with page.expect_download() as started:
            page.locator(button).click()
        return Path(started.value.path()).read_bytes()

    for fmt, opening in (("graphml", b"<?xml"), ("dot", b"digraph"), ("cyjs", b"{"), ("json", b"{")):
        page.select_option("#export-format", fmt)
        body = download("#export-file")
        assert body.lstrip().startswith(opening) and root.encode() in body, fmt
    assert download("#export-png").startswith(b"\x89PNG")
    assert b"<svg" in download("#export-svg")[:400]


def decision_fields(site: Site, decision_id: str, fields: str, as_of: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = site.graphql(
        site.tokens["analyst"],
        f"query($id: ID!, $asOf: DateTime) {{ decision(id: $id, asOf: $asOf) {{ {fields} }} }}",
        id=decision_id,
        asOf=as_of,
    )["decision"]
    return found


def test_the_panel_reads_the_decision_as_it_stood_at_the_moment_shown(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    invalidated = sorted(site.demo.correction.invalidated)[0]
    correction = site.demo.correction.correction.decision_id
    open_page(page, site, f"?plan={root}&open={root}&decision={invalidated}")
    panel = page.locator("#panel")
    # Now: superseded, and the panel names (and links) the decision that superseded it by its caption.
    expect(panel.locator("p.status")).to_have_text("superseded today")
    superseded_by = panel.locator("dd[data-field='superseded by'] button.link")
    expect(superseded_by).to_have_attribute("data-id", correction)
    expect(superseded_by).to_have_attribute("title", correction)
    expect(superseded_by).not_to_contain_text(correction)

    page.locator("#panel button[data-action=before]").click()
    settle(page)

    # Before the correction the service answers the decision as it stood: current, superseded by nothing.
    then = re.search(r"asOf=([^&]+)", page.url)
    assert then is not None
    as_of = httpx.QueryParams(f"asOf={then.group(1)}")["asOf"]
    assert decision_fields(site, invalidated, "status supersededById", as_of) == {"status": "CURRENT", "supersededById": None}
    expect(panel.locator("p.status-at")).to_contain_text("CURRENT at the moment shown")
    expect(panel.locator("p.status-at")).to_have_attribute("data-status", "current")
    expect(panel.locator("dd[data-field='superseded by']")).to_have_count(0)
    expect(panel.locator("dd[data-field='superseded at']")).to_have_count(0)
    expect(panel.locator("p.status")).to_have_text("superseded today")
    expect(panel.locator("button[data-action=after]")).to_have_count(1)  # the way back across the correction stays


def test_a_review_pending_at_the_moment_shown_is_pending_in_the_panel_and_the_drawing(page: Page, site: Site) -> None:
    reviews = [
        r
        for plan in (site.demo.root_plan.plan_id, site.demo.child_plan.plan_id)
        for r in site.graphql(
            site.tokens["analyst"],
            "query($p: ID!) { reviews(planId: $p, first: 100) { nodes { id planId status createdAt chosenOption parent { id } } } }",
            p=plan,
        )["reviews"]["nodes"]
        if r["parent"]
    ]
    review = reviews[0]
    assert review["status"] != "PENDING"  # resolved today
    then = site.graphql(
        site.tokens["analyst"],
        "query($id: ID!, $at: DateTime) { review(id: $id, asOf: $at) { status } }",
        id=review["id"],
        at=review["createdAt"],
    )["review"]
    assert then == {"status": "PENDING"}
    plan, parent = review["planId"], review["parent"]["id"]
    at = httpx.QueryParams({"asOf": review["createdAt"]})
    open_page(page, site, f"?plan={plan}&open={plan}&decision={parent}&{at}")

    waiting = page.locator("#panel dd[data-field='review pending under it']")
    expect(waiting).to_contain_text(review["chosenOption"])
    assert review["id"] in {n["id"] for n in drawn(page) if n["kind"] == "review"}
    expect(page.locator(f"#outline li[data-id='{parent}'] > .outline-label small")).to_contain_text("1 review pending")

    page.locator("#to-now").click()
    settle(page)
    expect(waiting).to_have_count(0)
    assert not [n for n in drawn(page) if n["kind"] == "review"]


def twelve_decision_plan(site: Site) -> dict[str, Any]:
    plan = live_plan(site, "Twelve decisions to read")
    for i in range(12 - len(plan_decisions(site, plan["id"]))):
        record_strategy(site, plan, f"Which way for step {i + 1}?")
    return plan


@pytest.fixture
def small_page(browser: Browser, site: Site) -> Iterator[Page]:
    """A 1280x720 tab holding the analyst's token; fails the test on a console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(f"sessionStorage.setItem('decisiontrail.token', {site.tokens['analyst']!r})")
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda message: _console(errors, message))
    tab.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    yield tab
    close_settled(context)
    assert not errors, f"the browser console reported errors: {errors}"


def test_labels_are_drawn_at_least_10_px_at_the_default_view(small_page: Page, site: Site) -> None:
    plan = twelve_decision_plan(site)
    open_page(small_page, site, f"?plan={plan['id']}&open={plan['id']}")
    assert len([n for n in drawn(small_page) if n["kind"] == "decision"]) == 12

    legibility = small_page.evaluate("window.decisiontrailExplorer.legibility()")

    assert legibility["labels"], "some label is in view"
    assert legibility["hidden"] == 0
    assert min(label["px"] for label in legibility["labels"]) >= 10, legibility
    # The plan's first decisions are in view to start reading from.
    assert plan["rootDecision"]["id"] in {label["id"] for label in legibility["labels"]}
    shot(small_page, "legible")


def test_the_panes_collapse_give_the_drawing_their_room_and_stay_collapsed(small_page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    open_page(small_page, site, f"?plan={root}&open={root}")
    width = lambda: small_page.locator("#graph").bounding_box()["width"]  # noqa: E731
    narrow = width()

    for pane in ("plans", "outline", "panel"):
        small_page.locator(f"#toggle-{pane}").click()
        expect(small_page.locator(f"#toggle-{pane}")).to_have_attribute("aria-pressed", "false")
    expect(small_page.locator("#plans")).to_be_hidden()
    expect(small_page.locator("#outline-pane")).to_be_hidden()
    expect(small_page.locator("#panel")).to_be_hidden()
    assert width() > narrow + 500 and width() >= 1270

    small_page.reload()
    settle(small_page)
    expect(small_page.locator("#panel")).to_be_hidden()
    expect(small_page.locator("#toggle-outline")).to_have_attribute("aria-pressed", "false")
    assert width() >= 1270
    small_page.locator("#toggle-panel").click()
    expect(small_page.locator("#panel")).to_be_visible()
    shot(small_page, "wide")


def test_focus_mode_shows_only_the_neighbourhood_across_plans(page: Page, site: Site) -> None:
    root, child = site.demo.root_plan.plan_id, site.demo.child_plan.plan_id
    spawn = site.demo.child_plan.spawned_by_decision_id
    assert spawn is not None
    open_page(page, site, f"?plan={root}&open={root},{child}&decision={spawn}")
    near = decision_fields(site, spawn, "parentDecisionId children { id } dependsOn { id } dependents { id }")
    child_root = site.graphql(site.tokens["analyst"], "query($id: ID!) { plan(id: $id) { rootDecision { id } } }", id=child)
    one_hop = {spawn, near["parentDecisionId"]} | {d["id"] for k in ("children", "dependsOn", "dependents") for d in near[k]}
    one_hop.add(child_root["plan"]["rootDecision"]["id"])  # the spawn reaches into the child plan, to its root

    page.fill("#focus-hops", "1")
    page.locator("#focus-on").check()

    shown = {n["id"] for n in drawn(page) if n["kind"] == "decision" and n["visible"]}
    assert shown == one_hop
    hidden = {n["id"] for n in drawn(page) if n["kind"] == "decision" and not n["visible"]}
    assert hidden and spawn not in hidden
    shot(page, "focus")

    page.fill("#focus-hops", "2")
    page.locator("#focus-hops").dispatch_event("change")
    assert {n["id"] for n in drawn(page) if n["kind"] == "decision" and n["visible"]} > one_hop
    page.locator("#focus-on").uncheck()
    assert all(n["visible"] for n in drawn(page) if n["kind"] == "decision")


def test_the_panel_explains_a_decision_with_its_context_and_relations_by_caption(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    fields = "id context actorReasoning parent { id } dependsOn { id } dependents { id } children { id }"
    nodes = site.graphql(
        site.tokens["analyst"],
        f"query($id: ID!) {{ plan(id: $id) {{ decisions(first: 100, filter: {{status: CURRENT}}) {{ nodes {{ {fields} }} }} }} }}",
        id=root,
    )["plan"]["decisions"]["nodes"]
    # A decision recorded by the strategy actor (its context is the conversation) with a parent and children.
    d = max((n for n in nodes if n["context"] and n["context"].startswith("[") and n["parent"]), key=lambda n: len(n["children"]))
    assert d["children"]
    chosen = d["id"]
    open_page(page, site, f"?plan={root}&open={root}&decision={chosen}")
    panel = page.locator("#panel")

    messages = json.loads(d["context"])
    context = panel.locator("dd[data-field='context'] .context")
    expect(context).to_have_attribute("data-form", "messages")
    expect(context.locator("li.message")).to_have_count(len(messages))
    expect(context.locator("li.message").first).to_contain_text(messages[0]["data"]["content"][:60])
    expect(context.locator("li.message").first.locator(".role")).to_have_text(messages[0]["type"])
    if d["actorReasoning"]:
        expect(panel.locator("dd[data-field='actor reasoning']")).to_have_text(d["actorReasoning"])
    for name, key in (("parent", "parent"), ("depends on", "dependsOn"), ("dependents", "dependents"), ("children", "children")):
        want = [d[key]] if key == "parent" else d[key]
        links = panel.locator(f"dd[data-field='{name}'] button.link")
        assert set(links.evaluate_all("ls => ls.map(l => l.dataset.id)")) == {x["id"] for x in want if x}, name
        for text in links.all_inner_texts():
            assert re.match(r"#\d+ [a-z_]+: ", text), text  # a caption, never a bare id
    # Each id is on hover and copied by its button.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    panel.locator("dd[data-field='decision id'] button.copy").click()
    assert page.evaluate("navigator.clipboard.readText()") == chosen
    expect(page.locator("#status")).to_have_text(f"Copied {chosen}.")
    shot(page, "explained")
    # Following a link selects that decision.
    panel.locator("dd[data-field='parent'] button.link").click()
    settle(page)
    expect(page.locator(f"#outline li[data-id='{d['parent']['id']}']")).to_have_attribute("aria-selected", "true")


def test_a_correction_links_to_what_it_replaced_and_a_root_reads_as_its_plan(page: Page, site: Site) -> None:
    root = site.demo.root_plan.plan_id
    correction = site.demo.correction.correction.decision_id
    corrected = decision_fields(site, correction, "correctsDecisionId")["correctsDecisionId"]
    first_root = site.graphql(site.tokens["analyst"], "query($id: ID!) { plan(id: $id) { rootDecision { id } } }", id=root)
    root_decision = first_root["plan"]["rootDecision"]["id"]
    open_page(page, site, f"?plan={root}&open={root}&decision={correction}")

    corrects = page.locator("#panel dd[data-field='corrects'] button.link")
    expect(corrects).to_have_attribute("data-id", corrected)
    expect(corrects).to_contain_text(re.compile(r"^#\d+ [a-z_]+: "))

    # The root is labelled by the plan's description, in the outline, the drawing and the panel.
    root_label = page.locator(f"#outline li[data-id='{root_decision}'] > .outline-label")
    expect(root_label).to_contain_text(site.demo.root_plan.description)
    expect(root_label).not_to_contain_text('{"')
    root_label.click()
    settle(page)
    expect(page.locator("#panel dd[data-field='chosen option']")).to_have_text(site.demo.root_plan.description)


def test_a_decision_alone_in_the_link_opens_its_hierarchy(page: Page, site: Site) -> None:
    child = site.demo.child_plan.plan_id
    chosen = next(iter(plan_decisions(site, child)))
    open_page(page, site, f"?decision={chosen}")

    expect(page.locator(f"#outline li[data-id='{chosen}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator(f"#outline li[data-kind=plan][data-id='{child}']")).to_have_attribute("data-open", "true")
    expect(page.locator(f"#outline li[data-kind=plan][data-id='{site.demo.root_plan.plan_id}']")).to_have_count(1)
    expect(page.locator("#panel h2")).not_to_be_empty()
    assert f"plan={site.demo.root_plan.plan_id}" in page.url and f"decision={chosen}" in page.url


def test_the_export_menu_offers_every_format_the_routes_write(page: Page, site: Site) -> None:
    served = httpx.get(f"{site.url}/explore").text
    assert '<option value="graphml"' not in served  # the page fills the menu; the HTML holds none
    open_page(page, site)
    formats = page.locator("#export-format option").evaluate_all("os => os.map(o => o.value)")
    assert formats == ["graphml", "dot", "cyjs", "json", "gexf", "prov.json"]


def test_an_imported_plan_is_named_by_its_span(page: Page, site: Site) -> None:
    trace, start = "e" * 32, 1_700_000_000_000_000_000

    def span(span_id: str, name: str, parent: str | None, **attributes: str) -> dict[str, Any]:
        made: dict[str, Any] = {
            "traceId": trace,
            "spanId": span_id,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + int(span_id[-1]) * 1_000_000),
            "endTimeUnixNano": str(start + 50_000_000),
            "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in attributes.items()],
        }
        if parent:
            made["parentSpanId"] = parent
        return made

    spans = [
        span(
            "b000000000000001",
            "summariser agent",
            None,
            openinference__span__kind="AGENT",
            input__value="Summarise the explorer report",
        ),
        span(
            "b000000000000002",
            "choose format",
            "b000000000000001",
            openinference__span__kind="DECISION",
            decisiontrail__decision__type="implementation_choice",
            decisiontrail__decision__question="Which format?",
            decisiontrail__decision__chosen_option="bullet points",
        ),
    ]
    body = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}
    sent = httpx.post(f"{site.url}/v1/traces", json=body, headers={"authorization": f"Bearer {site.tokens['admin']}"}, timeout=30)
    assert sent.status_code == 200, sent.text
    open_page(page, site)

    page.fill("#search", "explorer report")
    settle(page)

    listed = page.locator("#plan-list button[data-plan-id] strong")
    expect(listed).to_have_text(["summariser agent: Summarise the explorer report"])


def listed_plans(site: Site, **arguments: Any) -> list[str]:
    params = ", ".join(
        f"${k}: {t}" for k, t in (("search", "String"), ("project", "String"), ("c", "Boolean"), ("r", "Boolean"), ("m", "Float"))
    )
    data = site.graphql(
        site.tokens["analyst"],
        f"""query({params}) {{ plans(first: 100, newestFirst: true, search: $search, project: $project,
            hasCorrections: $c, hasPendingReviews: $r, maxConfidence: $m) {{ nodes {{ id }} }} }}""",
        **{"search": None, "project": None, "c": None, "r": None, "m": None, **arguments},
    )
    return [p["id"] for p in data["plans"]["nodes"]]


def test_the_plan_list_filters_on_the_server(page: Page, site: Site) -> None:
    root, child = site.demo.root_plan.plan_id, site.demo.child_plan.plan_id
    open_page(page, site)
    listed = page.locator("#plan-list button[data-plan-id]")
    ids = lambda: listed.evaluate_all("items => items.map(i => i.dataset.planId)")  # noqa: E731

    page.fill("#plan-project", "billing")
    settle(page)
    assert ids() == listed_plans(site, project="billing") and set(ids()) == {root, child}

    page.locator("#only-corrected").check()
    settle(page)
    corrected = listed_plans(site, project="billing", c=True)
    assert ids() == corrected and root in corrected and len(corrected) < 2

    page.locator("#only-corrected").uncheck()
    page.locator("#only-unsure").check()
    settle(page)
    assert ids() == listed_plans(site, project="billing", m=0.6)

    page.locator("#only-unsure").uncheck()
    page.fill("#plan-project", "")
    page.locator("#only-pending").check()
    settle(page)
    assert ids() == listed_plans(site, r=True)
    assert root not in ids()  # its review was resolved


def test_decisions_are_found_across_plans_by_words_and_by_id(page: Page, site: Site) -> None:
    child = site.demo.child_plan.plan_id
    chosen = next(iter(plan_decisions(site, child)))
    question = decision_fields(site, chosen, "question")["question"]
    words = " ".join(question.rstrip("?").split()[-2:])
    expected = [
        d["id"]
        for d in site.graphql(
            site.tokens["analyst"], "query($t: String!) { searchDecisions(text: $t, first: 20) { nodes { id } } }", t=words
        )["searchDecisions"]["nodes"]
    ]
    assert chosen in expected
    open_page(page, site)
    results = page.locator("#decision-results button[data-decision-id]")

    page.fill("#decision-search", words)
    settle(page)
    assert results.evaluate_all("items => items.map(i => i.dataset.decisionId)") == expected
    for text in results.locator("strong").all_inner_texts():
        assert re.match(r"#\d+ [a-z_]+: ", text), text

    page.fill("#decision-search", chosen.lower())
    settle(page)
    expect(results.first).to_have_attribute("data-decision-id", chosen)
    shot(page, "search")
    results.first.click()
    settle(page)
    expect(page.locator(f"#outline li[data-id='{chosen}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator(f"#outline li[data-kind=plan][data-id='{child}']")).to_have_attribute("data-open", "true")
    expect(page.locator("#panel dd[data-field='question']")).to_have_text(question)
