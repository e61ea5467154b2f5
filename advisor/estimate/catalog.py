"""The shipped device catalog: accelerators and cloud CPU families, each row with its source.

Loaded once per process (``lru_cache``). Names are exactly as the price database spells them
(``A100-80GB``, ``tpu-v5litepod-8``); CPU families as the price library maps instance types
(``skylake``, ``milan``, ``graviton3``, ...).
"""

from __future__ import annotations

import csv
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from advisor.locations import shipped

DEFAULT_CPU_FAMILY = "skylake"
"""Stated default when a CPU's family is unknown: the family the calibration data measured."""
SHARED_LANE_FP32_ISSUE = 0.25
"""Share of an FP32/INT32 lane's issue slots a large SGEMM fills with FP32 work. cuBLAS runs a
4096-square SGEMM at 23.27 TFLOP/s on an RTX A6000 (GA102), 0.60 of its 38.7 datasheet (the
cuBLAS baseline of abhik.ai's "CUDA matrix multiplication optimization", docs/SOURCES.md), where
the largest of DeepBench's SGEMMs reach 0.94-0.98 of the FP32 peak on GPUs whose FP32 lanes are
their own (P100, V100, Titan Xp: ``data/gpu-kernels-deepbench.csv``), 0.96 at the median:
0.60 / 0.96 = (64 + 64 x 0.25) / 128."""


@dataclass(frozen=True)
class Accelerator:
    """One rentable accelerator unit: a GPU, or a TPU slice of ``chips`` chips."""

    name: str
    kind: str
    """``gpu`` or ``tpu``."""
    chips: int
    """Chips in one unit (a TPU slice); 1 for a GPU."""
    fp32_tflops: float
    """Per chip, dense, without tensor cores (0 on a TPU: matmuls run on the bf16 MXU)."""
    tf32_tflops: float
    """Per chip, dense tensor-core TF32 (Ampere and later; 0 when absent)."""
    half_tflops: float
    """Per chip, dense FP16/BF16 tensor throughput (FP32 rate where there are no tensor cores)."""
    fp16_tflops: float
    """Per chip, dense FP16 datasheet peak (0 where the datasheet gives none: TPUs)."""
    bf16_tflops: float
    """Per chip, dense BF16 datasheet peak (0 before Ampere: V100, T4 have no bf16 units)."""
    fp8_tflops: float
    """Per chip, dense FP8 tensor datasheet peak with FP32 accumulate (0 before Ada and Hopper:
    the GPU has no FP8 units)."""
    memory_gib: float
    """Per chip."""
    bandwidth_gbs: float
    """Per chip memory bandwidth, GB/s."""
    interconnect: str
    interconnect_gbs: float
    """Per chip bandwidth to its peers for gradient all-reduce, GB/s."""
    source: str
    verified: str
    sms: int = 0
    """Streaming multiprocessors of a GPU (0 on a TPU)."""
    fp32_lanes_per_sm: int = 0
    """FP32 units of one multiprocessor (``fp32_tflops`` = sms x lanes x 2 x clock)."""
    clock_mhz: float = 0.0
    """The clock ``fp32_tflops`` is quoted at (the boost clock but for the K80's base)."""
    fp32_lanes_shared_with_int32: int = 0
    """Of ``fp32_lanes_per_sm``, those that run INT32 instructions too (GA10x and AD10x: 64
    of 128, NVIDIA's Ampere GA102 and Ada whitepapers), which a matrix product's integer
    work takes from its FP32 issue slots."""
    mamf_tflops: float = 0.0
    """Maximum achievable matmul FLOPS, measured: the fastest BF16 product with FP32
    accumulation found on the card over many shapes (Stas Bekman's ``mamf-finder``, the table
    of ``mag-/gpu_benchmark``; docs/SOURCES.md); 0 where not measured."""
    architecture: str = ""
    """The GPU's architecture (``volta``, ``turing``, ``ga100``, ``ga10x``, ``ada``,
    ``hopper``, ...; NVIDIA's whitepapers), whose convolutions reach their own share of its
    datasheet peaks (``Calibration.conv_speed``); '' on a TPU."""

    @property
    def tensor_share(self) -> float:
        """Share of its dense 16-bit datasheet peak the card sustains in a matrix product
        (``mamf_tflops``; 0: not measured): 1.08-1.10 on GeForce cards, which run above their
        rated boost clock, 0.59-0.70 on power-capped ones (H100 PCIe and NVL, L40S)."""
        if self.mamf_tflops <= 0 or self.half_tflops <= 0:
            return 0.0
        return self.mamf_tflops / self.half_tflops

    @property
    def fp32_gemm_share(self) -> float:
        """Share of ``fp32_tflops`` a matrix product can issue on the CUDA cores: 1 where every
        FP32 lane is its own, less where lanes are shared with INT32 (``SHARED_LANE_FP32_ISSUE``
        of a shared lane's slots)."""
        lanes, shared = self.fp32_lanes_per_sm, self.fp32_lanes_shared_with_int32
        if lanes <= 0 or shared <= 0:
            return 1.0
        return (lanes - shared + shared * SHARED_LANE_FP32_ISSUE) / lanes

    @property
    def sm_cycles_per_second(self) -> float:
        """Multiprocessor cycles a second over the chip: what bounds a kernel whose every
        multiprocessor waits on memory latency rather than on bandwidth (0: not known)."""
        return self.sms * self.clock_mhz * 1e6

    @property
    def has_tensor_cores(self) -> bool:
        """Volta and later: TF32 units, or 16-bit products at many times the FP32 rate (a
        P100's packed fp16 runs twice as fast on its CUDA cores, no tensor cores)."""
        return self.kind == "gpu" and (
            self.tf32_tflops > 0 or self.half_tflops > 3 * self.fp32_tflops
        )


