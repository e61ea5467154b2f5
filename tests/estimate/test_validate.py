"""Reference rows, the pairwise validation, ``advisor validate`` and the fit."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.errors import UsageError
from advisor.estimate import memory
from advisor.estimate.machine import accelerator_machine
from advisor.estimate.parameters import PRIOR, read, shipped_calibration
from advisor.estimate.steps import facts_of
from advisor.fitting import calibrate, validate
from advisor.fitting.published import read_reference
from advisor.locations import shipped
from advisor.workloads import zoo
from probes import exchange
from tests.estimate.test_probes import probe

HEADER = "source,workload,device,vcpus,cpu_family,software,precision,batch_size,epochs,metric,value,notes\n"
TINY = HEADER + (
    "lab,mnist_cnn,CPU,8,skylake,tensorflow-2.21,fp32,128,12,seconds_total,600,\n"
    "lab,mnist_cnn,K80,,,tensorflow-1.2,fp32,128,12,seconds_total,170,\n"
    "lab,mnist_cnn,V100,,,tensorflow-1.2,fp32,128,12,seconds_total,60,\n"
    "lab,my_transformer,V100,,,tensorflow-2.21,fp32,64,,samples_per_second,900,outside the zoo\n"
    "other,mnist_cnn,K80,,,tensorflow-1.2,fp32,128,12,seconds_total,9999,alone in its source\n"
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "reference.csv"
    path.write_text(text)
    return path


def test_validate_on_a_tiny_file_reports_every_ordered_pair(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["validate", "--reference", str(write(tmp_path, TINY)), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["n_pairs"] == 6  # 3 rows of one source: 3 x 2 ordered pairs
    assert report["unmodelled_rows"] == 1
    assert report["skipped_rows"] == [] and report["assumed"] == 0
    assert 0 <= report["interval_coverage"] <= 1
    assert set(report["by_source"]) == {"lab"}  # 'other' has a single row: no pair
    assert 0 <= report["pairwise_order_accuracy"] <= 1
    assert report["p90_abs_pct_error"] >= report["median_abs_pct_error"] >= 0
    assert {row["device"] for row in report["by_device"]} == {
        "CPU 8 vCPU skylake", "K80 fp32", "V100 fp32"
    }  # fmt: skip


def test_figures_the_model_predicts_exactly_give_zero_error(tmp_path: Path) -> None:
    """Across kinds a pair is the target's absolute prediction: rows at the device model's own
    figures are predicted exactly, whichever row is the source."""
    calibration = shipped_calibration()
    rows = read_reference(write(tmp_path, TINY))[:2]  # CPU and K80
    runs, _ = validate.runs_of(rows, calibration)
    cpu, k80 = (f"{run.figure(run.modelled(calibration))!r}" for run in runs)
    exact = [
        TINY.splitlines()[0],
        f"lab,mnist_cnn,CPU,8,skylake,tensorflow-2.21,fp32,128,12,seconds_total,{cpu},",
        f"lab,mnist_cnn,K80,,,tensorflow-1.2,fp32,128,12,seconds_total,{k80},",
    ]
    pairs, _ = validate.evaluate(
        read_reference(write(tmp_path, "\n".join(exact) + "\n")), calibration
    )
    assert sorted(p.kinds for p in pairs) == ["cpu->gpu", "gpu->cpu"]
    assert [round(p.abs_pct_error, 9) for p in pairs] == [0.0, 0.0]
    assert all(p.order_right for p in pairs)


def test_the_table_output_names_sources_and_skips(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--reference", str(write(tmp_path, TINY))])
    assert result.exit_code == 0, result.output
    assert "lab" in result.output and "rows not modelled: 1" in result.output


def test_the_reference_rows_are_the_one_readers_rows(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    rows = read_reference(path)
    assert [asdict(row) for row in rows] == [asdict(row) for row in exchange.read_csv(path)]
    assert [row.label for row in rows[:2]] == ["CPU 8 vCPU skylake", "K80 fp32"]
    assert rows[0].seconds_per_sample(60_000) == pytest.approx(600 / 12 / 60_000)
    bad = write(tmp_path, TINY + "lab,mnist_cnn,CPU,8,,tf,fp32,128,12,minutes,5,\n")
    with pytest.raises(UsageError, match=rf"^{bad}:7: unknown metric 'minutes'"):
        read_reference(bad)  # every error case: tests/probes/test_history.py


def test_a_file_not_in_the_format_is_a_usage_error_with_exit_2(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,2\n")
    result = CliRunner().invoke(cli, ["validate", "--reference", str(path)])
    assert result.exit_code == 2
    assert "not in the reference format" in result.output


def test_the_shipped_calibration_set_reads_completely() -> None:
    rows = read_reference(shipped("benchmarks.csv"))
    assert len(rows) == 123
    pairs, skipped = validate.evaluate(rows, shipped_calibration())
    assert skipped == {"workload outside the zoo": 9}
    assert len(pairs) > 500


def test_every_reference_gpu_run_fits_in_its_memory() -> None:
    for row in read_reference(shipped("benchmarks.csv")):
        if row.is_cpu or row.workload not in zoo.names():
            continue
        precision = "mixed" if row.precision == "mixed" else "fp32"
        machine = accelerator_machine(row.device, 1, shipped_calibration(), precision=precision)
        assert machine is not None
        facts = facts_of(zoo.get(row.workload))
        fit = memory.check(
            probe(row.workload, 1.0, batch_size=row.batch_size),
            machine,
            facts.activation_bytes_per_sample,
            facts.optimizer,
        )
        assert fit is not None and fit.fits, (row.line, row.workload, row.device, row.batch_size)


def test_the_fit_is_rerunnable_and_moves_only_what_the_data_sees(tmp_path: Path) -> None:
    reference = write(tmp_path, TINY)
    output = tmp_path / "calibration.json"
    assert calibrate.main(["--reference", str(reference), "--output", str(output)]) == 0
    fitted = read(output)
    assert "tpu_efficiency" not in fitted.fitted  # no TPU rows: stays at its prior
    assert fitted.tpu_efficiency == PRIOR.tpu_efficiency
    assert set(fitted.log_sigma) >= {"all"}
    blob = json.loads(output.read_text())
    assert blob["in_sample"]["n_rows"] == 4  # the row outside the zoo is not modelled
    assert set(blob["leave_one_source_out_by_source"]) == {"lab", "other"}


def test_a_probe_export_counts_each_run_once_and_reads_cpu_models(tmp_path: Path) -> None:
    export = HEADER + (
        "lab,mnist_cnn,CPU,2,Intel(R) Xeon(R) Platinum 8173M CPU @ 2.00GHz,tensorflow-2.21.0,"
        "fp32,128,12,seconds_total,900,advisor probe\n"
        "lab,mnist_cnn,CPU,2,Intel(R) Xeon(R) Platinum 8173M CPU @ 2.00GHz,tensorflow-2.21.0,"
        "fp32,128,12,samples_per_second,840,advisor probe\n"
        "lab,mnist_cnn,T4,,,tensorflow-2.21.0,fp32,128,12,seconds_total,60,advisor probe\n"
        "lab,mnist_cnn,T4,,,tensorflow-2.21.0,fp32,128,12,steps_per_second,100,advisor probe\n"
    )
    pairs, skipped = validate.evaluate(
        read_reference(write(tmp_path, export)), shipped_calibration()
    )
    assert len(pairs) == 2
    assert skipped == {"another metric of a run already counted": 2}
    assert {p.source_label for p in pairs} == {
        "CPU 2 vCPU Intel(R) Xeon(R) Platinum 8173M CPU @ 2.00GHz",
        "T4 fp32",
    }


def test_the_modern_gpu_holdout_reads_and_keeps_the_generations_in_order() -> None:
    rows = read_reference(shipped("calibration-nvidia-dle.csv"))  # NVIDIA DeepLearningExamples
    rows = [row for row in rows if row.source == "nvidia-dle-rn50-tf-2020-06"]
    pairs, skipped = validate.evaluate(rows, shipped_calibration())
    assert len(pairs) == 30 and not skipped  # 6 rows: V100, V100 32GB, A100
    to_a100_mixed = [p for p in pairs if p.target_label == "A100 mixed"]
    assert all(p.order_right for p in to_a100_mixed)  # the fastest, from every other row


def test_near_ties_are_reported_apart_and_never_replace_the_order_accuracy(tmp_path: Path) -> None:
    near_tie = HEADER + (
        "lab,mnist_cnn,CPU,16,skylake,tensorflow-2.21,fp32,128,12,seconds_total,400,\n"
        "lab,mnist_cnn,CPU,32,skylake,tensorflow-2.21,fp32,128,12,seconds_total,390,\n"  # 2.6%
        "lab,mnist_cnn,K80,,,tensorflow-1.2,fp32,128,12,seconds_total,170,\n"
    )
    pairs, _ = validate.evaluate(read_reference(write(tmp_path, near_tie)), shipped_calibration())
    assert sorted(round(p.measured_gap, 3) for p in pairs)[:2] == [0.026, 0.026]
    summary = validate.summarise(pairs)
    assert summary["n_pairs"] == 6 and summary["n_pairs_beyond_near_ties"] == 4
    clear = [p for p in pairs if p.measured_gap > validate.NEAR_TIE]
    assert summary["order_accuracy_beyond_near_ties"] == pytest.approx(
        sum(p.order_right for p in clear) / 4, abs=1e-4
    )
    assert summary["pairwise_order_accuracy"] == pytest.approx(
        sum(p.order_right for p in pairs) / 6, abs=1e-4
    )


def test_pairs_past_the_cap_are_a_seeded_sample_of_distinct_pairs() -> None:
    import random

    every = list(validate.pair_indices(5, 100, random.Random(0)))
    assert len(every) == 20 and len(set(every)) == 20 and all(s != t for s, t in every)
    first = list(validate.pair_indices(5_000, 1_000, random.Random(0)))
    again = list(validate.pair_indices(5_000, 1_000, random.Random(0)))
    assert first == again and len(set(first)) == 1_000
    assert all(0 <= s < 5_000 and 0 <= t < 5_000 and s != t for s, t in first)


def test_validate_caps_the_pairs_and_says_so() -> None:
    rows = read_reference(shipped("benchmarks.csv"))
    stats: dict[str, int] = {}
    pairs, _ = validate.evaluate(rows, shipped_calibration(), max_pairs=500, stats=stats)
    assert stats["pairs_possible"] > 500 and stats["pairs_cap"] == 500
    assert 450 <= len(pairs) <= 550  # each group in proportion, rounded


def test_the_default_report_says_where_the_readmes_headline_comes_from(tmp_path: Path) -> None:
    """``advisor validate`` checks the device model row by row, not the README's end-to-end
    figures from this machine's probes: its report says so, and where those come from."""
    shipped = CliRunner().invoke(cli, ["validate"])
    assert shipped.exit_code == 0, shipped.output
    last = shipped.output.strip().splitlines()[-1]
    assert "README's end-to-end headline" in last and "validate --end-to-end" in last
    own = CliRunner().invoke(cli, ["validate", "--reference", str(write(tmp_path, TINY))])
    assert own.exit_code == 0 and "README's end-to-end headline" not in own.output


