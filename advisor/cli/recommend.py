"""``advisor recommend``: the cheapest or fastest place to train, under a deadline or a budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from advisor import display
from advisor.cli import output
from advisor.cli.backend import backend_option
from advisor.cli.numbers import BoundedInt, Count, FiniteFloat, Size
from advisor.cli.output import output_format
from advisor.errors import UsageError
from advisor.estimate.machine import PRECISIONS
from advisor.recommend import staging
from advisor.recommend.deadline import ACCEPTED, parse_duration
from advisor.recommend.recommendation import MAX_NODES, OBJECTIVES, Constraints
from advisor.workloads.llm import METHODS, TARGETS
from advisor.workloads.llm_job import MAX_RANK, MAX_SEQUENCES, MAX_TOKENS, Options
from pricing.offers import Filters
from probes.limits import MAX_BATCH, MAX_EPOCHS

MAX_USD = 1e9
"""Largest budget accepted, in USD."""

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Recommendation

_HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
F = TypeVar("F", bound=Callable[..., Any])


def _options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """One group of options: ``decorators`` applied so that --help lists them as written."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


WORKLOAD = _options(
    click.option(
        "--model",
        "-m",
        help="Zoo id, alias (lstm, mlp, cnn, ...), an LLM (llama3-8b, qwen2.5-7b, ...), a .keras "
        "file, or the NAME of a probed training command (with a command after --: its name).",
    ),
    click.option(
        "--epochs", type=BoundedInt(1, MAX_EPOCHS), help="Epochs (default: the zoo's; 1)."
    ),
    click.option(
        "--batch-size",
        type=BoundedInt(1, MAX_BATCH),
        help="Batch size a device computes (default: the zoo's); on N GPUs or TPU chips the global "
        "batch is N times it. For an LLM the sequences a GPU computes at once "
        "(default: the most up to 8 that fit).",
    ),
    click.option(
        "--global-batch",
        type=BoundedInt(1, MAX_BATCH),
        help="Hold this global batch on any number of devices, each computing its share "
        "(a recipe that fixes it); default: --batch-size per device.",
    ),
    click.option("--samples", type=BoundedInt(1), help="Training samples per epoch."),
    click.option("--validation-samples", type=BoundedInt(0), help="Validation samples."),
    click.option(
        "--data",
        type=Size(),
        metavar="SIZE",
        help="The data set each machine downloads from its provider's object store before "
        "training (150GB, 2TB, 500MiB): billed, at the machine's network or disk speed.",
    ),
    click.option(
        "--data-from",
        type=click.Choice(staging.sources()),
        metavar="PROVIDER",
        help=f"Where the --data lives ({', '.join(staging.sources())}): a machine of another "
        "provider pays its internet egress per GB; one of its own is taken to have the data in "
        "its region (default: every machine's own provider and region, free).",
    ),
)
"""What to train: a zoo model, a .keras file or an LLM, and its sizes."""

LLM_JOB = _options(
    click.option(
        "--method", type=click.Choice(METHODS), help="LLM: how to fine-tune (default lora)."
    ),
    click.option(
        "--tokens", type=Count(1, MAX_TOKENS), help="LLM: tokens the dataset holds (20M, 1.5B)."
    ),
    click.option(
        "--examples", type=Count(1, MAX_SEQUENCES), help="LLM: examples (each padded to --seq-len)."
    ),
    click.option(
        "--seq-len", type=BoundedInt(1, 1 << 21), help="LLM: tokens a sequence (default 2048)."
    ),
    click.option("--lora-rank", type=BoundedInt(1, MAX_RANK), help="LLM: LoRA rank (default 16)."),
    click.option(
        "--lora-targets",
        type=click.Choice(tuple(TARGETS)),
        help="LLM: which projections get adapters (default all).",
    ),
    click.option(
        "--packing/--no-packing",
        default=None,
        help="LLM: pack examples into full sequences (default with --tokens) or pad each.",
    ),
    click.option(
        "--checkpointing/--no-checkpointing",
        default=None,
        help="LLM: activation checkpointing (default: the stack's, turned on where that fits no layout).",
    ),
    click.option(
        "--fp32-adapters",
        is_flag=True,
        default=None,
        help="LLM: PEFT's fp32 adapters stepped without autocast (a plain PyTorch loop): slower, "
        "and an fp32 copy of each adapted input kept (default: 16-bit, as under autocast).",
    ),
    click.option(
        "--stack",
        metavar="NAME",
        help="LLM: the software it is fine-tuned with: hf (Hugging Face Trainer/TRL + PEFT; "
        "Axolotl, LLaMA-Factory), torchtune, torchtitan, nemo, automodel, unsloth, llm-foundry "
        "(default hf).",
    ),
)
"""How an LLM is fine-tuned (ignored for anything else)."""

