"""Every classic zoo model builds with its documented parameter count (WORKLOADS.md); the
transformers are checked at tiny sizes in test_transformers.py (GPT-2 large has 774M weights)."""

from __future__ import annotations

import pytest

from probes import networks, zoo
from probes.loading import parameter_count

# Exact counts where WORKLOADS.md gives one; "~" figures are rounded, so allow their rounding:
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
