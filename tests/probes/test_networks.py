"""Every classic zoo model builds with its documented parameter count (docs/SOURCES.md, "The workload zoo"); the
transformers are checked at tiny sizes in test_transformers.py (GPT-2 large has 774M weights)."""

from __future__ import annotations

import pytest

from advisor.workloads import zoo
from probes import networks
from probes.loading import parameter_count

# Exact counts where the zoo's sources give one; "~" figures are rounded, so allow their rounding:
# resnet32 "~467k" (our count 468,986 with BatchNorm statistics: +0.4%), the ImageNet ones are
# quoted to three or four digits (25.56M, 60.19M) and count 1001 classes and BatchNorm
# statistics differently from source to source (Keras: +0.3% / +0.4%).
TOLERANCE = {"resnet32_cifar10": 0.01, "alexnet": 0.005, "inception3": 0.005,
             "resnet50": 0.005, "resnet152": 0.005, "vgg16": 0.001}  # fmt: skip


@pytest.mark.tf
@pytest.mark.parametrize("workload", zoo.CLASSIC, ids=lambda w: w.id)
def test_builds_with_documented_parameters(workload: zoo.Workload) -> None:
    import keras

    model = networks.build(workload)
    try:
        count = parameter_count(model)
        assert count == model.count_params()
        tolerance = TOLERANCE.get(workload.id, 0.0)
        assert abs(count - workload.parameters) <= tolerance * workload.parameters, count
        assert tuple(model.inputs[0].shape[1:]) == workload.input_shape
        assert model.optimizer is not None and model.compiled
    finally:
        del model
        keras.backend.clear_session()


@pytest.mark.tf
def test_the_resnets_are_keras_applications_own() -> None:
    """Built by stages, ResNet-50 and ResNet-152 are ``keras.applications``' models, layer for
    layer: a proxy of fewer blocks differs from them by its depth alone."""
    import keras

    for workload, application in (("resnet50", "ResNet50"), ("resnet152", "ResNet152")):
        ours = networks.build(zoo.get(workload))
        theirs = getattr(keras.applications, application)(
            weights=None, input_shape=(224, 224, 3), classes=networks.IMAGENET_CLASSES
        )
        named = [[layer.name for layer in model.layers[1:]] for model in (ours, theirs)]
        assert named[0] == named[1]  # the input layers aside: Keras numbers their names
        assert ours.count_params() == theirs.count_params()
        keras.backend.clear_session()


def test_a_deep_resnet_is_probed_through_a_proxy_that_keeps_each_stages_share() -> None:
    from probes.loading import PROXY_BLOCKS, probe_stages

    assert probe_stages((3, 4, 6, 3)) == (3, 4, 6, 3)  # ResNet-50: itself
    proxy = probe_stages((3, 8, 36, 3))
    assert proxy == (1, 3, 12, 1)
    assert sum(proxy) <= PROXY_BLOCKS + 2
    assert probe_stages((3, 4, 23, 3)) == (1, 2, 11, 1)  # ResNet-101


@pytest.mark.tf
def test_a_probe_of_resnet152_steps_a_proxy_and_keeps_the_real_model() -> None:
    """ResNet-152's first step alone (its graph traced) took 20 s of a 20 s budget here: the
    probe steps 17 of its 50 blocks and says so, and what it reports is the real model's."""
    import keras

    from probes.run import host_layers, kernels_per_step, probe

    workload = zoo.get("resnet152")
    real = networks.build(workload)
    layers, kernels = host_layers(real), kernels_per_step(real)
    keras.backend.clear_session()
    result = probe("resnet152", budget_seconds=6.0, profile_ops=False)
    assert "of a proxy: 17 of 50 blocks" in result.extrapolated_from
    assert result.parameters == workload.parameters
    assert result.flops_per_sample == workload.train_flops_per_sample
    assert result.architecture is None  # the zoo's facts, not the proxy's 17 blocks
    assert (result.host_layers, result.device_kernels) == (layers, kernels)
    assert result.step_seconds > 0 and result.batch_scaling