GOAL = _options(
    click.option("--deadline", help=f"Finish within this long: {ACCEPTED}."),
    click.option(
        "--budget", type=FiniteFloat(0, MAX_USD, low_open=True), help="Spend at most USD."
    ),
    click.option(
        "--objective",
        type=click.Choice(OBJECTIVES),
        default="cheapest",
        show_default=True,
        help="cheapest that meets the deadline, or fastest within the budget.",
    ),
    click.option(
        "--confidence",
        type=FiniteFloat(0, 1, low_open=True, high_open=True),
        default=0.9,
        show_default=True,
        help="Required chance of meeting the deadline.",
    ),
    click.option(
        "--wait-value",
        type=FiniteFloat(0, 1e6),
        default=1.0,
        show_default=True,
        metavar="USD",
        help="What an hour of waiting (for a spot machine, its restarts) is worth to you: the "
        "cheapest weighs it beside the expected cost (0: waits are free).",
    ),
)
"""What the answer optimises, within which bound, with what confidence."""

MACHINES = _options(
    click.option(
        "--spot/--no-spot",
        default=None,
        help="Only spot, or only on-demand (default both, and spot with an on-demand fallback).",
    ),
    click.option("--provider", help="Only this provider (aws, gcp, azure, lambda)."),
    click.option("--region", help="Only this region."),
    click.option("--accelerator", help="Only this accelerator (T4, A100, ...)."),
    click.option(
        "--max-accelerators", type=BoundedInt(1, 100_000), help="At most this many per machine."
    ),
    click.option(
        "--max-nodes",
        type=BoundedInt(1, MAX_NODES),
        default=MAX_NODES,
        show_default=True,
        help="At most this many machines together (clusters of on-demand machines whose network "
        "is published; 1: one machine).",
    ),
    click.option("--cpu-only", is_flag=True, help="Only machines without accelerators."),
    click.option(
        "--precision",
        type=click.Choice(PRECISIONS),
        help="Training precision (default fp32; bf16 for an LLM): fp32 (your framework's default: "
        "TF32 on Ampere+ under TensorFlow 2, JAX and NVIDIA's containers, and for PyTorch's "
        "convolutions but not its matmuls), fp32-strict (no TF32 anywhere), tf32, fp16 or bf16 "
        "mixed precision (bf16 on Ampere+ and TPUs), mixed (fp16 on GPUs, bf16 on TPUs), fp8 (FP8 "
        "products on Hopper, Ada, Blackwell); each device is rated at its datasheet peak for it.",
    ),
)
"""Which offerings may be ranked, and at what precision."""

ANSWER = _options(
    click.option(
        "--top", type=BoundedInt(1, 100_000), default=10, show_default=True, help="Options to list."
    ),
    click.option("--explain", is_flag=True, help="Walk through the chosen option's numbers."),
    click.option("--pareto", is_flag=True, help="Also show the cost/time frontier."),
    click.option(
        "--fresh",
        is_flag=True,
        help="Probe again even if a stored probe (or an LLM proxy's stored failure) exists.",
    ),
    click.option(
        "--emit",
        nargs=2,
        metavar="skypilot FILE",
        help="Write a SkyPilot task for the chosen option to FILE (a new file: see --force).",
    ),
    click.option("--force", is_flag=True, help="Let --emit replace an existing FILE."),
)
"""What is shown and written."""


