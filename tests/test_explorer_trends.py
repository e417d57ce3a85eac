"""The trends page at /explore/trends, in a real headless Chromium driven by Playwright (issue 47, Build 5).

One served app (with tokens) over data built through the services, one browser for the module; each test
opens its own tab. The browser is Debian's ``chromium``, as in tests/test_explorer.py (skipped without it on
a workstation, failed under CI). ``DECISIONTRAIL_SCREENSHOTS=docs`` also saves docs/trends.png (1440x900).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile, DecisionType
from decisiontrail.domain.recording import Review, ReviewAction
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.reviews import resolve_review
from browser import CHROMIUM, FLAGS, close_settled, require_chromium
from factories import actor_snapshot, decision, to_execute, tool_input
from serving import served

SCREENSHOTS = os.environ.get("DECISIONTRAIL_SCREENSHOTS")


require_chromium()

from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright  # noqa: E402

PLOTS = ("per-day", "by-type", "by-actor", "confidence", "waits", "invalidating")

TRENDS = """query($project: String) {
  trends(project: $project) {
    project projects
    decisionsPerDay { day decisions corrections }
    correctionRateByType { decisionType decisions corrected rate }
    correctionRateByActor { actor decisions corrected rate }
    confidence { low high corrected kept }
    reviewWaitingTimes { resolved pending buckets { label lowSeconds highSeconds resolved pending } }
    topInvalidating {
      decisionId planId planDescription sequenceNumber decisionType question chosenOption
      corrections invalidatedDecisions invalidatedPlans lastCorrectedAt
    }
  }
}"""

# Each plot's CSV, as GraphQL names its columns: the rows of the answer it is made of.
COLUMNS: dict[str, tuple[str, list[str]]] = {
    "per-day": ("decisionsPerDay", ["day", "decisions", "corrections"]),
    "by-type": ("correctionRateByType", ["decisionType", "decisions", "corrected", "rate"]),
    "by-actor": ("correctionRateByActor", ["actor", "decisions", "corrected", "rate"]),
    "confidence": ("confidence", ["low", "high", "corrected", "kept"]),
    "waits": ("reviewWaitingTimes.buckets", ["label", "lowSeconds", "highSeconds", "resolved", "pending"]),
    "invalidating": (
        "topInvalidating",
        [
            "decisionId",
            "planId",
            "planDescription",
            "sequenceNumber",
            "decisionType",
            "question",
            "chosenOption",
            "corrections",
            "invalidatedDecisions",
            "invalidatedPlans",
            "lastCorrectedAt",
        ],
    ),
}


@dataclass(frozen=True)
class Site:
    url: str
    tokens: dict[str, str]

    def trends(self, token: str, project: str | None = None) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.url}/graphql",
            json={"query": TRENDS, "variables": {"project": project}},
            headers={"authorization": f"Bearer {token}"},
            timeout=30,
        ).json()
        assert not answer.get("errors"), answer["errors"]
        found: dict[str, Any] = answer["data"]["trends"]
        return found


def build(trail: Trail) -> None:
    """Four plans of three actors in two projects: strategies and Execute decisions of spread confidences, a
    beta decision depending on an alpha one, four corrections, reviews resolved and pending."""

    def record(plan_id: str, kind: DecisionType, parent: str, confidence: float, option: str, **more: Any) -> str:
        made = recording_service.record(
            trail, decision(plan_id, kind, parent, confidence_score=confidence, chosen_option=option, **more), principal=LOCAL
        )
        return made.decision_id

    corrected: list[str] = []
    shared = ""
    for project, owner, description, confidences in (
        ("alpha", "planner-ann", "rate limiter for the public API", (0.15, 0.35, 0.62, 0.88, 0.93)),
        ("alpha", "planner-bob", "nightly export of invoices", (0.25, 0.55, 0.71, 0.97)),
        ("beta", "planner-ann", "search index rebuild", (0.45, 0.66, 0.81)),
        ("beta", "planner-cy", "billing retry policy", (0.31, 0.52, 0.77, 0.99)),
    ):
        plan, root = instantiate_plan(trail, description, project=project, owner=owner, principal=LOCAL)
        first = record(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, confidences[0], f"{description}: plan A")
        if not shared:
            shared = first
        strategy = to_execute(trail, plan.plan_id)
        made = [
            record(
                plan.plan_id,
                (DecisionType.IMPLEMENTATION_CHOICE, DecisionType.TOOL_INVOCATION, DecisionType.RESOURCE_SELECTION)[i % 3],
                strategy.decision_id,
                score,
                f"step {i + 1} of {description}",
                depends_on=(shared,) if owner == "planner-ann" and project == "beta" and i == 0 else (),
            )
            for i, score in enumerate(confidences[1:])
        ]
        corrected.append(first if owner != "planner-cy" else made[0])
        gated, _ = instantiate_plan(
            trail, f"{description} (gated)", project=project, owner=owner, automation_profile=AutomationProfile(edit_code=1.0),
            principal=LOCAL,
        )  # fmt: skip
        held = [
            recording_service.record_decision(
                trail,
                tool_input("strategy_choice", question=f"q{i}"),
                plan_id=gated.plan_id,
                snapshot=actor_snapshot(),
                principal=LOCAL,
            )
            for i in range(2)
        ]
        assert all(isinstance(r, Review) for r in held)
        resolve_review(trail, held[0].review_id, ReviewAction.APPROVE, principal=LOCAL)
    for decision_id in corrected:
        correct(trail, decision_id, "revert", "take the other approach", principal=LOCAL)


@pytest.fixture(scope="module")
def site(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("trends-tokens") / "tokens.json"
    tokens = {
        "analyst": issue_token(path, "analyst-1", Role.ANALYST),
        "analyst@beta": issue_token(path, "analyst-beta", Role.ANALYST, project="beta"),
    }
    delete_all_data(graph)
    build(Trail.on(graph))
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield Site(url, tokens)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


def tab(browser: Browser, token: str) -> Iterator[Page]:
    """A fresh tab at 1440x900 holding ``token``; fails the test if the console reports an error."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    context.add_init_script(f"sessionStorage.setItem('decisiontrail.token', {token!r})")
    opened = context.new_page()
    errors: list[str] = []
    opened.on("console", lambda message: _console(errors, message))
    opened.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    yield opened
    close_settled(context)
    assert not errors, f"the browser console reported errors: {errors}"


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    yield from tab(browser, site.tokens["analyst"])


