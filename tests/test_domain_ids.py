"""ULID parsing: the one id format every decision, plan and link uses."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from decisiontrail.domain.ids import Ulid, canonical_ulid, new_ulid

VALID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
ULID_ADAPTER: TypeAdapter[str] = TypeAdapter(Ulid)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (VALID, VALID),
        (VALID.lower(), VALID),
        ("01arz3NDEKtsv4rrFFQ69G5fav", VALID),
        ("00000000000000000000000000", "00000000000000000000000000"),
        ("7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
    ],
)
def test_canonical_ulid_accepts_and_upper_cases(value: str, expected: str) -> None:
    assert canonical_ulid(value) == expected


def test_new_ulid_is_canonical_and_ordered() -> None:
    first, second = new_ulid(), new_ulid()
    assert canonical_ulid(first) == first
    assert first != second
    assert first[:10] <= second[:10]  # the time part never goes backwards


@pytest.mark.parametrize("value", ["", VALID[:25], VALID + "0", "x", VALID + " "])
def test_canonical_ulid_rejects_wrong_length(value: str) -> None:
    with pytest.raises(ValueError, match=rf"26 characters\), got {len(value)} characters"):
        canonical_ulid(value)


@pytest.mark.parametrize(
    "value",
    [
        VALID[:-1] + "U",  # not in Crockford base32
        VALID[:-1] + "I",
        VALID[:-1] + "L",
        VALID[:-1] + "O",
        VALID[:-1] + "!",
        VALID[:-1] + " ",
        VALID[:-1] + "-",
    ],
)
def test_canonical_ulid_rejects_invalid_characters(value: str) -> None:
    assert len(value) == 26
    with pytest.raises(ValueError, match="must be a ULID"):
        canonical_ulid(value)


@pytest.mark.parametrize("first", "89ABCDEFGHJKMNPQRSTVWXYZ")
def test_canonical_ulid_rejects_timestamp_overflow(first: str) -> None:
    with pytest.raises(ValueError, match="must be a ULID.*overflow"):
        canonical_ulid(first + VALID[1:])


def test_ulid_type_normalises_to_upper_case() -> None:
    assert ULID_ADAPTER.validate_python(VALID.lower()) == VALID


@pytest.mark.parametrize("value", ["not-a-ulid", VALID[:-1] + "U", "8" + VALID[1:]])
def test_ulid_type_rejects_non_ulid(value: str) -> None:
    with pytest.raises(ValidationError, match="must be a ULID"):
        ULID_ADAPTER.validate_python(value)


def test_canonical_ulid_rejects_non_ascii_letters_that_upper_case_to_ascii() -> None:
    # "ſ".upper() == "S": without an ASCII check this would pass as a valid ULID.
    with pytest.raises(ValueError, match="Crockford base32"):
        canonical_ulid("01arz3ndektſv4rrffq69g5fav")


def test_canonical_ulid_agrees_with_decoding_on_any_ascii() -> None:
    """The pattern that answers for canonical text accepts exactly what decoding accepts, and gives the same text."""
    import random
    import string

    from ulid import ULID

    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "-_ "
    # Mostly near-ULIDs (Crockford letters, either case, with one odd character now and then).
    samples = [
        "".join(rng.choice("0123456789ABCDEFGHJKMNPQRSTVWXYZ" if rng.random() < 0.97 else alphabet) for _ in range(26))
        for _ in range(5000)
    ]
    samples += [s.lower() for s in samples[:500]]
    accepted = 0
    for sample in samples:
        try:
            expected: str | None = str(ULID.from_str(sample.upper()))
        except ValueError:
            expected = None
        if expected is None:
            with pytest.raises(ValueError, match="must be a ULID"):
                canonical_ulid(sample)
        else:
            assert canonical_ulid(sample) == expected
            accepted += 1
    assert 0 < accepted < len(samples)  # both sides of the rule were exercised
