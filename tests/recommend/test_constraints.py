"""Constraints refuse non-finite or out-of-range numbers, whichever door built them."""

from __future__ import annotations

import pytest

from advisor.errors import UsageError
from advisor.recommend.recommendation import Constraints

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "fields",
    [
        {"budget_usd": NAN}, {"budget_usd": INF}, {"budget_usd": -1.0}, {"budget_usd": 0.0},
        {"deadline_seconds": NAN}, {"deadline_seconds": 1e20}, {"confidence": NAN},
        {"confidence": 1.0}, {"top": 0}, {"top": 10**20}, {"wait_usd_per_hour": -1.0},
        {"wait_usd_per_hour": NAN}, {"wait_usd_per_hour": INF},
    ],
)  # fmt: skip
def test_bad_numbers_are_usage_errors(fields: dict[str, float]) -> None:
    with pytest.raises(UsageError):
        Constraints(**fields)  # type: ignore[arg-type]


def test_sane_numbers_pass() -> None:
    assert Constraints(deadline_seconds=8 * 3600, budget_usd=200.0, confidence=0.5).top == 10
