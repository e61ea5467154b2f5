"""``advisor probe``, ``advisor models``, ``advisor import``: the probes on the command line."""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from advisor import display
from advisor.cli.backend import backend_option
from advisor.cli.numbers import BoundedInt, FiniteFloat
from advisor.cli.output import emit, output_format
from advisor.cli.progress import run_with_progress
from advisor.errors import UsageError
from probes.limits import MAX_BATCH, MAX_EPOCHS, MAX_SAMPLES

_HELP = {"help_option_names": ["-h", "--help"]}


def _size(name: str, help_text: str, high: int = MAX_SAMPLES) -> Any:
    low = 0 if name == "--validation-samples" else 1
    return click.option(name, type=BoundedInt(low, high), default=None, help=help_text)


@click.command(context_settings=_HELP)
@click.option("--model", "-m", help="Zoo id, alias or a .keras file (or a command after --).")
@click.option("--name", help="With a command after --: the name its probe is stored under "
              "(default: the script's file name), for recommend --model NAME.")  # fmt: skip
@_size("--epochs", "Epochs of the full run (default: the workload's).", MAX_EPOCHS)
@_size("--batch-size", "Batch size (default: the workload's).", MAX_BATCH)
@_size("--samples", "Training samples per epoch (default: the workload's).")
@_size("--validation-samples", "Validation samples per epoch (default: the workload's).")
@click.option("--budget", type=FiniteFloat(0, 86_400, low_open=True), default=20.0, show_default=True,
              help="Seconds the probe may take (it stops earlier at +-2%); an LLM job's proxy is "
              "shrunk to end within it + 5 s, TensorFlow's start included, and under 4 GiB.")  # fmt: skip
@click.option("--fresh", is_flag=True, help="Probe again even if a stored result exists.")
@click.option("--export", "export", type=click.Path(dir_okay=False), default=None,
              help="Also write the result to FILE (a new file) in the reference CSV format.")  # fmt: skip
@click.option("--force", is_flag=True, help="Let --export replace an existing file.")
@click.option("--thread-scaling", is_flag=True,
              help="Also measure with 1 intra-op thread (a fresh process; adds seconds).")  # fmt: skip
@click.option("--data-parallel", is_flag=True,
              help="Train over every device here, data parallel (--backend jax); the batch is "
              "each device's. Always probes afresh.")  # fmt: skip
@click.option("--nodes", type=BoundedInt(1, 1024), default=1, show_default=True,
              help="With --data-parallel: the machines training together, one process each.")  # fmt: skip
@click.option("--node-rank", type=BoundedInt(0, 1023), default=0, show_default=True,
              help="With --nodes: this machine's place among them (0 reports).")  # fmt: skip
@click.option("--coordinator", metavar="HOST:PORT", default="",
              help="With --nodes: where the rank-0 machine's process listens.")  # fmt: skip
@backend_option
@output_format
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def probe(
    model: str | None,
    name: str | None,
    epochs: int | None,
    batch_size: int | None,
    samples: int | None,
    validation_samples: int | None,
    budget: float,
    fresh: bool,
    export: str | None,
    force: bool,
    thread_scaling: bool,
    data_parallel: bool,
    nodes: int,
    node_rank: int,
    coordinator: str,
    fmt: str,
    command: tuple[str, ...],
) -> None:
    """Measure MODEL's training steps here and predict its full training time; or run your own
    training COMMAND for the budget, read its steps and stop it.

    \b
      advisor probe --model lstm
      advisor probe --model mnist_cnn --epochs 3 --json
      advisor probe --model my_model.keras --samples 50000 --epochs 10
      advisor probe --model lstm --backend jax
      advisor probe --model resnet50 --backend jax --data-parallel
      advisor probe --name cifar -- python train.py --epochs 30
    """
    from advisor.recommend.files import check_writable, write_atomic
    from advisor.store import check_can_store, connect
    from probes import device, exchange, history, reference
    from probes.spec import spec_for

    if export:  # refused before the probe runs, not after its seconds are spent
        check_writable(export, overwrite=force)
    if budget <= 0:
        raise UsageError(f"--budget must be > 0 seconds, got {budget}")
    layout = _layout(data_parallel, nodes, node_rank, coordinator, thread_scaling, command or name)
    if command or name:
        _probe_command(
            command, name, model, budget, epochs, samples, batch_size, export, force, fmt
        )
        return
    if model is None:
        raise UsageError(
            "give --model MODEL, or a training command after -- (see advisor probe -h)"
        )
    spec = spec_for(
        model, epochs=epochs, batch_size=batch_size, samples=samples,
        validation_samples=validation_samples,
    )  # fmt: skip
    db = connect()
    result = None if fresh or layout else history.find(db, spec.config, device.fingerprint().key)
    if result is not None and thread_scaling and len(result.thread_scaling) < 2:
        result = None  # stored without the thread scaling asked for now
    cached = result is not None
    if result is None:
        check_can_store(db, f"a probe of {spec.label}")  # before its seconds are spent
        if layout is not None:
            from probes import distributed

            result = distributed.probe(spec, layout, budget_seconds=budget)
        else:
            result = run_with_progress(spec, budget, (1,) if thread_scaling else ())
        history.save(db, result)
    if export:
        write_atomic(export, exchange.csv_text([result]), overwrite=force)
    spread = history.run_log_sigma(db, result.device.key)
    payload = summary(result, cached=cached, run_log_sigma=spread[0] if spread else None)
    busy = reference.busy_note(result.contention, result.machine_drift)
    if busy:
        warnings.warn(busy, stacklevel=1)
    if fmt == "table":
        emit([payload], fmt, columns=_TABLE_COLUMNS, title=f"Probe of {spec.label}")
    else:
        emit([payload], fmt, payload=payload)


