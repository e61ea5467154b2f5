"""Billing: time rounded up to the provider's increment, never below its minimum."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.recommend.billing import PER_SECOND, billed_seconds, describe, rule_for
from pricing.offers import BillingRule


def rule(increment: int, minimum: int) -> BillingRule:
    return BillingRule("aws", "on_demand", increment, minimum, None, None, 0.0, "test")


@pytest.mark.parametrize(
    ("seconds", "increment", "minimum", "billed"),
    [
        (30, 1, 60, 60),  # AWS/GCP: per second, 60 s minimum
        (61.2, 1, 60, 62),
        (3600, 1, 60, 3600),
        (61, 60, 60, 120),  # per minute
        (120, 60, 60, 120),
        (3601, 3600, 3600, 7200),  # per hour
        (10, 3600, 0, 3600),
        (0, 1, 60, 60),
    ],
)
def test_rounding(seconds: float, increment: int, minimum: int, billed: float) -> None:
    assert billed_seconds(seconds, rule(increment, minimum)) == billed


@given(
    st.floats(min_value=0.001, max_value=1e7),
    st.sampled_from([1, 60, 3600]),
    st.sampled_from([0, 60, 600]),
)
def test_billed_covers_the_run_by_less_than_one_increment(
    seconds: float, increment: int, minimum: int
) -> None:
    billed = billed_seconds(seconds, rule(increment, minimum))
    assert billed >= minimum
    assert billed % increment == 0 or billed == minimum
    assert billed >= seconds - 1e-6 * increment
    assert billed < max(minimum, seconds) + increment


def test_missing_rule_falls_back_to_per_second_and_says_so() -> None:
    rules = {("aws", "on_demand"): rule(1, 60)}
    assert rule_for(rules, "aws", "on_demand").minimum_seconds == 60
    fallback = rule_for(rules, "lambda", "on_demand")
    assert fallback is PER_SECOND
    assert "assumed" in fallback.source
    assert billed_seconds(12.3, fallback) == 13


def test_describe() -> None:
    assert describe(rule(1, 60)) == "per second, 60 s minimum"
    assert describe(rule(3600, 0)) == "per hour"
