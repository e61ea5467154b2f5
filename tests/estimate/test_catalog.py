"""The device catalog covers every accelerator the prices mention, each row with a source."""

from __future__ import annotations

import csv
import json
import sqlite3
from contextlib import closing

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.estimate import catalog
from advisor.fitting.published import read_reference
from advisor.locations import shipped, shipped_data_dir
from pricing import database, ingest
from pricing.observations import Observation


def price_accelerators() -> set[str]:
    with shipped("prices-reference.csv").open(newline="") as handle:
        return {row["accelerator"] for row in csv.DictReader(handle) if row["accelerator"]}


def test_every_priced_accelerator_is_in_the_catalog() -> None:
    assert price_accelerators()  # the reference prices do list accelerators
    assert catalog.missing(price_accelerators()) == []


def test_missing_reports_unknown_names_once_and_sorted() -> None:
    names = ["T4", "MI300X", None, "Gaudi2", "MI300X", "H100"]
    assert catalog.missing(names) == ["Gaudi2", "MI300X"]


def test_every_row_has_a_source_and_positive_specs() -> None:
    for spec in catalog.accelerators().values():
        assert spec.source and spec.verified
        assert spec.half_tflops > 0 and spec.bandwidth_gbs > 0 and spec.memory_gib > 0
        assert spec.kind in ("gpu", "tpu") and spec.chips >= 1
    for family in catalog.cpu_families().values():
        assert family.source and family.vcpu_gflops > 0 and family.memory_gbs_per_vcpu > 0


def test_every_gpus_multiprocessors_make_its_fp32_peak() -> None:
    """SMs x FP32 lanes x 2 x clock is the datasheet's FP32 figure: the multiprocessor columns
    (what bounds latency-bound kernels) are read from the same specification as the peak."""
    gpus = [spec for spec in catalog.accelerators().values() if spec.kind == "gpu"]
    assert len(gpus) > 25
    for spec in gpus:
        assert spec.sm_cycles_per_second > 0, spec.name
        implied = spec.sms * spec.fp32_lanes_per_sm * 2 * spec.clock_mhz * 1e6 / 1e12
        if spec.verified == "yes":
            assert implied == pytest.approx(spec.fp32_tflops, rel=0.02), spec.name
    assert all(
        s.sm_cycles_per_second == 0 for s in catalog.accelerators().values() if s.kind == "tpu"
    )


def test_only_lanes_that_also_run_int32_lower_a_gpus_fp32_gemm_share() -> None:
    """GA10x and AD10x share 64 of their 128 FP32 lanes with INT32 (NVIDIA's whitepapers):
    a product issues (64 + 64 x 0.25) / 128 of their FP32 peak; GPUs whose FP32 lanes are their
    own (GA100, GH100, Volta, Turing, Pascal) issue all of it."""
    accelerators = catalog.accelerators()
    shared = {name for name, spec in accelerators.items() if spec.fp32_lanes_shared_with_int32}
    assert shared == {
        "L4", "A10", "A10G", "A6000", "A40", "L40", "L40S", "RTX6000-Ada", "RTX3090", "RTX4090"
    }  # fmt: skip
    for name in shared:
        assert accelerators[name].fp32_gemm_share == pytest.approx(0.625), name
    for name in ("A100", "H100", "V100", "T4", "P100", "K80", "B200", "tpu-v5p"):
        assert accelerators[name].fp32_gemm_share == 1.0, name


def test_the_named_cpu_families_are_all_there() -> None:
    expected = {
        "haswell", "broadwell", "skylake", "cascadelake", "icelake", "sapphirerapids",
        "emeraldrapids", "rome", "milan", "genoa", "turin", "graviton2", "graviton3", "graviton4",
    }  # fmt: skip
    assert set(catalog.cpu_families()) == expected


