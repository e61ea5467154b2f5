"""``--data SIZE`` (``advisor.recommend.staging.parse_size``): any text is a size within bounds or
one short usage error, never another exception."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from advisor.errors import UsageError
from advisor.recommend.staging import MAX_DATA_BYTES, parse_size
from tests.fuzz.strategies import FUZZ

PIECES = st.sampled_from(["0", "1", "150", "9" * 20, ".", "5", "GB", "TiB", "b", "PB", "k", " ",
                          "-", "e", "\u0663", "\n", "nan", "inf", "GiB", "xb"])  # fmt: skip


@FUZZ
@given(st.one_of(st.text(max_size=30), st.lists(PIECES, max_size=12).map("".join)))
def test_parse_size(text: str) -> None:
    try:
        size = parse_size(text)
    except UsageError as exc:
        assert len(str(exc)) < 300 and "\n" not in str(exc).replace(text[:60], "")
        return
    assert math.isfinite(size) and 0 < size <= MAX_DATA_BYTES
