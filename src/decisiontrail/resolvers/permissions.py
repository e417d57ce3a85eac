"""Field permissions: each operation names the action it needs; the request's principal must hold it."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError
from strawberry.permission import BasePermission
from strawberry.types import Info

from decisiontrail.access import Action
from decisiontrail.domain.decision import Phase


class _Needs(BasePermission):
    action: Action

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        principal = info.context.principal
        if principal is None:
            raise GraphQLError(
                "a bearer token is required (Authorization: Bearer <token>)", extensions={"code": "UNAUTHENTICATED"}
            )
        if not principal.may(self.action):
            raise GraphQLError(f"the {principal.role.value} role may not {self.action.value}", extensions={"code": "FORBIDDEN"})
        return True


class CanRead(_Needs):
    action = Action.READ


class CanRecord(_Needs):
    action = Action.RECORD


class CanReview(_Needs):
    action = Action.REVIEW


class CanCorrect(_Needs):
    action = Action.CORRECT


class CanConfigure(_Needs):
    action = Action.CONFIGURE


class CanChangePhase(_Needs):
    """Who may record may move a plan's phase; a reviewer may also revert it to Strategize (ADR-006's
    phase reversion, when Execute cannot proceed within the strategy)."""

    action = Action.RECORD

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        principal = info.context.principal
        if principal is not None and principal.may(Action.REVIEW) and kwargs.get("phase") is Phase.STRATEGIZE:
            return True
        return super().has_permission(source, info, **kwargs)
