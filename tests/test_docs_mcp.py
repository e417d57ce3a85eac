"""docs/mcp.md's example, run as the page runs it: a plan instantiated through GraphQL, then
``python record.py <plan id>`` as a process of its own against the served ``/mcp``, printing what
the page shows."""

from __future__ import annotations

import httpx

from decisiontrail.access import LOCAL
from decisiontrail.services import Trail, reading
import docs_examples
from docs_examples import ID, Cli, example, run_graphql

PAGE = "docs/mcp.md"

cli = docs_examples.cli  # the fixture: the command line on the test's database


def test_the_sdk_example_records_a_decision_and_prints_its_lineage(
    api: httpx.Client, base_url: str, cli: Cli, store: Trail
) -> None:
    plan = run_graphql(api, example(PAGE, "mutation {"))["instantiatePlan"]["id"]
    (cli.cwd / "record.py").write_text(example(PAGE, "import asyncio"), encoding="utf-8")

    said = cli.shell(f"python record.py {plan}", DECISIONTRAIL_MCP_URL=f"{base_url}/mcp")

    assert said.code == 0, said.err
    assert ID.sub("01M9...", said.out) == example(PAGE, "recorded 01M9...")
    recorded = ID.findall(said.out)[0]
    decision = reading.get_decision(store, recorded, LOCAL)
    assert decision.plan_id == plan and decision.chosen_option == "A token bucket in the API gateway"
    assert said.out.splitlines()[1].endswith(decision.parent_decision_id or "no parent")
