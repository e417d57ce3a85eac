"""The explorer's correction beside its replay, and its actions (correct, add guidance, resolve a review), in Chromium.

The same served app and browser as tests/test_explorer.py (its helpers are imported; skipped, or
failed under CI, without Chromium as it is: tests/browser.py), with tokens of three roles: a
reviewer may correct and review, an analyst only reads, an admin sets the data up. Each action is done from the page with a token that may (offered, done,
the drawing updated, the stored state read back through GraphQL) and looked for with one that may
not (not offered; the same mutation sent with that token is refused and nothing is stored).
``DECISIONTRAIL_SCREENSHOTS=docs`` also saves the screenshots docs/explorer.md shows.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.actors.demonstration import record_demonstration
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services import Trail
from decisiontrail.services.checkpoints import checkpointer
from browser import close_settled, require_chromium
from serving import served

require_chromium()

import test_explorer  # noqa: E402
from test_explorer import Site, _console, drawn, open_page, outline_ids, settle, shot  # noqa: E402

from playwright.sync_api import Browser, Page, expect  # noqa: E402

browser = test_explorer.browser  # the module's Chromium, a fixture shared with test_explorer.py


@pytest.fixture(scope="module")
def site(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The demonstration served with a reviewer's, an analyst's and an admin's token."""
    path = tmp_path_factory.mktemp("explorer-action-tokens") / "tokens.json"
    tokens = {
        "reviewer": issue_token(path, "reviewer-1", Role.REVIEWER),
        "analyst": issue_token(path, "analyst-1", Role.ANALYST),
        "admin": issue_token(path, "admin-1", Role.ADMIN),
    }
    delete_all_data(graph)
    trail = Trail.on(graph)
    demo = record_demonstration(trail, checkpointer(trail))
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield Site(url, tokens, demo)


@contextmanager
def tab(browser: Browser, site: Site, who: str) -> Iterator[Page]:
    """A fresh tab holding ``who``'s token; fails the test if the console reports an error."""
    context = browser.new_context(viewport={"width": 1600, "height": 950})
    context.add_init_script(f"sessionStorage.setItem('decisiontrail.token', {site.tokens[who]!r})")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: _console(errors, message))
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    try:
        yield page
    finally:
        close_settled(context)
    assert not errors, f"the browser console reported errors: {errors}"


@pytest.fixture
def reviewer(browser: Browser, site: Site) -> Iterator[Page]:
    with tab(browser, site, "reviewer") as page:
        yield page


@pytest.fixture
def analyst(browser: Browser, site: Site) -> Iterator[Page]:
    with tab(browser, site, "analyst") as page:
        yield page


def answer(site: Site, who: str, text: str, **variables: Any) -> dict[str, Any]:
    """The whole GraphQL answer (data and errors) to ``text`` sent with ``who``'s token."""
    sent = httpx.post(
        f"{site.url}/graphql",
        json={"query": text, "variables": variables},
        headers={"authorization": f"Bearer {site.tokens[who]}"},
        timeout=30,
    )
    body: dict[str, Any] = sent.json()
    return body


def refused_code(site: Site, who: str, text: str, **variables: Any) -> str:
    body = answer(site, who, text, **variables)
    assert body.get("errors"), body
    return str(body["errors"][0]["extensions"]["code"])


def new_plan(site: Site, description: str, **extra: Any) -> dict[str, Any]:
    plan: dict[str, Any] = site.graphql(
        site.tokens["admin"],
        "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }",
        input={"description": description, **extra},
    )["instantiatePlan"]
    return plan


def record(site: Site, plan_id: str, decision_type: str, question: str, chosen: str, **fields: Any) -> dict[str, Any]:
    """Records a decision through the API as the admin; the payload (decision, or review when held)."""
    context = f"{question} (in {plan_id})"
    digest = hashlib.sha256(context.encode()).hexdigest()
    recorded: dict[str, Any] = site.graphql(
        site.tokens["admin"],
        "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } review { id } } }",
        input={
            "planId": plan_id,
            "decisionType": decision_type,
            "question": question,
            "chosenOption": chosen,
            "rationale": f"because of {question}",
            "contextSnapshot": {
                "hotContextHash": digest,
                "hotContextRef": f"decisiontrail:context/{digest}",
                "hotContext": context,
                "actorStateRef": {"threadId": f"page-{plan_id}", "checkpointId": "cp-1"},
            },
            **fields,
        },
    )["recordDecision"]
    return recorded


