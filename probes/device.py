"""This machine's fingerprint, read without importing a framework.

CPU model from /proc/cpuinfo, logical CPUs from the scheduler's affinity mask, the backend
(``probes.backend``) and its version from the installed distribution's metadata, oneDNN from
``TF_ENABLE_ONEDNN_OPTS`` (on by default on x86 since TF 2.9), an NVIDIA GPU from ``nvidia-smi``
where it exists and the backend was not told to leave it alone (``CUDA_VISIBLE_DEVICES=``,
``JAX_PLATFORMS=cpu``).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from probes import backend
from probes.result import Fingerprint

XLA_FLAG = "--tf_xla_auto_jit"
_CPU_SPAN = re.compile(r"(\d{1,6})(?:-(\d{1,6}))?")


def fingerprint(*, threads: int | None = None, precision: str = "fp32") -> Fingerprint:
    """The fingerprint of this machine, as a probe with ``threads`` intra-op threads sees it."""
    cpus = backend.logical_cpus()
    framework = backend.for_lookup()  # a probe has refused a bad KERAS_BACKEND before this
    accelerator, memory = (None, None) if framework.accelerator_hidden() else gpu()
    return Fingerprint(
        cpu_model=cpu_model(),
        logical_cpus=cpus,
        threads=threads or cpus,
        accelerator=accelerator,
        accelerator_memory_gib=memory,
        tensorflow=framework.version(),
        onednn=onednn_enabled(),
        xla=XLA_FLAG in os.environ.get("TF_XLA_FLAGS", ""),
        precision=precision,
        backend=framework.name,
        threads_per_core=threads_per_core(),
    )


def siblings_of(cpu: int) -> str:
    """Linux's list of the logical CPUs that share ``cpu``'s core (``0,8`` or ``0-1``; empty
    where the kernel does not say)."""
    try:
        return Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text()
    except OSError:
        return ""


def count_cpus(cpu_list: str) -> int:
    """How many CPUs a Linux CPU list names (``0,8`` 2, ``0-3`` 4, ``3`` 1; 0 if unreadable)."""
    total = 0
    for part in cpu_list.strip().split(","):
        span = _CPU_SPAN.fullmatch(part)
        if span is None:
            return 0
        low, high = int(span[1]), int(span[2] or span[1])
        if high < low:
            return 0
        total += high - low + 1
    return total if 0 < total <= 64 else 0


def threads_per_core() -> int:
    """Logical CPUs per core of the first CPU this process may run on, as the kernel reports
    them (a VM's topology is what its hypervisor shows); 0 where it does not say."""
    try:
        first = min(os.sched_getaffinity(0))
    except (AttributeError, OSError, ValueError):
        first = 0
    return count_cpus(siblings_of(first))


def cpu_model() -> str:
    """The CPU's model name; where a virtual machine hides the model number ("AMD EPYC"), the
    processor family and model numbers follow it (``AMD EPYC (family 26, model 2)``), which name
    the microarchitecture and so the width of its vector units."""
    fields = _cpuinfo()
    name = fields.get("model name", "").strip()
    if not name:
        return platform.processor() or platform.machine() or "unknown CPU"
    if not re.search(r"\d{3,}", name) and fields.get("cpu family", "").strip().isdigit():
        return f"{name} (family {fields['cpu family'].strip()}, model {fields.get('model', '?').strip()})"
    return name


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def tensorflow_version() -> str:
    """TensorFlow's version, whatever the active backend ("not installed" without it)."""
    return backend.BACKENDS["tensorflow"].version()


def onednn_enabled() -> bool:
    flag = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    if flag is not None:
        return flag.strip() not in ("0", "false", "False", "")
    return platform.machine().lower() in ("x86_64", "amd64")


def gpu() -> tuple[str | None, float | None]:
    """The first NVIDIA GPU's catalog name (``H100``, ``T4``) and memory in GiB, if any."""
    if shutil.which("nvidia-smi") is None:
        return None, None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None, None
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return None, None
    name, _, memory = lines[0].rpartition(",")
    return catalog_name(name), round(float(memory) / 1024, 1) if memory.strip() else None


def catalog_name(name: str) -> str:
    """``NVIDIA H100 80GB HBM3`` -> ``H100``; ``Tesla T4`` -> ``T4``."""
    for word in name.replace("NVIDIA", "").replace("Tesla", "").split():
        if any(ch.isdigit() for ch in word):
            return word.split("-")[0].upper()
    return name.strip()
