"""Real probes, tiny and fast: end to end, cancellation, safe mode, user models."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from advisor.errors import AdvisorError, Cancelled
from probes.fitting import ProbeProgress
from probes.loading import load_safely
from probes.run import probe, spec_for

pytestmark = pytest.mark.tf

TINY = {"samples": 2048, "validation_samples": 512, "epochs": 2, "batch_size": 64}


def test_tiny_probe_end_to_end() -> None:
    events: list[ProbeProgress] = []
    result = probe(spec_for("mlp", **TINY), budget_seconds=5.0, progress=events.append)
    c = result.config
    assert (c.workload, c.samples, c.epochs, c.batch_size) == ("mnist_mlp", 2048, 2, 64)
    low, high = result.predicted_interval
    assert 0 < low <= result.predicted_seconds <= high
    assert result.step_interval[0] <= result.step_seconds <= result.step_interval[1]
    per_epoch = (c.steps_per_epoch * result.step_seconds
                 + c.validation_steps * result.validation_step_seconds
                 + result.epoch_overhead_seconds)  # fmt: skip
    # the repeating part: every epoch, plus the modelled iterator waits between epochs
    assert c.epochs * per_epoch <= result.predicted_seconds
    assert result.predicted_seconds <= c.epochs * per_epoch + result.teardown_seconds + 1e-9
    assert result.fit_seconds == pytest.approx(result.predicted_seconds + result.startup_seconds)
    assert 0 < result.validation_step_seconds < result.step_seconds * 3
    assert result.samples_per_second == pytest.approx(64 / result.step_seconds)
    assert result.startup_seconds > 0 and result.parameters == 669_706
    assert result.probe_seconds < 15 and result.peak_host_bytes > 0
    assert result.peak_device_bytes is None or result.peak_device_bytes > 0
    assert not result.extrapolated
    # the host's floor: a step's dispatch, and each of the model's layers (mnist_mlp: 5) at a
    # graph backend's few microseconds (a chain of tiny layers timed after the steady fit)
    assert 0 < result.dispatch_seconds < 0.05 and result.host_layers == 5
    # kernels from the same layers: 3 Dense at two and 2 Dropout at one, x3, + 6 variables
    assert result.device_kernels == 3 * (3 * 2 + 2) + 6
    assert 0 < result.layer_dispatch_seconds < 1e-3
    assert sum(result.op_split.values()) == pytest.approx(1.0, abs=0.01)
    assert result.op_split["matmul_conv"] > 0 and result.op_split["recurrent"] == 0
    phases = [e.phase for e in events]
    assert phases[0] == "build" and phases[-1] == "done" and "steady" in phases
    steady = [e for e in events if e.phase == "steady"]
    assert steady[-1].steps > 10 and steady[-1].recent


def test_cancel_during_the_probe() -> None:
    cancel = threading.Event()

    def cancel_after_some_steps(event: ProbeProgress) -> None:
        if event.steps > 5:
            cancel.set()

    with pytest.raises(Cancelled):
        probe(spec_for("mlp", **TINY), budget_seconds=10.0, progress=cancel_after_some_steps,
              cancel=cancel)  # fmt: skip


def test_ctrl_c_is_cancelled() -> None:
    def interrupt(event: ProbeProgress) -> None:
        if event.phase == "steady":
            raise KeyboardInterrupt

    with pytest.raises(Cancelled, match="nothing was stored"):
        probe(spec_for("mlp", **TINY), budget_seconds=5.0, progress=interrupt)


def test_safe_mode_refuses_code_and_never_runs_it(tmp_path: Path) -> None:
    import keras

    marker = tmp_path / "ran"

    def side_effect(x: object) -> object:
        marker.touch()
        return x

    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Lambda(side_effect), keras.layers.Dense(1)]
    )
    path = tmp_path / "lambda.keras"
    model.save(path)
    marker.unlink()
    with pytest.raises(AdvisorError, match=r"refusing .*arbitrary code"):
        load_safely(str(path))
    with pytest.raises(AdvisorError, match="refusing"):
        probe(spec_for(str(path), samples=64, epochs=1), budget_seconds=2.0)
    assert not marker.exists()


def test_user_model_with_integer_inputs(tmp_path: Path) -> None:
    import keras

    model = keras.Sequential([keras.Input((20,), dtype="int32"), keras.layers.Embedding(500, 8),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(3, activation="softmax")])  # fmt: skip
    model.compile("adam", "sparse_categorical_crossentropy")
    path = tmp_path / "text.keras"
    model.save(path)
    result = probe(spec_for(str(path), samples=1024, epochs=2, batch_size=32), budget_seconds=2.0)
    assert result.config.workload.startswith("file:")
    assert result.parameters == 500 * 8 + 9 * 3 and result.predicted_seconds > 0
    assert result.validation_step_seconds == 0.0  # no validation samples asked for


def test_thread_scaling_measures_one_thread_in_a_fresh_process() -> None:
    result = probe(
        spec_for("mlp", **TINY), budget_seconds=2.0, profile_ops=False, thread_counts=[1]
    )
    threads = result.device.threads
    assert set(result.thread_scaling) == {1, threads}
    assert result.thread_scaling[threads] == result.step_seconds
    assert result.thread_scaling[1] > 0 and result.op_split == {}


def test_a_run_that_cannot_fit_in_memory_is_refused_with_the_estimate() -> None:
    with pytest.raises(AdvisorError, match=r"does not fit in memory: needs about [\d.]+ GiB"):
        probe(spec_for("mlp", batch_size=10**7, samples=10**9), budget_seconds=2.0)


def test_epochs_of_one_batch_are_probed_not_refused() -> None:
    """Ten samples at batch 32: every step starts an epoch, so no step is free of a boundary;
    the steps after warm-up stand in for the steady step instead of failing the probe."""
    result = probe(spec_for("mlp", samples=10, validation_samples=0, epochs=1, batch_size=32),
                   budget_seconds=3.0)  # fmt: skip
    assert result.config.steps_per_epoch == 1 and result.step_seconds > 0
    assert result.fit_seconds >= result.step_seconds
