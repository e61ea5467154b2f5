"""Transformer shapes: published parameter counts, the FLOP count, proxies, and tiny Keras builds.

The counts are checked against the published figures without building the models (GPT-2 large
would take longer to build than a probe); the Keras builders are checked against the counts at
tiny sizes, so the two together pin the full-size models.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from advisor.workloads import transformers, zoo
from advisor.workloads.transformers import DECODER, Shape
from probes.spec import spec_for

# Published totals: BERT (google-research/bert checkpoints, with the pooler: 109,482,240 and
# 335,141,888), GPT-2 (Hugging Face gpt2 / gpt2-medium / gpt2-large: 124,439,808, 354,823,168,
# 774,030,080), ViT-B/16 with a 1000-class head (timm vit_base_patch16_224: 86,567,656).
PUBLISHED = [
    (transformers.bert(12, 768, 12, 512, 0, True), 109_482_240),
    (transformers.bert(24, 1024, 16, 512, 0, True), 335_141_888),
    (transformers.gpt2(12, 768, 12), 124_439_808),
    (transformers.gpt2(24, 1024, 16), 354_823_168),
    (transformers.gpt2(36, 1280, 20), 774_030_080),
    (transformers.vit(12, 768, 12, 224, 16, 1000), 86_567_656),
]


@pytest.mark.parametrize(("shape", "published"), PUBLISHED)
def test_parameter_counts_match_the_published_ones(shape: Shape, published: int) -> None:
    assert shape.parameters() == published


def test_zoo_workloads_carry_their_shapes_counts() -> None:
    bert = zoo.get("bert_base")
    assert bert.family == "transformer" and bert.optimizer == "adamw"
    # SQuAD head (2 per-token logits) instead of the pooler: 109,482,240 - 590,592 + 1,538
    assert bert.parameters == 108_893_186
    assert zoo.get("gpt2_large").parameters == 774_030_080
    assert zoo.get("vit_b16").input_shape == (224, 224, 3)
    assert zoo.get("vit").transformer is not None and zoo.get("vit").transformer.sequence == 197
    assert spec_for("gpt2_medium").config.batch_size == 12


def test_flops_are_six_n_t_plus_attention() -> None:
    """Kaplan et al. 2020: 6 N per token plus 6 L T h per token for attention."""
    gpt2 = transformers.gpt2(12, 768, 12)
    n = 12 * gpt2.layer_parameters() + 50_257 * 768  # layers + tied logits, no lookup tables
    assert gpt2.flop_parameters() == n
    assert gpt2.train_flops_per_sample() == pytest.approx(6 * n * 1024 + 6 * 12 * 1024**2 * 768)
    # ViT-B/16 at 224 px (= DeiT-B): 17.5 G multiply-adds forward (Liu et al. 2021, Swin
    # Transformer, Table 1a); training = 3 forward passes x 2 FLOPs per multiply-add
    vit = zoo.get("vit_b16").train_flops_per_sample
    assert 6 * 16.5e9 < vit < 6 * 18.5e9
    # Doubling the sequence more than doubles the FLOPs (the attention term)
    longer = Shape(DECODER, 12, 768, 12, 2048, 50_257, 2048)
    assert longer.train_flops_per_sample() > 2 * gpt2.train_flops_per_sample()


def test_activation_memory_grows_with_sequence_squared_and_heads() -> None:
    """Korthikanti et al. 2022: s h (34 + 5 a s / h) bytes per layer and sample, 16-bit."""
    bert = transformers.bert(12, 768, 12, 384, 2, False)
    assert bert.activation_bytes_16bit() == pytest.approx(
        12 * 384 * 768 * (34 + 5 * 12 * 384 / 768)
    )
    short = transformers.bert(12, 768, 12, 192, 2, False)
    assert bert.activation_bytes_16bit() > 2.5 * short.activation_bytes_16bit()


def test_probe_shape_shrinks_only_what_does_not_fit() -> None:
    gpt2 = transformers.gpt2(36, 1280, 20)
    assert transformers.probe_shape(gpt2, None) == gpt2
    assert transformers.probe_shape(gpt2, 1e14) == gpt2
    proxy = transformers.probe_shape(gpt2, 1.3e11)
    assert (proxy.layers, proxy.hidden, proxy.heads, proxy.vocabulary) == (2, 1280, 20, 8192)
    assert 2 * proxy.train_flops_per_sample() <= 1.3e11 and proxy.sequence < 1024
    assert (
        transformers.describe_proxy(proxy, gpt2)
        == f"2 of 36 layers, {proxy.sequence} of 1024 tokens"
    )
    vit = transformers.vit(12, 768, 12, 224, 16, 1000)
    assert transformers.probe_shape(vit, 1e10).image == 224  # a ViT keeps its image


TINY = [
    ("bert_base", transformers.bert(2, 32, 4, 16, 2, False)),
    ("bert_base_mnli", transformers.bert(2, 32, 4, 16, 3, True)),
    ("gpt2_small", Shape(DECODER, 2, 32, 4, 16, 50, 16)),
    ("vit_b16", transformers.vit(2, 32, 4, 32, 16, 10)),
]


@pytest.mark.tf
def test_keras_builds_match_the_counts_and_train() -> None:
    """Each kind built from plain Keras layers has exactly the counted weights, and one fit runs
    (the causal mask, the tied head and the span head included)."""
    import keras

    from probes import networks
    from probes.loading import parameter_count

    for workload_id, shape in TINY:
        model = networks.build(zoo.get(workload_id), shape)
        assert parameter_count(model) == shape.parameters(), workload_id
        rng = np.random.default_rng(0)
        if shape.kind == transformers.VISION:
            x = rng.random((4, shape.image, shape.image, 3), dtype=np.float32)
        else:
            x = rng.integers(0, shape.vocabulary, (4, shape.sequence)).astype("int32")
        y = rng.integers(0, 2, (4, *model.output_shape[1:-1]))
        history = model.fit(x, y, batch_size=2, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
        keras.backend.clear_session()


@pytest.mark.tf
def test_causal_mask_hides_the_future() -> None:
    """GPT-2's logits at position i do not change when a later token changes."""
    from probes.transformer_layers import build_transformer

    model = build_transformer(Shape(DECODER, 1, 16, 2, 8, 20, 8), name="tiny")
    x = np.arange(8, dtype="int32")[None, :] % 20
    changed = x.copy()
    changed[0, 5] = 19
    before, after = model(x, training=False), model(changed, training=False)
    np.testing.assert_allclose(np.asarray(before)[0, :5], np.asarray(after)[0, :5], rtol=1e-5)
    assert not np.allclose(np.asarray(before)[0, 5], np.asarray(after)[0, 5])


