"""What users type becomes a validated WorkloadConfig, without TensorFlow."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from advisor.errors import AdvisorError, UsageError
from probes.run import config_for
from probes.spec import spec_for


def test_aliases_and_defaults() -> None:
    config = config_for("lstm")
    assert config.workload == "imdb_bilstm"
    assert (config.samples, config.validation_samples, config.epochs, config.batch_size) == (
        25_000,
        25_000,
        4,
        32,
    )
    assert config_for("LSTM-Text").workload == "lstm_text_generation"


def test_overrides() -> None:
    config = config_for("mlp", epochs=3, batch_size=64, samples=1000, validation_samples=0)
    assert (config.samples, config.validation_samples, config.epochs, config.batch_size) == (
        1000,
        0,
        3,
        64,
    )
    assert config.steps_per_epoch == 16 and config.validation_steps == 0


@pytest.mark.parametrize("option", ["epochs", "batch_size", "samples"])
def test_sizes_must_be_positive(option: str) -> None:
    with pytest.raises(UsageError, match="must be > 0"):
        config_for("mlp", **{option: 0})
    with pytest.raises(UsageError, match="must be >= 0"):
        config_for("mlp", validation_samples=-1)


def test_unknown_name_suggests() -> None:
    with pytest.raises(UsageError, match="did you mean 'resnet50'"):
        config_for("resnet5O")


def test_model_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such model file"):
        config_for(str(tmp_path / "missing.keras"))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(UsageError, match="not a Keras model"):
        config_for(str(text))
    model = tmp_path / "m.keras"
    model.write_bytes(b"PK not really")
    with pytest.raises(AdvisorError, match="not a zip archive"):  # checked before Keras
        config_for(str(model), samples=100, epochs=2)
    with zipfile.ZipFile(model, "w") as archive:
        archive.writestr("config.json", "{}")
    with pytest.raises(UsageError, match="--samples"):
        config_for(str(model), epochs=2)
    spec = spec_for(str(model), samples=100, epochs=2)
    assert spec.config.workload.startswith("file:") and spec.config.batch_size == 32
    assert spec.path == model and spec.workload is None


def test_only_heavy_workloads_are_extrapolated() -> None:
    from advisor.workloads import zoo
    from probes.data import InputSpec
    from probes.loading import Prepared
    from probes.run import _heavy_batches

    def batches(name: str, rate: float = 80e9, budget: float = 20.0) -> list[int]:
        w = zoo.get(name)
        prepared = Prepared(None, [InputSpec(w.input_shape, w.input_dtype)], InputSpec((), "int32"),
                            w.train_flops_per_sample, w.synthetic_input)  # fmt: skip
        return _heavy_batches(prepared, config_for(name), rate, budget)

    assert batches("mnist_mlp") == [] and batches("resnet32") == []
    assert batches("resnet50") == [4]  # 23.1 GFLOP a sample: batch 4 fits 1/12 of 20 s
    # a CPU whose reference kernel runs 250 GFLOP/s trains at half of that, at least: batch 8
    assert batches("resnet50", rate=125e9) == [8]
    (largest,) = batches("vgg16")
    assert 1 <= largest < 64
    # a transformer's proxy steps two batches: its fixed cost scales with the parameters
    w = zoo.get("gpt2_large")
    proxy = Prepared(None, [InputSpec(w.input_shape, w.input_dtype)], InputSpec((), "int32"),
                     w.train_flops_per_sample, False, scale=262.0, proxy="2 of 36 layers")  # fmt: skip
    small, large = _heavy_batches(proxy, config_for("gpt2_large"), 125e9, 20.0)
    assert small * 2 == large
    # a ResNet's proxy steps one batch, to be scaled by its FLOPs: the real one where it fits
    w = zoo.get("resnet152")
    proxy = Prepared(None, [InputSpec(w.input_shape, w.input_dtype)], InputSpec((), "int32"),
                     w.train_flops_per_sample, True, scale=2.74, proxy="17 of 50 blocks",
                     stages=w.stages)  # fmt: skip
    (largest,) = _heavy_batches(proxy, config_for("resnet152"), 125e9, 20.0)
    assert 1 <= largest < 32
    assert _heavy_batches(proxy, config_for("resnet152"), 5e12, 20.0) == [32]


def test_a_gpu_probe_steps_the_real_batch_of_the_imagenet_convnets() -> None:
    """On a GPU small batches are latency-bound: extrapolated from them, the H200 check of
    2026-11-26 read ResNet-50 at 60x its real step. At the accelerator's cautious rate the
    convnets step at their real batch within the default budget."""
    from advisor.workloads import zoo
    from probes.data import InputSpec
    from probes.loading import Prepared
    from probes.run import ASSUMED_ACCELERATOR_FLOPS, _heavy_batches

    for name in ("alexnet", "inception3", "resnet50", "vgg16", "resnet152"):
        w = zoo.get(name)
        prepared = Prepared(None, [InputSpec(w.input_shape, w.input_dtype)], InputSpec((), "int32"),
                            w.train_flops_per_sample, w.synthetic_input)  # fmt: skip
        assert _heavy_batches(prepared, config_for(name), ASSUMED_ACCELERATOR_FLOPS, 20.0) == []
        assert _heavy_batches(prepared, config_for(name), 80e9, 20.0), name  # a CPU still does


def test_the_step_line_is_kept_only_where_it_is_plausible() -> None:
    from probes.scaling import step_line

    assert step_line({4: 0.45, 8: 0.85}) == pytest.approx((0.05, 0.1))  # a small fixed cost
    # noise: batch 4 slower per sample than batch 2 would make a negative fixed cost
    assert step_line({2: 0.22, 4: 0.69}) == pytest.approx((0.0, 0.69 / 4))
    # noise the other way: a fixed cost of most of the step
    assert step_line({2: 0.45, 4: 0.5}) == pytest.approx((0.0, 0.5 / 4))
    assert step_line({8: 0.8}) == pytest.approx((0.0, 0.1))


def test_the_host_calls_every_layer_of_nested_models_and_none_of_their_inputs() -> None:
    from probes import quiet

    quiet.prepare()
    import keras

    from probes.run import host_layers

    inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4), keras.layers.ReLU()])
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(2)(inner(keras.layers.BatchNormalization()(inputs)))
    assert host_layers(keras.Model(inputs, outputs)) == 4  # norm, dense, relu, dense