def branch(site: Site, description: str) -> tuple[str, str, str]:
    """A plan with a strategy choice under its root and a resource selection under that: (plan, strategy, resources)."""
    plan = new_plan(site, description)
    strategy = record(site, plan["id"], "STRATEGY_CHOICE", "Which way?", "The first way", confidenceScore=0.9)["decision"]["id"]
    below = record(
        site,
        plan["id"],
        "RESOURCE_SELECTION",
        "Which files?",
        "gateway/limits.py",
        parentDecisionId=strategy,
        confidenceScore=0.9,
    )
    return plan["id"], strategy, below["decision"]["id"]


def decision(site: Site, decision_id: str, fields: str) -> dict[str, Any]:
    found: dict[str, Any] = site.graphql(
        site.tokens["admin"], f"query($id: ID!) {{ decision(id: $id) {{ {fields} }} }}", id=decision_id
    )["decision"]
    return found


def plan_nodes(site: Site, plan_id: str, fields: str) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = site.graphql(
        site.tokens["admin"],
        f"query($id: ID!) {{ plan(id: $id) {{ decisions(first: 100) {{ nodes {{ {fields} }} }} }} }}",
        id=plan_id,
    )["plan"]["decisions"]["nodes"]
    return nodes


CORRECT = "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }"
GUIDE = "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }"
RESOLVE = "mutation($input: ResolveReviewInput!) { resolveReview(input: $input) { review { status } } }"


# ---- a correction beside its replay --------------------------------------------------------------------


def test_a_correction_is_shown_beside_its_replay_decision_by_decision(reviewer: Page, browser: Browser, site: Site) -> None:
    page = reviewer
    demo = site.demo
    correction = demo.correction.correction.decision_id
    attempt = decision(site, correction, "corrections { correctionDecisionId correctedDecisionId replayedDecisionIds }")[
        "corrections"
    ]
    (mine,) = [a for a in attempt if a["correctionDecisionId"] == correction]
    corrected, replayed = mine["correctedDecisionId"], mine["replayedDecisionIds"]
    fields = "id planId parentDecisionId decisionType question chosenOption confidenceScore supersededById dependsOn { id }"
    every = {d["id"]: d for p in (demo.root_plan.plan_id, demo.child_plan.plan_id) for d in plan_nodes(site, p, fields)}
    superseded = {i for i, d in every.items() if d["supersededById"] == correction}
    assert corrected in superseded and replayed and set(replayed) <= set(every)
    open_page(page, site, f"?plan={demo.root_plan.plan_id}&open={demo.root_plan.plan_id}&decision={corrected}")

    page.locator(f"#panel button[data-action=compare][data-correction='{correction}']").click()
    settle(page)

    compare = page.locator("#compare")
    expect(compare).to_be_visible()
    expect(page.locator("#graph")).to_be_hidden()
    rows = compare.locator("tr.pair")
    olds = set(rows.evaluate_all("rs => rs.filter(r => r.dataset.old).map(r => r.dataset.old)"))
    news = rows.evaluate_all("rs => rs.filter(r => r.dataset.new).map(r => r.dataset.new)")
    # Every decision the correction superseded once on the left; every decision the replay recorded once on the right.
    assert olds == superseded
    assert set(replayed) <= set(news) and len(news) == len(set(news))
    pairs = rows.evaluate_all("rs => rs.map(r => [r.dataset.old || null, r.dataset.new || null, r.dataset.kind])")
    by_old = {old: (new, kind) for old, new, kind in pairs if old}
    for old, (new, kind) in by_old.items():
        if new is None:
            assert kind == "removed"
            # Nothing the replay recorded took its place: no replayed decision of its type and question.
            assert not [
                r
                for r in replayed
                if (every[r]["decisionType"], every[r]["question"]) == (every[old]["decisionType"], every[old]["question"])
            ]
            continue
        assert new in replayed or new == correction
        if new != correction:
            assert (every[new]["decisionType"], every[new]["question"]) == (every[old]["decisionType"], every[old]["question"])
    # The corrected decision pairs with what the replay chose in its place, what changed marked.
    new, kind = by_old[corrected]
    assert new in replayed and kind == "changed"
    row = compare.locator(f"tr.pair[data-old='{corrected}']")
    expect(row.locator("td.old dd[data-field='chosen option']")).to_have_text(every[corrected]["chosenOption"])
    expect(row.locator("td.new dd[data-field='chosen option']")).to_have_text(every[new]["chosenOption"])
    changes = set((row.get_attribute("data-changes") or "").split(","))
    expect_changed = {"chosen option"} if every[new]["chosenOption"] != every[corrected]["chosenOption"] else set()
    if every[new]["confidenceScore"] != every[corrected]["confidenceScore"]:
        expect_changed.add("confidence")
    assert expect_changed <= changes
    for name in changes:
        expect(row.locator(f"td.new dd[data-field='{name}']")).to_have_attribute("data-changed", "true")
    # The rows that changed nothing are marked unchanged; added rows are what the replay recorded beyond the pairs.
    for old, new, kind in pairs:
        if old and new:
            assert kind in ("changed", "same")
        elif new:
            assert kind == "added" and new not in {n for n, _ in by_old.values()}
    assert f"compare={correction}" in page.url
    shot(page, "compare")

    # The link reopens it; so does the correction's own panel.
    again = page.context.new_page()
    again.goto(f"{site.url}/explore?compare={correction}")
    settle(again)
    assert (
        again.locator("#compare tr.pair").evaluate_all(
            "rs => rs.map(r => [r.dataset.old || null, r.dataset.new || null, r.dataset.kind])"
        )
        == pairs
    )
    again.close()
    page.locator("#compare button[data-action=close-compare]").click()
    expect(compare).to_be_hidden()
    expect(page.locator("#graph")).to_be_visible()
    assert "compare=" not in page.url
    open_page(page, site, f"?decision={correction}")
    page.locator(f"#panel button[data-action=compare][data-correction='{correction}']").click()
    settle(page)
    expect(compare.locator("tr.pair")).to_have_count(len(pairs))


