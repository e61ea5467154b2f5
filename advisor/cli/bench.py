"""``advisor bench``: measure a workload on rented cloud machines through SkyPilot."""

from __future__ import annotations

import importlib.util
import secrets
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from advisor.cli.backend import backend_option
from advisor.cli.numbers import BoundedInt, FiniteFloat
from advisor.display import plain
from advisor.errors import AdvisorError, UsageError
from probes.limits import MAX_BATCH, MAX_EPOCHS, MAX_SAMPLES

if TYPE_CHECKING:
    from advisor.bench.task import Install, ProbeArgs

_HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
INSTALL_HINT = "advisor bench needs SkyPilot: pip install 'advisor[skypilot]'"


def _size(name: str, help_text: str, high: int = MAX_SAMPLES) -> Any:
    return click.option(name, type=BoundedInt(1, high), default=None, help=help_text)


@click.command(context_settings=_HELP)
@click.option("--model", "-m", required=True, help="Zoo id or alias.")
@_size("--epochs", "Epochs of the full run (default: the workload's).", MAX_EPOCHS)
@_size("--batch-size", "Batch size (default: the workload's).", MAX_BATCH)
@_size("--samples", "Training samples per epoch (default: the workload's).")
@click.option("--validation-samples", type=BoundedInt(0, MAX_SAMPLES), default=None,
              help="Validation samples per epoch (default: the workload's).")  # fmt: skip
@click.option("--gpus", metavar="T4,A100:8,...",
              help="Accelerators to bench, one machine each (A100:8: a machine of eight, "
              "trained data parallel; --backend jax).")  # fmt: skip
@click.option("--nodes", type=BoundedInt(1, 32), default=1, show_default=True,
              help="Rent each --gpus machine this many times over: a cluster training data "
              "parallel (--backend jax).")  # fmt: skip
@click.option("--cpus", metavar="8,16,...", help="vCPU counts to bench, one machine each.")
@click.option("--spot/--no-spot", default=False, show_default=True,
              help="Rent spot machines (cheaper; a preempted one is reported).")  # fmt: skip
@click.option("--max-cost", type=FiniteFloat(0, 1e6), default=None,
              help="Refuse when the expected cost exceeds this many USD.")  # fmt: skip
@click.option("--probe-seconds", type=FiniteFloat(1, 3600), default=20.0, show_default=True,
              help="Seconds each probe may take.")  # fmt: skip
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Install this advisor wheel on the nodes (default: build one here).")  # fmt: skip
@click.option("--index-url", default=None,
              help="Install advisor on the nodes from this package index instead.")  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False), default="advisor-bench",
              show_default=True, help="Folder for the tasks, logs and exports.")  # fmt: skip
