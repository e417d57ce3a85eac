"""Every mutation answers from what is stored after it, not from what the request read before it."""

from __future__ import annotations

from typing import Any

from strawberry.extensions import FieldExtension
from strawberry.extensions.field_extension import AsyncExtensionResolver
from strawberry.types import Info


class ReadsAfterWrite(FieldExtension):
    """Forget the request's reads before the mutation runs.

    A request's loaders keep what they read for the rest of the request (a decision asked for
    twice is read once). A mutation changes what they hold: a decision read for an earlier
    mutation's answer, still current then, may be the one this one supersedes, and its answer
    must say so. Mutations run one after another, each answered before the next begins.
    """

    async def resolve_async(self, next_: AsyncExtensionResolver, source: Any, info: Info, **kwargs: Any) -> Any:
        info.context.forget_reads()
        return await next_(source, info, **kwargs)
