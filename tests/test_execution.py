"""Fields completed directly (schema/execution.py) answer exactly as graphql-core's usual steps do."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import strawberry
from graphql.execution.collect_fields import FieldDetails
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types import Info

from decisiontrail.access import LOCAL, Principal, Role
from decisiontrail.api import schema
from decisiontrail.domain import DecisionType
from decisiontrail.schema.context import Context
from decisiontrail.schema.execution import DirectFieldsExecutionContext, direct_read
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from factories import decision


@contextmanager
def usual_steps(target: strawberry.Schema) -> Iterator[None]:
    """``target`` executed by strawberry's own execution context."""
    target.execution_context_class = StrawberryGraphQLCoreExecutionContext
    try:
        yield
    finally:
        target.execution_context_class = DirectFieldsExecutionContext


def both(target: strawberry.Schema, text: str, context: Callable[[], Any] = lambda: None, **kwargs: Any) -> tuple[Any, Any]:
    """(data, errors) directly, then by the usual steps (each with a context of its own: its loaders are its own)."""
    assert target.execution_context_class is DirectFieldsExecutionContext
    direct = asyncio.run(target.execute(text, context_value=context(), **kwargs))
    with usual_steps(target):
        usual = asyncio.run(target.execute(text, context_value=context(), **kwargs))
    errors = [(e.message, e.path) for e in direct.errors or []]
    assert errors == [(e.message, e.path) for e in usual.errors or []]
    assert direct.data == usual.data
    return direct.data, errors


def test_the_service_schema_completes_fields_directly() -> None:
    assert schema.execution_context_class is DirectFieldsExecutionContext
    graphql_schema = schema._schema
    assert direct_read(graphql_schema, "Decision", "id") is not None
    assert direct_read(graphql_schema, "Decision", "children") is not None  # an outline's children, from the object
    assert direct_read(graphql_schema, "Plan", "tree") is None  # arguments
    assert direct_read(graphql_schema, "Decision", "checkpointGroup") is None  # async


@strawberry.type(name="Decision")
class OtherDecision:
    @strawberry.field
    def id(self, info: Info) -> str:  # takes info: read directly, with it
        return "x"


@strawberry.type(name="Query")
class OtherQuery:
    decision: OtherDecision


def test_what_is_read_directly_is_worked_out_per_schema() -> None:
    """Two schemas with a type of the same name keep their own plans."""
    other = strawberry.Schema(query=OtherQuery)
    ours, theirs = direct_read(schema._schema, "Decision", "id"), direct_read(other._schema, "Decision", "id")
    assert ours is not None and theirs is not None
    assert not ours.wants_info and theirs.wants_info


QUERIES = {
    "tree": """query($id: ID!) { plan(id: $id) { id tree { depth decision {
        __typename id decisionType phase status sequenceNumber supersededById parentDecisionId
        children { id planId dependsOn { id decisionType children { id } } }
        dependsOn { id } } } } }""",
    "aliases, fragments and directives": """query($id: ID!, $yes: Boolean!, $no: Boolean!) { plan(id: $id) {
        tree { decision { ...Ids  same: id kind: decisionType question @include(if: $no) ... on Decision { phase }
          children @skip(if: $no) { ...Ids alternativesConsidered } } } } }
        fragment Ids on Decision { id sequenceNumber @include(if: $yes) }""",
    "whole records": """query($id: ID!) { plan(id: $id) { decisions(first: 50) { edges { node {
        id question chosenOption alternativesConsidered confidenceScore rationale createdAt isCorrection
        contextSnapshot { hotContextHash hotContextRef actorStateRef { threadId checkpointId } }
        children { id } dependsOn { id question } } } } } }""",
}


