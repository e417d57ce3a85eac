"""The per-request GraphQL context: the store and this request's DataLoaders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from starlette.concurrency import run_in_threadpool
from strawberry.dataloader import DataLoader

from decisiontrail.access import Principal
from decisiontrail.events import EventBus
from decisiontrail.domain import Decision, Plan
from decisiontrail.graphdb import DecisionStore

T = TypeVar("T")
K = TypeVar("K")


async def in_thread(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run a blocking store call off the event loop."""
    return await run_in_threadpool(function, *args, **kwargs)


def _loader(batch: Callable[[list[str]], Sequence[T]]) -> DataLoader[str, T]:
    async def load(keys: list[str]) -> Sequence[T]:
        return await in_thread(batch, list(keys))

    return DataLoader(load_fn=load)


@dataclass
class Context:
    """Built once per request, so a loader's cache never outlives the request."""

    store: DecisionStore
    principal: Principal | None = None
    events: EventBus | None = None
    decisions: DataLoader[str, Decision | None] = field(init=False)
    plans: DataLoader[str, Plan | None] = field(init=False)
    children: DataLoader[str, list[str]] = field(init=False)
    child_plans: DataLoader[str, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        # Each batch function is one UNWIND query answering one slot per key, in key order.
        self.decisions = _loader(self.store.get_decisions)
        self.plans = _loader(self.store.get_plans)
        self.children = _loader(self.store.children_of)
        self.child_plans = _loader(self.store.child_plans_of)