def test_tpu_slices_count_their_chips() -> None:
    assert catalog.accelerator("tpu-v5litepod-8").chips == 8  # type: ignore[union-attr]
    assert catalog.accelerator("tpu-v3-8").chips == 4  # type: ignore[union-attr]
    assert catalog.accelerator("tpu-v6e-1").chips == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("model", "family", "guessed"),
    [
        ("Intel(R) Xeon(R) Platinum 8173M CPU @ 2.00GHz", "skylake", False),
        ("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", "cascadelake", False),
        ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "icelake", False),
        ("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz", "sapphirerapids", False),
        ("Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz", "broadwell", False),
        ("AMD EPYC 7B12 64-Core Processor", "rome", False),
        ("AMD EPYC 7R13 Processor", "milan", False),
        ("AMD EPYC 9R14 96-Core Processor", "genoa", False),
        ("Neoverse-V1", "graviton3", False),
        ("Intel(R) Xeon(R) CPU @ 2.20GHz", "skylake", True),
        ("AMD EPYC", "milan", True),
        ("AMD EPYC 9B45 128-Core Processor", "turin", False),
        ("AMD EPYC (family 26, model 2)", "turin", False),  # a VM that hides the model number
        ("AMD EPYC (family 25, model 17)", "genoa", False),
        ("AMD EPYC (family 25, model 1)", "milan", False),
        (
            "Intel(R) Xeon(R) Processor (family 6, model 207)",
            "emeraldrapids",
            False,
        ),  # the H200 host
        ("Intel(R) Xeon(R) CPU @ 2.20GHz (family 6, model 79)", "broadwell", False),
        ("Intel(R) Xeon(R) CPU @ 2.20GHz (family 6, model 85)", "skylake", True),  # or Cascade Lake
        ("Some Unknown CPU", catalog.DEFAULT_CPU_FAMILY, True),
    ],
)
def test_cpu_models_map_to_families(model: str, family: str, guessed: bool) -> None:
    assert catalog.family_of_cpu_model(model) == (family, guessed)


def test_advisor_devices_lists_every_priced_accelerator_with_its_source() -> None:
    result = CliRunner().invoke(cli, ["devices", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert price_accelerators() <= {row["name"] for row in rows}
    assert all(row["source"] for row in rows)


def test_a_precision_a_device_has_no_units_for_is_a_dash_not_zero_tflops() -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["devices"])
    assert result.exit_code == 0, result.output
    k80 = next(line for line in result.output.splitlines() if line.startswith("K80 "))
    assert k80.split()[:6] == ["K80", "gpu", "1", "2.8", "-", "2.8"]  # K80: no TF32


def test_advisor_devices_cpus_prints_per_vcpu_throughput_as_csv() -> None:
    result = CliRunner().invoke(cli, ["devices", "--cpus", "--csv"])
    assert result.exit_code == 0, result.output
    header, *lines = result.output.strip().splitlines()
    assert header.startswith("name,vendor,isa,vcpu_gflops")
    assert len(lines) == 14
    skylake = next(line for line in lines if line.startswith("skylake,"))
    assert skylake.split(",")[3] == "64.0"  # 2.0 GHz x 64 FLOPs/cycle / 2 threads


def test_devices_missing_lists_what_the_price_database_offers_beyond_the_catalog(
    advisor_home: object,
) -> None:
    runner = CliRunner()
    seed_only = runner.invoke(cli, ["devices", "--missing"])
    assert seed_only.exit_code == 0 and "every accelerator" in seed_only.output
    db = database.connect()
    gaudi = Observation("azure", "eastus", "", "gaudi.8x", 96, 1024, "Gaudi2", 8, 96, False,
                        "on_demand", 40.0)  # fmt: skip
    ingest.write(db, "azure", [gaudi], source="test", fetched_at=database.now(), run_id=None)
    found = runner.invoke(cli, ["devices", "--missing"])
    assert found.exit_code == 0 and "Gaudi2" in found.output


def test_every_accelerator_of_the_shipped_seed_database_is_in_the_catalog() -> None:
    with closing(sqlite3.connect(shipped("prices-seed.sqlite"))) as db:
        names = {name for (name,) in db.execute("SELECT DISTINCT accelerator FROM seed_prices")}
    assert names - {"", None}  # the seed does offer accelerators
    assert catalog.missing(names) == []


def test_every_device_of_the_shipped_measurements_is_in_the_catalog() -> None:
    files = [
        shipped("benchmarks.csv"),
        shipped("calibration-lambda-pytorch.csv"),
        *sorted(shipped_data_dir().glob("calibration-holdout-*.csv")),
    ]
    devices = {row.device for path in files for row in read_reference(path) if not row.is_cpu}
    assert {"V100-32GB", "A6000", "RTX6000", "A100"} <= devices
    assert catalog.missing(devices) == []


def test_cpu_model_patterns_cannot_backtrack_over_a_long_text() -> None:
    """An imported row's CPU model is a stranger's text: an unbounded ``.*`` inside a pattern
    backtracked for 8 s over 120,000 characters of "Intel(" (2026-11-26). Every pattern is
    literal text, alternations and bounded repeats."""
    for pattern, _ in catalog._CPU_MODEL_PATTERNS:
        assert ".*" not in pattern and ".+" not in pattern, pattern
    assert catalog.family_of_cpu_model("Intel(" * 20_000) == (catalog.DEFAULT_CPU_FAMILY, True)