def test_extrapolation_says_what_was_stepped() -> None:
    from probes.data import InputSpec
    from probes.loading import Prepared
    from probes.scaling import extrapolated_from

    spec = InputSpec((8,), "int32", high=10)
    real = Prepared(None, [spec], spec, 1e12, pool=False)
    assert extrapolated_from(real, {32: 1.0}, 32) == ""
    assert extrapolated_from(real, {2: 0.1, 4: 0.2}, 32) == "batches 2, 4"
    proxy = Prepared(None, [spec], spec, 1e12, False, 50.0, "2 of 36 layers", 8.0)
    assert proxy.stepped_flops_per_sample == 2e10
    assert extrapolated_from(proxy, {1: 0.1, 2: 0.2}, 12) == (
        "batches 1, 2 of a proxy: 2 of 36 layers; FLOPs x50, parameters x8"
    )


@pytest.mark.tf
def test_a_probe_of_bert_steps_a_proxy_and_says_so() -> None:
    """The real shape is too heavy for this budget: a 2-layer proxy is stepped, the result keeps
    the real model's parameters and FLOPs, not the proxy's layers, and is flagged as
    extrapolated."""
    from probes.run import probe

    result = probe("bert_base_mnli", budget_seconds=6.0, profile_ops=False)
    workload = zoo.get("bert_base_mnli")
    assert result.extrapolated and "of a proxy: 2 of 12 layers" in result.extrapolated_from
    assert result.parameters == workload.parameters
    assert result.flops_per_sample == workload.train_flops_per_sample
    assert result.architecture is None  # the proxy's 2 layers are not bert's 12
    smallest = min(result.batch_scaling)
    assert result.step_seconds > result.batch_scaling[smallest]  # batch 32 of the real depth


@pytest.mark.tf
def test_a_proxys_layers_and_kernels_are_counted_for_every_block_of_the_real_model() -> None:
    """The floor prices each layer the host calls and each kernel launched: a 2-block proxy of
    a deeper model is counted at the real depth, exactly what the real model counts."""
    import keras

    from probes import networks
    from probes.data import InputSpec
    from probes.loading import Prepared
    from probes.run import host_layers, kernels_per_step, step_counts

    spec = InputSpec((8,), "int32", high=10)
    for workload_id, tiny in TINY:
        deep = replace(tiny, layers=5)
        proxy = networks.build(zoo.get(workload_id), replace(tiny, layers=2))
        real = networks.build(zoo.get(workload_id), deep)
        counted = step_counts(Prepared(proxy, [spec], spec, 1e9, False, blocks=5))
        assert counted == (host_layers(real), kernels_per_step(real)), workload_id
        assert counted[0] > host_layers(proxy), workload_id
        assert step_counts(Prepared(real, [spec], spec, 1e9, False, blocks=5)) == counted
        keras.backend.clear_session()


@pytest.mark.tf
def test_a_resnet_proxys_layers_and_kernels_are_counted_at_the_real_depth() -> None:
    """Each stage of a ResNet proxy stands for the real model's blocks of that stage: counted
    exactly as the real model counts, though two of its stages hold only their first block (the
    one with the shortcut projection, which the left-out blocks lack)."""
    import keras

    from probes import networks
    from probes.data import InputSpec
    from probes.loading import Prepared
    from probes.run import host_layers, kernels_per_step, step_counts

    resnet = zoo.get("resnet152")
    spec = InputSpec(resnet.input_shape, "float32")
    real_stages = (2, 3, 5, 2)
    proxy = networks.build(resnet, stages=(1, 2, 3, 1))
    real = networks.build(resnet, stages=real_stages)
    counted = step_counts(Prepared(proxy, [spec], spec, 1e9, False, stages=real_stages))
    assert counted == (host_layers(real), kernels_per_step(real))
    assert counted[0] > host_layers(proxy)
    keras.backend.clear_session()