@dataclass(frozen=True)
class CpuFamily:
    """One cloud CPU family, as the vCPUs an instance rents."""

    name: str
    vendor: str
    isa: str
    all_core_ghz: float
    fp32_flops_per_cycle: int
    """Per core, with the widest FMA units TensorFlow uses."""
    threads_per_core: int
    memory_gbs_per_vcpu: float
    """Socket memory bandwidth divided by the socket's vCPUs (an instance's fair share)."""
    example_instances: str
    source: str
    verified: str

    @property
    def vcpu_gflops(self) -> float:
        """Peak FP32 GFLOPS of one vCPU (a hyperthread shares its core's units)."""
        return self.gflops_per_cpu()

    def gflops_per_cpu(self, threads_per_core: int = 0) -> float:
        """Peak FP32 GFLOPS of one logical CPU that is one of ``threads_per_core`` threads of
        its core (0: the family's, as a cloud VM rents its cores' threads; 1: a whole core, as
        a VM with hyperthreading off or a pinned lane of whole cores has)."""
        return (
            self.all_core_ghz
            * self.fp32_flops_per_cycle
            / (threads_per_core or self.threads_per_core)
        )


def _float(text: str) -> float:
    return float(text) if text.strip() else 0.0


@lru_cache(maxsize=1)
def accelerators() -> dict[str, Accelerator]:
    """Every accelerator of the shipped catalog, by price-database name."""
    with shipped("devices.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    catalog = {}
    for row in rows:
        fp32 = _float(row["fp32_tflops"])
        half = max(_float(row["fp16_tflops"]), _float(row["bf16_tflops"]))
        catalog[row["name"]] = Accelerator(
            name=row["name"],
            kind=row["kind"],
            chips=int(row["chips"]),
            fp32_tflops=fp32,
            tf32_tflops=_float(row["tf32_tflops"]),
            half_tflops=half or fp32,
            fp16_tflops=_float(row["fp16_tflops"]),
            bf16_tflops=_float(row["bf16_tflops"]),
            fp8_tflops=_float(row.get("fp8_tflops") or ""),
            memory_gib=_float(row["memory_gib"]),
            bandwidth_gbs=_float(row["bandwidth_gbs"]),
            interconnect=row["interconnect"],
            interconnect_gbs=_float(row["interconnect_gbs"]),
            source=row["source"],
            verified=row["verified"],
            sms=int(row.get("sms") or 0),
            fp32_lanes_per_sm=int(row.get("fp32_lanes_per_sm") or 0),
            clock_mhz=_float(row.get("clock_mhz") or ""),
            fp32_lanes_shared_with_int32=int(row.get("fp32_lanes_shared_with_int32") or 0),
            mamf_tflops=_float(row.get("mamf_tflops") or ""),
            architecture=row.get("architecture") or "",
        )
    return catalog


@lru_cache(maxsize=1)
def typical_tensor_share() -> float:
    """The median ``tensor_share`` of the measured cards: the share the fitted tensor-core
    efficiencies stand on for a card that was not measured."""
    shares = [a.tensor_share for a in accelerators().values() if a.tensor_share > 0]
    return statistics.median(shares) if shares else 1.0


def tensor_speed(spec: Accelerator) -> float:
    """How much faster than a typical card, per datasheet FLOP, ``spec``'s tensor cores run:
    its measured ``tensor_share`` over ``typical_tensor_share``, never below 1 (1 where not
    measured). A card that sustains more than its rated clock (a GeForce) runs every kernel
    faster; one that throttles under back-to-back products at its power cap (H100 PCIe, L40S)
    need not in a training step, whose memory-bound kernels draw less."""
    share = spec.tensor_share
    return max(1.0, share / typical_tensor_share()) if share > 0 else 1.0


@lru_cache(maxsize=1)
def cpu_families() -> dict[str, CpuFamily]:
    """Every CPU family of the shipped catalog, by name."""
    with shipped("cpu-families.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {
        row["name"]: CpuFamily(
            name=row["name"],
            vendor=row["vendor"],
            isa=row["isa"],
            all_core_ghz=float(row["all_core_ghz"]),
            fp32_flops_per_cycle=int(row["fp32_flops_per_cycle"]),
            threads_per_core=int(row["threads_per_core"]),
            memory_gbs_per_vcpu=float(row["memory_gbs_per_vcpu"]),
            example_instances=row["example_instances"],
            source=row["source"],
            verified=row["verified"],
        )
        for row in rows
    }


def devices() -> list[Accelerator | CpuFamily]:
    """The whole catalog: accelerators first, then CPU families."""
    return [*accelerators().values(), *cpu_families().values()]


def accelerator(name: str) -> Accelerator | None:
    return accelerators().get(name)


def missing(accelerator_names: Iterable[str | None]) -> list[str]:
    """Accelerator names (from the prices) that the catalog lacks, sorted, each once."""
    known = accelerators()
    return sorted({name for name in accelerator_names if name and name not in known})


# Xeon/EPYC model numbers -> family. Order matters: the first match wins.
_CPU_MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"E5-\d{4}[A-Z]* v3|E7-\d{4} v3", "haswell"),
    (r"E5-\d{4}[A-Z]* v4|E7-\d{4} v4", "broadwell"),
    (r"(Platinum|Gold|Silver|Bronze) \d1\d\d", "skylake"),
    (r"(Platinum|Gold|Silver|Bronze) \d2\d\d", "cascadelake"),
    (r"(Platinum|Gold|Silver|Bronze) \d3\d\d", "icelake"),
    (r"(Platinum|Gold|Silver|Bronze) \d4\d\d", "sapphirerapids"),
    (r"(Platinum|Gold|Silver|Bronze) \d5\d\d", "emeraldrapids"),
    (r"EPYC \d{3}2|EPYC 7[A-Z]\d2", "rome"),
    (r"EPYC \d{3}3|EPYC 7[A-Z]\d3", "milan"),
    (r"EPYC 9\d{2}4|EPYC 9[A-Z]\d4", "genoa"),
    (r"EPYC 9\d{2}5|EPYC 9[A-Z]\d5", "turin"),
    # a VM that hides the model number: the processor family (probes.device.cpu_model)
    (r"AMD EPYC \(family 26\b", "turin"),
    (r"AMD EPYC \(family 25, model (1[6-9]|2\d|3[01]|16\d|17[0-5])\)", "genoa"),
    (r"AMD EPYC \(family 25\b", "milan"),
    (r"AMD EPYC \(family 23\b", "rome"),
    # Intel's server models (Linux, arch/x86/include/asm/intel-family.h); model 85 is Skylake,
    # Cascade Lake or Cooper Lake by stepping alone, and stays a guess. Anchored and bounded: an
    # imported row's text is a stranger's, and ``Intel.*`` over a long one backtracks for seconds
    (r"^Intel[^\n]{0,120}\(family 6, model 63\)", "haswell"),
    (r"^Intel[^\n]{0,120}\(family 6, model 79\)", "broadwell"),
    (r"^Intel[^\n]{0,120}\(family 6, model 106\)", "icelake"),
    (r"^Intel[^\n]{0,120}\(family 6, model 143\)", "sapphirerapids"),
    (r"^Intel[^\n]{0,120}\(family 6, model 207\)", "emeraldrapids"),
    (r"Neoverse-N1|Graviton2|Ampere Altra", "graviton2"),
    (r"Neoverse-V1|Graviton3", "graviton3"),
    (r"Neoverse-V2|Graviton4", "graviton4"),
)
_VENDOR_DEFAULTS = (("AMD", "milan"), ("Intel", DEFAULT_CPU_FAMILY), ("Neoverse", "graviton2"))


