"""The caller as the API sees it (``viewer``): its name, role, project and what its role allows."""

from __future__ import annotations

import strawberry

from decisiontrail.access import ALLOWED, Action, Principal, Role

ViewerRole = strawberry.enum(Role, name="Role", description="A token's role: what it may do (docs/graphql.md, Access).")
ViewerAction = strawberry.enum(
    Action,
    name="Action",
    description="What a role may do: READ, RECORD (decisions and plans), REVIEW, CORRECT, CONFIGURE (invariant sets, the store's jobs, the audit trail).",
)


@strawberry.type(description="Who the request's token is, and what its role allows it.")
class Viewer:
    name: str = strawberry.field(description="The token's name (local when no tokens are configured).")
    role: ViewerRole  # type: ignore[valid-type]
    project: str | None = strawberry.field(description="The project the token is limited to; null for every project.")
    may: list[ViewerAction] = strawberry.field(  # type: ignore[valid-type]
        description="The actions its role allows, in a fixed order (READ, RECORD, REVIEW, CORRECT, CONFIGURE)."
    )

    @classmethod
    def of(cls, principal: Principal) -> Viewer:
        allowed = ALLOWED[principal.role]
        return cls(name=principal.name, role=principal.role, project=principal.project, may=[a for a in Action if a in allowed])
