"""Op classes from profiler event names, and their shares of the wall time."""

from __future__ import annotations

import pytest

from probes.profile import CLASSES, classify, shares


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
