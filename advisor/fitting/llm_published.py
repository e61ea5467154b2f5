"""Published LLM fine-tuning runs (``data/llm-finetune-published.csv``) as the model sees them.

Each row's configuration, read from the columns ``advisor/fitting/derive/llm_runs.py`` wrote from
the source's own words (``n_*``), becomes a ``FineTune`` and a ``Layout`` on the row's GPU; its
figures are tokens per second per GPU and peak memory per GPU (GiB, with the statistic the
source reports). ``use_throughput`` and ``use_memory`` say what a row is for: ``fit`` (what the
LLM fit reads), ``holdout`` (never fitted), ``boundary`` (the longest sequence a card holds).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from pathlib import Path

from advisor.estimate.layout import Layout
from advisor.locations import shipped
from advisor.workloads import llm
from advisor.workloads.llm import FineTune

PUBLISHED_FILE = "llm-finetune-published.csv"
GPUS_A_NODE = 8
"""GPUs of one DGX (H100, A100) node, the machine of every multi-node run published here."""
NODE_NETWORK_GBPS = 3200.0
"""A DGX H100's network to the other nodes: eight ConnectX-7 InfiniBand ports at 400 Gb/s, one
a GPU (NVIDIA DGX H100 datasheet, "Networking: 8x single-port NVIDIA ConnectX-7 VPI, 400 Gb/s
InfiniBand/Ethernet"; docs/SOURCES.md)."""


@dataclass(frozen=True)
class PublishedRun:
    """One published fine-tuning run, as configured and as measured."""

    source: str
    line: int
    """Its line in the file (the header is line 1)."""
    model: str
    tune: FineTune
    plan: Layout
    device: str
    """The GPU as the device catalog names it; empty for a card the source does not name."""
    capacity_gib: float
    """Memory of an unnamed card (0 when the device names it)."""
    precision: str
    tokens_per_second: float
    """Per GPU (0 when not published)."""
    memory_gib: float
    """Peak per GPU (0 when not published)."""
    memory_statistic: str
    """``allocated`` (the tensors' peak) or ``reserved`` (the allocator's, nvidia-smi's)."""
    stated_sequence: int
    """The sequence length the source states (0: none; the run then takes the default)."""
    model_parallel: bool
    """Tensor or pipeline parallelism (Megatron, NeMo, AutoModel), laid out as published."""
    use_throughput: str
    use_memory: str
    note: str

    @property
    def nodes(self) -> int:
        """DGX nodes the run spread over (1 up to eight GPUs)."""
        return max(1, -(-self.plan.gpus // GPUS_A_NODE))

    @property
    def label(self) -> str:
        where = self.device or f"{self.capacity_gib:g} GB card"
        return (
            f"{self.model} {self.tune.method} {self.tune.shape.sequence} tok "
            f"{self.plan.gpus}x{where} {self.precision}"
        )


def _int(text: str, default: int = 0) -> int:
    return int(text) if text.strip().isdigit() else default


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _run(row: dict[str, str], line: int) -> PublishedRun | None:
    model = llm.find(row["n_model"]) if row["n_model"] else None
    if model is None or not row["n_method"]:
        return None
    sequence = _int(row["sequence_length"], llm.DEFAULT_SEQUENCE)
    tune = FineTune(
        replace(model.shape, sequence=sequence),
        row["n_method"],
        _int(row["n_rank"], llm.DEFAULT_RANK),
        row["n_targets"] or "all",
        "" if row["n_quant"] in ("", "none") else row["n_quant"],
        row["n_checkpointing"] == "yes",
        row["n_master"] or "fp32",
        row["n_optimizer"].removeprefix("paged-") or "adamw",
        row["n_optimizer_in_backward"] == "yes",
        row["n_chunked_loss"] == "yes",
        row["n_activation_offload"] == "yes",
        fp32_adapters=row["n_fp32_adapters"] == "yes",
        fused_loss=row["n_fused_loss"] == "yes",
        frozen_fp32=row["n_frozen_fp32"] == "yes",
        compiled=row.get("n_compiled") == "yes",
        stack=row.get("n_stack") or "hf",
        attention=row.get("n_attention") or "native",
        fp8_weights=row.get("n_fp8_weights") == "yes",
    )
    gpus, micro = _int(row["gpus"], 1), _int(row["batch_per_gpu"], 1)
    total = _int(row["global_batch"], gpus * micro)
    sharding = {"fsdp": "full", "zero1": "optimizer"}.get(row["n_sharding"], "none")
    tensor, pipeline, virtual = _model_split(row["sharding"])
    if row["n_sharding"] == "model":  # FSDP2 under tensor parallel, else Megatron's optimizer
        sharding = "full" if "fsdp" in row["sharding"].lower() else "optimizer"
    copies = max(1, gpus // (tensor * pipeline))
    return PublishedRun(
        source=row["source"],
        line=line,
        model=model.id,
        tune=tune,
        plan=Layout(gpus, micro, max(total, copies * micro), sharding, tensor, pipeline, virtual),
        device=row["n_device"],
        capacity_gib=_float(row["n_capacity_gib"]),
        precision=row["n_precision"] or "bf16",
        tokens_per_second=_float(row["tokens_per_second_per_gpu"]),
        memory_gib=_float(row["peak_memory_gib_per_gpu"]),
        memory_statistic=row["n_memory_statistic"],
        stated_sequence=_int(row["sequence_length"]),
        model_parallel=row["n_sharding"] == "model",
        use_throughput=row["use_throughput"],
        use_memory=row["use_memory"],
        note=row["use_note"],
    )


def _model_split(text: str) -> tuple[int, int, int]:
    """(tensor, pipeline, chunks a stage) from a run's words (``tp=4,pp=4,vp=5,dp=2``)."""
    found = {key: int(value) for key, value in re.findall(r"\b(tp|pp|vp)=(\d+)", text)}
    return found.get("tp", 1), found.get("pp", 1), found.get("vp", 1)


def read_published(path: Path | None = None) -> list[PublishedRun]:
    """Every row advisor can model (a known model and method), in file order."""
    source = path or shipped(PUBLISHED_FILE)
    with open(source, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = (_run(row, line) for line, row in enumerate(rows, start=2))
    return [run for run in runs if run is not None]


def throughput_runs(use: str) -> list[PublishedRun]:
    """Runs whose tokens per second are ``use`` (``fit`` or ``holdout``)."""
    return [run for run in read_published() if run.use_throughput == use]


def memory_runs(use: str) -> list[PublishedRun]:
    """Runs whose peak memory is ``use`` (``fit``, ``holdout`` or ``boundary``)."""
    return [run for run in read_published() if run.use_memory == use]
