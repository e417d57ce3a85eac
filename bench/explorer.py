"""The explorer page in Chromium: a 100,000-decision hierarchy opened collapsed, a 1,000-decision plan expanded.

Opening draws the hierarchy's plan cards only (each with its counts: decisions, superseded, unsure,
pending reviews), so what it costs grows with the plans and with counting their decisions, not with
drawing them; expanding fetches one plan's decisions and draws them.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bench.harness import Row, Stats
from bench.scenarios import Sizes
from bench.workload import WorkloadSpec, load, tree_fixture
from decisiontrail.graphdb import Graph

CHROMIUM = os.environ.get("DECISIONTRAIL_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling Google's hosts, which this network refuses.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RUNS = 5
HIERARCHY_DECISIONS = 100_000
PLAN_DECISIONS = 1000


def hierarchy(decisions: int = HIERARCHY_DECISIONS) -> WorkloadSpec:
    """One hierarchy of 40 plans (depth 3, fan-out 3) sharing ``decisions`` evenly: 2,500 decisions
    each at 100,000 (the 10,000-decision hierarchy of earlier runs had the same plans, of 250).

    >>> hierarchy().total_decisions, hierarchy().plans_per_hierarchy, hierarchy(1000).decisions_per_plan
    (100000, 40, 25)
    """
    shape = WorkloadSpec(seed=15, hierarchies=1, depth=3, fan_out=3)
    return replace(shape, decisions_per_plan=max(10, decisions // shape.plans_per_hierarchy))


HIERARCHY = hierarchy()
# Counts main-thread tasks over 50 ms (the browser's "long tasks"): what a person feels as a stall.
LONG_TASKS = """() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
    .observe({ type: "longtask", buffered: false });
}"""


def explorer(
    graph: Graph,
    api: str,
    sizes: Sizes,
    progress: Callable[[str], None],
    *,
    spec: WorkloadSpec = HIERARCHY,
    plan_decisions: int = PLAN_DECISIONS,
    runs: int = RUNS,
) -> list[Row]:
    """Wall time from a click to the page idle again, and the longest main-thread task meanwhile:
    opening ``spec``'s hierarchy collapsed, and expanding a plan of ``plan_decisions``, ``runs``
    times each after a warm-up (smaller ones for a quick check: ``hierarchy(decisions)``)."""
    if shutil.which(CHROMIUM) is None:
        progress(f"explorer: skipped, no Chromium at {CHROMIUM}")
        return []
    from playwright.sync_api import Page, expect, sync_playwright

    progress(f"explorer: loading a hierarchy of {spec.total_decisions:,} decisions and a plan of {plan_decisions:,}")
    loaded = load(graph, spec)
    progress(f"explorer: loaded in {loaded.seconds:.0f} s")
    top = loaded.root_plan_ids[0]
    big_plan = tree_fixture(graph, plan_decisions, seed=15)

    def settle(page: Page) -> None:
        expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=120_000)

    def says(page: Page) -> str:
        """What the page last told its user (an error it met, say)."""
        return page.locator("#status").inner_text()

    def counting(page: Page) -> Any:
        """A DevTools session counting where the page's main thread spends its time (from now on)."""
        session = page.context.new_cdp_session(page)
        session.send("Performance.enable")
        return session

    def metrics(session: Any) -> dict[str, float]:
        """Chromium's own counters of the page's main thread (seconds spent since counting began)."""
        found = session.send("Performance.getMetrics")["metrics"]
        return {m["name"]: m["value"] for m in found if m["name"] in MAIN_THREAD}

    def opening(page: Page) -> tuple[float, float, dict[str, float]]:
        page.goto(f"{api}/explore")
        settle(page)
        # Found as a person finds it among the database's other plans: by its id in the search box.
        page.fill("#search", top)
        settle(page)
        page.evaluate(LONG_TASKS)
        session = counting(page)
        before = metrics(session)
        start = time.perf_counter()
        page.locator(f"#plan-list button[data-plan-id='{top}']").click()
        settle(page)
        took = (time.perf_counter() - start) * 1000
        spent = _spent(before, metrics(session))
        session.detach()
        assert page.locator("#outline li[data-kind=plan]").count() == spec.plans_per_hierarchy
        return took, _longest(page), spent

    def expanding(page: Page) -> tuple[float, float, dict[str, float]]:
        page.goto(f"{api}/explore?plan={big_plan}")
        settle(page)
        page.evaluate(LONG_TASKS)
        item = page.locator(f"#outline li[data-kind=plan][data-id='{big_plan}']")
        session = counting(page)
        before = metrics(session)
        start = time.perf_counter()
        item.focus()
        item.press("ArrowRight")
        settle(page)
        if item.get_attribute("data-open") != "true":
            raise RuntimeError(f"the plan did not open; the page says: {says(page)}")
        took = (time.perf_counter() - start) * 1000
        spent = _spent(before, metrics(session))
        session.detach()
        drawn = page.evaluate("window.decisiontrailExplorer.graph().filter(n => n.kind === 'decision').length")
        assert drawn == plan_decisions, drawn
        return took, _longest(page), spent

    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 950})
            for case, run, target_ms in (
                (
                    f"open a hierarchy of {spec.total_decisions:,} decisions in {spec.plans_per_hierarchy} plans, collapsed",
                    opening,
                    2000,
                ),
                (f"expand a plan of {plan_decisions:,} decisions (fetch, lay out, draw)", expanding, 1000),
            ):
                progress(f"explorer: {case}")
                run(page)  # warm-up: the bundle parsed, the queries cached
                measured = [run(page) for _ in range(runs)]
                stats = Stats(tuple(took for took, _, _ in measured))
                longest = max(task for _, task, _ in measured)
                main_thread = {
                    name: round(statistics.median(spent[name] for _, _, spent in measured), 1) for name in measured[0][2]
                }
                rows.append(
                    Row(
                        "explorer",
                        case,
                        stats,
                        None,
                        "",
                        target=f"p50 < {target_ms / 1000:g} s",
                        met=stats.p50_ms < target_ms,
                        note=f"Chromium, click to idle; longest main-thread task {longest:.0f} ms; the page's main thread, "
                        "as Chromium counts it (medians, ms): running tasks, of them scripts, style and layout",
                        extra={"longest_task_ms": round(longest, 1), **main_thread},
                    )
                )
        finally:
            browser.close()
    return rows


MAIN_THREAD = {
    "TaskDuration": "task_ms",
    "ScriptDuration": "script_ms",
    "RecalcStyleDuration": "style_ms",
    "LayoutDuration": "layout_ms",
}
"""Chromium's counters of where its main thread's time went (Performance.getMetrics), as the row names them."""


def _spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """The main thread's time between two readings of its counters, in ms.

    >>> _spent({"TaskDuration": 1.0, "ScriptDuration": 0.5}, {"TaskDuration": 1.75, "ScriptDuration": 0.75})
    {'task_ms': 750.0, 'script_ms': 250.0}
    """
    return {MAIN_THREAD[name]: (after[name] - before[name]) * 1000 for name in MAIN_THREAD if name in before}


def _longest(page: Any) -> float:
    tasks: list[float] = page.evaluate("window.__longTasks")
    return max(tasks, default=0.0)
