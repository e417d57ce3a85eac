"""docs/checks.md's examples, run: each rule's example violation as ``check`` reports it on the small
literal graph that breaks exactly that rule (tests/test_checks_validation.py's), the default
coverage spec, the Cytoscape.js style's selectors against a Cytoscape JSON export, and the
``/export`` routes. (The synopsis is test_docs_synopses.py's; ``check --all`` on the demonstration,
test_docs_demonstration.py's.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import httpx
import pytest

from decisiontrail.access import LOCAL
from decisiontrail.checks import DEFAULT_SPEC, run_checks
from decisiontrail.checks.coverage import load_spec
from decisiontrail.domain import AutomationProfile, DecisionType
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.recording import record_decision
import docs_examples
from docs_examples import Cli, example
from factories import actor_snapshot, tool_input
from factories import decision as a_decision
from test_checks_validation import BREAKS, valid_graph

VIOLATIONS: dict[str, Callable[[], str]] = {  # each rule: the page's example of its violation
    "single_root": lambda: example(
        "docs/checks.md", "[single_root] plan P has 2 current roots (R0, R8); exactly one, its prompt_definition, is allowed"
    ),
    "tree_per_plan": lambda: example(
        "docs/checks.md", "[tree_per_plan] tool_invocation CT2 has 2 parents; every decision but the root has exactly one"
    ),
    "parent_in_same_plan": lambda: example(
        "docs/checks.md", "[parent_in_same_plan] decision CT2 of plan C hangs under decision S6 of plan P"
    ),
    "no_dependency_cycle": lambda: example(
        "docs/checks.md", "[no_dependency_cycle] DEPENDS_ON edges form a cycle: N4 -> T7 -> N4"
    ),
    "dependency_is_current": lambda: example(
        "docs/checks.md", "[dependency_is_current] current decision T7 depends on superseded decision X3"
    ),
    "no_partial_invalidation": lambda: example(
        "docs/checks.md", "[no_partial_invalidation] decision S2 is superseded but its child X3 is current"
    ),
    "correction_consistency": lambda: example(
        "docs/checks.md", "[correction_consistency] decision S2 is superseded but has 0 SUPERSEDED_BY edges; exactly one"
    ),
    "sequence_order": lambda: example("docs/checks.md", "[sequence_order] plan P: decision T7 (#7) was created before S6 (#6)"),
    "type_in_phase": lambda: example(
        "docs/checks.md", "[type_in_phase] tool_invocation T7 was recorded in strategize; tool_invocation belongs to execute"
    ),
    "context_snapshot": lambda: example(
        "docs/checks.md",
        "[context_snapshot] strategy_choice CS1: hot_context_ref decisiontrail:context/0000…0000 points at a context that is not stored",
    ),
    "spawn_link": lambda: example("docs/checks.md", "[spawn_link] plan C is a child of Q but was spawned by N4 of plan P"),
    "review_resolvable": lambda: example(
        "docs/checks.md",
        "[review_resolvable] review V2 is pending under decision X3, which is superseded: it can never be resolved",
    ),
    "strategize_coverage": lambda: example(
        "docs/checks.md", "[strategize_coverage] plan C left Strategize with 0 strategy_choice decision(s); at least 1 expected"
    ),
    "invariant_coverage": lambda: example(
        "docs/checks.md",
        "[invariant_coverage] plan P declares invariant 'tests' but no current invariant_enforced decision enforces it",
    ),
    "spawns_have_children": lambda: example(
        "docs/checks.md", "[spawns_have_children] subplan_spawn N4 of plan P has 0 active child plans; it should have exactly one"
    ),
    "execute_under_strategize": lambda: example(
        "docs/checks.md",
        "[execute_under_strategize] execute decision CT2 (tool_invocation) hangs under no Strategize decision but the prompt_definition CR0",
    ),
}

cli = docs_examples.cli  # the fixture: the command line on the test's database


def test_every_rule_has_its_example() -> None:
    assert set(VIOLATIONS) == set(BREAKS)


@pytest.mark.parametrize("rule", list(VIOLATIONS))
def test_a_rules_example_violation_is_what_check_reports(rule: str) -> None:
    G = valid_graph()
    BREAKS[rule](G)

    found = run_checks(G).violations

    # the page cuts a long hash as 0000…0000; the rest it shows whole, as check reports it
    shown = re.escape(VIOLATIONS[rule]().rstrip("\n")).replace("…", "[0-9a-f]+")
    assert {v.rule for v in found} == {rule}
    assert any(re.fullmatch(shown, v.render()) for v in found), "\n".join(v.render() for v in found)


def test_the_coverage_defaults_are_the_specs() -> None:
    shown = example("docs/checks.md", "{")

    assert load_spec(shown) == DEFAULT_SPEC and json.loads(shown) == json.loads(DEFAULT_SPEC.model_dump_json())


def _a_corrected_plan(store: Trail) -> tuple[str, str]:
    """A plan with a corrected strategy, a spawn and a review pending: its id and its root's."""
    plan, root = instantiate_plan(
        store, "Add rate limiting", automation_profile=AutomationProfile(edit_code=0.5), principal=LOCAL
    )
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    correct(store, strategy.decision_id, "revert", "Another approach", principal=LOCAL)
    recording_service.record(store, a_decision(plan.plan_id, DecisionType.SUBPLAN_SPAWN, root.decision_id), principal=LOCAL)
    record_decision(
        store,
        tool_input("resource_selection", confidence_score=0.1, parent_decision_id=root.decision_id),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        principal=LOCAL,
    )
    return plan.plan_id, root.decision_id


def test_the_cytoscape_styles_selectors_find_what_an_export_holds(cli: Cli, store: Trail) -> None:
    plan, _ = _a_corrected_plan(store)
    style = example("docs/checks.md", "cytoscape({")
    assert cli.run("-q", "export", "--plan", plan, "--format", "cyjs", "-o", "plan.cyjs").code == 0
    elements = json.loads((cli.cwd / "plan.cyjs").read_text(encoding="utf-8"))["elements"]
    nodes, edges = elements["nodes"], elements["edges"]

    classes = {c for e in nodes + edges for c in str(e.get("classes", "")).split()}
    for selector in re.findall(r'selector: "([^"]+)"', style):
        for one in selector.split(", "):
            if one in ("node", "edge"):
                continue
            if one == ":parent":  # a compound node: some node's parent
                assert {n["data"].get("parent") for n in nodes} & {n["data"]["id"] for n in nodes}, one
                continue
            kind, wanted = one.split(".")
            assert wanted in classes, (one, sorted(classes))
    assert all(n["data"]["label"] for n in nodes)  # label: "data(label)"
    assert all("position" in n for n in nodes)  # layout: preset


def test_the_export_routes_answer_for_every_format(api: httpx.Client, store: Trail) -> None:
    plan, root = _a_corrected_plan(store)
    routes = example("docs/checks.md", "GET /export/plans/{id}.{graphml|dot|cyjs|json|gexf|prov.json}   one plan")
    formats = re.search(r"\{(graphml[^}]*)\}", routes).group(1).split("|")  # type: ignore[union-attr]

    for line in routes.splitlines():
        path = line.split()[1]
        for fmt in formats:
            for what in ("lineage", "impact"):
                url = path.replace("{id}", plan if "/plans/" in path else root).replace("{lineage|impact}", what)
                url = re.sub(r"\{graphml[^}]*\}|\{format\}", fmt, url)
                answer = api.get(url)
                assert answer.status_code == 200 and plan.encode() in answer.content, (url, answer.status_code)