@pytest.fixture
def plan(store: Trail) -> str:
    mine, root = instantiate_plan(store, "ann's plan", owner="ann", principal=LOCAL)
    bobs, bob_root = instantiate_plan(store, "bob's plan", owner="bob", principal=LOCAL)
    theirs = recording_service.record(
        store, decision(bobs.plan_id, DecisionType.STRATEGY_CHOICE, bob_root.decision_id), principal=LOCAL
    )
    strategy = recording_service.record(
        store, decision(mine.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    previous = strategy
    for i in range(12):
        previous = recording_service.record(
            store,
            decision(
                mine.plan_id,
                DecisionType.RESOURCE_SELECTION,
                (strategy if i % 3 else root).decision_id,
                question=f"q{i}?",
                depends_on=(previous.decision_id,) + ((theirs.decision_id,) if i == 5 else ()),
            ),
            principal=LOCAL,
        )
    correct(store, previous.decision_id, "revert", "again", "wrong", principal=LOCAL)
    return mine.plan_id


@pytest.mark.parametrize("principal", [LOCAL, Principal("ann", Role.ACTOR)], ids=["admin", "ann"])
@pytest.mark.parametrize("name", QUERIES)
def test_a_query_answers_as_by_the_usual_steps(store: Trail, plan: str, principal: Principal, name: str) -> None:
    data, errors = both(
        schema,
        QUERIES[name],
        lambda: Context(trail=store, principal=principal),
        variable_values={"id": plan, "yes": True, "no": False},
    )
    assert errors == []
    assert data["plan"] is not None and len(str(data)) > 500  # a real answer, compared in full above


WALKS = {
    "ids": """query($d: ID!) { lineage(decisionId: $d) { decisions { id } plans { id } }
        impact(decisionId: $d) { decisions { id } plans { id } } }""",
    "ids with typenames and aliases": """query($d: ID!) { lineage(decisionId: $d) {
        decisions { __typename key: id id } plans { ...P } } }
        fragment P on Plan { id __typename }""",
    "more than ids": """query($d: ID!) { lineage(decisionId: $d) { decisions { id question } plans { id description } } }""",
}


@pytest.mark.parametrize("principal", [LOCAL, Principal("ann", Role.ACTOR)], ids=["admin", "ann"])
@pytest.mark.parametrize("name", WALKS)
def test_a_walk_answers_as_by_the_usual_steps(store: Trail, plan: str, principal: Principal, name: str) -> None:
    """A walk's ids answer a selection of ids without an object built for each (``Identities``);
    the usual steps build every object and read its id."""
    current = [
        d
        for d in reading.list_decisions(store, plan, principal=LOCAL)
        if d.decision_type is DecisionType.RESOURCE_SELECTION and d.superseded_by is None
    ]
    deepest = max(current, key=lambda d: d.sequence_number or 0)  # its dependencies reach back to bob's plan
    data, errors = both(
        schema, WALKS[name], lambda: Context(trail=store, principal=principal), variable_values={"d": deepest.decision_id}
    )
    assert errors == []
    assert len(data["lineage"]["decisions"]) > 5 and data["lineage"]["plans"]  # a real answer, compared in full above


# -- a schema of its own, for what the service's schema never does ---------------------------


@strawberry.type
class Item:
    name: str
    note: str | None = None
    failing_reads: strawberry.Private[bool] = False

    @strawberry.field
    def upper(self) -> str:
        if self.failing_reads:
            raise ValueError(f"cannot read {self.name}")
        return self.name.upper()

    @strawberry.field
    def required(self) -> str:
        return None  # type: ignore[return-value]  # a bug: a null where the schema allows none

    @strawberry.field
    def siblings(self, info: Info) -> list[Item]:
        return [Item(name=f"{self.name}.{i}") for i in range(2)]

    @strawberry.field
    def path(self, info: Info) -> str:
        return ".".join(str(key) for key in info.path.as_list())


@strawberry.type
class Query:
    @strawberry.field
    def items(self, failing: bool = False) -> list[Item | None]:
        return [Item(name=f"item{i}", note=None if i % 2 else "n", failing_reads=failing and i == 1) for i in range(3)]

    @strawberry.field
    def one(self) -> Item | None:
        return Item(name="one")


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def ticks(self, count: int) -> AsyncGenerator[Item, None]:
        for i in range(count):
            yield Item(name=f"tick{i}")


own = strawberry.Schema(query=Query, subscription=Subscription, execution_context_class=DirectFieldsExecutionContext)


def test_a_read_that_raises_is_reported_where_the_usual_steps_report_it() -> None:
    data, errors = both(own, "{ items(failing: true) { name upper siblings { name upper } } }")
    assert errors == [("cannot read item1", ["items", 1, "upper"])]
    assert data["items"][1] is None  # the error took its non-null item, as graphql-core decides


def test_a_null_where_none_is_allowed_is_the_usual_error() -> None:
    data, errors = both(own, "{ one { name required } }")
    assert data == {"one": None}
    assert errors and errors[0][1] == ["one", "required"]


def test_nested_lists_aliases_and_typenames() -> None:
    data, _ = both(own, "{ items { a: name n: note __typename siblings { __typename name s: siblings { name } } } }")
    assert data["items"][2]["siblings"][1]["s"][0]["name"] == "item2.1.0"


def test_a_read_that_looks_at_its_info_sees_its_own_path() -> None:
    # Directly, a path is made only when a read looks at its info: it must be the one the usual steps give.
    data, _ = both(own, "{ items { path siblings { path s: siblings { path } } } }")
    assert data["items"][2]["siblings"][1]["s"][0]["path"] == "items.2.siblings.1.s.0.path"


class CountResolves(SchemaExtension):
    count = 0

    def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        CountResolves.count += 1
        return _next(root, info, *args, **kwargs)


watched = strawberry.Schema(query=Query, extensions=[CountResolves], execution_context_class=DirectFieldsExecutionContext)


def test_an_extension_that_sees_every_field_still_sees_every_field() -> None:
    CountResolves.count = 0
    asyncio.run(watched.execute("{ items { name upper } }"))
    directly = CountResolves.count
    CountResolves.count = 0
    with usual_steps(watched):
        asyncio.run(watched.execute("{ items { name upper } }"))
    assert directly == CountResolves.count == 1 + 3 * 2


def test_a_subscription_holds_no_more_for_the_events_it_has_delivered() -> None:
    """Each event is executed by a copy of the subscription's executor (graphql-core's
    ``build_per_event_executor``), a shallow one: what each event worked out about its selection,
    remembered on the shared executor, was kept for as long as the subscription lasted (several
    objects per event and subscriber, which every full collection then walked)."""

    async def deliver(count: int) -> tuple[int, int]:
        """Events delivered, and FieldDetails alive while the subscription still is."""
        stream = await own.subscribe("subscription { ticks(count: %d) { name upper s: siblings { name } } }" % count)
        assert not isinstance(stream, strawberry.types.ExecutionResult), stream.errors
        delivered = 0
        async for result in stream:
            assert not result.errors and result.data["ticks"]["s"][1]["name"] == f"tick{delivered}.1"
            delivered += 1
            if delivered == count:
                break  # the subscription is alive: its generator not yet done
        gc.collect()
        alive = sum(1 for o in gc.get_objects() if type(o) is FieldDetails)
        await stream.aclose()
        return delivered, alive

    few, many = asyncio.run(deliver(5)), asyncio.run(deliver(200))
    assert (few[0], many[0]) == (5, 200)
    assert many[1] - few[1] < 10  # it was 5 more for each event
