"""docs/interop.md's examples, run: an OpenTelemetry SDK, the OTLP file imported by the command line
and sent with curl, PROV and GEXF out, corrections as a dataset."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import networkx as nx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services.correction import correct
import docs_examples
from docs_examples import ROOT, Cli, example, numbered, plan_ids, run_graphql
from serving import served

PAGE = "docs/interop.md"
TRACE = "docs/examples/otlp-trace.json"

cli = docs_examples.cli  # the fixture: the command line on the test's database


def _curl(block: str) -> tuple[Path, str, list[str]]:
    """What a ``$ curl ... /v1/traces`` session of ``block`` sends (the file, its content type) and
    the answers it shows, one a line, in order."""
    command = re.search(r"^\$ curl (.*?)\n(?!\s)", block, flags=re.MULTILINE | re.DOTALL)
    assert command is not None, block
    sent = command.group(1)
    path = re.search(r"--data-binary @(\S+)", sent)
    content_type = re.search(r"-H 'content-type: ([^']+)'", sent)
    assert path is not None and content_type is not None, sent
    answers = [line for line in block.splitlines() if line.startswith(("{", "HTTP "))]
    return ROOT / path.group(1), content_type.group(1), answers


def _post(base_url: str, path: Path, content_type: str) -> httpx.Response:
    return httpx.post(f"{base_url}/v1/traces", content=path.read_bytes(), headers={"content-type": content_type}, timeout=30)


def _local(block: str, base_url: str) -> str:
    """``block`` sent to the test's service instead of the one at the page's address."""
    return block.replace("http://127.0.0.1:8000", base_url)


@pytest.fixture
def token_url(store: Trail, graph: Graph, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The service with one actor token, and that token."""
    path = tmp_path / "tokens.json"
    token = issue_token(path, "agent-1", Role.ACTOR)
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield url, token


def test_the_sdk_example_records_the_plan_the_page_describes(token_url: tuple[str, str], store: Trail) -> None:
    url, token = token_url
    code = _local(
        example(PAGE, "import json\n\nfrom opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter"), url
    )
    assert '"Bearer dt_..."' in code
    code = code.replace('"Bearer dt_..."', f'"Bearer {token}"')
    # The SDK gives up on an export after 10 seconds: too short for a first import on a loaded test machine.
    code = code.replace("OTLPSpanExporter(\n", "OTLPSpanExporter(\n            timeout=120,\n", 1)
    exec(compile(code, PAGE, "exec"), {})

    (plan_id,) = plan_ids(store)
    assert reading.get_plan(store, plan_id, LOCAL).description == "Plan a trip"
    by_id = {d.decision_id: d for d in reading.list_decisions(store, plan_id, principal=LOCAL)}
    under = {(d.decision_type.value, d.chosen_option) for d in by_id.values() if d.parent_decision_id is not None}
    tool = next(option for kind, option in under if kind == "tool_invocation")

    # "a plan 'Plan a trip' whose strategy_choice 'planner' has the plan span's strategy_choice below
    # it (...chosen: 'Search flights, then book the cheapest'), and the tool_invocation search_flights
    # below that; the chat span is kept out"
    assert under == {
        ("strategy_choice", "planner"),
        ("strategy_choice", "Search flights, then book the cheapest"),
        ("tool_invocation", tool),
    }
    assert tool.startswith("search_flights")
    plan_span = next(d for d in by_id.values() if d.chosen_option == "Search flights, then book the cheapest")
    assert plan_span.question == "How does planner go about: Plan a trip?"
    assert by_id[plan_span.parent_decision_id].chosen_option == "planner"
    tool_decision = next(d for d in by_id.values() if d.chosen_option == tool)
    assert tool_decision.parent_decision_id == plan_span.decision_id


def test_the_import_session_prints_what_the_page_shows(cli: Cli) -> None:
    session = example(PAGE, "$ decisiontrail import otlp docs/examples/otlp-trace.json")
    printed = ""
    for line in session.splitlines():
        if line.startswith("$ "):
            command = line.removeprefix("$ decisiontrail ").split()
            if command[0] == "tree":  # the page's plan id is its own import's: ours is the first plan printed
                plans = re.findall(r"^  plan (\w{26})$", printed, flags=re.MULTILINE)
                command = ["tree", plans[0]]
            said = cli.run(*command)
            assert said.code == 0, said.err
            printed += line[:2] + "decisiontrail " + " ".join(command) + "\n" + said.out

    shown, got = numbered(session).splitlines(), numbered(printed).splitlines()
    assert len(got) == len(shown), printed
    for want, line in zip(shown, got, strict=True):
        if want.endswith("..."):  # the page cuts a long line
            assert line.startswith(want.removesuffix("...")), (want, line)
        else:
            assert line == want


def test_the_otlp_curl_example_answers_as_shown(base_url: str, store: Trail) -> None:
    path, content_type, answers = _curl(
        example(
            PAGE,
            "$ curl -s http://127.0.0.1:8000/v1/traces -H 'content-type: application/json' \\\n    --data-binary @docs/examples/otlp-trace.json",
        )
    )

    answer = _post(base_url, path, content_type)

    assert answer.status_code == 200 and [answer.json()] == [json.loads(a) for a in answers]


