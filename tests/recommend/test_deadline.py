"""Deadlines as people type them, and their canonical spelling."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.errors import UsageError
from advisor.recommend.deadline import (
    MAX_SECONDS,
    describe_seconds,
    format_duration,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("8h", 8 * 3600),
        ("90m", 5400),
        ("2d", 2 * 86400),
        ("1h30m", 5400),
        ("45s", 45),
        ("1d12h", 36 * 3600),
        ("1d2h3m4s", 86400 + 7200 + 180 + 4),
        (" 8H ", 8 * 3600),
    ],
)
def test_accepted_forms(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "8", "h", "8x", "1.5h", "-1h", "30m1h", "1h1h", "8 hours", "0h", "0s", "1h 30", "PT8H"],
)
def test_junk_is_a_usage_error_that_says_what_is_accepted(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_duration(text)
    assert "1h30m" in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("text", ["366d", "99999999999999999999d", "1" * 5000 + "s", "8760h1s"])
def test_longer_than_a_year_is_a_short_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_duration(text)
    assert len(str(caught.value)) < 200
    assert parse_duration("365d") == MAX_SECONDS


def test_canonical_spelling() -> None:
    assert format_duration(5400) == "1h30m"
    assert format_duration(36 * 3600) == "1d12h"
    assert format_duration(45) == "45s"
    with pytest.raises(ValueError):
        format_duration(0)


@given(st.integers(min_value=1, max_value=MAX_SECONDS))
def test_parse_inverts_format(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@given(
    st.tuples(
        *(st.one_of(st.none(), st.integers(0, top)) for top in (300, 1000, 10**4, 10**4))
    ).filter(lambda parts: any(parts))
)
def test_format_of_parse_is_canonical(parts: tuple[int | None, ...]) -> None:
    text = "".join(f"{n}{u}" for n, u in zip(parts, "dhms", strict=True) if n is not None)
    seconds = parse_duration(text)
    assert seconds == sum(
        (n or 0) * size for n, size in zip(parts, (86400, 3600, 60, 1), strict=True)
    )
    canonical = format_duration(seconds)
    assert parse_duration(canonical) == seconds
    assert format_duration(parse_duration(canonical)) == canonical


@given(st.text(alphabet="0123456789dhmsx.:- ", max_size=12))
def test_anything_else_is_rejected_or_a_valid_duration(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except UsageError:
        return
    assert seconds > 0
    assert parse_duration(format_duration(seconds)) == seconds


def test_describe_seconds() -> None:
    assert describe_seconds(42) == "42 s"
    assert describe_seconds(1020) == "17 min"
    assert describe_seconds(5.2 * 3600) == "5.2 h"
    assert describe_seconds(3.1 * 86400) == "3.1 d"
