"""Pages of lists: a cursor, a bounded size and filters, as the store's Cypher takes them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.ids import canonical_ulid
from decisiontrail.exceptions import ValidationFailed

DEFAULT_PAGE = 50
MAX_PAGE = 100


def page_size(first: int | None) -> int:
    """``first`` checked against the bound: 1 to MAX_PAGE, DEFAULT_PAGE when absent."""
    if first is None:
        return DEFAULT_PAGE
    if not 1 <= first <= MAX_PAGE:
        raise ValidationFailed(f"first: a page holds 1 to {MAX_PAGE} items, not {first}", field="first")
    return first


MAX_SEARCH = 200


def search_text(search: str | None) -> str | None:
    """A search text trimmed; None when blank or absent. Refused past MAX_SEARCH characters.

    >>> search_text("  billing ")
    'billing'
    >>> search_text("   ") is None
    True
    """
    if search is None or not search.strip():
        return None
    if len(search) > MAX_SEARCH:
        raise ValidationFailed(f"search: at most {MAX_SEARCH} characters, not {len(search)}", field="search")
    return search.strip()


@dataclass(frozen=True)
class DecisionPage:
    """A page of a plan's decisions: after a sequence number, filtered."""

    first: int = DEFAULT_PAGE
    after: int | None = None
    types: tuple[DecisionType, ...] | None = None
    phases: tuple[Phase, ...] | None = None
    current: bool | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    text: str | None = None
    as_of: datetime | None = None
    """A past moment: only the decisions recorded by then, and ``current`` as they stood then."""
    count: bool = True
    """Whether to count every decision that matches (the connection's ``totalCount``): a read of all
    of them, where the page alone reads only its own."""

    def params(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "limit": self.first,
            "after": self.after,
            "types": [t.value for t in self.types] if self.types else None,
            "phases": [p.value for p in self.phases] if self.phases else None,
            "current": self.current,
            "min_confidence": self.min_confidence,
            "max_confidence": self.max_confidence,
            "created_from": self.created_from,
            "created_to": self.created_to,
            "text": self.text.lower() if self.text else None,
            "as_of": self.as_of,
        }


@dataclass(frozen=True)
class ReviewPage:
    """A page of reviews across plans: after a review id, by status, plan, and what the caller sees."""

    first: int = DEFAULT_PAGE
    after: str | None = None
    status: str | None = None
    plan_id: str | None = None
    owner: str | None = None
    project: str | None = None
    count: bool = True
    """Whether to count every review that matches (as ``DecisionPage.count``)."""
    as_of: datetime | None = None
    """Reviews as they stood then (``domain.as_of.review_as_it_stood``): created by then, the
    status filter held to each one's status then; None: now."""

    def params(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "limit": self.first,
            "after": self.after,
            "status": self.status,
            "plan_id": self.plan_id,
            "owner": self.owner,
            "project": self.project,
            "as_of": self.as_of,
        }


@dataclass(frozen=True)
class PlanPage:
    """A page of plans: after a plan id (before it, newest first), filtered by phase, by being
    top-level and by a search text."""

    first: int = DEFAULT_PAGE
    after: str | None = None
    phase: Phase | None = None
    top_level: bool | None = None
    owner: str | None = None
    project: str | None = None
    search: str | None = None
    """Kept when its description, id or project holds this, in any case."""
    has_corrections: bool | None = None
    """Kept when it holds a correction (or, False, none)."""
    has_pending_reviews: bool | None = None
    """Kept when a review of it waits for a person (or, False, none does)."""
    max_confidence: float | None = None
    """Kept when one of its current decisions has a confidence at most this: low confidence."""
    count: bool = True
    """Whether to count every plan that matches (as ``DecisionPage.count``)."""
    newest_first: bool = False
    """Newest first (the command line's ``plans``): ``after`` is then the last plan of the page
    before, and the page holds the plans older than it."""

    def params(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "limit": self.first,
            "after": self.after,
            "newest_first": self.newest_first,
            "phase": self.phase.value if self.phase else None,
            "top_level": self.top_level,
            "owner": self.owner,
            "project": self.project,
            "search": self.search.lower() if self.search else None,
            "has_corrections": self.has_corrections,
            "has_pending_reviews": self.has_pending_reviews,
            "max_confidence": self.max_confidence,
        }


# How much more a word weighs where it is found: a question says what a decision is about, its
# chosen option what it chose, its rationale (longer, and about much else) why.
FIELD_WEIGHTS = (("question", 3), ("chosen_option", 2), ("rationale", 1))


def lucene_query(text: str) -> str | None:
    r"""The full-text query that finds decisions holding every word of ``text`` (a word of it in
    any of the three fields), weighted by ``FIELD_WEIGHTS``; None when it holds no word.

    Each word is a quoted phrase, its quotes and backslashes escaped, so nothing a person types is
    read as Lucene's syntax (``a:b``, ``AND``, ``*``); within a phrase the index's analyzer splits
    it as it split the text (``rate-limit``: "rate" then "limit").

    >>> print(lucene_query('rate-limit'))
    (question:"rate-limit"^3 OR chosen_option:"rate-limit"^2 OR rationale:"rate-limit"^1)
    >>> print(lucene_query('a"b c:d'))
    (question:"a\"b"^3 OR chosen_option:"a\"b"^2 OR rationale:"a\"b"^1) AND (question:"c:d"^3 OR chosen_option:"c:d"^2 OR rationale:"c:d"^1)
    >>> lucene_query(" -- ") is None
    True
    """
    words = [w for w in text.split() if any(c.isalnum() for c in w)]
    if not words:
        return None
    phrases = ['"' + w.replace("\\", "\\\\").replace('"', '\\"') + '"' for w in words]
    return " AND ".join(
        "(" + " OR ".join(f"{field}:{phrase}^{weight}" for field, weight in FIELD_WEIGHTS) + ")" for phrase in phrases
    )


def decision_id_in(text: str) -> str | None:
    """``text`` as a decision id (a ULID, in any case), or None when it is not one.

    >>> decision_id_in(" 01arz3ndektsv4rrffq69g5fav ")
    '01ARZ3NDEKTSV4RRFFQ69G5FAV'
    >>> decision_id_in("Redis") is None
    True
    """
    try:
        return canonical_ulid(text.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class SearchHit:
    """A decision found: whether by its id, and how well its words matched (Lucene's score; 0 when
    found by id alone). Hits are ranked by id first, then score, then id: a page's last hit is where
    the next begins."""

    decision_id: str
    exact: bool
    score: float


@dataclass(frozen=True)
class DecisionSearch:
    """A page of decisions found across plans by text and id, best first, after a hit."""

    text: str
    first: int = DEFAULT_PAGE
    after: SearchHit | None = None
    plan_id: str | None = None
    owner: str | None = None
    project: str | None = None
    count: bool = True
    """Whether to count every decision found (as ``DecisionPage.count``)."""

    def params(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "limit": self.first,
            "lucene": lucene_query(self.text),
            "decision_id": decision_id_in(self.text),
            "after_exact": None if self.after is None else int(self.after.exact),
            "after_score": None if self.after is None else self.after.score,
            "after_id": None if self.after is None else self.after.decision_id,
            "plan_id": self.plan_id,
            "owner": self.owner,
            "project": self.project,
        }
