"""The nested tree: a plan's tree (plan -> decisions -> children -> dependsOn) over 1,000 decisions
through our GraphQL, against @neo4j/graphql on the same Neo4j answering the same nesting (at most
0.75x), the two answers first compared decision by decision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from bench.harness import (
    Breakdown,
    Row,
    db_hits,
    graphql,
    judged,
    side_by_side,
)
from bench.scenarios import Sizes
from decisiontrail.graphdb import Graph

TREE = """query($id: ID!) { plan(id: $id) { tree { decision { id decisionType children { id dependsOn { id } } } } } }"""


def nested_tree(graph: Graph, api: str, sizes: Sizes, progress: Callable[[str], None]) -> list[Row]:
    from bench import peer
    from bench.workload import tree_fixture

    plan_id = tree_fixture(graph, 1000)
    progress("nested tree: plan -> decisions -> children -> dependsOn over 1,000 decisions, ours and @neo4j/graphql")
    peer.install(progress)
    with (
        httpx.Client(base_url=api, timeout=120) as client,
        peer.running_peer(graph.uri, database=graph.database) as peer_url,
        httpx.Client(base_url=peer_url, timeout=120) as peer_client,
    ):
        ours_answer = graphql(client, TREE, id=plan_id)
        peer_answer = graphql(peer_client, peer.NESTED_TREE_QUERY, planId=plan_id)
        ours_tree, peer_tree = _tree_of_ours(ours_answer), _tree_of_peer(peer_answer)
        if ours_tree != peer_tree:
            differ = sorted(k for k in ours_tree.keys() | peer_tree.keys() if ours_tree.get(k) != peer_tree.get(k))
            raise RuntimeError(f"the two answers differ in {len(differ)} decisions, first {differ[:3]}")
        spent = Breakdown()
        ours, theirs = side_by_side(
            lambda: graphql(client, TREE, spent, id=plan_id),
            lambda: graphql(peer_client, peer.NESTED_TREE_QUERY, planId=plan_id),
            samples=sizes.queries,
        )
    met, interval = judged(ours, theirs, 0.75)
    return [
        Row(
            "nested tree",
            "plan -> decisions -> children -> dependsOn, 1,000 decisions",
            ours,
            theirs,
            "@neo4j/graphql on the same Neo4j",
            target="<= 0.75x",
            met=met,
            interval=interval,
            extra={"db_hits": {"ours": db_hits(graph, TREE, id=plan_id)}, "breakdown": spent.as_json(ours)},
        )
    ]


Tree = dict[str, tuple[str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]]


def _tree_of_ours(answer: dict[str, Any]) -> Tree:
    """Each decision of our answer: its type, and its children in order with their dependencies."""
    return {
        entry["decision"]["id"]: (
            entry["decision"]["decisionType"].lower(),
            tuple(c["id"] for c in entry["decision"]["children"]),
            tuple((c["id"], tuple(sorted(d["id"] for d in c["dependsOn"]))) for c in entry["decision"]["children"]),
        )
        for entry in answer["plan"]["tree"]
    }


def _tree_of_peer(answer: dict[str, Any]) -> Tree:
    """The same, from @neo4j/graphql's answer (its types as stored, lower case)."""
    return {
        d["id"]: (
            d["decisionType"].lower(),
            tuple(c["id"] for c in d["children"]),
            tuple((c["id"], tuple(sorted(x["id"] for x in c["dependsOn"]))) for c in d["children"]),
        )
        for d in answer["plans"][0]["decisions"]
    }