def family_of_cpu_model(cpu_model: str) -> tuple[str, bool]:
    """The CPU family of a model string, and whether it was guessed (True = a default)."""
    for pattern, family in _CPU_MODEL_PATTERNS:
        if re.search(pattern, cpu_model, re.IGNORECASE):
            return family, False
    for vendor, family in _VENDOR_DEFAULTS:
        if vendor.lower() in cpu_model.lower():
            return family, True
    return DEFAULT_CPU_FAMILY, True


def resolve_family(text: str | None) -> str | None:
    """A family name from a family name or a CPU model string (a probe export writes the model)."""
    if not text or text in cpu_families():
        return text
    family, guessed = family_of_cpu_model(text)
    return None if guessed else family


def cpu_family(name: str | None) -> tuple[CpuFamily, bool]:
    """A family by name, or the stated default; the flag is True when the default was used."""
    families = cpu_families()
    if name and name in families:
        return families[name], False
    return families[DEFAULT_CPU_FAMILY], True


def clock_ratio(here: str | None, there: str | None) -> float:
    """How much longer one thread's work takes on CPU family ``there`` than on ``here``: their
    all-core clocks' ratio (``data/cpu-families.csv``; the stated default family for an unknown
    name). What the cores do per cycle beyond that is not modelled."""
    return cpu_family(here)[0].all_core_ghz / cpu_family(there)[0].all_core_ghz


