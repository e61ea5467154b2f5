"""How an LLM fine-tuning step spreads over its GPUs: the layout the planner chooses
(``finetune.choose_layout``), the prediction carries (``Prediction.layout``), and the answer,
``--json``, the task file and the checkpoint writers read: one typed record, not the task file's
variables parsed back in each."""

from __future__ import annotations

from dataclasses import dataclass

SHARDINGS = ("none", "optimizer", "full", "hybrid")
"""What the data-parallel copies split between them: nothing (data parallel), the optimizer
state and the master weights (ZeRO-1, Megatron's distributed optimizer), everything (FSDP,
ZeRO-3), or everything within each node and nothing across nodes (HSDP, FSDP's hybrid shard)."""


@dataclass(frozen=True)
class Layout:
    """How one optimizer step of a job spreads over its GPUs: ``tensor`` x ``pipeline`` GPUs
    hold one copy of the model (Megatron's model parallelism), ``data`` copies of it share the
    global batch."""

    gpus: int
    micro_batch: int
    """Sequences one copy of the model computes at once."""
    global_batch: int
    """Sequences per optimizer step, a multiple of ``data x micro_batch``."""
    sharding: str = "none"
    """One of ``SHARDINGS``: what the data-parallel copies split between them."""
    tensor: int = 1
    """GPUs of one node that split every layer's products (tensor parallel, with sequence
    parallelism: each keeps 1 / tensor of a layer's activations)."""
    pipeline: int = 1
    """Stages the layers are cut into, one after the other (pipeline parallel, 1F1B)."""
    virtual: int = 1
    """Chunks of layers each stage holds (the interleaved 1F1B schedule): a shorter bubble for
    ``virtual`` times the stage-to-stage sends."""

    @property
    def model_parallel(self) -> int:
        """GPUs that hold one copy of the model."""
        return self.tensor * self.pipeline

    @property
    def data(self) -> int:
        """Copies of the model, each on ``model_parallel`` GPUs."""
        return max(1, self.gpus // self.model_parallel)

    @property
    def accumulation(self) -> int:
        """Micro-batches a copy of the model runs a step (a pipeline's micro-batches)."""
        return max(1, self.global_batch // (self.data * self.micro_batch))

    @property
    def sharded(self) -> bool:
        """FSDP / ZeRO-3 (or HSDP: within each node): each GPU holds a share of the weights."""
        return self.sharding in ("full", "hybrid") and self.data > 1

    @property
    def bubble(self) -> float:
        """The pipeline's idle share over its work: (stages - 1) / (chunks x micro-batches)
        (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
        Using Megatron-LM", SC21, section 2.2)."""
        return (self.pipeline - 1) / (self.virtual * self.accumulation)

    @property
    def launcher_sharding(self) -> str:
        """What a task file tells the launcher to shard (``ADVISOR_SHARDING``): ``none``,
        ``zero1``, ``fsdp`` or ``hsdp``; ``none`` on one GPU."""
        return _LAUNCHER_NAMES[self.sharding] if self.gpus > 1 else "none"

    def describe(self) -> str:
        accumulated = f" x {self.accumulation} accumulated" if self.accumulation > 1 else ""
        batch = f"micro-batch {self.micro_batch}{accumulated} (global {self.global_batch})"
        if self.gpus == 1:
            return f"1 GPU; {batch}"
        if self.model_parallel > 1:
            chunks = f", {self.virtual} chunks a stage" if self.virtual > 1 else ""
            split = f"tensor {self.tensor} x pipeline {self.pipeline}{chunks} x data {self.data}"
            return f"{self.gpus} GPUs, {split}, distributed optimizer; {batch}"
        return f"{self.gpus} GPUs, {_SHARDING_WORDS[self.sharding]}; {batch}"


_SHARDING_WORDS = {
    "none": "data parallel",
    "optimizer": "data parallel, sharded optimizer (ZeRO-1)",
    "full": "FSDP (sharded weights, gradients, optimizer)",
    "hybrid": "HSDP (FSDP within each node, replicated across nodes)",
}


_LAUNCHER_NAMES = {"none": "none", "optimizer": "zero1", "full": "fsdp", "hybrid": "hsdp"}
"""``Layout.launcher_sharding`` by sharding."""
