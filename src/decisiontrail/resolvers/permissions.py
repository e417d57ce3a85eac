"""Field permissions: every operation needs a known caller. What its role may do is the service's to
judge (``services.visibility.require_role``), with the same FORBIDDEN whichever entry point asks."""

from __future__ import annotations

from typing import Any

from strawberry.permission import BasePermission
from strawberry.types import Info

from decisiontrail.schema.errors import unauthenticated


class Authenticated(BasePermission):
    """The request has a caller (a valid bearer token, or any local caller when no tokens are configured)."""

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        if info.context.principal is None:
            raise unauthenticated()
        return True
