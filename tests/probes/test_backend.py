"""The Keras backend as part of a probe's identity, and the one seam that selects it.

The tests here that train run in a fresh process (Keras fixes its backend at its first import):
JAX's are marked ``jax``; PyTorch's skip, saying so in ``pytest -ra``'s summary, where PyTorch
is not installed (its wheel brings gigabytes of CUDA libraries: not a test dependency).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import types
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from advisor.errors import AdvisorError, UsageError
from advisor.estimate.predict import predict
from advisor.estimate.prediction import Target
from advisor.store import connect
from probes import backend, exchange, history
from tests.estimate.test_probes import LOCAL_CPU, probe

ROOT = Path(__file__).resolve().parents[2]
JAX = LOCAL_CPU.__class__(**{**asdict(LOCAL_CPU), "tensorflow": "0.10.2", "backend": "jax"})
NO_TORCH = importlib.util.find_spec("torch") is None
TORCH_SKIP = "PyTorch is not installed: the torch backend's tests did not run (advisor[torch])"
NO_JAX = importlib.util.find_spec("jax") is None
JAX_SKIP = "JAX is not installed: the jax backend's tests did not run (pip install -e '.[test]')"


def test_a_tensorflow_probe_keeps_the_key_it_had_before_backends() -> None:
    later = ("backend", "threads_per_core", "devices", "nodes")  # one device: as before them
    fields = {k: v for k, v in asdict(LOCAL_CPU).items() if k not in later}
    before = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]
    assert LOCAL_CPU.key == before
    assert JAX.key != LOCAL_CPU.key
    assert replace(JAX, devices=2, nodes=2).key not in (JAX.key, replace(JAX, devices=2).key)


def test_two_backends_probes_of_one_workload_are_stored_side_by_side() -> None:
    db = connect()
    tf_probe = probe("mnist_mlp", 0.004)
    jax_probe = replace(probe("mnist_mlp", 0.003), device=JAX)
    history.save(db, tf_probe)
    history.save(db, jax_probe)
    stored = history.latest(db, "mnist_mlp")
    assert sorted(p.device.backend for p in stored) == ["jax", "tensorflow"]
    assert history.find(db, jax_probe.config, JAX.key) == jax_probe


def test_the_backend_travels_in_the_exchange_format(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    jax_probe = replace(probe("mnist_mlp", 0.003), device=JAX)
    exchange.write_csv(path, [jax_probe, probe("mnist_mlp", 0.004)])
    rows = exchange.read_csv(path)
    assert {(r.backend, r.software) for r in rows} == {("jax", "jax-0.10.2"),
                                                       ("tensorflow", "tensorflow-2.21.0")}  # fmt: skip
    back = exchange.from_rows(rows)
    assert [p.device for p in back] == [JAX, LOCAL_CPU]


def test_a_file_from_before_the_backend_column_reads_as_tensorflow(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    exchange.write_csv(path, [probe("mnist_mlp", 0.004)])
    with path.open() as handle:
        rows = list(csv.reader(handle))
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(row[:-1] for row in rows)
    (result,) = exchange.from_rows(exchange.read_csv(path))
    assert result.device == LOCAL_CPU and result.device.backend == "tensorflow"


def test_an_unknown_backend_in_a_file_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    exchange.write_csv(path, [probe("mnist_mlp", 0.004)])
    path.write_text(path.read_text().replace(",tensorflow\n", ",mxnet\n", 1))
    with pytest.raises(UsageError, match=r"bad.csv:2: unknown backend 'mxnet'"):
        exchange.read_csv(path)


def test_a_non_tensorflow_probe_predicts_other_devices_flagged_extrapolated() -> None:
    target = Target(accelerator=None, vcpus=8, cpu_family="skylake")
    tf_guess = predict(probe("mnist_mlp", 0.004), target)
    jax_guess = predict(replace(probe("mnist_mlp", 0.004), device=JAX), target)
    assert not tf_guess.extrapolated
    assert jax_guess.extrapolated and jax_guess.log_sigma > tf_guess.log_sigma


def test_select_refuses_an_unknown_name_and_a_keras_imported_with_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(UsageError, match="unknown backend 'numpy'"):
        backend.select("numpy")
    keras = types.ModuleType("keras")
    keras.backend = types.SimpleNamespace(backend=lambda: "tensorflow")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras", keras)
    monkeypatch.delenv(backend.VARIABLE, raising=False)
    with pytest.raises(UsageError, match="already imported with the tensorflow backend"):
        backend.select("jax")
    assert backend.select("tensorflow").name == "tensorflow"


def test_keras_backend_decides_without_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(backend.VARIABLE, "JAX")
    assert backend.requested() == "jax"
    monkeypatch.setenv(backend.VARIABLE, "numpy")
    with pytest.raises(UsageError, match="unknown Keras backend 'numpy'"):
        backend.active()


def test_a_backend_that_is_not_installed_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend.Torch, "installed", lambda self: False)
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    with pytest.raises(AdvisorError, match=r"torch backend is not installed here \(pip install"):
        backend.select("torch")


def test_a_hidden_gpu_is_no_accelerator_of_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert backend.BACKENDS["torch"].accelerator_hidden()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert backend.BACKENDS["jax"].accelerator_hidden()
    assert not backend.BACKENDS["tensorflow"].accelerator_hidden()


def _probe_cli(*extra: str, env: dict[str, str] | None = None) -> dict:
    """``advisor probe --json`` of a tiny MLP in a fresh process."""
    command = [sys.executable, "-c", "from advisor.cli import main; main()", "probe",
               "--model", "mlp", "--samples", "1024", "--validation-samples", "256",
               "--epochs", "2", "--batch-size", "64", "--budget", "3", "--json", *extra]  # fmt: skip
    out = subprocess.run(
        command, capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return dict(json.loads(out.stdout))


@pytest.mark.jax
@pytest.mark.skipif(NO_JAX, reason=JAX_SKIP)
def test_advisor_probe_backend_jax_records_jax() -> None:
    payload = _probe_cli("--backend", "jax")
    assert payload["backend"] == "jax"
    assert payload["op_split_source"] == "model layers"
    assert payload["op_split"]["matmul_conv"] > 0.9  # an MLP: its arithmetic is the matmuls
    assert payload["step_seconds"] > 0 and not payload["cached"]


@pytest.mark.jax
@pytest.mark.skipif(NO_JAX, reason=JAX_SKIP)
def test_keras_backend_jax_without_the_option_probes_on_jax() -> None:
    payload = _probe_cli(env={"KERAS_BACKEND": "jax"})
    assert payload["backend"] == "jax"


@pytest.mark.jax
@pytest.mark.skipif(NO_JAX, reason=JAX_SKIP)
def test_a_string_input_under_jax_is_one_line_without_tensorflow_logs(tmp_path: Path) -> None:
    """StringLookup makes Keras import TensorFlow under JAX, whose C++ start-up lines (``All log
    messages before absl::InitializeLog()``) no setting silences: the probe's stderr is still
    its one error line."""
    from tests.inputs import string_input_model

    string_input_model(tmp_path)
    model = tmp_path / "text.keras"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_CPP", "ADVISOR_VERB"))}
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "probe", "--model", str(model), "--samples", "8",
         "--epochs", "1", "--backend", "jax"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("advisor: error: the model's input") and "string values" in line


@pytest.mark.skipif(NO_TORCH, reason=TORCH_SKIP)
def test_advisor_probe_backend_torch_records_torch() -> None:
    payload = _probe_cli("--backend", "torch")
    assert payload["backend"] == "torch" and payload["step_seconds"] > 0


ZOO_UNDER_JAX = """
import json, numpy as np
from probes import backend, networks
from advisor.workloads import zoo
from probes.fitting import arrays
from probes.loading import parameter_count, prepare
from probes.spec import spec_for
backend.select()
for w in zoo.WORKLOADS:
    if w.synthetic_input and w.transformer is None:  # ImageNet CNNs: built, not stepped
        print(json.dumps([w.id, parameter_count(networks.build(w)), None]), flush=True)
        continue
    spec = spec_for(w.id, samples=4, validation_samples=0, epochs=1, batch_size=2)
    prepared = prepare(spec, flop_budget=1e9)  # a transformer: its small proxy, as a probe steps
    x, y = arrays(prepared, 2, 2, seed=0)
    loss = prepared.model.train_on_batch(x, y)
    loss = loss[0] if isinstance(loss, list) else loss
    print(json.dumps([w.id, parameter_count(prepared.model), float(loss)]), flush=True)
