"""A big hierarchy in the explorer, in Chromium: every closed plan a summary card, laid out as a tree by spawn depth.

A hierarchy of 50 plans four levels deep, built through the services (tests/factories.py), some
plans holding corrections, low-confidence decisions or a review waiting, served with an analyst's
token and opened at 1280x720 (skipped, or failed under CI, without Chromium: tests/browser.py).
``DECISIONTRAIL_SCREENSHOTS=docs`` also saves docs/explorer-collapsed.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile, DecisionType, Phase
from decisiontrail.domain.recording import Review
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from browser import close_settled, require_chromium
from factories import actor_snapshot, decision, tool_input
from serving import served

require_chromium()

import test_explorer  # noqa: E402
from test_explorer import Site, _console, drawn, settle, shot  # noqa: E402

from playwright.sync_api import Browser, Page  # noqa: E402

browser = test_explorer.browser  # the module's Chromium, a fixture shared with test_explorer.py

# Children per plan at each depth: 1 top plan, 4 below it, 12 below those, 33 at the bottom (50).
FAN_OUT = (4, 3, 3)
PLANS = 50
TOP = "plan 0: step 0 of the rollout"


def build(trail: Trail) -> dict[str, str]:
    """The hierarchy, breadth first; each plan's id by its description (``plan 0`` is the top)."""
    made: dict[str, str] = {}
    count = 0

    def record(plan_id: str, kind: DecisionType, parent: str, **fields: Any) -> str:
        return recording_service.record(trail, decision(plan_id, kind, parent, **fields), principal=LOCAL).decision_id

    def add(parent_spawn: str | None, depth: int) -> None:
        nonlocal count
        n = count
        count += 1
        # A review waits in some plans at the bottom: their actor's proposals are held, so they stay in Strategize.
        gated = depth == len(FAN_OUT) and n % 7 == 3
        plan, root = instantiate_plan(
            trail,
            f"plan {n}: step {n} of the rollout",
            spawned_by_decision_id=parent_spawn,
            automation_profile=AutomationProfile(edit_code=1.0) if gated else None,
            principal=LOCAL,
        )
        made[plan.description] = plan.plan_id
        confidence = 0.3 if n % 4 == 1 else 0.9  # low confidence in a quarter of the plans
        strategy = record(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, confidence_score=confidence)
        if gated:
            held = recording_service.record_decision(
                trail,
                tool_input("strategy_choice", question="which way?"),
                plan_id=plan.plan_id,
                snapshot=actor_snapshot(),
                principal=LOCAL,
            )
            assert isinstance(held, Review)
            return
        below = FAN_OUT[depth] if depth < len(FAN_OUT) else 0
        spawns = [record(plan.plan_id, DecisionType.SUBPLAN_SPAWN, strategy, question=f"spawn {i}?") for i in range(below)]
        advance_phase(trail, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
        step = record(plan.plan_id, DecisionType.IMPLEMENTATION_CHOICE, strategy, confidence_score=confidence)
        if n % 6 == 2:  # corrected: the step superseded by a correction
            correct(trail, step, "revert", "take the other approach", principal=LOCAL)
        waiting.extend((s, depth + 1) for s in spawns)

    # Breadth first; the last spawns of the third level stay without a plan once there are 50.
    waiting: list[tuple[str | None, int]] = [(None, 0)]
    while waiting and count < PLANS:
        spawn, depth = waiting.pop(0)
        add(spawn, depth)
    assert count == PLANS
    return made


@pytest.fixture(scope="module")
def hierarchy(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, dict[str, str]]]:
    """The 50 plans served with an analyst's token, and each plan's id by its description."""
    path = tmp_path_factory.mktemp("explorer-summary-tokens") / "tokens.json"
    tokens = {"analyst": issue_token(path, "analyst-1", Role.ANALYST)}
    delete_all_data(graph)
    plans = build(Trail.on(graph))
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield Site(url, tokens, demo=None), plans  # type: ignore[arg-type]  # no demonstration here


