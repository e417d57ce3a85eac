"""The per-request GraphQL context: the services' trail, the caller, and this request's DataLoaders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from strawberry.dataloader import DataLoader

from decisiontrail.access import Principal
from decisiontrail.domain import Decision, Plan
from decisiontrail.domain.correction import CorrectionAttempt
from decisiontrail.domain.recording import CheckpointGroup
from decisiontrail.events import EventBus
from decisiontrail.exceptions import DecisionTrailError, NotFound
from decisiontrail.schema.errors import client_error, in_thread, unauthenticated
from decisiontrail.domain.runs import PlanRun
from decisiontrail.services import Trail, reading, runs

T = TypeVar("T")


def _loader(batch: Callable[[list[str]], Sequence[T]]) -> DataLoader[str, T]:
    async def load(keys: list[str]) -> Sequence[T]:
        try:
            return await in_thread(batch, list(keys))
        except DecisionTrailError as e:
            # As ``call`` does: an expected failure (Neo4j unavailable, ...) keeps its code, not masked.
            raise client_error(e) from e

    return DataLoader(load_fn=load)


@dataclass
class Context:
    """Built once per request, so a loader's cache never outlives the request. Each loader is made
    when the request first uses it: most requests use one or two of them, or none."""

    trail: Trail
    principal: Principal | None = None
    """Who is asking, as the request's authentication found it; None for no known caller, whom every
    operation refuses (``resolvers.permissions.Authenticated``)."""

    @property
    def caller(self) -> Principal:
        """Who is asking, for the services: every operation's ``Authenticated`` permission has let
        only a known caller through (else UNAUTHENTICATED)."""
        if self.principal is None:
            raise unauthenticated()
        return self.principal

    # Each batch function is one UNWIND query answering one slot per key, in key order.
    # What the principal may not see is answered as missing, so no relation leads to it.
    @cached_property
    def decisions(self) -> DataLoader[str, Decision | None]:
        return _loader(lambda ids: reading.get_decisions(self.trail, ids, self.caller))

    @cached_property
    def plans(self) -> DataLoader[str, Plan | None]:
        return _loader(lambda ids: reading.get_plans(self.trail, ids, self.caller))

    @cached_property
    def children(self) -> DataLoader[str, list[str]]:
        return _loader(lambda ids: reading.children_of(self.trail, ids))

    @cached_property
    def child_plans(self) -> DataLoader[str, list[str]]:
        return _loader(lambda ids: reading.child_plans_of(self.trail, ids))

    @cached_property
    def corrections(self) -> DataLoader[str, list[CorrectionAttempt]]:
        return _loader(lambda ids: reading.correction_attempts_of(self.trail, ids))

    @cached_property
    def checkpoint_groups(self) -> DataLoader[str, CheckpointGroup | None]:
        return _loader(lambda ids: reading.checkpoint_groups(self.trail, ids))

    @cached_property
    def contexts(self) -> DataLoader[str, str | None]:
        return _loader(lambda hashes: reading.find_contexts(self.trail, hashes))

    @cached_property
    def runs(self) -> DataLoader[str, PlanRun | None]:
        """Each plan's newest run, by plan id (the caller has seen the plan)."""
        return _loader(lambda ids: runs.runs_of_plans(self.trail, ids))

    @cached_property
    def phase_changes(self) -> DataLoader[str, list[dict[str, Any]]]:
        return _loader(lambda ids: reading.phase_changes_of(self.trail, ids))

    def for_event(self) -> Context:
        """The same caller and trail with loaders of their own, for one event of a subscription:
        a connection's context lasts as long as the connection, and each event is read as things
        stand when it is delivered (a SUPERSEDED event's decision is superseded, though the
        RECORDED event before it read it current), holding nothing once it is sent."""
        return Context(trail=self.trail, principal=self.principal)

    def forget_reads(self) -> None:
        """Drop what the loaders made so far have read: a write is about to change it (a request's
        mutations run one after another, and each is answered as things stand after it)."""
        for loader in vars(self).values():
            if isinstance(loader, DataLoader):
                loader.clear_all()

    @property
    def events(self) -> EventBus | None:
        return self.trail.events

    @property
    def limited(self) -> bool:
        """Whether some plans are hidden from the caller (its role or its project)."""
        return self.principal is not None and self.principal.limited

    async def require_plan(self, plan_id: str) -> Plan:
        """The plan, if it exists and the caller may see it; else NOT_FOUND, as for a plan that does not exist."""
        plan = await self.plans.load(plan_id)
        if plan is None:
            raise client_error(NotFound("plan", plan_id))
        return plan

    async def require_decision(self, decision_id: str) -> Decision:
        """The decision, if it exists and the caller may see its plan; else NOT_FOUND."""
        decision = await self.decisions.load(decision_id)
        if decision is None:
            raise client_error(NotFound("decision", decision_id))
        return decision
