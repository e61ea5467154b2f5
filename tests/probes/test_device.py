"""The device fingerprint is read without TensorFlow and is stable."""

from __future__ import annotations

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
