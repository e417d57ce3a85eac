"""The ``trends`` query's resolver: a project's trends, as the caller may see them."""

from __future__ import annotations

from datetime import datetime

from strawberry.types import Info

from decisiontrail.schema.context import Context
from decisiontrail.schema.errors import call
from decisiontrail.schema.trends import Trends
from decisiontrail.services import trends as service


async def trends(
    info: Info[Context, None], project: str | None = None, since: datetime | None = None, until: datetime | None = None
) -> Trends:
    """The trends of ``project``'s plans (null: every plan the caller sees): decisions recorded at or after
    ``since`` and before ``until``, corrections and reviews made then; VALIDATION_FAILED (field ``until``)
    unless ``until`` is after ``since``. A token limited to a project asking for another gets empty trends."""
    found = await call(service.trends, info.context.trail, info.context.caller, project=project, since=since, until=until)
    return Trends.of(found)
