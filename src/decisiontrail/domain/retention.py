"""Retention (ADR-007 Risks): which superseded history a prune removes, and what a prune reports.

A prune removes history nobody works on any more: decisions superseded before the cutoff in
plans that reached Apply, and child plans invalidated before the cutoff under a plan that
reached Apply, with what only they used (the marker of a trace whose last plan goes among it).
Correction attempts are never pruned. A prune also expires the OTLP spans that have waited
longer than the trace wait for a root span that never came.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from decisiontrail.domain.decision import Phase, UtcDatetime
from decisiontrail.exceptions import ValidationFailed

PRUNABLE_PHASE = Phase.APPLY
"""History is pruned only under plans in this phase: their work is done and will not be replayed."""

_AGE = re.compile(r"^\s*(\d+)\s*([wdhm]?)\s*$")
_UNITS = {"w": timedelta(weeks=1), "d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}

TRACE_WAIT = timedelta(days=7)
"""How long spans wait for their trace's root before a prune deletes them (DECISIONTRAIL_TRACE_WAIT):
an exporter sends a trace's spans within seconds of each other, so a week is a trace whose root
will not come, and leaves a lost service days to come back and send it."""


def parse_age(text: str, *, name: str = "older_than") -> timedelta:
    """An age as people write it: ``30d``, ``2w``, ``12h``, ``90m``, or a number of days; refused naming ``name``.

    >>> parse_age("12h")
    datetime.timedelta(seconds=43200)
    >>> parse_age("soon", name="DECISIONTRAIL_TRACE_WAIT")
    Traceback (most recent call last):
    ...
    decisiontrail.exceptions.ValidationFailed: DECISIONTRAIL_TRACE_WAIT: 'soon' is not an age; write a whole number with w, d, h or m, e.g. 30d
    """
    match = _AGE.match(text)
    if match is None:
        raise ValidationFailed(f"{name}: {text!r} is not an age; write a whole number with w, d, h or m, e.g. 30d", field=name)
    amount, unit = match.groups()
    return int(amount) * _UNITS[unit or "d"]


class RetentionPolicy(BaseModel):
    """How long superseded history of applied plans is kept, and how long spans wait for their trace's root.

    >>> policy = RetentionPolicy.parse("30d")
    >>> policy.cutoff(datetime(2026, 3, 31, tzinfo=UTC)).isoformat()
    '2026-03-01T00:00:00+00:00'
    >>> policy.spans_cutoff(datetime(2026, 3, 31, tzinfo=UTC)).isoformat()
    '2026-03-24T00:00:00+00:00'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    older_than: timedelta = Field(description="history superseded or invalidated longer ago than this is pruned")
    trace_wait: timedelta = Field(
        default=TRACE_WAIT, description="spans of a trace whose root has not come, received nothing for this long, expire"
    )

    @field_validator("older_than", "trace_wait")
    @classmethod
    def _not_negative(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        # Raised as is, not as a pydantic error: a negative age is the caller's to fix, by name.
        if value < timedelta(0):
            raise ValidationFailed(
                f"{info.field_name}: a retention age cannot be negative (got {value}); use 0 to prune all eligible history",
                field=str(info.field_name),
            )
        return value

    @classmethod
    def parse(cls, text: str, *, trace_wait: timedelta = TRACE_WAIT) -> RetentionPolicy:
        """A policy from an age as people write it: ``30d``, ``2w``, ``12h``, ``90m``, or a number of days.

        >>> RetentionPolicy.parse("2w").older_than.days
        14
        >>> RetentionPolicy.parse("-3d")
        Traceback (most recent call last):
        ...
        decisiontrail.exceptions.ValidationFailed: older_than: '-3d' is not an age; write a whole number with w, d, h or m, e.g. 30d
        """
        return cls(older_than=parse_age(text), trace_wait=trace_wait)

    def cutoff(self, now: datetime) -> datetime:
        """The moment before which superseded history goes, in UTC."""
        return _utc(now) - self.older_than

    def spans_cutoff(self, now: datetime) -> datetime:
        """The moment before which a trace still waiting for its root must have received its last span to expire, in UTC."""
        return _utc(now) - self.trace_wait


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValidationFailed("now: the prune's moment needs a time zone", field="now")
    return now.astimezone(UTC)


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

    With ``spans_cutoff``, it says which traces waiting for their root expired too:

    >>> print(PruneResult(cutoff=datetime(2026, 3, 1, tzinfo=UTC), dry_run=False, spans_cutoff=datetime(2026, 3, 24, tzinfo=UTC),
    ...                   expired_trace_ids=("T1",), expired_spans=3).render())
    nothing to prune: no superseded history of applied plans from before 2026-03-01T00:00:00+00:00
    expired 1 trace(s) whose root span never came (nothing received since 2026-03-24T00:00:00+00:00), with the 3 span(s) kept for them
    trace T1
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
    traces: int = Field(default=0, ge=0, description="markers of the OTLP traces whose last imported plans were pruned")
    spans_cutoff: UtcDatetime | None = Field(
        default=None, description="traces waiting for their root that received nothing since this expire (None: not asked)"
    )
    expired_trace_ids: tuple[str, ...] = Field(default=(), description="traces waiting for their root span, expired")
    expired_spans: int = Field(default=0, ge=0, description="the spans kept for the expired traces")

    @field_validator("decision_ids", "plan_ids", "expired_trace_ids")
    @classmethod
    def _sorted(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(ids)))

    @property
    def empty(self) -> bool:
        """Nothing to delete: no history, no expired trace."""
        return self.history_empty and not self.expired_trace_ids

    @property
    def history_empty(self) -> bool:
        return not self.decision_ids and not self.plan_ids

    def render(self) -> str:
        """The result for a terminal: a summary, then one line per pruned decision and plan and expired trace."""
        before = self.cutoff.isoformat()
        verb = "dry run: would prune" if self.dry_run else "pruned"
        if self.history_empty:
            lines = [f"nothing to prune: no superseded history of applied plans from before {before}"]
        else:
            lines = [
                f"{verb} {len(self.decision_ids)} decision(s) and {len(self.plan_ids)} plan(s) "
                f"superseded or invalidated before {before}",
                f"  with them {self.contexts} context(s), {self.checkpoint_groups} checkpoint group(s), "
                f"{self.reviews} review(s), {self.phase_changes} phase change(s)",
            ]
            if self.traces:
                lines.append(f"  and the marker of {self.traces} trace(s) they were the last plans imported from")
        if self.spans_cutoff is not None:
            since = self.spans_cutoff.isoformat()
            if self.expired_trace_ids:
                expire = "dry run: would expire" if self.dry_run else "expired"
                lines.append(
                    f"{expire} {len(self.expired_trace_ids)} trace(s) whose root span never came (nothing received "
                    f"since {since}), with the {self.expired_spans} span(s) kept for them"
                )
            else:
                lines.append(f"nothing to expire: no trace waiting for its root span went quiet before {since}")
        lines += [f"decision {d}" for d in self.decision_ids]
        lines += [f"plan {p}" for p in self.plan_ids]
        lines += [f"trace {t}" for t in self.expired_trace_ids]
        return "\n".join(lines)
