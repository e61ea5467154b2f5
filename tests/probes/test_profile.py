"""Op classes from profiler event names, and their shares of the wall time."""

from __future__ import annotations

import pytest

from probes.profile import CLASSES, classify, shares, steps_wall


@pytest.mark.parametrize(
    ("name", "op_type", "kind"),
    [
        ("StatefulPartitionedCall/sequential/dense/MatMul", "MatMul", "matmul_conv"),
        (
            "StatefulPartitionedCall/gradient_tape/conv2d/Conv2DBackpropFilter",
            "Conv2DBackpropFilter",
            "matmul_conv",
        ),
        (
            "StatefulPartitionedCall/m/bidirectional/forward_lstm/while/body/MatMul",
            "MatMul",
            "recurrent",
        ),
        ("StatefulPartitionedCall/m/embedding/GatherV2", "GatherV2", "embedding"),
        ("StatefulPartitionedCall/IteratorGetNext", "IteratorGetNext", "input_pipeline"),
        ("StatefulPartitionedCall/adam/AssignSubVariableOp", "AssignSubVariableOp", "elementwise"),
        ("StatefulPartitionedCall/m/lstm/while", "While", None),
        ("ExecutorState:", "Process", None),
        ("EagerLocalExecute", " MakeIterator", None),
    ],
)
def test_classify(name: str, op_type: str, kind: str | None) -> None:
    assert classify(name, op_type) == kind


def test_shares_of_the_wall_time() -> None:
    events = [("a/MatMul:MatMul", 0.5), ("a/Relu:Relu", 0.2), ("ExecutorState::Process", 5.0)]
    split = shares(events, 1.0)
    assert set(split) == set(CLASSES)
    assert split["matmul_conv"] == 0.5 and split["elementwise"] == 0.2
    assert split["overhead"] == pytest.approx(0.3)
    crowded = shares([("a/MatMul:MatMul", 3.0), ("b/Add:AddV2", 1.0)], 2.0)  # parallel ops
    assert sum(crowded.values()) == pytest.approx(1.0) and crowded["overhead"] == 0.0


def test_shares_are_of_the_steady_steps_not_of_the_profiled_call() -> None:
    # four steps of 50 ms measured steady; the profiled fit() call took 0.5 s with its set-up
    assert steps_wall(4, 0.05, 0.5) == pytest.approx(0.2)
    assert steps_wall(4, None, 0.5) == 0.5  # extrapolated probes: only the call's wall is known
    events = [("lstm/while/MatMul:MatMul", 0.14), ("dense/Relu:Relu", 0.02)]
    assert shares(events, steps_wall(4, 0.05, 0.5))["overhead"] == pytest.approx(0.2)
    assert shares(events, 0.5)["overhead"] == pytest.approx(0.68)  # the old, inflated figure


@pytest.mark.tf
def test_the_layer_split_puts_the_arithmetic_where_the_layers_are() -> None:
    """The split of backends without a profiler here (JAX, PyTorch): by layer FLOPs."""
    from keras import Input, Sequential, layers

    from probes.profile import layer_split

    recurrent = Sequential([Input((40, 57)), layers.LSTM(128), layers.Dense(57)])
    dense = Sequential([Input((784,)), layers.Dense(512), layers.Dropout(0.2), layers.Dense(10)])
    conv = Sequential(
        [Input((28, 28, 1)), layers.Conv2D(32, 3), layers.Flatten(), layers.Dense(10)]
    )
    assert layer_split(recurrent)["recurrent"] > 0.9
    assert layer_split(dense)["matmul_conv"] > 0.99 and layer_split(dense)["elementwise"] > 0
    split = layer_split(conv)
    assert split["matmul_conv"] > 0.9 and sum(split.values()) == pytest.approx(1, abs=1e-3)
