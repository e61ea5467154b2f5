"""This machine's fingerprint, read without importing TensorFlow.

CPU model from /proc/cpuinfo, logical CPUs from the scheduler's affinity mask, TensorFlow's
version from the installed distribution's metadata, oneDNN from ``TF_ENABLE_ONEDNN_OPTS`` (on by
default on x86 since TF 2.9), an NVIDIA GPU from ``nvidia-smi`` where it exists.
"""

from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess
import sys

from probes.result import Fingerprint

XLA_FLAG = "--tf_xla_auto_jit"


def fingerprint(*, threads: int | None = None, precision: str = "fp32") -> Fingerprint:
    """The fingerprint of this machine, as a probe with ``threads`` intra-op threads sees it."""
    cpus = logical_cpus()
    accelerator, memory = gpu()
    return Fingerprint(
        cpu_model=cpu_model(),
        logical_cpus=cpus,
        threads=threads or cpus,
        accelerator=accelerator,
        accelerator_memory_gib=memory,
        tensorflow=tensorflow_version(),
        onednn=onednn_enabled(),
        xla=XLA_FLAG in os.environ.get("TF_XLA_FLAGS", ""),
        precision=precision,
    )


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def logical_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def tensorflow_version() -> str:
    """TensorFlow's version, from its installed ``dist-info`` folder's name.

    Neither TensorFlow nor ``importlib.metadata`` is imported: the latter alone costs ~20 ms,
    paid by every recommendation that looks up a stored probe.
    """
    for distribution in ("tensorflow", "tensorflow_cpu", "tf_nightly"):
        for folder in sys.path:
            for info in glob.glob(os.path.join(folder or ".", f"{distribution}-*.dist-info")):
                return os.path.basename(info)[len(distribution) + 1 : -len(".dist-info")]
    return "not installed"


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