@click.option(
    "--dry-run", is_flag=True, help="Write the tasks and print the commands; rent nothing."
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask before renting.")
@backend_option
def bench(
    model: str,
    epochs: int | None,
    batch_size: int | None,
    samples: int | None,
    validation_samples: int | None,
    gpus: str | None,
    nodes: int,
    cpus: str | None,
    spot: bool,
    max_cost: float | None,
    probe_seconds: float,
    wheel: str | None,
    index_url: str | None,
    out: str,
    dry_run: bool,
    yes: bool,
) -> None:
    """Measure MODEL on rented cloud machines (through SkyPilot) and import the results.

    For each accelerator and vCPU count, the cheapest matching offering in the price database is
    launched with a task that installs advisor and runs 'advisor probe --export'; the clusters run
    in parallel and are torn down afterwards. 'advisor recommend' then ranks the benched
    offerings by their measured time and corrects its predictions for the others.

    \b
      advisor bench --model mnist_cnn --gpus T4,L4 --cpus 8 --dry-run
      advisor bench --model lstm --gpus T4,A100 --spot --max-cost 2
      advisor bench --model resnet50 --gpus A100:8 --nodes 2 --backend jax --dry-run
    """
    if wheel and index_url:
        raise UsageError("--wheel and --index-url exclude each other")
    import pricing.database as database
    from advisor.bench import plan as planning
    from advisor.bench import task as tasks
    from probes import backend
    from probes.spec import spec_for

    spec = spec_for(model, epochs=epochs, batch_size=batch_size, samples=samples,
                    validation_samples=validation_samples)  # fmt: skip
    if spec.workload is None:
        raise UsageError("advisor bench measures zoo workloads (see 'advisor models')")
    probe = tasks.ProbeArgs(spec.workload.id, epochs, batch_size, samples, validation_samples,
                            probe_seconds, backend.requested())  # fmt: skip
    db = database.connect()
    candidates = planning.plan(
        db, gpus=planning.parse_gpus(gpus), cpus=planning.parse_cpus(cpus), spot=spot,
        probe_seconds=probe_seconds, tag=secrets.token_hex(2), nodes=nodes,
    )  # fmt: skip
    planning.check_backend(candidates, probe.backend)
    sky_missing = importlib.util.find_spec("sky") is None
    if sky_missing and not dry_run:  # every argument checked first
        raise UsageError(INSTALL_HINT)
    total = sum(c.expected_usd for c in candidates)
    _print_plan(spec.label, candidates, total, probe_seconds)
    if max_cost is not None and total > max_cost:
        raise AdvisorError(
            f"the bench is expected to cost ${total:.2f}, more than --max-cost ${max_cost:.2f}"
        )

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    root = tasks.checkout()
    install, build = _install(root, folder, wheel, index_url)
    configs, paths = _write_tasks(candidates, probe, install, folder, spec.label)
    if dry_run:
        _print_commands(candidates, paths, build, folder)
        if sky_missing:
            click.echo(f"to run them, {INSTALL_HINT.removeprefix('advisor bench ')}", err=True)
        return
    if not yes:
        machines = sum(c.nodes for c in candidates)
        click.confirm(f"Rent {machines} machine(s) for about ${total:.2f}?", abort=True)
    if build is not None and root is not None:
        click.echo(f"building advisor's wheel: {plain(shlex.join(build))}", err=True)
        tasks.build_wheel(root, folder / "wheel")
    _launch(db, candidates, configs, folder, spec.label)


def _install(
    root: Path | None, folder: Path, wheel: str | None, index_url: str | None
) -> tuple[Install, list[str] | None]:
    """How the nodes install advisor, and the command that builds its wheel here first (None:
    nothing to build): from --index-url, from --wheel, else from a wheel built into ``folder``
    from this checkout (``root``; None: advisor was not installed from one)."""
    from advisor.bench import task as tasks

    if index_url:
        return tasks.Install(index_url=index_url), None
    if wheel:
        return tasks.Install(wheel=Path(wheel)), None
    if root is None:
        raise UsageError("advisor is not installed from a checkout: pass --wheel or --index-url")
    install = tasks.Install(wheel=folder / "wheel" / tasks.wheel_name())
    return install, tasks.wheel_command(root, folder / "wheel")


def _write_tasks(
    candidates: list[Any], probe: ProbeArgs, install: Install, folder: Path, label: str
) -> tuple[dict[str, Any], dict[str, Path]]:
    """Each candidate's SkyPilot task, and the YAML file in ``folder`` it was written to, by
    cluster name."""
    from advisor.bench import task as tasks

    configs, paths = {}, {}
    for candidate in candidates:
        configs[candidate.cluster] = tasks.task_config(candidate, probe, install)
        paths[candidate.cluster] = tasks.write_yaml(
            folder / f"{candidate.cluster}.yaml", configs[candidate.cluster],
            comment=f"advisor bench: {label} on {_where(candidate)}",
        )  # fmt: skip
    return configs, paths


def _where(c: Any) -> str:
    r = c.rentable
    return f"{r.provider} {r.region} {r.instance_type} ({r.pricing.replace('_', '-')})"


def _print_plan(label: str, candidates: list[Any], total: float, probe_seconds: float) -> None:
    machines = sum(c.nodes for c in candidates)
    click.echo(f"bench of {label}: {machines} machine(s), cheapest offering of each")
    for c in candidates:
        times = f"{c.nodes} x " if c.nodes > 1 else ""
        click.echo(
            f"  {c.label:<12} {_where(c):<52} {times}${c.rentable.usd_per_hour:.4f}/h "
            f"x {c.expected_seconds / 60:.0f} min = ${c.expected_usd:.3f}  [{c.cluster}]"
        )
    click.echo(
        f"expected cost: ${total:.2f} (start-up and set-up, then a {probe_seconds:g} s probe, "
        "billed by each provider's rule; prices from the database)"
    )


def _print_commands(
    candidates: list[Any], paths: dict[str, Path], build: list[str] | None, folder: Path
) -> None:
    click.echo(f"dry run: wrote {len(paths)} SkyPilot task(s) to {plain(folder)}; would run:")
    if build is not None:
        click.echo(f"  {plain(shlex.join(build))}")
    for c in candidates:
        path = str(paths[c.cluster])
        click.echo(
            f"  sky launch --yes --cluster {c.cluster} --down -i 10 {plain(shlex.quote(path))}"
        )
    for c in candidates:
        click.echo(f"  sky down --yes {c.cluster}")
        click.echo(f"  advisor import {plain(shlex.quote(str(folder / (c.cluster + '.csv'))))}")


def _launch(
    db: Any, candidates: list[Any], configs: dict[str, Any], folder: Path, label: str
) -> None:
    from advisor.bench.launch import SkyPilot, bench, import_results

    outcomes = import_results(
        db,
        bench(
            candidates, configs, SkyPilot(), folder, report=lambda line: click.echo(line, err=True)
        ),
    )
    for o in outcomes:
        line = (
            f"{o.candidate.label:<12} {o.status:<9} {_where(o.candidate)}, {o.seconds / 60:.1f} min"
        )
        if o.results:
            line += f"; full training measured: {o.results[0].predicted_seconds:.1f} s"
        if o.message:
            line += f"; {o.message}"
        click.echo(line)
    measured = sum(o.status == "measured" for o in outcomes)
    click.echo(f"{measured} of {len(outcomes)} measured and imported; "
               f"'advisor recommend --model {label}' ranks them by their measured time")  # fmt: skip
    if not measured:
        raise AdvisorError("no candidate was measured (see the logs in " + str(folder) + ")")