@click.command(context_settings=_HELP)
@backend_option
@WORKLOAD
@LLM_JOB
@GOAL
@MACHINES
@ANSWER
@output_format
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def recommend(
    model: str | None,
    epochs: int | None,
    batch_size: int | None,
    global_batch: int | None,
    samples: int | None,
    validation_samples: int | None,
    data: float | None,
    data_from: str | None,
    method: str | None,
    tokens: int | None,
    examples: int | None,
    seq_len: int | None,
    lora_rank: int | None,
    lora_targets: str | None,
    packing: bool | None,
    checkpointing: bool | None,
    fp32_adapters: bool | None,
    stack: str | None,
    deadline: str | None,
    budget: float | None,
    objective: str,
    confidence: float,
    wait_value: float,
    spot: bool | None,
    provider: str | None,
    region: str | None,
    accelerator: str | None,
    max_accelerators: int | None,
    max_nodes: int,
    cpu_only: bool,
    precision: str | None,
    top: int,
    explain: bool,
    pareto: bool,
    fresh: bool,
    emit: tuple[str, str] | None,
    force: bool,
    fmt: str,
    command: tuple[str, ...],
) -> None:
    """Recommend where to train MODEL: cheapest under a deadline, or fastest within a budget.

    Uses the stored probe of MODEL on this machine (or probes it first), predicts the training
    time on every offered machine and prices it with billing rules and the spot risk measured in
    public traces (availability and time to preemption). Under a deadline it also ranks a third
    way to pay: spot with an on-demand fallback that keeps the deadline (Uniform Progress).
    Options within the uncertainty of #1 are called ties, with the bench that would settle them.

    \b
      advisor recommend --model lstm --deadline 8h
      advisor recommend --model resnet50 --budget 200 --objective fastest --json
      advisor recommend --model cnn --deadline 2h --spot --explain --emit skypilot task.yaml
      advisor recommend --model llama3-8b --method qlora --tokens 20M --deadline 6h
      advisor recommend --model llama3.1-70b --method full --examples 50k --seq-len 4096 \
          --budget 500 --objective fastest --emit skypilot task.yaml
      advisor recommend --deadline 8h -- python train.py --epochs 30
    """
    _check_choices(emit, force, accelerator, cpu_only, data_from is not None and data is None)
    model = _model(command, model, epochs, samples, batch_size)
    constraints = _constraints(objective, deadline, budget, confidence, top, max_nodes, wait_value)
    filters = _filters(provider, region, accelerator, spot, cpu_only, max_accelerators)
    from advisor import service
    from advisor.cli.progress import run_with_progress

    finetune = Options(
        method=method, tokens=tokens, examples=examples, sequence=seq_len, rank=lora_rank,
        targets=lora_targets, packed=packing, checkpointing=checkpointing,
        fp32_adapters=fp32_adapters, stack=stack,
    )  # fmt: skip
    request = service.Request(
        model=model, epochs=epochs, batch_size=batch_size, global_batch=global_batch,
        samples=samples, validation_samples=validation_samples, precision=precision,
        filters=filters, constraints=constraints, finetune=finetune, data_bytes=data or 0.0,
        data_from=data_from,
    )  # fmt: skip
    rec = service.recommend(request, runner=run_with_progress, fresh=fresh)
    show(rec, fmt, explain=explain, pareto=pareto)
    if emit is not None:
        write_emit(rec, emit[1], force=force)


def _model(
    command: tuple[str, ...],
    model: str | None,
    epochs: int | None,
    samples: int | None,
    batch_size: int | None,
) -> str:
    """What to rank: ``--model``, or the name the probe of the ``command`` after ``--`` is
    stored under (probed here first)."""
    if command:
        return _probed_command(command, model, epochs, samples, batch_size)
    if model is None:
        raise UsageError("give --model MODEL, or your training command after --")
    return model


PROBE_SECONDS = 20.0
"""What ``recommend -- COMMAND`` gives the command's probe (``advisor probe --budget`` to choose)."""


def _probed_command(
    command: tuple[str, ...],
    model: str | None,
    epochs: int | None,
    samples: int | None,
    batch_size: int | None,
) -> str:
    """Probe the user's training ``command`` here (``advisor probe -- COMMAND``) and return the
    name its probe is stored under: ``--model`` when given, else the script's file name."""
    from advisor import service

    name = model or service.script_name(command)
    click.echo(f"probing {display.quoted(name)}: {PROBE_SECONDS:g} s at most", err=True)
    service.probe_script(
        command, name, budget=PROBE_SECONDS, epochs=epochs, samples=samples, batch_size=batch_size
    )
    return name


