"""The decision-quality benchmark's choice and regret on a hand-made table."""

from __future__ import annotations

import pytest

from advisor.fitting.decisions import Option, decide, summary


def test_a_wrong_cheapest_choice_costs_its_measured_regret() -> None:
    options = [  # device, $/h, measured s, predicted s
        Option("K80", 1.0, 10.0, 10.0),  # cost 10 (the probe: measured = predicted)
        Option("V100", 3.0, 3.0, 2.5),  # measured cost 9, predicted 7.5
        Option("T4", 0.5, 16.0, 12.0),  # measured cost 8, predicted 6: chosen and cheapest
    ]
    decision = decide(options)
    assert decision.chosen == decision.best == "T4"
    assert decision.cheapest_right and decision.regret_pct == 0.0
    assert decision.fastest_right  # V100 is fastest both ways
    wrong = decide([options[0], options[1], Option("T4", 0.5, 20.0, 12.0)])  # T4 costs 10
    assert wrong.chosen == "T4" and wrong.best == "V100"
    assert wrong.regret_pct == pytest.approx((10 / 9 - 1) * 100)
    assert not wrong.cheapest_right


def test_the_summary_counts_right_choices_and_regret_percentiles() -> None:
    right = decide([Option("a", 1.0, 1.0, 1.0), Option("b", 1.0, 2.0, 2.0)])
    wrong = decide([Option("a", 1.0, 1.0, 1.0), Option("b", 1.0, 1.5, 0.5)])
    figures = summary([right, right, wrong])
    assert figures["cheapest_right"] == pytest.approx(2 / 3, abs=1e-4)
    assert figures["median_regret_pct"] == 0.0
    assert figures["p90_regret_pct"] == pytest.approx(40.0)  # 0, 0, 50 -> p90 interpolates