@pytest.fixture
def site(hierarchy: tuple[Site, dict[str, str]]) -> Site:
    return hierarchy[0]


@pytest.fixture
def plans(hierarchy: tuple[Site, dict[str, str]]) -> dict[str, str]:
    return hierarchy[1]


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
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


SUMMARY = """query($id: ID!) {
  plan(id: $id) {
    description phase parentPlan { id }
    decisions(first: 1) { totalCount }
    superseded: decisions(first: 1, filter: {status: SUPERSEDED}) { totalCount }
    unsure: decisions(first: 1, filter: {status: CURRENT, maxConfidence: 0.6}) { totalCount }
  }
  reviews(planId: $id, status: PENDING, first: 1) { totalCount }
}"""


def answered(site: Site, plan_id: str) -> dict[str, Any]:
    """What the API says of a plan: the counts its card must show."""
    data = site.graphql(site.tokens["analyst"], SUMMARY, id=plan_id)
    plan = data["plan"]
    return {
        "description": plan["description"],
        "phase": plan["phase"].lower(),
        "parent": plan["parentPlan"]["id"] if plan["parentPlan"] else None,
        "decisions": plan["decisions"]["totalCount"],
        "superseded": plan["superseded"]["totalCount"],
        "pending": data["reviews"]["totalCount"],
        "unsure": plan["unsure"]["totalCount"],
    }


def card(label: str) -> dict[str, Any]:
    """What a card says, read as a person reads it: a count left out is none."""

    def count(pattern: str) -> int:
        found = re.search(pattern, label)
        return int(found.group(1)) if found else 0

    facts = re.search(r"^(\w+) · (\d+) decisions?( · invalidated)?$", label, re.M)
    return {
        "phase": facts.group(1) if facts else None,
        "decisions": int(facts.group(2)) if facts else None,
        "superseded": count(r"(\d+) superseded"),
        "pending": count(r"(\d+) reviews? pending"),
        "unsure": count(r"(\d+) low confidence"),
    }


def cards(page: Page) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in drawn(page) if n["kind"] == "plan"}


def click(page: Page, plan_id: str) -> None:
    """Clicks a plan's card where it is drawn (centred first when out of view)."""
    where = page.evaluate("id => window.decisiontrailExplorer.position(id)", plan_id)
    assert where, f"no card drawn for {plan_id}"
    page.mouse.click(where["x"], where["y"])
    settle(page)


def decisions_of(site: Site, plan_id: str) -> set[str]:
    query = "query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes { id } } } }"
    return {d["id"] for d in site.graphql(site.tokens["analyst"], query, id=plan_id)["plan"]["decisions"]["nodes"]}


def test_every_plan_of_a_big_hierarchy_opens_as_a_legible_card_of_its_counts(
    page: Page, site: Site, plans: dict[str, str]
) -> None:
    test_explorer.open_page(page, site, f"?plan={plans[TOP]}")

    drawn_cards = cards(page)
    assert len(drawn_cards) == PLANS
    expected = {plan_id: answered(site, plan_id) for plan_id in drawn_cards}
    # The hierarchy holds what an analyst scans for, so the cards have something to show.
    for key in ("superseded", "pending", "unsure"):
        assert 0 < sum(1 for a in expected.values() if a[key]) < PLANS, key
    for plan_id, node in drawn_cards.items():
        want = expected[plan_id]
        label = node.get("label", "")
        assert "card" in node["classes"] and label.startswith(want["description"][:30]), node
        shown = card(label)
        assert shown == {k: want[k] for k in ("phase", "decisions", "superseded", "pending", "unsure")}, (label, want)
        assert ("pending" in node["classes"]) == (want["pending"] > 0), node
    assert not [n for n in drawn(page) if n["kind"] == "decision"], "nothing of a plan is fetched until it is opened"
    # At 1280x720, as it opens: every label in view at least 10 px high, the top plan's among them.
    legibility = page.evaluate("window.decisiontrailExplorer.legibility()")
    assert legibility["hidden"] == 0 and legibility["labels"], legibility
    assert min(label["px"] for label in legibility["labels"]) >= 10, legibility
    in_view = {label["id"] for label in legibility["labels"]}
    assert plans[TOP] in in_view
    # And beside it the start of the tree: a plan it spawned.
    assert in_view & {i for i, a in expected.items() if a["parent"] == plans[TOP]}, in_view
    for pane in ("plans", "panel"):  # the drawing gets their room: more cards for the screenshot
        page.locator(f"#toggle-{pane}").click()
    shot(page, "collapsed")

    # Opening a card (clicked in the drawing) still shows exactly its decisions, in its box.
    chosen = plans["plan 2: step 2 of the rollout"]  # corrected: a decision superseded, the correction beside it
    click(page, chosen)
    assert {n["id"] for n in drawn(page) if n["kind"] == "decision" and n["parent"] == chosen} == decisions_of(site, chosen)
    assert "card" not in cards(page)[chosen]["classes"]
    assert sum("card" in n["classes"] for n in cards(page).values()) == PLANS - 1