def test_a_replay_across_child_plans_is_paired_plan_by_plan(reviewer: Page, site: Site) -> None:
    page = reviewer
    admin = site.tokens["admin"]
    plan = new_plan(site, "A plan corrected across its child plan")
    strategy = record(site, plan["id"], "STRATEGY_CHOICE", "Where are quotas kept?", "In memory", confidenceScore=0.7)[
        "decision"
    ]["id"]

    def spawn_under(parent: str, description: str) -> tuple[str, str, str, str]:
        """A spawn under ``parent``, its child plan, its root and its strategy choice: (spawn, plan, root, strategy)."""
        spawn = record(site, plan["id"], "SUBPLAN_SPAWN", "Which part is a child plan?", description, parentDecisionId=parent)
        # A spawn is decided in Strategize; its child plan is instantiated once the plan executes.
        site.graphql(admin, "mutation($id: ID!) { advancePhase(planId: $id, phase: EXECUTE) { phase } }", id=plan["id"])
        child = new_plan(site, description, parentDecisionId=spawn["decision"]["id"])
        chosen = "A table" if "again" in description else "A file"
        inner = record(site, child["id"], "STRATEGY_CHOICE", "How are quotas stored?", chosen, confidenceScore=0.8)
        return spawn["decision"]["id"], child["id"], child["rootDecision"]["id"], inner["decision"]["id"]

    old_spawn, old_child, old_root, old_inner = spawn_under(strategy, "Quotas per client")
    removed = record(site, old_child, "RESOURCE_SELECTION", "Which files?", "quotas.json", parentDecisionId=old_inner)[
        "decision"
    ]["id"]
    corrected = site.graphql(
        admin,
        "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } attempt { attemptId } } }",
        input={"decisionId": strategy, "mode": "REVERT", "guidance": "In Redis"},
    )["correctDecision"]
    correction = corrected["correction"]["id"]
    # The replay, recorded as a runtime would: the strategy again, its spawn, a new child plan with its own choice.
    again = record(site, plan["id"], "STRATEGY_CHOICE", "Where are quotas kept?", "In Redis", confidenceScore=0.95)["decision"][
        "id"
    ]
    new_spawn, new_child, new_root, new_inner = spawn_under(again, "Quotas per client, again")
    site.graphql(
        admin,
        "mutation($input: RecordReplayInput!) { recordReplay(input: $input) { replayOutcome } }",
        input={"attemptId": corrected["attempt"]["attemptId"], "outcome": "REPLAYED", "decisionIds": [again, new_spawn]},
    )

    open_page(page, site, f"?compare={correction}")

    rows = page.locator("#compare tr.pair")
    pairs = rows.evaluate_all("rs => rs.map(r => [r.dataset.old || null, r.dataset.new || null, r.dataset.kind])")
    expected = {(strategy, again), (old_spawn, new_spawn), (old_root, new_root), (old_inner, new_inner), (removed, None)}
    assert {(old, new) for old, new, _ in pairs} >= expected
    # Besides: what each child plan gathered on its own at its start (the invariants that apply), paired one for one.
    fields = "id decisionType question chosenOption"
    olds = {d["id"]: d for d in plan_nodes(site, old_child, fields)}
    news = {d["id"]: d for d in plan_nodes(site, new_child, fields)}
    others = {(old, new, kind) for old, new, kind in pairs if (old, new) not in expected}
    assert {old for old, _, _ in others} == {i for i, d in olds.items() if d["decisionType"] == "INVARIANT_ENFORCED"}
    for old, new, kind in others:
        assert new in news and kind in ("same", "changed")
        assert [olds[old][k] for k in ("decisionType", "question", "chosenOption")] == [
            news[new][k] for k in ("decisionType", "question", "chosenOption")
        ]
    kinds = {old: kind for old, _, kind in pairs}
    assert kinds[strategy] == kinds[old_inner] == kinds[old_spawn] == "changed" and kinds[removed] == "removed"
    inner = page.locator(f"#compare tr.pair[data-old='{old_inner}']")
    assert inner.get_attribute("data-changes") == "chosen option"
    expect(inner.locator("td.old dd[data-field='chosen option']")).to_have_text("A file")
    expect(inner.locator("td.new dd[data-field='chosen option']")).to_have_text("A table")
    # The plans side by side: the child plan invalidated on the left, the one spawned anew on the right.
    expect(page.locator("#compare tr.plan-row").filter(has_text="(invalidated)").first).to_contain_text(
        "Quotas per client, again"
    )
    expect(page.locator("#compare .tally")).to_have_attribute("data-removed", "1")
    expect(page.locator("#compare .tally")).to_contain_text("1 child plan(s) invalidated, 1 spawned anew")
    # The stored state the page read: the old child plan invalidated, the replay's decisions current.
    assert site.graphql(admin, "query($id: ID!) { plan(id: $id) { invalidatedAt } }", id=old_child)["plan"]["invalidatedAt"]
    assert decision(site, new_inner, "status")["status"] == "CURRENT"