@lru_cache(maxsize=1)
def devices_as_sold() -> dict[tuple[str, str, str], str]:
    """The device an instance type carries where its price catalog names only the chip's
    family (Lambda's ``gpu_1x_h100_pcie`` lists ``H100``, whose catalog device is the SXM part),
    by (provider, instance type, accelerator) lower-cased (``data/instance-devices.csv``, each
    row's source beside it)."""
    with shipped("instance-devices.csv").open(newline="", encoding="utf-8") as handle:
        return {
            (row["provider"].lower(), row["instance_type"].lower(), row["accelerator"].lower()):
            row["device"]
            for row in csv.DictReader(handle)
        }  # fmt: skip


def device_as_sold(provider: str, instance_type: str, accelerator: str) -> str:
    """The device ``instance_type`` carries: its PCIe or NVL variant where the instance type
    says it (``devices_as_sold``), else ``accelerator`` as the price catalog names it."""
    key = (provider.lower(), instance_type.lower(), accelerator.lower())
    return devices_as_sold().get(key, accelerator)


@lru_cache(maxsize=1)
def node_networks() -> dict[tuple[str, str], float]:
    """Each multi-GPU instance type's network to the other machines of a cluster, gigabits a
    second, where a figure is published, by (provider, instance type) lower-cased
    (``data/node-networks.csv``: each row's fabric and source beside it)."""
    with shipped("node-networks.csv").open(newline="", encoding="utf-8") as handle:
        return {
            (row["provider"].lower(), row["instance_type"].lower()): float(row["gbps"])
            for row in csv.DictReader(handle)
        }


def node_network(provider: str, instance_type: str) -> float | None:
    """The published network of ``instance_type`` at ``provider`` in Gb/s, or None where there
    is none: a machine whose network is not known is never composed into a cluster."""
    return node_networks().get((provider.lower(), instance_type.lower()))