def depths(parent: dict[str, str | None]) -> dict[str, int]:
    found = {}
    for i in parent:
        d, p = 0, parent[i]
        while p is not None:
            d, p = d + 1, parent[p]
        found[i] = d
    return found


def test_the_cards_are_laid_out_as_a_tree_by_spawn_depth_a_few_screens_big(page: Page, site: Site, plans: dict[str, str]) -> None:
    test_explorer.open_page(page, site, f"?plan={plans[TOP]}")
    at = {i: (n["x"], n["y"]) for i, n in cards(page).items()}
    parent = {i: answered(site, i)["parent"] for i in at}
    depth = depths(parent)

    # A column per depth, left to right.
    columns = {d: {round(at[i][0], 3) for i in at if depth[i] == d} for d in set(depth.values())}
    assert all(len(xs) == 1 for xs in columns.values()), columns
    xs = [next(iter(columns[d])) for d in sorted(columns)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs) == len(FAN_OUT) + 1
    # Children stacked in rows, their parent centred on them; no two cards in one place.
    children: dict[str, list[str]] = {}
    for i, p in parent.items():
        if p is not None:
            children.setdefault(p, []).append(i)
    for p, below in children.items():
        rows = sorted(at[c][1] for c in below)
        assert len(set(rows)) == len(rows), "siblings stacked in rows"
        assert abs(at[p][1] - (rows[0] + rows[-1]) / 2) < 1, "a parent centred on its children"
    assert len(set(at.values())) == PLANS
    # Not a line, and a few screens big at the zoom it opens at: at most two 1280x720 screens wide
    # and four high (34 plans at the bottom, stacked).
    zoom = page.evaluate("window.decisiontrailExplorer.legibility()")["zoom"]
    width = (max(x for x, _ in at.values()) - min(x for x, _ in at.values())) * zoom
    height = (max(y for _, y in at.values()) - min(y for _, y in at.values())) * zoom
    assert height > 2 * width, (width, height)
    assert width <= 2 * 1280 and height <= 4 * 720, (width, height)
    # Drawn the same way each time.
    page.reload()
    settle(page)
    assert {i: (n["x"], n["y"]) for i, n in cards(page).items()} == at

    # Opening a card grows only what it must: plans left of it and above it in its column stay put,
    # plans right of it move right, plans below it in its column move down.
    chosen = plans["plan 6: step 6 of the rollout"]
    click(page, chosen)
    after = {i: (n["x"], n["y"]) for i, n in cards(page).items() if i != chosen}
    x0, y0 = at[chosen]
    for i, (x, y) in after.items():
        bx, by = at[i]
        if bx < x0 or (bx == x0 and by < y0):
            assert (x, y) == (bx, by), "a plan left of or above the opened one stays put"
        elif bx > x0:
            assert x > bx and y == by, "a plan right of it moves right"
        else:
            assert y > by and x == bx, "a plan below it moves down"