# ---- correct --------------------------------------------------------------------------------------------


def test_a_reviewer_corrects_a_decision_from_the_page_after_previewing_its_impact(reviewer: Page, site: Site) -> None:
    page = reviewer
    plan, strategy, below = branch(site, "A plan to correct from the page")
    impact = site.graphql(
        site.tokens["admin"], "query($id: ID!) { impact(decisionId: $id) { decisions { id } plans { id } } }", id=strategy
    )["impact"]
    expected = {d["id"] for d in impact["decisions"]}
    assert below in expected
    open_page(page, site, f"?plan={plan}&open={plan}&decision={strategy}")
    expect(page.locator("#viewer")).to_contain_text("reviewer-1 (reviewer)")

    page.locator("#panel button[data-action=correct]").click()
    page.select_option("#correct-mode", "REVERT")
    page.fill("#correct-guidance", "The second way, after all")
    page.fill("#correct-reason", "the first way does not scale")
    page.locator("#panel button[data-action=preview-correct]").click()
    settle(page)

    count = page.locator("#panel .preview-count")
    expect(count).to_have_attribute("data-decisions", str(len(expected)))
    assert set(page.locator("#panel .preview-decisions li").evaluate_all("ls => ls.map(l => l.dataset.id)")) == expected
    assert outline_ids(page, "[data-highlight=impact]") == expected
    assert decision(site, strategy, "status")["status"] == "CURRENT"  # a preview writes nothing
    shot(page, "correct-preview")

    page.locator("#panel button[data-action=confirm-correct]").click()
    settle(page)

    stored = decision(site, strategy, "status supersededById")
    assert stored["status"] == "SUPERSEDED"
    correction = decision(site, stored["supersededById"], "id isCorrection correctsDecisionId chosenOption correctionReason")
    assert correction["isCorrection"] and correction["correctsDecisionId"] == strategy
    assert correction["chosenOption"] == "The second way, after all"
    assert correction["correctionReason"] == "the first way does not scale"
    assert decision(site, below, "status")["status"] == "SUPERSEDED"
    # The page read it all again: the correction drawn and selected, what it superseded ghosted.
    expect(page.locator(f"#outline li[data-id='{correction['id']}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel h2")).to_contain_text("user_intervention")
    assert correction["id"] in {n["id"] for n in drawn(page) if n["kind"] == "decision"}
    assert {strategy, below} <= {n["id"] for n in drawn(page) if "superseded" in n["classes"]}
    assert outline_ids(page, "[data-status=superseded]") >= {strategy, below}


