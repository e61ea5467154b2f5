"""A user's model with its layers read (``probe.architecture``): facts_for and the GPU path."""

from __future__ import annotations

import json
from dataclasses import replace

from advisor.estimate import Target, predict
from advisor.estimate.measured import facts_for
from advisor.locations import shipped_data_dir
from probes.history import from_json
from probes.result import Architecture, ProbeResult, RecurrentLayer
from tests.estimate.test_probes import probe

BILSTM2 = Architecture(
    2.36e8,
    activation_elements=3.6e5,
    recurrent=(
        RecurrentLayer("lstm", 64, 128, 200, directions=2, cudnn=True),
        RecurrentLayer("lstm", 64, 128, 200, directions=2, cudnn=True),
    ),
)
SPLIT = {"recurrent": 0.85, "matmul_conv": 0.05, "elementwise": 0.05, "overhead": 0.05}


def users(architecture: Architecture | None, flops: float = 0.0) -> ProbeResult:
    """A probe of a user's recurrent model (imdb_bilstm's measurements, a file's id)."""
    p = probe("imdb_bilstm", 1.5, op_split=SPLIT)
    return replace(
        p,
        config=replace(p.config, workload="file:0123abcd"),
        flops_per_sample=flops,
        architecture=architecture,
    )


def test_facts_for_takes_the_recurrent_layers_the_probe_read() -> None:
    facts = facts_for(users(BILSTM2))
    assert facts.flops_per_sample == 2.36e8  # the counted FLOPs, where the probe recorded none
    assert facts.family == "recurrent"
    # two layers x two directions, each 200 steps, one after another
    assert (facts.timesteps, facts.directions, facts.recurrent_layers) == (800, 1, 4)
    per_step = 3 * 2 * 4 * (128 + 64) * 64  # training FLOPs of one step of one direction
    assert facts.recurrent_flops_per_step == per_step
    assert facts.cudnn_rnn


def test_without_the_architecture_the_time_steps_stay_unknown_until_inferred() -> None:
    facts = facts_for(users(None, flops=2.36e8))
    assert (facts.timesteps, facts.recurrent_layers, facts.recurrent_flops_per_step) == (0, 0, 0)
    assert facts.cudnn_rnn  # assumed, as before


def test_a_layer_without_cudnn_runs_the_generic_loop_on_a_gpu() -> None:
    generic = replace(BILSTM2, recurrent=tuple(replace(r, cudnn=False) for r in BILSTM2.recurrent))
    assert not facts_for(users(generic)).cudnn_rnn
    target = Target("V100", 1)
    fast, slow = predict(users(BILSTM2), target), predict(users(generic), target)
    assert "cuDNN" in fast.kernel_path and "generic" in slow.kernel_path
    assert slow.seconds > 2 * fast.seconds
    # on a CPU both run the same loop: the flag changes nothing there
    cpu = Target(None, 0, vcpus=8.0)
    assert predict(users(generic), cpu).seconds == predict(users(BILSTM2), cpu).seconds


def test_stored_probes_without_the_field_still_load_and_predict() -> None:
    """The TF2 probes of data/cpu-gpu-probes as first stored, before the field existed."""
    path = shipped_data_dir() / "cpu-gpu-probes" / "tf_mnist_irnn.json"
    blob = path.read_text(encoding="utf-8")

    raw = json.loads(blob)
    raw.pop("architecture", None)
    old = from_json(json.dumps(raw))
    assert old.architecture is None
    assert predict(old, Target("V100", 2)).seconds > 0
    counted = from_json(blob).architecture
    assert counted is not None and counted.recurrent[0].cell == "vanilla"
    assert not counted.cudnn_rnn


def test_a_transformers_tokens_widen_its_products_on_a_gpu() -> None:
    """A script's dense layers that run on every token (``matmul_rows``, 128 for BERT on
    128-token sequences) make products batch x tokens rows wide, which fill a GPU that 32 rows
    leave idle: the step runs several times faster than as 32 one-vector samples, and a CPU,
    filled either way, does not care."""
    dense = Architecture(6.7e10, activation_elements=2.0e7, matmul_rows=1.0)
    tokens = replace(dense, matmul_rows=128.0)
    base = replace(probe("imdb_bilstm", 1.5, op_split={}), flops_per_sample=6.7e10)  # a script's

    def user(counted: Architecture) -> ProbeResult:
        return replace(base, config=replace(base.config, workload="script:bert"),
                       architecture=counted)  # fmt: skip

    assert facts_for(user(tokens)).tokens == 128 and facts_for(user(dense)).tokens == 0
    gpu = Target("V100", 1)
    assert predict(user(dense), gpu).seconds > 2 * predict(user(tokens), gpu).seconds
    cpu = Target(None, 0, vcpus=8.0)
    assert predict(user(tokens), cpu).seconds == predict(user(dense), cpu).seconds
