"""The README's end-to-end headline: this machine's stored probes against every published figure.

Each published row of a zoo workload (the fit's files and the held-out ones) is predicted from
every stored pass's probe of its workload on the row's device, batch, precision and software; a
fitted row by a fit without its publisher, a held-out row by the shipped fit; the median of the
passes is its prediction. ``benchmarks/end_to_end.py`` takes the probes (fresh, in processes of
their own) and stores them with the scores; ``advisor validate --end-to-end FILE`` scores a stored
run again with today's model, which is how the headline is reproduced.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from advisor.estimate import Target, catalog, predict
from advisor.estimate.parameters import Calibration, shipped_calibration
from advisor.estimate.residual import kind_of
from advisor.fitting import calibrate
from advisor.fitting.published import ReferenceRow
from advisor.locations import shipped_data_dir
from advisor.workloads import zoo
from probes import history
from probes.result import ProbeResult

TARGETS = {"median_factor": 1.25, "worst_factor": 2.0, "median_signed_pct": 15.0}


def published_rows(
    sources: str = "", backend: str = ""
) -> tuple[list[ReferenceRow], list[ReferenceRow]]:
    """The fitted rows and the held-out rows whose workload is in the zoo (of ``sources`` only,
    comma-separated, when given; run under ``backend``'s framework only, when given: a user of
    that backend probes under it)."""
    data = shipped_data_dir()
    fitted = calibrate.read_rows([data / name for name in calibrate.FIT_FILES])
    held = calibrate.read_rows(sorted(data.glob(calibrate.HOLDOUT_PATTERN)))
    names = set(zoo.names())
    wanted = set(sources.split(",")) if sources else None

    def kept(rows: list[ReferenceRow]) -> list[ReferenceRow]:
        return [
            r
            for r in rows
            if r.workload in names
            and (wanted is None or r.source in wanted)
            and (not backend or r.framework.name == backend)
        ]

    return kept(fitted), kept(held)


def target_of(row: ReferenceRow) -> Target:
    if row.is_cpu:
        return Target(None, 0, float(row.vcpus or 1), catalog.resolve_family(row.cpu_family))
    return Target(row.device, 1)


def predicted_figure(
    probe: ProbeResult,
    row: ReferenceRow,
    calibration: Calibration,
    target: Callable[[ReferenceRow], Target] = target_of,
) -> tuple[float, float, float] | None:
    """The row's figure as predicted from ``probe``, with the 80% interval's bounds (in the
    row's metric), or None when the device is excluded."""
    result = predict(
        probe,
        target(row),
        precision=row.precision,
        stack=row.stack,
        global_batch=row.batch_size,  # a published run states its global batch
        calibration=calibration,
        augmented=row.augmented,
    )
    if not math.isfinite(result.seconds) or result.step_seconds <= 0:
        return None
    if row.metric == "samples_per_second":
        rate = row.batch_size / result.step_seconds
        spread = result.quantile(0.9) / result.seconds
        return rate, rate / spread, rate * spread
    if row.metric == "seconds_total":
        return result.seconds, result.quantile(0.1), result.quantile(0.9)
    return None


def score(
    probes: dict[str, list[ProbeResult]],
    fitted: Sequence[ReferenceRow],
    held: Sequence[ReferenceRow],
    target: Callable[[ReferenceRow], Target] = target_of,
) -> list[dict[str, Any]]:
    """Every published row predicted from every pass's probe of its workload (on the machine
    ``target`` makes of its row): a fitted row by a fit without its publisher, a held-out row by
    the shipped fit."""
    fits = publisher_fits(fitted)
    rows: list[dict[str, Any]] = []
    for row, held_out in [*((r, False) for r in fitted), *((r, True) for r in held)]:
        calibration = shipped_calibration() if held_out else fits[calibrate.lab(row.source)]
        predictions = [
            figure
            for probe in probes.get(row.workload, [])
            if (figure := predicted_figure(probe, row, calibration, target)) is not None
        ]
        if not predictions:
            continue
        faster_is_larger = row.metric == "samples_per_second"
        medians = [statistics.median(p[i] for p in predictions) for i in range(3)]
        predicted, low, high = medians
        log_error = math.log(row.value / predicted if faster_is_larger else predicted / row.value)
        values = [p[0] for p in predictions]
        rows.append(
            {
                "source": row.source,
                "held_out": held_out,
                "workload": row.workload,
                "device": row.label,
                "kind": kind_of(target(row)),
                "precision": row.precision,
                "batch_size": row.batch_size,
                "metric": row.metric,
                "published": row.value,
                "predicted": predicted,
                "passes": values,
                "pass_spread": max(values) / min(values),
                "log_error": log_error,
                "inside_80": min(low, high) <= row.value <= max(low, high),
            }
        )
    return rows


def publisher_fits(scored: Sequence[ReferenceRow]) -> dict[str, Calibration]:
    """For each publisher of ``scored``, the fit on every other publisher's fitted rows: the
    whole fit set, however few rows are scored (a fit on the scored rows alone would be another
    model), from the shipped fit as ``calibrate.leave_one_source_out`` starts it."""
    everything, _ = published_rows()
    start = shipped_calibration()
    labs = sorted({calibrate.lab(row.source) for row in scored})
    return {
        lab: _with_spread(
            calibrate.fit([row for row in everything if calibrate.lab(row.source) != lab], start)
        )
        for lab in labs
    }


def _with_spread(fit: Calibration) -> Calibration:
    """A leave-one-out fit keeps the shipped spread (its own held-out spread is what is being
    measured here)."""
    from dataclasses import replace

    return replace(fit, log_sigma=shipped_calibration().log_sigma)


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Median, p90 and worst error as factors; the median signed error (positive: predicted
    too slow); how many were predicted too fast; the 80% interval's coverage."""
    if not rows:
        return {"rows": 0}
    factors = sorted(math.exp(abs(r["log_error"])) for r in rows)
    signed = statistics.median(r["log_error"] for r in rows)
    return {
        "rows": len(rows),
        "median_factor": round(statistics.median(factors), 3),
        "p90_factor": round(factors[int(0.9 * (len(factors) - 1))], 3),
        "worst_factor": round(factors[-1], 3),
        "median_signed_pct": round(100 * (math.exp(signed) - 1), 1),
        "too_fast": sum(r["log_error"] < 0 for r in rows),
        "coverage_80": round(sum(r["inside_80"] for r in rows) / len(rows), 3),
        "worst_pass_spread": round(max(r["pass_spread"] for r in rows), 3),
    }


def report(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for key in ("kind", "workload", "device", "precision", "source"):
            groups[key][str(row[key])].append(row)
        groups["set"]["held out" if row["held_out"] else "leave-one-publisher-out"].append(row)
    return {
        "all": summary(rows),
        "gpu": summary([r for r in rows if r["kind"] == "gpu"]),
        "cpu": summary([r for r in rows if r["kind"] == "cpu"]),
        "tpu": summary([r for r in rows if r["kind"] == "tpu"]),
        **{key: {name: summary(g) for name, g in sorted(groups[key].items())} for key in groups},
        "targets": TARGETS,
    }


STABILITY_TARGETS = (Target(None, 0, 8.0, "cascadelake"), Target("A100", 1), Target("T4", 1))
"""What a user's own software gets from each pass's probe: one cloud CPU, two GPUs."""


def stability(probes: dict[str, list[ProbeResult]]) -> dict[str, dict[str, float]]:
    """Per workload, how far the passes' fresh probes moved: the probe's own samples/s here and
    its prediction (the user's software) on a cloud CPU and two GPUs, as max/min."""
    out: dict[str, dict[str, float]] = {}
    for workload, results in probes.items():
        if len(results) < 2:
            continue
        rates = [p.samples_per_second for p in results]
        figures = {"here": max(rates) / min(rates)}
        for target in STABILITY_TARGETS:
            times = [predict(p, target).seconds for p in results]
            figures[target.accelerator or f"{target.vcpus:g} vCPU {target.cpu_family}"] = max(
                times
            ) / min(times)
        out[workload] = {k: round(v, 3) for k, v in figures.items()}
    return out


def stored_probes(blob: dict[str, Any]) -> dict[str, list[ProbeResult]]:
    """A run's probes by workload, as its file stored them."""
    return {w: [history.from_json(p) for p in ps] for w, ps in blob["probes"].items()}


def rescore(path: Path, sources: str = "") -> dict[str, Any]:
    """The stored probes' rows scored again by today's model: ``sources``' rows, else those the
    run scored (its ``sources`` and ``backend``)."""
    blob = json.loads(path.read_text())
    probes = stored_probes(blob)
    fitted, held = published_rows(sources or blob.get("sources", ""), blob.get("backend", ""))
    rows = score(probes, fitted, held)
    return {**blob, "rows": rows, "figures": report(rows), "stability": stability(probes)}
