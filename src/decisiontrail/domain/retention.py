"""Retention (ADR-007 Risks): which superseded history a prune removes, and what a prune reports.

A prune removes history nobody works on any more: decisions superseded before the cutoff in
plans that reached Apply, and child plans invalidated before the cutoff under a plan that
reached Apply, with what only they used. Correction attempts are never pruned.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

from decisiontrail.domain.decision import Phase, UtcDatetime
from decisiontrail.exceptions import ValidationFailed

PRUNABLE_PHASE = Phase.APPLY
"""History is pruned only under plans in this phase: their work is done and will not be replayed."""

_AGE = re.compile(r"^\s*(\d+)\s*([wdhm]?)\s*$")
_UNITS = {"w": timedelta(weeks=1), "d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}


class RetentionPolicy(BaseModel):
    """How long superseded history of applied plans is kept.

    >>> policy = RetentionPolicy.parse("30d")
    >>> policy.cutoff(datetime(2026, 3, 31, tzinfo=UTC)).isoformat()
    '2026-03-01T00:00:00+00:00'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    older_than: timedelta = Field(description="history superseded or invalidated longer ago than this is pruned")

    @field_validator("older_than")
    @classmethod
    def _not_negative(cls, value: timedelta) -> timedelta:
        # Raised as is, not as a pydantic error: a negative age is the caller's to fix, by name.
        if value < timedelta(0):
            raise ValidationFailed(
                f"older_than: a retention age cannot be negative (got {value}); use 0 to prune all eligible history",
                field="older_than",
            )
        return value

    @classmethod
    def parse(cls, text: str) -> RetentionPolicy:
        """A policy from an age as people write it: ``30d``, ``2w``, ``12h``, ``90m``, or a number of days.

        >>> RetentionPolicy.parse("2w").older_than.days
        14
        >>> RetentionPolicy.parse("-3d")
        Traceback (most recent call last):
        ...
        decisiontrail.exceptions.ValidationFailed: older_than: '-3d' is not an age; write a whole number with w, d, h or m, e.g. 30d
        """
        match = _AGE.match(text)
        if match is None:
            raise ValidationFailed(
                f"older_than: {text!r} is not an age; write a whole number with w, d, h or m, e.g. 30d",
                field="older_than",
            )
        amount, unit = match.groups()
        return cls(older_than=int(amount) * _UNITS[unit or "d"])

    def cutoff(self, now: datetime) -> datetime:
        """The moment before which superseded history goes, in UTC."""
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValidationFailed("now: the prune's moment needs a time zone", field="now")
        return now.astimezone(UTC) - self.older_than


class PruneResult(BaseModel):
    """What a prune removed, or (``dry_run``) would remove: the same set either way.

    >>> result = PruneResult(cutoff=datetime(2026, 3, 1, tzinfo=UTC), dry_run=True,
    ...                      decision_ids=("D2", "D1"), plan_ids=("P1",), contexts=2)
    >>> print(result.render())
    dry run: would prune 2 decision(s) and 1 plan(s) superseded or invalidated before 2026-03-01T00:00:00+00:00
      with them 2 context(s), 0 checkpoint group(s), 0 review(s), 0 phase change(s)
    decision D1
    decision D2
    plan P1
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cutoff: UtcDatetime
    dry_run: bool
    decision_ids: tuple[str, ...] = ()
    plan_ids: tuple[str, ...] = ()
    contexts: int = Field(default=0, ge=0, description="context snapshots no remaining record captured")
    checkpoint_groups: int = Field(default=0, ge=0)
    reviews: int = Field(default=0, ge=0, description="reviews of the pruned plans")
    phase_changes: int = Field(default=0, ge=0, description="phase changes of the pruned plans")

    @field_validator("decision_ids", "plan_ids")
    @classmethod
    def _sorted(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(ids)))

    @property
    def empty(self) -> bool:
        return not self.decision_ids and not self.plan_ids

    def render(self) -> str:
        """The result for a terminal: a summary, then one line per pruned decision and plan."""
        before = self.cutoff.isoformat()
        if self.empty:
            return f"nothing to prune: no superseded history of applied plans from before {before}"
        verb = "dry run: would prune" if self.dry_run else "pruned"
        lines = [
            f"{verb} {len(self.decision_ids)} decision(s) and {len(self.plan_ids)} plan(s) "
            f"superseded or invalidated before {before}",
            f"  with them {self.contexts} context(s), {self.checkpoint_groups} checkpoint group(s), "
            f"{self.reviews} review(s), {self.phase_changes} phase change(s)",
        ]
        lines += [f"decision {d}" for d in self.decision_ids]
        lines += [f"plan {p}" for p in self.plan_ids]
        return "\n".join(lines)
