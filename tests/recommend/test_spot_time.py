"""A spot run's time in parts, as the engine hands it on: the training, what interruptions add on
machines (billed), and the wait for capacity (not billed); the three make the mean wall time."""

from __future__ import annotations

import pytest

from advisor.recommend import spot
from advisor.recommend.report import as_json
from tests.recommend.test_fallback import HOUR, V100, V100_SPOT, ranked


def options_by_pricing(deadline_hours: float):  # type: ignore[no-untyped-def]
    rec = ranked([V100, V100_SPOT], deadline_hours)
    return rec, {o.rentable.pricing: o for o in rec.options}


def test_on_demand_time_is_all_training() -> None:
    _, kinds = options_by_pricing(40)
    result = kinds["on_demand"].outcome
    assert result.training_seconds == result.machine_seconds
    assert result.machine_seconds == (result.p50_seconds, result.p90_seconds)
    assert result.expected_wait_seconds == 0.0 and result.expected_delay_seconds == 0.0


def test_spot_wall_is_training_plus_interruptions_plus_wait() -> None:
    _, kinds = options_by_pricing(40)
    result = kinds["spot"].outcome
    prediction = result.prediction
    training = spot.mean_work(prediction.seconds, prediction.log_sigma, spot.SAMPLES)
    assert result.training_seconds[0] == pytest.approx(prediction.seconds)
    assert result.expected_preemptions > 5  # the V100 traces: interrupted often
    assert result.expected_delay_seconds > 0.1 * HOUR  # lost work and restarts, on machines
    assert result.expected_wait_seconds > HOUR  # capacity is often not there
    assert result.expected_seconds == pytest.approx(
        training + result.expected_delay_seconds + result.expected_wait_seconds, rel=1e-9
    )
    # the time on machines (what is billed) leaves the waits out
    assert result.training_seconds[0] < result.machine_seconds[0] < result.p50_seconds


def test_a_fallback_plan_says_how_long_it_waits() -> None:
    _, kinds = options_by_pricing(40)
    result = kinds["spot_fallback"].outcome
    assert result.expected_wait_seconds > 0  # it waits for spot while ahead of its line
    assert result.machine_seconds[0] <= result.p50_seconds
    assert result.expected_delay_seconds > 0


def test_json_adds_the_parts_and_keeps_the_old_keys() -> None:
    rec, _ = options_by_pricing(40)
    row = next(r for r in as_json(rec)["options"] if r["pricing"] == "spot")
    for key in ("training_hours", "training_hours_p90", "machine_hours", "machine_hours_p90",
                "expected_delay_hours", "expected_wait_hours", "spot_risk_stand_in"):  # fmt: skip
        assert key in row
    assert row["predicted_hours"] > row["machine_hours"] > row["training_hours"]
    assert row["spot_risk_stand_in"] is None  # V100 on AWS: measured there