def _console(errors: list[str], message: ConsoleMessage) -> None:
    if message.type in ("error", "warning") and "DevTools" not in message.text:
        errors.append(f"{message.type}: {message.text}")


def open_trends(page: Page, site: Site, query: str = "") -> None:
    page.goto(f"{site.url}/explore/trends{query}")
    settle(page)


def settle(page: Page) -> None:
    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=30_000)


def plotted(page: Page) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate("window.decisiontrailTrends.plotted()")
    return found


def rows_of(answer: dict[str, Any], path: str) -> list[dict[str, Any]]:
    found: Any = answer
    for key in path.split("."):
        found = found[key]
    return list(found)


def inked_pixels(page: Page, plot: str) -> int:
    """How many pixels of the plot's canvas are not blank: what Chart.js drew."""
    count: int = page.locator(f"#{plot} canvas").evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"
    )
    return count


def test_the_page_is_served_under_the_explorers_content_security_policy(site: Site) -> None:
    page = httpx.get(f"{site.url}/explore/trends")
    explorer = httpx.get(f"{site.url}/explore")
    script = httpx.get(f"{site.url}/explore/trends.js")

    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == explorer.headers["content-security-policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    assert all(' src="/explore/' in tag for tag in re.findall(r"<script[^>]*>", page.text))
    assert "http" not in re.sub(r"<!doctype[^>]*>", "", page.text, flags=re.I)  # no CDN: the charts are bundled
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")


def test_each_plot_draws_the_trends_query_answer(page: Page, site: Site) -> None:
    answer = site.trends(site.tokens["analyst"])

    open_trends(page, site)

    drawn = plotted(page)
    assert set(drawn) == set(PLOTS)
    for plot in PLOTS:
        expect(page.locator(f"#{plot} canvas")).to_be_visible()
        assert inked_pixels(page, plot) > 500, plot
    per_day = drawn["per-day"]
    assert per_day["labels"] == [d["day"] for d in answer["decisionsPerDay"]]
    assert [s["data"] for s in per_day["datasets"]] == [
        [d["decisions"] for d in answer["decisionsPerDay"]],
        [d["corrections"] for d in answer["decisionsPerDay"]],
    ]
    assert drawn["by-type"]["labels"] == [r["decisionType"].lower() for r in answer["correctionRateByType"]]
    assert drawn["by-type"]["datasets"][0]["data"] == pytest.approx([r["rate"] * 100 for r in answer["correctionRateByType"]])
    assert (
        drawn["by-actor"]["labels"]
        == [r["actor"] for r in answer["correctionRateByActor"]]
        == [
            "planner-ann",
            "planner-bob",
            "planner-cy",
        ]
    )
    assert drawn["by-actor"]["datasets"][0]["data"] == pytest.approx([r["rate"] * 100 for r in answer["correctionRateByActor"]])
    assert [s["data"] for s in drawn["confidence"]["datasets"]] == [
        [b["corrected"] for b in answer["confidence"]],
        [b["kept"] for b in answer["confidence"]],
    ]
    buckets = answer["reviewWaitingTimes"]["buckets"]
    assert drawn["waits"]["labels"] == [b["label"] for b in buckets]
    assert [s["data"] for s in drawn["waits"]["datasets"]] == [[b["resolved"] for b in buckets], [b["pending"] for b in buckets]]
    assert sum(drawn["waits"]["datasets"][0]["data"]) == 4 and sum(drawn["waits"]["datasets"][1]["data"]) == 4
    assert drawn["invalidating"]["datasets"][0]["data"] == [d["invalidatedDecisions"] for d in answer["topInvalidating"]]
    assert len(answer["topInvalidating"]) == 4
    expect(page.locator("#wait-summary")).to_contain_text("4 resolved")
    expect(page.locator("#back")).to_have_attribute("href", "/explore")
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / "trends.png"))


