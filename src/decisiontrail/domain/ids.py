"""ULID identifiers: the one id format of decisions, plans and everything that links them."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator
from ulid import ULID


_CANONICAL = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
"""What a canonical ULID looks like: a first character that keeps it within 128 bits, then Crockford base32."""


def canonical_ulid(value: str) -> str:
    """Return ``value`` as a canonical (upper-case Crockford base32) ULID, or raise ValueError.

    >>> canonical_ulid("01arz3ndektsv4rrffq69g5fav")
    '01ARZ3NDEKTSV4RRFFQ69G5FAV'
    >>> canonical_ulid("81ARZ3NDEKTSV4RRFFQ69G5FAV")
    Traceback (most recent call last):
    ...
    ValueError: must be a ULID: Timestamp value 81ARZ3NDEK is too large and will overflow 128-bits.
    """
    if not value.isascii():
        raise ValueError("must be a ULID (Crockford base32 letters and digits only)")
    if len(value) != 26:
        raise ValueError(f"must be a ULID (26 characters), got {len(value)} characters")
    upper = value.upper()
    if _CANONICAL.fullmatch(upper):  # every id the service reads or writes: no need to decode it
        return upper
    try:
        return str(ULID.from_str(upper))
    except ValueError as e:
        raise ValueError(f"must be a ULID: {e}") from None


def new_ulid() -> str:
    """A fresh ULID, ordered by creation time."""
    return str(ULID())


Ulid = Annotated[str, AfterValidator(canonical_ulid)]