def test_a_refused_correction_shows_the_services_reason_in_the_page(reviewer: Page, site: Site) -> None:
    page = reviewer
    plan, strategy, _ = branch(site, "A plan whose correction is refused")
    open_page(page, site, f"?plan={plan}&open={plan}&decision={strategy}")
    page.locator("#panel button[data-action=correct]").click()
    page.locator("#panel button[data-action=preview-correct]").click()
    settle(page)

    # No guidance: the service refuses, naming the field.
    page.locator("#panel button[data-action=confirm-correct]").click()
    settle(page)
    error = page.locator("#panel form[data-form=correct] .error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("VALIDATION_FAILED")
    expect(error).to_contain_text("field guidance")
    assert decision(site, strategy, "status")["status"] == "CURRENT"

    # Corrected meanwhile by someone else: the service refuses again, saying so.
    site.graphql(
        site.tokens["admin"], CORRECT, input={"decisionId": strategy, "mode": "REVERT", "guidance": "Someone else's way"}
    )
    page.fill("#correct-guidance", "My way")
    page.locator("#panel button[data-action=confirm-correct]").click()
    settle(page)
    expect(error).to_contain_text("CONFLICT")
    assert len([d for d in plan_nodes(site, plan, "isCorrection") if d["isCorrection"]]) == 1


def test_an_analyst_is_offered_no_action_and_the_service_refuses_them(analyst: Page, site: Site) -> None:
    page = analyst
    plan, strategy, _ = branch(site, "A plan an analyst only reads")
    held = new_plan(site, "A plan with a review an analyst only reads", automationProfile={"editCode": 0.9})
    review = record(
        site, held["id"], "STRATEGY_CHOICE", "Which store?", "Postgres", confidenceScore=0.1, alternativesConsidered=["Redis"]
    )["review"]["id"]
    stored = plan_nodes(site, plan, "id status")
    open_page(page, site, f"?plan={plan}&open={plan}&decision={strategy}")
    expect(page.locator("#viewer")).to_have_attribute("data-may", "READ")

    expect(page.locator("#panel h2")).to_contain_text("strategy_choice")
    expect(page.locator("#panel button[data-action=correct]")).to_have_count(0)
    expect(page.locator("#panel button[data-action=guide]")).to_have_count(0)
    expect(page.locator("#panel .act")).to_have_count(0)
    # Refused when sent all the same, and nothing stored.
    assert (
        refused_code(site, "analyst", CORRECT, input={"decisionId": strategy, "mode": "REVERT", "guidance": "x"}) == "FORBIDDEN"
    )
    assert (
        refused_code(site, "analyst", GUIDE, input={"planId": plan, "parentDecisionId": strategy, "guidance": "x"}) == "FORBIDDEN"
    )
    assert plan_nodes(site, plan, "id status") == stored

    # A review waits under the root: the analyst sees it, and may not resolve it.
    open_page(page, site, f"?plan={held['id']}&open={held['id']}&decision={held['rootDecision']['id']}")
    expect(page.locator("#panel dd[data-field='review pending under it']")).to_contain_text("Postgres")
    expect(page.locator("#panel form[data-form=review]")).to_have_count(0)
    expect(page.locator("#panel button[data-action=approve]")).to_have_count(0)
    assert refused_code(site, "analyst", RESOLVE, input={"reviewId": review, "action": "APPROVE"}) == "FORBIDDEN"
    assert (
        site.graphql(site.tokens["admin"], "query($id: ID!) { review(id: $id) { status } }", id=review)["review"]["status"]
        == "PENDING"
    )


# ---- add guidance --------------------------------------------------------------------------------------


def test_a_reviewer_adds_guidance_from_the_page(reviewer: Page, site: Site) -> None:
    page = reviewer
    plan, strategy, below = branch(site, "A plan to guide from the page")
    open_page(page, site, f"?plan={plan}&open={plan}&decision={strategy}")

    page.locator("#panel button[data-action=guide]").click()
    page.fill("#guide-text", "Keep the public endpoints as they are")
    page.fill("#guide-reason", "customers depend on them")
    page.locator("#panel button[data-action=add-guidance]").click()
    settle(page)

    guidance = [
        d
        for d in plan_nodes(site, plan, "id decisionType parentDecisionId chosenOption status")
        if d["decisionType"] == "USER_INTERVENTION"
    ]
    assert len(guidance) == 1
    (added,) = guidance
    assert added["parentDecisionId"] == strategy and added["chosenOption"] == "Keep the public endpoints as they are"
    # Guidance supersedes nothing.
    assert {decision(site, d, "status")["status"] for d in (strategy, below)} == {"CURRENT"}
    expect(page.locator(f"#outline li[data-id='{added['id']}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel dd[data-field='chosen option']")).to_have_text("Keep the public endpoints as they are")
    assert added["id"] in {n["id"] for n in drawn(page) if n["kind"] == "decision"}
    assert not {n["id"] for n in drawn(page) if "superseded" in n["classes"]}


def test_refused_guidance_shows_the_field_in_the_page(reviewer: Page, site: Site) -> None:
    page = reviewer
    plan, strategy, _ = branch(site, "A plan given empty guidance")
    open_page(page, site, f"?plan={plan}&open={plan}&decision={strategy}")
    page.locator("#panel button[data-action=guide]").click()
    page.fill("#guide-text", "   ")
    page.locator("#panel button[data-action=add-guidance]").click()
    settle(page)

    error = page.locator("#panel form[data-form=guide] .error")
    expect(error).to_contain_text("VALIDATION_FAILED")
    expect(error).to_contain_text("field guidance")
    assert not [d for d in plan_nodes(site, plan, "decisionType") if d["decisionType"] == "USER_INTERVENTION"]


# ---- resolve a review ----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["approve", "select-alternative"])
def test_a_reviewer_resolves_a_review_from_the_page(reviewer: Page, site: Site, how: str) -> None:
    page = reviewer
    held = new_plan(site, f"A plan whose review is resolved: {how}", automationProfile={"editCode": 0.9})
    root = held["rootDecision"]["id"]
    review = record(
        site, held["id"], "STRATEGY_CHOICE", "Which store?", "Postgres", confidenceScore=0.1, alternativesConsidered=["Redis"]
    )["review"]["id"]
    open_page(page, site, f"?plan={held['id']}&open={held['id']}&decision={root}")
    assert review in {n["id"] for n in drawn(page) if n["kind"] == "review"}
    form = page.locator(f"#panel form[data-form=review][data-review-id='{review}']")
    expect(form).to_contain_text("Postgres")

    if how == "approve":
        form.locator("button[data-action=approve]").click()
    else:
        form.locator("select").select_option("Redis")
        form.locator("button[data-action=select-alternative]").click()
    settle(page)

    stored = site.graphql(
        site.tokens["admin"], "query($id: ID!) { review(id: $id) { status resolvedBy decision { id chosenOption } } }", id=review
    )["review"]
    assert stored["status"] == ("APPROVED" if how == "approve" else "ALTERNATIVE_SELECTED")
    assert stored["resolvedBy"] == "reviewer-1"
    assert stored["decision"]["chosenOption"] == ("Postgres" if how == "approve" else "Redis")
    recorded = stored["decision"]["id"]
    expect(page.locator(f"#outline li[data-id='{recorded}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel dd[data-field='chosen option']")).to_have_text(stored["decision"]["chosenOption"])
    assert recorded in {n["id"] for n in drawn(page) if n["kind"] == "decision"}
    assert not [n for n in drawn(page) if n["kind"] == "review"]


def test_the_review_form_is_shown_for_a_pending_review(reviewer: Page, site: Site) -> None:
    page = reviewer
    held = new_plan(site, "A plan with a review waiting", automationProfile={"editCode": 0.9})
    record(
        site,
        held["id"],
        "STRATEGY_CHOICE",
        "Which queue?",
        "RabbitMQ",
        confidenceScore=0.2,
        alternativesConsidered=["Kafka", "SQS"],
    )
    open_page(page, site, f"?plan={held['id']}&open={held['id']}&decision={held['rootDecision']['id']}")
    form = page.locator("#panel form[data-form=review]")
    expect(form.locator("button[data-action=approve]")).to_be_visible()
    assert form.locator("select option").all_inner_texts() == ["Kafka", "SQS"]
    expect(page.locator("#panel button[data-action=correct]")).to_be_visible()
    shot(page, "review")
    assert re.search(r"may read, review, correct", page.locator("#viewer").inner_text())
