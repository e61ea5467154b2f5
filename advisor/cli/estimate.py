"""``advisor devices`` and ``advisor validate``: the device catalog and the predictor's accuracy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from advisor import display
from advisor.cli.output import emit, output_format

if TYPE_CHECKING:
    from probes.exchange import Problem, Row

_HELP = {"help_option_names": ["-h", "--help"]}
_ACCELERATOR_COLUMNS = (
    "name",
    "kind",
    "chips",
    "fp32_tflops",
    "tf32_tflops",
    "half_tflops",
    "memory_gib",
    "bandwidth_gbs",
    "interconnect_gbs",
    "verified",
)
_RATE_COLUMNS = ("fp32_tflops", "tf32_tflops", "half_tflops")
_CPU_COLUMNS = (
    "name",
    "vendor",
    "isa",
    "vcpu_gflops",
    "memory_gbs_per_vcpu",
    "example_instances",
    "verified",
)
_SUMMARY_KEYS = ("n_pairs", "median_abs_pct_error", "p90_abs_pct_error", "pairwise_order_accuracy")


@click.command(context_settings=_HELP)
@click.option("--cpus", is_flag=True, help="List CPU families instead of accelerators.")
@click.option(
    "--missing",
    is_flag=True,
    help="List accelerators in the price database that the catalog lacks (never guessed).",
)
@output_format
def devices(cpus: bool, missing: bool, fmt: str) -> None:
    """List the device catalog: accelerators (per chip) or CPU families, with specs and sources.

    Tensor figures are dense; TPU rows are per chip with the chips of one slice. Every row
    names its source; 'verified' says where a value is inferred rather than published.
    """
    from advisor.estimate import catalog

    if missing:
        names = catalog.missing(_price_accelerators())
        missing_rows = [
            {"accelerator": name, "reason": "not in the device catalog: excluded"} for name in names
        ]
        if fmt == "table" and not missing_rows:
            click.echo("every accelerator in the price database is in the catalog")
            return
        emit(
            missing_rows, fmt, columns=["accelerator", "reason"], title="Accelerators without specs"
        )
        return
    rows: list[dict[str, Any]]
    if cpus:
        rows = [
            {**asdict(family), "vcpu_gflops": round(family.vcpu_gflops, 1)}
            for family in catalog.cpu_families().values()
        ]
        if fmt == "table":
            rows = [{**row, "verified": row["verified"].split(":")[0]} for row in rows]
        columns = list(_CPU_COLUMNS) if fmt == "table" else [*_CPU_COLUMNS, "source"]
        emit(rows, fmt, columns=columns, title="CPU families (per vCPU)")
        return
    rows = [asdict(spec) for spec in catalog.accelerators().values()]
    if fmt == "table":  # a precision the device has no units for is "-", not 0 TFLOP/s
        rows = [{**row, "verified": row["verified"].split(":")[0],
                 **{k: "-" for k in _RATE_COLUMNS if not row[k]}} for row in rows]  # fmt: skip
    columns = list(_ACCELERATOR_COLUMNS) if fmt == "table" else [*_ACCELERATOR_COLUMNS, "source"]
    emit(rows, fmt, columns=columns, title="Accelerators (per chip; half = FP16/BF16 dense)")


def _price_accelerators() -> list[str]:
    """Accelerator names the price database offers."""
    from advisor import service

    return service.priced_accelerators()


@click.command(context_settings=_HELP)
@click.option(
    "--reference",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Measurements in the reference format, '-' for standard input "
    "(default: the shipped calibration set).",
)
@click.option(
    "--leave-one-source-out",
    "loso",
    is_flag=True,
    help="Refit the model without each source before predicting it (honest, slower).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Stop at the first bad row instead of skipping it; no assumed batch sizes.",
)
@click.option(
    "--end-to-end",
    "end_to_end",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Score a stored run of this machine's probes against every published figure, each "
    "fitted publisher held out: the README's headline from "
    "benchmarks/results/end_to_end.json in a checkout.",
)
@output_format
def validate(
    reference: Path | None, loso: bool, strict: bool, end_to_end: Path | None, fmt: str
) -> None:
    """Check predictions against measured results, in absolute terms and pair by pair.

    Each row is predicted from its device, batch, precision and software alone; then, within a
    source and workload, every row S predicts every other row T as a probe on S would. Rows of
    workloads outside the zoo are skipped and counted; a bad row is skipped and listed with its
    file:line (--strict: stop at it); an empty batch_size takes the zoo's, counted as assumed.
    """
    if end_to_end is not None:
        _end_to_end(end_to_end, fmt)
        return
    from advisor.estimate.parameters import shipped_calibration
    from advisor.fitting import absolute
    from advisor.fitting import validate as engine
    from advisor.fitting.calibrate import leave_one_source_out
    from advisor.fitting.published import read_reference_checked
    from advisor.locations import shipped

    path = reference or shipped("benchmarks.csv")
    rows, problems = read_reference_checked(path, strict=strict)
    counted: dict[str, int] = {}
    calibration = shipped_calibration()
    pairs, skipped = engine.evaluate(rows, calibration, stats=counted)
    runs, _ = engine.runs_of(rows, calibration)
    rows_predicted = absolute.absolute_results(runs, calibration)
    if loso:
        rows_predicted, pairs, _ = leave_one_source_out(rows, calibration)
    result = engine.report(pairs, skipped)
    result["absolute"] = absolute.summarise_rows(rows_predicted)
    result["absolute_by_source"] = absolute.by(rows_predicted, "source")
    result["reference"] = str(reference or "shipped benchmarks.csv")
    result["leave_one_source_out"] = loso
    result["pairs_possible"] = counted.get("pairs_possible", len(pairs))
    result["pairs_cap"] = counted.get("pairs_cap", engine.MAX_PAIRS)
    result.update(read_report(path, rows, problems))
    if fmt == "json":
        emit([], fmt, payload=result)
    elif fmt == "csv":
        emit(result["by_device"], fmt, columns=["device", *_SUMMARY_KEYS])
    else:
        _print_report(result)
        if reference is None:
            click.echo(HEADLINE_NOTE)


_END_TO_END_KEYS = ("set", "rows", "median_factor", "p90_factor", "worst_factor",
                    "median_signed_pct", "coverage_80")  # fmt: skip


def _end_to_end(path: Path, fmt: str) -> None:
    """The README's headline from a stored end-to-end run, scored by today's model."""
    from advisor.errors import UsageError
    from advisor.fitting import end_to_end

    try:
        scored = end_to_end.rescore(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise UsageError(
            f"--end-to-end: {display.quoted(str(path))} is not a stored end-to-end run "
            f"({display.plain(str(error))[:120]})"
        ) from None
    figures = scored["figures"]
    if fmt == "json":
        emit([], fmt, payload=figures)
        return
    sets = [{"set": name, **figures[name]} for name in ("all", "gpu", "cpu", "tpu")]
    sets += [{"set": name, **s} for name, s in figures["set"].items()]
    emit(
        [row for row in sets if row.get("rows")],
        "csv" if fmt == "csv" else "table",
        columns=list(_END_TO_END_KEYS),
        title="This machine's stored probes against every published figure (factors either way)",
    )


HEADLINE_NOTE = (
    "this is the device model from each row's own device (the shipped benchmarks.csv); the "
    "README's end-to-end headline (from this machine's probes, each publisher held out) is "
    "advisor validate --end-to-end benchmarks/results/end_to_end.json in a checkout"
)
"""Said under the default report: why its figures are not the README's, and where those are."""


