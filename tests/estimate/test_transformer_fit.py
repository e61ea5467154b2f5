"""The transformer fit: one parameter, fitted on Lambda's BERT rows only, checked on NVIDIA's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from advisor.estimate import transformer_fit
from advisor.estimate.parameters import FREE_PARAMETERS, read, shipped_calibration
from advisor.estimate.published import read_reference
from advisor.locations import shipped, shipped_data_dir


def test_the_main_refit_never_moves_the_transformer_scale() -> None:
    assert "transformer_traffic_scale" not in FREE_PARAMETERS


def test_the_fit_lowers_the_loss_and_the_shipped_scale_is_the_fit() -> None:
    rows = read_reference(shipped(transformer_fit.FIT_FILE))
    assert {row.source for row in rows} == {
        "lambda-dlbench-pytorch-v1",
        "lambda-dlbench-pytorch-v2",
    }
    base = replace(read(shipped_data_dir() / "calibration.json"), transformer_traffic_scale=1.0)
    fitted = transformer_fit.fit(rows, base)
    assert transformer_fit.loss(fitted, rows) < transformer_fit.loss(base, rows)
    assert shipped_calibration().transformer_traffic_scale == fitted.transformer_traffic_scale


def test_the_holdout_is_another_source_and_is_reported(tmp_path: Path) -> None:
    fitted_sources = {row.source for row in read_reference(shipped(transformer_fit.FIT_FILE))}
    held = read_reference(shipped(transformer_fit.HOLDOUT_FILE))
    assert {row.source for row in held}.isdisjoint(fitted_sources)
    output = tmp_path / "fit.json"
    assert transformer_fit.main(["--output", str(output)]) == 0
    report = json.loads(output.read_text())
    assert report["held_out"]["n_pairs"] == 42  # 4 + 6 rows: 12 + 30 ordered pairs
    assert report["held_out_skipped"] == {}
    assert report["held_out"]["pairwise_order_accuracy"] >= 0.9
    assert set(report["leave_one_source_out_scales"]) == {
        "lambda-dlbench-pytorch-v1",
        "lambda-dlbench-pytorch-v2",
    }


def test_the_held_out_source_meets_the_targets_and_its_interval_is_honest() -> None:
    """NVIDIA's BERT-large tables, never fitted: median <= 15%, p90 <= 35%, order >= 90%, the
    80% interval covering 70-90% (docs/BENCHMARKS.md, "Transformers"). The additive model with
    the convnet tensor-core share missed (17.9% and 42.8%)."""
    base, factor = transformer_fit.base_calibration()
    report = transformer_fit.validation(
        read_reference(shipped(transformer_fit.FIT_FILE)),
        read_reference(shipped(transformer_fit.HOLDOUT_FILE)),
        base,
        factor,
    )
    held = report["held_out"]
    assert held["median_abs_pct_error"] <= 15
    assert held["p90_abs_pct_error"] <= 35
    assert held["pairwise_order_accuracy"] >= 0.9
    assert 0.7 <= held["interval_coverage"] <= 0.9


def test_transformer_pairs_between_gpus_carry_their_own_spread() -> None:
    from advisor.estimate.validate import pair_sigma

    calibration = shipped_calibration()
    assert 0 < calibration.transformer_log_sigma < calibration.log_sigma["gpu->gpu"]
    assert pair_sigma(calibration, "gpu->gpu", "transformer") == calibration.transformer_log_sigma
    assert pair_sigma(calibration, "gpu->tpu", "transformer") == calibration.transformer_log_sigma
    assert pair_sigma(calibration, "cpu->gpu", "transformer") == calibration.log_sigma["cpu->gpu"]
    assert pair_sigma(calibration, "gpu->gpu", "conv") == calibration.log_sigma["gpu->gpu"]
