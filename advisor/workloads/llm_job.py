"""A fine-tuning job as people state it: a model, a method, and how much text how often.

``--tokens 20M`` (the dataset's tokens, packed into sequences of ``--seq-len``) or
``--examples N`` (each padded to ``--seq-len`` unless packed), ``--epochs``, ``--lora-rank``:
``job_for`` checks every value and names the bad one in one line, so the command line and the
app refuse the same things. No TensorFlow here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from advisor import display
from advisor.errors import UsageError
from advisor.workloads import stacks
from advisor.workloads.llm import (
    DEFAULT_RANK,
    DEFAULT_SEQUENCE,
    TARGETS,
    FineTune,
    Model,
    check_method,
    get,
)
from advisor.workloads.zoo import Workload

MAX_TOKENS = 10**12
"""Most training tokens a job may state (a trillion: pre-training scale, far beyond tuning)."""
MAX_SEQUENCES = 10**9
MAX_RANK = 1024
MAX_EPOCHS = 1000
MIN_SEQUENCE = 16
DEFAULT_GLOBAL_BATCH = 16
"""Sequences per optimizer step unless a node's micro-batches hold more (Hugging Face TRL and
torchtune recipes train with 8-64)."""
_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def count_value(text: str) -> int | None:
    """A count as people write it (``20M``, ``1.5B``, ``500k``, ``20_000_000``, ``-3``), or
    None when it is not one (``lots``, ``nan``, ``inf``)."""
    raw = text.strip().lower().replace("_", "").replace(",", "")
    factor = _SUFFIXES.get(raw[-1:], 1) if raw else 1
    number = raw[:-1] if factor > 1 else raw
    try:
        value = float(number) * factor
    except ValueError:
        return None
    return round(value) if math.isfinite(value) else None


def parse_count(text: str, what: str) -> int:
    """``count_value`` of ``text``, at least 1, or a usage error naming ``what``."""
    value = count_value(text)
    if value is None:
        raise UsageError(f"{what} must be a count like 20M or 500k, not {text!r}")
    if value < 1:
        raise UsageError(f"{what} must be at least 1, not {text!r}")
    return value


@dataclass(frozen=True)
class Options:
    """What a user said about a fine-tuning job beyond the model (None: not said)."""

    method: str | None = None
    tokens: int | None = None
    examples: int | None = None
    sequence: int | None = None
    rank: int | None = None
    targets: str | None = None
    packed: bool | None = None
    checkpointing: bool | None = None
    fp32_adapters: bool | None = None
    stack: str | None = None

    def given(self) -> list[str]:
        """The options that were set, as their command-line flags."""
        flags = {
            "method": "--method", "tokens": "--tokens", "examples": "--examples",
            "sequence": "--seq-len", "rank": "--lora-rank", "targets": "--lora-targets",
            "packed": "--packing", "checkpointing": "--checkpointing",
            "fp32_adapters": "--fp32-adapters", "stack": "--stack",
        }  # fmt: skip
        return [flag for name, flag in flags.items() if getattr(self, name) is not None]


@dataclass(frozen=True)
class Job:
    """A fine-tuning job as people state it: a model, a method, and how much text how often."""

    model: Model
    tune: FineTune
    """The step: the model at the job's sequence length, the method and its switches."""
    sequences: int
    """Sequences of ``tune.shape.sequence`` tokens one epoch trains on (packed, or one per
    example padded to the length)."""
    epochs: int = 1
    tokens: int | None = None
    """The dataset's own tokens per epoch, when stated (``--tokens``)."""
    packed: bool = True
    micro_batch: int | None = None
    """Sequences a GPU computes at once (None: the largest power of two up to 8 that fits)."""
    precision: str = "bf16"

    @property
    def sequence(self) -> int:
        return self.tune.shape.sequence

    @property
    def computed_tokens(self) -> int:
        """Tokens the GPUs compute over the whole job, padding included."""
        return self.sequences * self.sequence * self.epochs

    @property
    def workload(self) -> str:
        """The job's name in the probe store and the recommendation (``llama3.1-8b-qlora``)."""
        return f"{self.model.id}-{self.tune.method}"

    def describe(self) -> str:
        text = f"{self.model.id} {self.tune.describe()}; {self.sequences:,} sequences"
        if self.tokens is not None:
            text += f" ({self.tokens:,} tokens{', packed' if self.packed else ''})"
        return text + f" x {self.epochs} epoch{'s' if self.epochs != 1 else ''}"