def _layout(
    data_parallel: bool,
    nodes: int,
    rank: int,
    coordinator: str,
    thread_scaling: bool,
    command: object,
) -> Any:
    """The processes of a data-parallel probe (``probes.distributed.Layout``), or None for a
    probe on one device; usage errors before anything is imported."""
    if command and (data_parallel or nodes > 1):
        raise UsageError(
            "--data-parallel and --nodes probe zoo workloads; a command trains as it says"
        )
    if not data_parallel and nodes == 1:
        if rank or coordinator:
            raise UsageError("--node-rank and --coordinator go with --nodes above 1")
        return None
    from probes import distributed

    layout = distributed.Layout(nodes, rank, coordinator)
    if thread_scaling:
        raise UsageError("--thread-scaling measures one device's threads, not --data-parallel")
    distributed.check_backend()
    return layout


def _probe_command(
    command: tuple[str, ...],
    name: str | None,
    model: str | None,
    budget: float,
    epochs: int | None,
    samples: int | None,
    batch_size: int | None,
    export: str | None,
    force: bool,
    fmt: str,
) -> None:
    """``advisor probe [--name NAME] -- COMMAND``: the user's own training, probed and stored."""
    from advisor import service
    from advisor.recommend.files import write_atomic
    from probes import exchange
    from probes import script as user_script

    if model is not None:
        raise UsageError("--model and a command are two ways to say what to probe: give one")
    if not command:
        raise UsageError("--name names a command's probe: give the command after --")
    label = name or service.script_name(command)
    probed = service.probe_script(
        command, label, budget=budget, epochs=epochs, samples=samples, batch_size=batch_size
    )
    result, sizes = probed.result, probed.sizes
    if export:
        write_atomic(export, exchange.csv_text([result]), overwrite=force)
    payload = summary(result)
    payload["sizes"] = sizes.said
    payload.update(probed.observed)
    if fmt == "table":
        emit([payload], fmt, columns=_TABLE_COLUMNS, title=f"Probe of {label} ({sizes.said})")
        stack = user_script.stack_line(probed.observed)
        if stack:
            click.echo(display.plain(stack))
    else:
        emit([payload], fmt, payload=payload)


def _split_source(result: Any) -> str:
    """Where the op split came from: the backend's profiler, or the model's layers."""
    from probes.backend import BACKENDS

    if not result.op_split:
        return "none"
    framework = BACKENDS.get(result.device.backend)
    return framework.split_source if framework is not None else "unknown"


_TABLE_COLUMNS = ["workload", "fit_seconds", "interval_80", "step_seconds", "epochs",
                  "batch_size", "samples", "backend", "probe_seconds", "startup_seconds",
                  "cached", "extrapolated_from"]  # fmt: skip
"""The probe's table, most telling first (a narrow terminal leaves out from the last)."""


