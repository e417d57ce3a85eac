"""The per-request GraphQL context: the store and this request's DataLoaders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from starlette.concurrency import run_in_threadpool
from strawberry.dataloader import DataLoader

from decisiontrail.access import Principal
from decisiontrail.events import EventBus
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.domain import Decision, Plan
from decisiontrail.graphdb import DecisionStore

T = TypeVar("T")
K = TypeVar("K")


async def in_thread(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run a blocking store call off the event loop."""
    return await run_in_threadpool(function, *args, **kwargs)


def _loader(batch: Callable[[list[str]], Sequence[T]]) -> DataLoader[str, T]:
    async def load(keys: list[str]) -> Sequence[T]:
        from decisiontrail.resolvers.errors import client_error  # errors imports this module

        try:
            return await in_thread(batch, list(keys))
        except DecisionTrailError as e:
            # As ``call`` does: an expected failure (Neo4j unavailable, ...) keeps its code, not masked.
            raise client_error(e) from e

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
        # What the principal may not see is answered as missing, so no relation leads to it.
        self.decisions = _loader(self._visible_decisions)
        self.plans = _loader(self._visible_plans)
        self.children = _loader(self.store.children_of)
        self.child_plans = _loader(self.store.child_plans_of)

    @property
    def caller(self) -> str:
        """Who is asking, as corrections and review resolutions record it: the token's name."""
        return self.principal.name if self.principal is not None else "anonymous"

    @property
    def owner_filter(self) -> str | None:
        """The owner an actor is limited to; None for roles that see every plan."""
        return self.principal.owner_scope if self.principal is not None else None

    @property
    def project_filter(self) -> str | None:
        """The project the token is limited to; None for a token that sees every project."""
        return self.principal.project if self.principal is not None else None

    @property
    def limited(self) -> bool:
        """Whether some plans are hidden from this principal (its role or its project)."""
        return self.owner_filter is not None or self.project_filter is not None

    def _visible_plans(self, plan_ids: list[str]) -> list[Plan | None]:
        plans = self.store.get_plans(plan_ids)
        if not self.limited or self.principal is None:
            return plans
        sees = self.principal.sees
        return [p if p is not None and sees(p.owner, p.project) else None for p in plans]

    def _visible_decisions(self, decision_ids: list[str]) -> list[Decision | None]:
        decisions = self.store.get_decisions(decision_ids)
        if not self.limited:
            return decisions
        plan_ids = sorted({d.plan_id for d in decisions if d is not None})
        visible = {p.plan_id for p in self._visible_plans(plan_ids) if p is not None}
        return [d if d is not None and d.plan_id in visible else None for d in decisions]