def job_of(
    name: str,
    options: Options,
    *,
    epochs: int | None = None,
    micro_batch: int | None = None,
    precision: str = "bf16",
) -> Job:
    """``job_for`` from a request's options."""
    return job_for(
        name, method=options.method or "lora", tokens=options.tokens, examples=options.examples,
        sequence=options.sequence, epochs=epochs, packed=options.packed, rank=options.rank,
        targets=options.targets, micro_batch=micro_batch,
        checkpointing=options.checkpointing, precision=precision,
        fp32_adapters=bool(options.fp32_adapters), stack=options.stack,
    )  # fmt: skip


def job_for(
    name: str,
    *,
    method: str = "lora",
    tokens: int | None = None,
    examples: int | None = None,
    sequence: int | None = None,
    epochs: int | None = None,
    packed: bool | None = None,
    rank: int | None = None,
    targets: str | None = None,
    micro_batch: int | None = None,
    checkpointing: bool | None = None,
    precision: str = "bf16",
    fp32_adapters: bool = False,
    stack: str | None = None,
) -> Job:
    """The job a user states, checked: every bad value is one ``UsageError`` line; the step as
    ``stack`` runs it (``checkpointing`` None: the stack's default)."""
    model = get(name)
    check_method(method)
    software = stacks.get(stacks.DEFAULT if stack is None else stack)
    stacks.check_method(software, method)
    if precision == "fp8" and not software.fp8:
        with_fp8 = ", ".join(s.id for s in stacks.stacks().values() if s.fp8)
        raise UsageError(
            f"{software.title} does not train in FP8: --precision bf16, or a stack that does "
            f"(--stack {with_fp8})"
        )
    if method == "full" and (rank is not None or targets is not None):
        raise UsageError("--lora-rank and --lora-targets apply to --method lora or qlora")
    if method == "full" and fp32_adapters:
        raise UsageError("--fp32-adapters applies to --method lora or qlora")
    if targets is not None and targets not in TARGETS:
        raise UsageError(f"unknown LoRA targets {targets!r}; choose one of {', '.join(TARGETS)}")
    length = DEFAULT_SEQUENCE if sequence is None else sequence
    _bounded("--seq-len", length, MIN_SEQUENCE, model.context, f"{model.id}'s context")
    _bounded("--lora-rank", DEFAULT_RANK if rank is None else rank, 1, MAX_RANK)
    _bounded("--epochs", 1 if epochs is None else epochs, 1, MAX_EPOCHS)
    if micro_batch is not None:
        _bounded("--batch-size", micro_batch, 1, 4096)
    if tokens is None and examples is None:
        raise UsageError(f"say how much {model.id} trains on: --tokens (20M) or --examples")
    if tokens is not None:
        _bounded("--tokens", tokens, 1, MAX_TOKENS)
    if examples is not None:
        _bounded("--examples", examples, 1, MAX_SEQUENCES)
    pack = tokens is not None if packed is None else packed
    if pack and tokens is None:
        raise UsageError("packing needs --tokens (how many tokens the examples hold)")
    if pack and examples is not None:  # packed, the examples' count would be dropped, silently
        raise UsageError(
            "--examples counts padded sequences (--no-packing); packed, --tokens alone says "
            "how much it trains on: give one"
        )
    if not pack and examples is None:
        raise UsageError("unpacked training needs --examples (each is padded to --seq-len)")
    count = -(-tokens // length) if pack and tokens is not None else examples
    assert count is not None
    _bounded("the sequences", count, 1, MAX_SEQUENCES)
    shape = replace(model.shape, sequence=length)
    tune = FineTune(
        shape, method, DEFAULT_RANK if rank is None else rank, targets or "all",
        fp32_adapters=fp32_adapters,
    )  # fmt: skip
    tune = software.recipe(tune, checkpointing)
    return Job(model, tune, count, epochs or 1, tokens, pack, micro_batch, precision)


def _bounded(flag: str, value: int, low: int, high: int, limit: str = "") -> None:
    if not low <= value <= high:
        bound = f" ({limit})" if limit else ""
        raise UsageError(f"{flag} must be between {low:,} and {high:,}{bound}, not {value:,}")


PROBE_PREFIX = "llm:"
"""Where a probe's workload name says it is an LLM job's proxy (the probe store's key)."""


def probe_name(job: Job) -> str:
    """The name of what a probe of ``job`` steps: model, method, adapters, sequence length,
    checkpointing, the adapters' dtype (``llm:llama3.1-8b:qlora:r16-all:2048``); the sizes are
    the config's."""
    tune = job.tune
    adapters = f"r{tune.rank}-{tune.targets}" if tune.adapted else "all"
    flags = "" if tune.checkpointing else ":no-checkpointing"
    flags += ":fp32-adapters" if tune.fp32_adapters else ""
    return f"{PROBE_PREFIX}{job.model.id}:{tune.method}:{adapters}:{job.sequence}{flags}"


def is_probe_name(name: str) -> bool:
    return name.startswith(PROBE_PREFIX)


_PROBE_NAME = re.compile(
    r"(?P<model>[^:]{1,100}):(?P<method>full|lora|qlora):"
    r"(?:all|r(?P<rank>[1-9][0-9]{0,3})-(?P<targets>[a-z]{1,20})):(?P<length>[1-9][0-9]{0,6})"
    r"(?P<unchecked>:no-checkpointing)?(?P<fp32>:fp32-adapters)?"
)
"""A probe name as ``probe_name`` writes it, and nothing else."""


def job_of_probe(name: str, sequences: int, epochs: int, micro_batch: int) -> Job:
    """The job a probe name stands for (a child process probes it from its name): a name that
    ``probe_name`` would not have written for it is a usage error, naming it."""
    found = _PROBE_NAME.fullmatch(name.removeprefix(PROBE_PREFIX))
    wrong = UsageError(
        f"not an LLM probe name: {display.quoted(name)} "
        "(llm:MODEL:full|lora|qlora:all|rRANK-TARGETS:SEQUENCE, as 'advisor probe' names one)"
    )
    if not name.startswith(PROBE_PREFIX) or found is None:
        raise wrong
    adapted = found["method"] != "full"
    if adapted != (found["rank"] is not None):
        raise wrong
    job = job_for(
        found["model"], method=found["method"], examples=sequences,
        sequence=int(found["length"]), epochs=epochs, packed=False,
        rank=int(found["rank"]) if adapted else None, targets=found["targets"],
        micro_batch=micro_batch, checkpointing=found["unchecked"] is None,
        fp32_adapters=adapted and found["fp32"] is not None,
    )  # fmt: skip
    if probe_name(job) != name:  # an alias of the model, or a flag on a full fine-tune
        raise wrong
    return job


def workload_of(job: Job) -> Workload:
    """What the probe steps for ``job``: its model at the job's sequence length, trained the
    job's way (LoRA's adapters on the targeted projections, the rest frozen; QLoRA's 4-bit base
    is stepped in 32 bits on a CPU), with the job's FLOPs per sequence."""
    tune, shape = job.tune, job.tune.shape
    adapters = (tune.rank, TARGETS[tune.targets]) if tune.adapted else None
    return Workload(
        probe_name(job), f"{job.model.id} {tune.describe()}", (), (shape.sequence,), "int32",
        job.sequences, 0, job.epochs, job.micro_batch or 1, "adamw", shape.parameters(),
        tune.flops_per_token() * shape.sequence, "transformer", True, shape, adapters,
    )  # fmt: skip