def summary(
    result: Any, *, cached: bool = False, run_log_sigma: float | None = None
) -> dict[str, Any]:
    """The plain dict that ``--json`` prints for one probe result.

    ``fit_seconds`` is the prediction of the whole ``model.fit`` here (what a stopwatch around it
    reads): ``predicted_seconds`` (what repeats with the epochs) plus ``startup_seconds`` (what
    one fit pays once). ``predicted_interval`` is what the probe's own measurements allow (of
    the repeating part); ``interval_80`` is the honest one around ``fit_seconds``: the 80% range
    of the real run, which also holds how much this machine's answers move between runs (its
    probe history) and the speed change the probe saw while it ran; ``interval_80_half_width``
    is its half-width relative to ``fit_seconds``."""
    from advisor.estimate.measured import cpu_rate
    from advisor.estimate.predict import local_log_sigma

    c, d = result.config, result.device
    rate = cpu_rate(result)
    z80 = 1.2815516 * local_log_sigma(result, run_log_sigma)
    fit = result.fit_seconds
    return {
        "workload": c.workload,
        "device": (d.accelerator or f"CPU ({d.cpu_model}, {d.threads} threads)") + d.together,
        "devices": d.devices,
        "nodes": d.nodes,
        "device_key": d.key,
        "backend": d.backend,
        "samples": c.samples,
        "validation_samples": c.validation_samples,
        "epochs": c.epochs,
        "batch_size": c.batch_size,
        "fit_seconds": round(fit, 3),
        "interval_80": [round(fit * math.exp(-z80), 3), round(fit * math.exp(z80), 3)],
        "interval_80_half_width": round(math.sinh(z80), 4),
        "predicted_seconds": round(result.predicted_seconds, 3),
        "predicted_interval": [round(v, 3) for v in result.predicted_interval],
        "machine_drift": round(result.machine_drift, 4),
        "contention": round(result.contention, 4),
        "achieved_gflops": round(rate[0] / 1e9, 1) if rate else None,
        "share_of_cpu_peak": round(rate[0] / rate[1], 3) if rate else None,
        "startup_seconds": round(result.startup_seconds, 3),
        "teardown_seconds": round(result.teardown_seconds, 3),
        "build_seconds": round(result.build_seconds, 3),
        "step_seconds": result.step_seconds,
        "step_interval": list(result.step_interval),
        "validation_step_seconds": result.validation_step_seconds,
        "epoch_overhead_seconds": result.epoch_overhead_seconds,
        "samples_per_second": round(result.samples_per_second, 3),
        "probe_seconds": round(result.probe_seconds, 3),
        "parameters": result.parameters,
        "flops_per_sample": result.flops_per_sample,
        "peak_host_bytes": result.peak_host_bytes,
        "batch_scaling": result.batch_scaling,
        "thread_scaling": result.thread_scaling,
        "op_split": result.op_split,
        "architecture": asdict(result.architecture) if result.architecture else None,
        "op_split_source": _split_source(result),
        "extrapolated": result.extrapolated,
        "extrapolated_from": result.extrapolated_from,
        "created_at": result.created_at,
        "cached": cached,
    }


ZOO_COLUMNS = (
    "id", "parameters", "epochs", "batch_size", "samples", "family", "title", "optimizer",
    "aliases", "train_flops_per_sample", "validation_samples",
)  # fmt: skip
"""The zoo's table, most telling first (a narrow terminal leaves out from the last)."""
LLM_COLUMNS = ("id", "parameters", "context", "layers", "hidden", "title", "methods", "aliases")


@click.command(context_settings=_HELP)
@output_format
def models(fmt: str) -> None:
    """List the workload zoo and the LLMs to fine-tune, with their sizes and methods.

    An LLM is recommended for a fine-tuning job: advisor recommend --model llama3-8b
    --method qlora --tokens 20M --deadline 6h.
    """
    from advisor.workloads import llm, zoo

    rows = [
        {
            "id": w.id,
            "aliases": ", ".join(w.aliases),
            "title": w.title,
            "parameters": w.parameters,
            "train_flops_per_sample": w.train_flops_per_sample,
            "samples": w.samples,
            "validation_samples": w.validation_samples,
            "epochs": w.epochs,
            "batch_size": w.batch_size,
            "optimizer": w.optimizer,
            "family": w.family,
        }
        for w in zoo.WORKLOADS
    ]
    llms = [
        {
            "id": m.id,
            "aliases": ", ".join(m.aliases),
            "title": m.title,
            "parameters": m.shape.parameters(),
            "family": "llm",
            "methods": ", ".join(llm.METHODS),
            "layers": m.shape.layers,
            "hidden": m.shape.hidden,
            "context": m.context,
        }
        for m in llm.models().values()
    ]
    if fmt == "table":  # the columns by importance: a narrow terminal leaves out the last
        emit(rows, fmt, columns=ZOO_COLUMNS, title="Workload zoo")
        emit(llms, fmt, columns=LLM_COLUMNS, title="LLMs to fine-tune (--method, --tokens)")
        return
    columns = [*rows[0], *(key for key in llms[0] if key not in rows[0])]
    emit([*rows, *llms], fmt, columns=columns)


@click.command("import", context_settings=_HELP)
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--replace",
    is_flag=True,
    help="Replace stored probes even when they are newer than the imported ones.",
)
def import_results(file: str, replace: bool) -> None:
    """Import measured results (reference CSV format), e.g. a probe run on a cloud machine.

    FILE may be '-' (standard input) or a pipe. Every row is checked first; a bad one is refused
    with its line and nothing is imported. A stored probe of the same workload, sizes and device
    that is newer than the imported one is kept: the import stops (exit 1) and stores nothing,
    unless --replace.
    """
    from advisor.errors import AdvisorError
    from advisor.store import connect
    from probes import exchange, history

    name = "<stdin>" if file == "-" else file
    results = exchange.from_rows(exchange.read_csv(file), name)
    db = connect()
    if not replace:
        for result in results:
            stored = history.stored_at(db, result)
            if stored is not None and stored > result.created_at:
                raise AdvisorError(
                    f"{name}: the stored probe of {result.config.workload} on device "
                    f"{result.device.key} ({stored}) is newer than the imported one "
                    f"({result.created_at or 'undated'}); nothing imported (--replace imports anyway)"
                )
    label = "stdin" if file == "-" else Path(file).name
    for result in results:
        history.save(db, result, source=f"import:{label}")
    click.echo(f"imported {len(results)} probe result(s) from {display.plain(name)}")
