"""probes.architecture: FLOPs and recurrent layers read from built Keras models.

The counts are checked against hand-computed ones on small models and against the published
training FLOPs of zoo models (``advisor.workloads.zoo``); building models needs Keras, hence ``tf``.
"""

from __future__ import annotations

import pytest

from advisor.workloads import zoo
from probes import architecture, networks
from probes.result import Architecture, RecurrentLayer


def _model(inputs, *layers):  # type: ignore[no-untyped-def]
    import keras

    return keras.Sequential([keras.Input(inputs[0], dtype=inputs[1]), *layers])


@pytest.mark.tf
def test_dense_and_conv_counts_match_hand_counts() -> None:
    from keras import layers

    # Dense 8->4 on 5 positions: 2*8*4*5 = 320, bias + activation 2*20 = 40
    dense = architecture.read(_model(((5, 8), "float32"), layers.Dense(4, activation="relu")))
    assert dense.train_flops_per_sample == 3 * 360
    assert dense.matmul_rows == 5  # its product is batch x 5 positions rows wide
    # a sequence's dense layer then a classifier on one vector: rows weighted by FLOPs
    pooled = architecture.read(_model(
        ((5, 8), "float32"), layers.Dense(4), layers.Flatten(), layers.Dense(3)
    ))  # fmt: skip
    sequence, head = 2 * 8 * 4 * 5 + 2 * 20, 2 * 20 * 3 + 2 * 3
    assert pooled.matmul_rows == pytest.approx((sequence * 5 + head) / (sequence + head))
    # Conv2D 3x3, 2->6 filters, on 10x10 valid: 8x8 outputs x 2*3*3*2*6 + bias/act 2*384
    conv = architecture.read(_model(((10, 10, 2), "float32"), layers.Conv2D(6, 3)))
    assert conv.train_flops_per_sample == 3 * (64 * 2 * 108 + 2 * 384)
    assert conv.winograd_share == 1.0  # 3x3 stride 1: cuDNN's Winograd case
    strided = architecture.read(_model(((10, 10, 2), "float32"), layers.Conv2D(6, 3, strides=2)))
    assert strided.winograd_share == 0.0
    # an embedding is a gather: no FLOPs
    embedding = architecture.read(_model(((7,), "int32"), layers.Embedding(100, 16)))
    assert embedding.train_flops_per_sample == 0.0
    assert embedding.activation_elements == 7 * 16


@pytest.mark.tf
def test_recurrent_layers_and_their_cudnn_eligibility() -> None:
    from keras import layers

    model = _model(
        ((12, 3), "float32"),
        layers.Bidirectional(layers.LSTM(5, return_sequences=True)),
        layers.GRU(4, return_sequences=True),
        layers.LSTM(6, activation="relu", return_sequences=True),  # not cuDNN: activation
        layers.SimpleRNN(7),  # never cuDNN
    )
    counted = architecture.read(model)
    assert counted.recurrent == (
        RecurrentLayer("lstm", 5, 3, 12, directions=2, cudnn=True),
        RecurrentLayer("gru", 4, 10, 12, cudnn=True),
        RecurrentLayer("lstm", 6, 4, 12, cudnn=False),
        RecurrentLayer("vanilla", 7, 6, 12, cudnn=False),
    )
    # per time step: gates x 2 x (inputs + units) x units
    forward = 12 * (2 * 4 * 2 * 8 * 5 + 3 * 2 * 14 * 4 + 4 * 2 * 10 * 6 + 1 * 2 * 13 * 7)
    assert counted.train_flops_per_sample == 3 * forward
    assert not counted.cudnn_rnn


@pytest.mark.tf
def test_time_distributed_runs_its_sequences_side_by_side() -> None:
    import keras
    from keras import layers

    inputs = keras.Input((4, 9, 2))
    model = keras.Model(
        inputs, layers.TimeDistributed(layers.LSTM(3, recurrent_dropout=0.1))(inputs)
    )
    (layer,) = architecture.read(model).recurrent
    assert layer == RecurrentLayer("lstm", 3, 2, 9, sequences=4, cudnn=False)
    assert layer.forward_flops == 4 * 9 * 4 * 2 * 5 * 3


@pytest.mark.tf
def test_nested_models_are_walked() -> None:
    import keras
    from keras import layers

    inner = keras.Sequential([keras.Input((8,)), layers.Dense(4)])
    outer = keras.Sequential([keras.Input((8,)), inner, layers.Dense(2)])
    assert architecture.read(outer).train_flops_per_sample == 3 * (2 * 8 * 4 + 8 + 2 * 4 * 2 + 4)