def _print_report(result: dict[str, Any]) -> None:
    absolute = [{"source": n, **s} for n, s in result["absolute_by_source"].items()]
    absolute.append({"source": "all", **result["absolute"]})
    emit(
        absolute,
        "table",
        columns=["source", *_ABSOLUTE_KEYS],
        title="Absolute error by source (each row's own figure; factors either way)",
    )
    sources = [{"source": name, **summary} for name, summary in result["by_source"].items()]
    sources.append({"source": "all", **{key: result[key] for key in _SUMMARY_KEYS}})
    emit(sources, "table", columns=["source", *_SUMMARY_KEYS], title="Prediction error by source")
    emit(
        result["by_device"],
        "table",
        columns=["device", *_SUMMARY_KEYS],
        title="By predicted device",
    )
    if result["order_accuracy_beyond_near_ties"] is not None:
        click.echo(
            "extra figure (not the target): order accuracy over the "
            f"{result['n_pairs_beyond_near_ties']} pairs whose measured figures differ by more "
            f"than 5%: {result['order_accuracy_beyond_near_ties']}"
        )
    if result["pairs_possible"] > result["n_pairs"]:
        click.echo(
            f"pairs: a seeded sample of {result['n_pairs']:,} of the {result['pairs_possible']:,} "
            f"possible (at most {result['pairs_cap']:,} are evaluated)"
        )
    reasons = ", ".join(f"{n} {why}" for why, n in result["skipped_by_reason"].items())
    click.echo(
        f"rows not modelled: {result['unmodelled_rows']}" + (f" ({reasons})" if reasons else "")
    )
    click.echo(
        f"interval coverage (measured inside the 80% interval): {result['interval_coverage']}"
    )
    click.echo(f"assumed: {result['assumed']} row(s) without batch_size took the zoo's")
    for row in result["assumed_rows"]:
        click.echo(f"  assumed {display.plain(row['line'])}: {row['assumed']}")
    click.echo(f"skipped rows: {len(result['skipped_rows'])} unreadable")
    for row in result["skipped_rows"]:
        click.echo(f"  skipped {display.plain(row['line'])}: {display.plain(row['reason'])}")


_ABSOLUTE_KEYS = [
    "n_rows", "median_factor", "p90_factor", "worst_factor", "median_signed_pct", "too_fast",
    "interval_coverage",
]  # fmt: skip


def read_report(path: Path, rows: Sequence[Row], problems: Sequence[Problem]) -> dict[str, Any]:
    """What the lenient read assumed and skipped, each with its file:line."""
    assumed = [row for row in rows if row.assumed]
    return {
        "assumed": len(assumed),
        "assumed_rows": [
            {
                "line": f"{path}:{row.line}",
                "assumed": ", ".join(f"{name}={getattr(row, name)}" for name in row.assumed),
            }
            for row in assumed
        ],
        "skipped_rows": [{"line": p.line, "reason": p.reason} for p in problems],
    }
