"""The device fingerprint is read without TensorFlow and is stable."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from probes import device


def test_fingerprint_of_this_machine() -> None:
    fp = device.fingerprint()
    assert fp.cpu_model and fp.logical_cpus >= 1 and fp.threads == fp.logical_cpus
    assert fp.tensorflow[0].isdigit()
    assert fp.key == device.fingerprint().key
    assert device.fingerprint(threads=1).key != fp.key
    assert device.fingerprint(precision="mixed").precision == "mixed"


def test_a_linux_cpu_list_is_counted_and_a_strange_one_is_not_guessed() -> None:
    assert device.count_cpus("0,8\n") == 2 and device.count_cpus("0-1") == 2
    assert device.count_cpus("3") == 1 and device.count_cpus("0-3,8-11") == 8
    for strange in ("", "x", "0-", "1-0,", "0-99999", "-1"):
        assert device.count_cpus(strange) == 0, strange


def test_the_topology_is_read_but_names_no_other_device() -> None:
    """Logical CPUs per core, as the kernel reports them (1 on this VM: its two vCPUs are two
    cores), is part of the fingerprint but not of the key: stored probes still match."""
    fp = device.fingerprint()
    assert 0 <= fp.threads_per_core <= 64
    if device.siblings_of(0):  # Linux with sysfs
        assert fp.threads_per_core >= 1
    assert dataclasses.replace(fp, threads_per_core=2).key == fp.key


def test_fingerprint_never_imports_tensorflow() -> None:
    code = (
        "import sys, json; from probes.device import fingerprint; fingerprint(); "
        "print(json.dumps('tensorflow' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) is False


def test_catalog_names() -> None:
    assert device.catalog_name("NVIDIA H100 80GB HBM3") == "H100"
    assert device.catalog_name("Tesla T4") == "T4"
    assert device.catalog_name("NVIDIA A100-SXM4-40GB") == "A100"


def test_tensorflow_version_matches_the_installed_distribution() -> None:
    import importlib.metadata

    from probes.device import tensorflow_version

    assert tensorflow_version() == importlib.metadata.version("tensorflow")