def test_each_csv_download_is_the_data_the_query_answered(page: Page, site: Site) -> None:
    answer = site.trends(site.tokens["analyst"], "alpha")
    open_trends(page, site, "?project=alpha")

    for plot, (path, columns) in COLUMNS.items():
        with page.expect_download() as started:
            page.locator(f"#{plot} button.csv").click()
        text = Path(started.value.path()).read_text(encoding="utf-8")
        header, *rows = list(csv.reader(io.StringIO(text)))
        wanted = rows_of(answer, path)
        assert header == columns, plot
        assert len(rows) == len(wanted) > 0, plot
        for row, record in zip(rows, wanted, strict=True):
            for cell, column in zip(row, columns, strict=True):
                value = record[column]
                if value is None:
                    assert cell == "", (plot, column)
                elif isinstance(value, (int, float)):
                    assert float(cell) == value, (plot, column)
                else:
                    assert cell == value, (plot, column)
        assert started.value.suggested_filename == f"trends-alpha-{plot}.csv"


def test_the_project_picker_limits_every_plot_and_the_address_keeps_it(page: Page, site: Site) -> None:
    every = site.trends(site.tokens["analyst"])
    beta = site.trends(site.tokens["analyst"], "beta")
    open_trends(page, site)
    assert page.locator("#project option").all_text_contents() == ["every project", "alpha", "beta"]
    assert page.evaluate("window.decisiontrailTrends.answer().project") is None

    page.select_option("#project", "beta")
    settle(page)

    assert page.url.endswith("/explore/trends?project=beta")
    assert page.evaluate("window.decisiontrailTrends.answer()")["correctionRateByActor"] == beta["correctionRateByActor"]
    drawn = plotted(page)
    assert drawn["by-actor"]["labels"] == ["planner-ann", "planner-cy"]
    assert [s["data"] for s in drawn["per-day"]["datasets"]] == [
        [d["decisions"] for d in beta["decisionsPerDay"]],
        [d["corrections"] for d in beta["decisionsPerDay"]],
    ]
    assert sum(d["decisions"] for d in beta["decisionsPerDay"]) < sum(d["decisions"] for d in every["decisionsPerDay"])
    # The address opens the same view again.
    page.reload()
    settle(page)
    assert page.locator("#project").input_value() == "beta"
    assert plotted(page)["by-actor"]["labels"] == ["planner-ann", "planner-cy"]


def test_a_token_limited_to_a_project_is_offered_only_that_project(browser: Browser, site: Site) -> None:
    for limited in tab(browser, site.tokens["analyst@beta"]):
        open_trends(limited, site)
        assert limited.locator("#project option").all_text_contents() == ["every project", "beta"]
        assert plotted(limited)["by-actor"]["labels"] == ["planner-ann", "planner-cy"]
        # Another project, asked by its address, is empty: nothing of alpha's is shown.
        open_trends(limited, site, "?project=alpha")
        drawn = plotted(limited)
        assert drawn["per-day"]["labels"] == [] and drawn["invalidating"]["labels"] == []
        assert "planner-bob" not in limited.content()