def test_validate_reproduces_a_stored_end_to_end_run_with_one_flag(tmp_path: Path) -> None:
    """``advisor validate --end-to-end FILE`` scores a stored run's probes with today's model,
    the same figures its benchmark writes (here the JAX run on the H200 and H100 rows, held out
    and quick: no publisher's refit); a file that is no such run is one line, exit 2."""
    from advisor.fitting.end_to_end import rescore

    run = Path(__file__).resolve().parents[2] / "benchmarks/results/end_to_end_jax_h200.json"
    done = CliRunner().invoke(cli, ["validate", "--end-to-end", str(run), "--json"])
    assert done.exit_code == 0, done.output
    figures = json.loads(done.stdout)
    assert figures == json.loads(json.dumps(rescore(run)["figures"]))
    assert figures["all"]["rows"] == 18 and figures["set"]["held out"]["rows"] == 18
    table = CliRunner().invoke(cli, ["validate", "--end-to-end", str(run)])
    assert table.exit_code == 0 and "held out" in table.stdout and "18" in table.stdout
    for text in ("not json", json.dumps({"probes": 3}), json.dumps([1, 2])):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        wrong = CliRunner().invoke(cli, ["validate", "--end-to-end", str(bad)])
        assert wrong.exit_code == 2, wrong.output
        assert wrong.stderr.count("\n") == 1 and "not a stored end-to-end run" in wrong.stderr