def test_the_otlp_curl_after_the_cli_import_is_refused_as_shown(base_url: str, cli: Cli) -> None:
    path, content_type, answers = _curl(
        example(
            PAGE,
            "$ curl -s http://127.0.0.1:8000/v1/traces -H 'content-type: application/json' \\\n"
            "    --data-binary @docs/examples/otlp-trace.json -w '\\nHTTP %{http_code}\\n'",
        )
    )
    assert cli.run("-q", "import", "otlp", str(path)).code == 0

    answer = _post(base_url, path, content_type)

    body, status = answers
    assert status == f"HTTP {answer.status_code}"
    shown, got = json.loads(body), answer.json()
    login = re.search(r"\((cli:[^)]+)\)", got["message"])
    assert login is not None, got
    assert got | {"message": got["message"].replace(login.group(1), "cli:ana")} == shown


def _imported(cli: Cli) -> tuple[str, int]:
    """The OTLP file's top plan, and how many decisions and plans its hierarchy holds."""
    said = cli.run("-q", "import", "otlp", TRACE)
    assert said.code == 0, said.err
    plans = re.findall(r"^  plan (\w{26})$", said.out, flags=re.MULTILINE)
    decisions = re.search(r"into (\d+) plan\(s\) and (\d+) decision\(s\)", said.out)
    assert decisions is not None, said.out
    return plans[0], int(decisions.group(1)) + int(decisions.group(2))


def _lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip()]


def test_the_prov_example_writes_a_document_prov_reads(base_url: str, cli: Cli) -> None:
    plan, _ = _imported(cli)
    written, fetched, read = _lines(
        _local(example(PAGE, 'decisiontrail export --hierarchy "$PLAN" --format prov.json -o plan.prov.json'), base_url)
    )
    env = {"PLAN": plan, "TOKEN": ""}

    assert cli.shell(written, **env).code == 0
    by_the_cli = (cli.cwd / "plan.prov.json").read_bytes()
    said = cli.shell(fetched, **env)
    assert said.code == 0, said.err
    assert json.loads((cli.cwd / "plan.prov.json").read_bytes()) == json.loads(by_the_cli)
    said = cli.shell(read, **env)

    assert said.code == 0, said.err
    assert said.out.startswith("document") and f"dt:plan/{plan}" in said.out


def test_the_gexf_example_writes_a_file_networkx_reads(base_url: str, cli: Cli) -> None:
    plan, nodes = _imported(cli)
    written, fetched, read = _lines(
        _local(
            example(PAGE, 'decisiontrail export --hierarchy "$PLAN" --format gexf -o plan.gexf      # then File > Open in Gephi'),
            base_url,
        )
    )
    env = {"PLAN": plan, "TOKEN": ""}

    assert cli.shell(written, **env).code == 0
    by_the_cli = nx.read_gexf(cli.cwd / "plan.gexf")
    assert cli.shell(fetched, **env).code == 0
    said = cli.shell(read, **env)

    assert said.code == 0, said.err
    assert said.out == f"{nodes} nodes\n" and by_the_cli.number_of_nodes() == nodes


def test_the_dataset_examples_give_one_example_a_correction(api: httpx.Client, cli: Cli, store: Trail) -> None:
    plan, _ = _imported(cli)
    strategy = next(
        d for d in reading.list_decisions(store, plan, principal=LOCAL) if d.chosen_option == "canary to 5% of traffic, then all"
    )
    attempt = correct(
        store, strategy.decision_id, "revert", "Blue-green instead", "the canary hid the errors", principal=LOCAL
    ).attempt

    said = cli.run(
        *example(
            PAGE, "decisiontrail export corrections --project billing -o corrections.jsonl     # --format jsonl is the default"
        )
        .split("#")[0]
        .split()[1:]
    )
    assert said.code == 0, said.err
    rows = [json.loads(line) for line in (cli.cwd / "corrections.jsonl").read_text(encoding="utf-8").splitlines()]
    answer = run_graphql(api, example(PAGE, "query Dataset($plan: ID!) {"), plan=plan)

    assert [sorted(r) for r in rows] == [["expected_output", "input", "metadata"]]
    # What the tools' block reads of each row.
    assert rows[0]["metadata"]["attempt_id"] == attempt.attempt_id
    assert rows[0]["expected_output"]["guidance"] == "Blue-green instead"
    assert [r["record"] for r in answer["correctionDataset"]] == rows
    (typed,) = answer["plan"]["correctionExamples"]
    assert typed["input"]["chosenOption"] == strategy.chosen_option
    assert typed["expectedOutput"]["reason"] == "the canary hid the errors"
    metadata = typed["metadata"]
    assert (metadata["attemptId"], metadata["attemptNumber"], metadata["planId"]) == (attempt.attempt_id, 1, plan)
    assert metadata["invalidatedDecisionCount"] == len(attempt.invalidated_decision_ids)