"""


@pytest.mark.jax
@pytest.mark.skipif(NO_JAX, reason=JAX_SKIP)
def test_every_zoo_network_builds_under_jax_and_the_small_ones_train() -> None:
    """The zoo is backend-neutral Keras: under JAX every classic network has TensorFlow's
    parameter count (tests/probes/test_networks.py) and the non-ImageNet ones take a training
    step; every transformer's proxy (what a probe steps) builds and takes a step too.
    (benchmarks/research/backend_zoo.py probes all twelve under both backends: docs/BENCHMARKS-ARCHIVE.md,
    "Backends".)"""
    from advisor.workloads import zoo
    from tests.probes.test_networks import TOLERANCE

    out = subprocess.run(
        [sys.executable, "-c", ZOO_UNDER_JAX], capture_output=True, text=True, timeout=300,
        check=False, env={**os.environ, "PYTHONPATH": str(ROOT), "KERAS_BACKEND": "jax"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {name: (count, loss) for name, count, loss in map(json.loads, out.stdout.splitlines())}
    assert set(rows) == {w.id for w in zoo.WORKLOADS}
    for w in zoo.TRANSFORMERS:  # full size (GPT-2 large: 774M weights) is too big to build here
        count, loss = rows[w.id]
        assert 0 < count < w.parameters and loss is not None and loss == loss, w.id
    for w in zoo.CLASSIC:
        count, loss = rows[w.id]
        assert abs(count - w.parameters) <= TOLERANCE.get(w.id, 0.0) * w.parameters, w.id
        assert w.synthetic_input or (loss is not None and loss == loss and loss >= 0), w.id