@pytest.mark.tf
@pytest.mark.parametrize("workload_id", ["mnist_mlp", "mnist_cnn", "imdb_bilstm"])
def test_counts_come_near_the_zoo_published_flops(workload_id: str) -> None:
    workload = zoo.get(workload_id)
    counted = architecture.read(networks.build(workload))
    assert counted.train_flops_per_sample == pytest.approx(
        workload.train_flops_per_sample, rel=0.02
    )
    assert counted.uncounted == ()
    assert bool(counted.recurrent) == (workload.family == "recurrent")


def test_cudnn_eligibility_follows_the_keras_rules() -> None:
    lstm = {"activation": "tanh", "recurrent_activation": "sigmoid", "use_bias": True}
    assert architecture.cudnn_eligible("lstm", lstm)
    assert architecture.cudnn_eligible("gru", {**lstm, "reset_after": True})
    assert not architecture.cudnn_eligible("gru", {**lstm, "reset_after": False})
    assert not architecture.cudnn_eligible("lstm", {**lstm, "unroll": True})
    assert not architecture.cudnn_eligible("lstm", {**lstm, "use_bias": False})
    assert not architecture.cudnn_eligible("lstm", {**lstm, "recurrent_dropout": 0.2})
    assert not architecture.cudnn_eligible("lstm", {**lstm, "use_cudnn": False})
    assert not architecture.cudnn_eligible("lstm", {**lstm, "recurrent_activation": "hard_sigmoid"})
    assert not architecture.cudnn_eligible("vanilla", lstm)


def test_architecture_round_trips_through_a_dict() -> None:
    from dataclasses import asdict

    counted = Architecture(1e6, 0.5, 300.0, (RecurrentLayer("gru", 4, 3, 10, 2, 1, True),))
    assert Architecture.from_dict(asdict(counted)) == counted


@pytest.mark.tf
def test_a_loaded_model_counts_each_layer_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A loaded Sequential keeps stale nodes from its earlier builds on each layer; only the
    model's own graph counts."""
    from keras import layers

    from probes.loading import load_safely

    model = _model(((30, 2), "float32"), layers.SimpleRNN(5), layers.Dense(3))
    model.save(tmp_path / "m.keras")
    loaded = architecture.read(load_safely(str(tmp_path / "m.keras")))
    assert loaded == architecture.read(model)
    assert loaded.train_flops_per_sample == 3 * (30 * 2 * 7 * 5 + 2 * 5 * 3 + 2 * 3)


@pytest.mark.tf
def test_attention_depthwise_separable_and_pooling_match_hand_counts() -> None:
    import keras
    from keras import layers

    inputs = keras.Input((6, 8))
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=3)(inputs, inputs)
    attention = architecture.read(keras.Model(inputs, attended))
    # q, k, v, o projections 4 x 2*6*(8*2*3); scores and weighted sum 2*6*6*2*(3+3); softmax
    assert attention.train_flops_per_sample == 3 * (4 * 576 + 864 + 5 * 6 * 6 * 2)
    assert attention.uncounted == ()
    image = ((5, 5, 4), "float32")
    depthwise = architecture.read(_model(image, layers.DepthwiseConv2D(3, depth_multiplier=2)))
    assert depthwise.train_flops_per_sample == 3 * 2 * 9 * (3 * 3 * 4 * 2)  # 3x3 outputs
    separable = architecture.read(_model(image, layers.SeparableConv2D(6, 3)))
    assert separable.train_flops_per_sample == 3 * 2 * 9 * (3 * 3 * 4 + 4 * 6)
    pooled = architecture.read(
        _model(image, layers.MaxPooling2D(2), layers.GlobalAveragePooling2D())
    )
    assert pooled.train_flops_per_sample == 3 * (2 * 2 * 4 * 4 + 2 * 2 * 4)


def test_a_model_without_a_graph_is_named_not_counted() -> None:
    class Opaque:  # what a subclassed model looks like to the reader: no graph of nodes
        layers: tuple[object, ...] = ()

    counted = architecture.read(Opaque())
    assert counted.train_flops_per_sample == 0.0
    assert counted.uncounted == ("Opaque",)


@pytest.mark.tf
def test_a_probe_of_a_users_model_records_its_flops_and_recurrent_layers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from keras import layers

    from probes.run import probe
    from probes.spec import spec_for

    model = _model(((12, 3), "float32"), layers.SimpleRNN(4), layers.Dense(2, activation="softmax"))
    model.compile("adam", "sparse_categorical_crossentropy")
    model.save(tmp_path / "rnn.keras")
    spec = spec_for(str(tmp_path / "rnn.keras"), samples=512, epochs=1, batch_size=32)
    result = probe(spec, budget_seconds=2.0)
    assert result.architecture is not None
    assert result.architecture.recurrent == (RecurrentLayer("vanilla", 4, 3, 12, cudnn=False),)
    # SimpleRNN 12 x 2*(3+4)*4, Dense 2*4*2 + bias and activation 2*2; training 3x forward
    assert result.flops_per_sample == 3 * (12 * 56 + 16 + 4)
