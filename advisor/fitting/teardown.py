"""The iterator-teardown rates (``probes.teardown``), fitted on timed real ``model.fit`` runs.

The runs are ``benchmarks/results/fit_anatomy.json`` (``benchmarks/research/fit_anatomy.py`` times them:
wall time and process CPU time at every callback). Where a fit drops a tf.data iterator the idle
time there (wall minus CPU) is one observation of a teardown wait at a known iterator age; the
rate of each kind of iterator is sum(observed waits) / sum(the wait if every drop stalled).
``python -m advisor.fitting teardown`` writes ``data/fit-teardown.json``.
"""

from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

from advisor.locations import shipped_data_dir
from probes.teardown import mean_wait, wait_if_stalled

FIT_FILE = "fit-teardown.json"
RUNS_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "fit_anatomy.json"
CASES = ("mnist_mlp", "mnist_cnn", "imdb_bilstm", "cifar10_cnn")
"""The zoo workloads timed: the accuracy benchmark's user models stay out of this fit."""
IDLE_FLOOR = 0.005
"""Idle seconds below which a place counts as not waiting (scheduling jitter)."""


def _idle(before: list, after: list) -> float:
    """Wall time between two stamps in which the process used no CPU."""
    return max(0.0, (after[1] - before[1]) - (after[2] - before[2]))


def _epochs(events: list[list]) -> list[dict[str, int | float]]:
    """Per epoch: where its stamps are, and when its training iterator gave its first batch
    (its autotuning thread's start: the first step's end less a steady step, so the first
    epoch's tracing and a wait at the epoch's start are not counted in the iterator's age)."""
    epochs: list[dict[str, int | float]] = []
    ends: list[float] = []
    for index, (name, wall, _) in enumerate(events):
        if name == "epoch_begin":
            epochs.append({"begin": index})
            ends = []
        elif name == "batch_end" and epochs:
            ends.append(wall)
            steps = [b - a for a, b in itertools.pairwise(ends)]
            step = statistics.median(steps) if steps else 0.0
            epochs[-1]["first_batch"] = ends[0] - step
    return epochs


def observations(events: list[list]) -> list[dict]:
    """Every drop of an iterator that had given batches (``probes.teardown``): its kind, its age
    from its first batch, and the idle time at the drop. A training iterator is dropped at the
    next epoch's first step, or when ``fit`` returns; a validation pass's when the pass ends."""
    rows = []
    epochs = _epochs(events)
    for previous, epoch in itertools.pairwise(epochs):
        at = int(epoch["begin"])  # the drop comes between epoch_begin and the first step
        rows.append({"place": "epoch_start", "iterator": "training",
                     "age": events[at][1] - previous["first_batch"],
                     "idle": _idle(events[at], events[at + 1])})  # fmt: skip
    for index, (name, _, _) in enumerate(events):
        if name == "test_end" and events[index + 1][0] == "epoch_end":
            begin = max(i for i in range(index) if events[i][0] == "test_begin")
            rows.append({"place": "validation_end", "iterator": "validation",
                         "age": events[index][1] - events[begin][1],
                         "idle": _idle(events[index], events[index + 1])})  # fmt: skip
    if epochs and events[-1][0] == "return":
        rows.append({"place": "fit_end", "iterator": "training",
                     "age": events[-2][1] - epochs[-1]["first_batch"],
                     "idle": _idle(events[-2], events[-1])})  # fmt: skip
    return rows


def fit_rates(runs: list[dict]) -> dict:
    """Per kind of iterator: the chance a drop waits, as sum(idle) / sum(the wait if it always
    stalled). A training iterator's age is read from its first batch, to a few ms: its wait is
    the sawtooth's at that age. A validation iterator's is read from the pass's callbacks, not
    its first batch: its wait is averaged over the age's spread (``probes.teardown.mean_wait``)."""
    full_wait = {"training": wait_if_stalled, "validation": mean_wait}
    by_kind: dict[str, list[dict]] = {}
    for run in runs:
        for row in observations(run["events"]):
            by_kind.setdefault(row["iterator"], []).append(row)
    rates, detail = {}, {}
    for kind, rows in sorted(by_kind.items()):
        expected = sum(full_wait[kind](r["age"]) for r in rows)
        observed = sum(r["idle"] for r in rows)
        rates[kind] = round(min(1.0, observed / expected), 3) if expected > 0 else 0.0
        detail[kind] = {
            "drops": len(rows),
            "stalled": sum(
                r["idle"] > max(IDLE_FLOOR, full_wait[kind](r["age"]) / 2) for r in rows
            ),
            "observed_seconds": round(observed, 2),
            "expected_if_always_seconds": round(expected, 2),
            "median_age_seconds": round(statistics.median(r["age"] for r in rows), 2),
            "places": sorted({r["place"] for r in rows}),
        }
    return {"rates": rates, "detail": detail}


def source_line(runs: int) -> str:
    return (
        f"benchmarks/research/fit_anatomy.py: {runs} timed real fits of the zoo ({', '.join(CASES)}) on a "
        "2-vCPU AMD EPYC VM, TensorFlow 2.21, Keras 3.15 (benchmarks/results/fit_anatomy.json)"
    )


def derive(runs_file: Path = RUNS_FILE) -> str:
    """``data/fit-teardown.json`` as text, from the timed runs."""
    runs = [run for case in json.loads(runs_file.read_text()).values() for run in case]
    fitted = fit_rates(runs)
    fitted["source"] = source_line(len(runs))
    return json.dumps(fitted, indent=1) + "\n"


def write() -> Path:
    path = shipped_data_dir() / FIT_FILE
    path.write_text(derive(), encoding="utf-8")
    return path