def _check_choices(
    emit: tuple[str, str] | None,
    force: bool,
    accelerator: str | None,
    cpu_only: bool,
    sourceless: bool = False,
) -> None:
    """Refuse, before anything is probed or ranked, an --emit of another kind than skypilot or
    to a FILE it may not write, --accelerator with --cpu-only, and --data-from without --data
    (``sourceless``)."""
    if emit is not None and emit[0] != "skypilot":
        raise UsageError(f"--emit knows only 'skypilot', not {emit[0]!r}")
    if emit is not None:
        _check_emit_target(emit[1], force)
    if accelerator and cpu_only:
        raise UsageError("--accelerator and --cpu-only exclude each other")
    if sourceless:
        raise UsageError("--data-from says where the --data SIZE lives: give --data too")


def _constraints(
    objective: str,
    deadline: str | None,
    budget: float | None,
    confidence: float,
    top: int,
    max_nodes: int,
    wait_value: float = 1.0,
) -> Constraints:
    """What the options ask of the recommendation: its objective, a deadline (parsed: see
    ``parse_duration``) or a budget, the chance of meeting the deadline, how many options to
    list, how many machines may train together and what an hour of waiting is worth."""
    return Constraints(
        objective=objective,
        deadline_seconds=parse_duration(deadline) if deadline is not None else None,
        budget_usd=budget,
        confidence=confidence,
        top=top,
        max_nodes=max_nodes,
        wait_usd_per_hour=wait_value,
    )


def _filters(
    provider: str | None,
    region: str | None,
    accelerator: str | None,
    spot: bool | None,
    cpu_only: bool,
    max_accelerators: int | None,
) -> Filters:
    """Which offerings the options let through: a provider, a region, an accelerator, spot or
    on-demand pricing (None: both), machines without accelerators, at most so many a machine."""
    return Filters(
        provider=provider,
        region=region,
        accelerator=accelerator,
        pricing=None if spot is None else ("spot" if spot else "on_demand"),
        cpu_only=cpu_only,
        max_count=max_accelerators,
    )


def _check_emit_target(path: str, force: bool) -> None:
    """Refuse a bad --emit FILE before any probing or ranking (the write checks again)."""
    from pathlib import Path

    target = Path(path)
    if target.is_symlink():
        raise UsageError(f"{target} is a symbolic link; refusing to write through it")
    if target.is_dir():
        raise UsageError(f"--emit skypilot needs a file name, and {target} is a folder")
    if target.exists() and not force:
        raise UsageError(f"{target} exists; refusing to overwrite it (use --force to replace it)")


def show(rec: Recommendation, fmt: str, *, explain: bool = False, pareto: bool = False) -> None:
    """Print a recommendation in ``fmt`` (table, json or csv)."""
    from advisor.recommend.report import OPTION_KEYS, as_json, option_row

    rows = [option_row(o) for o in rec.options]
    if fmt != "table":
        columns = [*OPTION_KEYS, "expected_hours", "expected_cost_usd", "why"]
        output.emit(rows, fmt, columns=columns, payload=as_json(rec))
        return
    from advisor.cli.recommendation_table import render_explanation, render_recommendation

    console = output.console()
    for part in render_recommendation(rec, pareto=pareto, width=console.width):
        console.print(part)
    chosen = rec.best or rec.fastest
    if explain and chosen is not None:
        console.print(render_explanation(rec, chosen))
    elif explain:  # nothing ranked: why each offering was left out
        from advisor.recommend.report import left_out_lines

        console.print(display.safe_text("\n".join(["", *left_out_lines(rec)])))


def write_emit(rec: Recommendation, path: str, *, force: bool = False) -> None:
    """Write the SkyPilot task of the chosen option (or of the fastest, when none qualifies)."""
    from advisor.errors import AdvisorError
    from advisor.recommend.skypilot_task import write_task

    chosen = rec.best or rec.fastest
    if chosen is None:
        raise AdvisorError("nothing to emit: no option was found")
    written = write_task(
        path,
        chosen.rentable,
        workload=rec.workload,
        overwrite=force,
        plan=chosen.outcome.fallback,
        prediction=chosen.outcome.prediction,
    )
    note = "" if rec.best else " (nothing met the constraints: the fastest option)"
    click.echo(f"wrote SkyPilot task {display.plain(written)}{note}", err=True)
