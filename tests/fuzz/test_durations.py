"""Durations as typed: seconds in (0, a year], or a short UsageError."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from advisor.errors import UsageError
from advisor.recommend.deadline import MAX_SECONDS, parse_duration
from tests.fuzz.strategies import FUZZ

PIECES = st.sampled_from(["0", "1", "8", "99999999999999999999", "d", "h", "m", "s", " ", "-",
                          ".", "e", "\u0663", "\n", "nan", "inf"])  # fmt: skip


@FUZZ
@given(st.one_of(st.text(max_size=30), st.lists(PIECES, max_size=12).map("".join)))
def test_parse_duration(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except UsageError as exc:
        assert len(str(exc)) < 300 and "\n" not in str(exc).replace(text[:40], "")
        return
    assert isinstance(seconds, int) and 0 < seconds <= MAX_SECONDS
