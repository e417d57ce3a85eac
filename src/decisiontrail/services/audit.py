"""Reading the audit trail: who wrote what, when, in which request (the entries ``Trail.write`` leaves)."""

from __future__ import annotations

from decisiontrail.access import Action, Principal
from decisiontrail.domain.audit import AuditEntry, AuditPage
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import audit
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_role


def audit_trail(trail: Trail, wanted: AuditPage, principal: Principal) -> list[AuditEntry]:
    """The entries ``wanted`` names, newest first, for a ``principal`` that may configure (an admin);
    one limited to a project reads only the entries whose every plan is in that project."""
    require_role(principal, Action.CONFIGURE)
    if wanted.since is not None and wanted.until is not None and wanted.since >= wanted.until:
        raise ValidationFailed(
            f"until: must be after since ({wanted.since.isoformat()}), not {wanted.until.isoformat()}", field="until"
        )
    return trail.database.read(audit.page, wanted, principal.project)
