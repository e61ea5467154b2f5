"""A user's PyTorch script, probed through PyTorch's own hooks (``advisor.probe.torch_hook``):
real PyTorch training in a process of its own, as ``advisor probe -- COMMAND`` runs it."""

from __future__ import annotations

import json
import math
import re
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from probes import script

pytestmark = pytest.mark.torch
PYTHON = sys.executable
ROOT = Path(__file__).resolve().parents[2]


def _probe(folder: Path, body: str, budget: float) -> script.ScriptRun:
    path = folder / "train.py"
    path.write_text(textwrap.dedent(body))
    run = script.run_command([PYTHON, str(path)], budget=budget)
    script.check_run(run, budget)
    return run


MLP = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    train = DataLoader(TensorDataset(torch.rand(2000, 784), torch.randint(0, 10, (2000,))),
                       batch_size=50, shuffle=True, num_workers=1)
    test = DataLoader(TensorDataset(torch.rand(500, 784), torch.randint(0, 10, (500,))),
                      batch_size=100)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(1000):
        for index, (x, y) in enumerate(train):
            nn.functional.cross_entropy(model(x), y).div(2).backward()
            if index % 2 == 1:  # two batches a step: gradient accumulation
                optimizer.step()
                optimizer.zero_grad()
        with torch.no_grad():
            for x, y in test:
                model(x)
"""


def test_a_plain_loop_is_read_through_its_optimizer_and_its_data_loader(tmp_path: Path) -> None:
    """Steps are the optimizer's (two loader batches each), an epoch's steps are the loader's
    length over them, an epoch ends where the training loader runs out (the test loader's end
    is no epoch), and one step's FLOPs are PyTorch's count of it, its time left out."""
    run = _probe(tmp_path, MLP, budget=8.0)
    events = run.events
    assert events.loader_batches == 40 and events.steps_an_epoch == 20  # two batches a step
    sizes = script.sizes_of(events, epochs=None, samples=None, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (1, 20, 100)
    assert (
        sizes.said
        == "1 epoch: the script did not say (give --epochs), steps an epoch from its data loader"
    )
    assert events.backend == "torch" and events.precision == "float32"
    assert set(events.micro) == {2} and set(events.batches) == {100}
    assert len(events.epochs) >= 2 and len(events.steps) >= 20 * len(events.epochs)
    assert len(events.counted) == 1  # the third step, counted
    assert events.steps[2] in events.counted and len(events.durations) < len(events.steps) - 1
    first, second = 784 * 256, 256 * 10  # multiply-adds a sample
    # forward 2 x both; backward: both layers' weight gradients, and the input gradient of the
    # second (the first's input is data); accumulated over the step's two batches of 50
    expected = 2 * (2 * first + 3 * second)
    counted = script.architecture_of(events.model["architecture"])
    assert counted is not None
    assert counted.train_flops_per_sample == pytest.approx(expected, rel=1e-6)
    assert counted.conv_share == 0 and counted.input_bytes == pytest.approx(784 * 4 + 8)
    assert events.model["parameters"] == 784 * 256 + 256 + 256 * 10 + 10
    observed = script.observed(events)
    assert observed["batches_a_step"] == 2 and 0 <= observed["data_wait_share"] < 1
    # the counted step's operators: two micro-batches' forward and backward, SGD's update
    assert 30 <= events.operators <= 200 and 1e-7 < events.operator_seconds < 1e-3


def test_a_compiled_model_is_counted_as_its_eager_twin(tmp_path: Path) -> None:
    """``torch.compile`` runs the step as Inductor's fused kernels, which the FLOP counter sees
    through as AOTAutograd traces them: the compiled MLP's step counts what the eager one does,
    and its steps, after the compilation's slow first ones (15 s here), are read as any others."""
    compiled = MLP.replace(
        "optimizer = torch.optim", "model = torch.compile(model)\n    optimizer = torch.optim"
    )
    run = _probe(tmp_path, compiled, budget=40.0)
    events = run.events
    assert "torch.compile" in compiled and len(events.counted) == 1
    counted = script.architecture_of(events.model["architecture"])
    assert counted is not None
    first, second = 784 * 256, 256 * 10
    assert counted.train_flops_per_sample == pytest.approx(2 * (2 * first + 3 * second), rel=1e-6)
    assert len(events.steps) >= 20 and events.steps_an_epoch == 20


CONVNET_LSTM = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2), nn.ReLU())
            self.lstm = nn.LSTM(32, 64, num_layers=2, batch_first=True, bidirectional=True)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv(x).flatten(2).transpose(1, 2)  # (batch, 225 positions, 32 channels)
            return self.head(self.lstm(x)[0][:, -1])

    class Wrapped(torch.optim.Optimizer):  # a wrapper's step runs its inner optimizer's
        def __init__(self, inner):
            self.inner = inner
            super().__init__(inner.param_groups, {})

        def step(self, closure=None):
            return self.inner.step(closure)

    data = DataLoader(TensorDataset(torch.rand(320, 3, 32, 32), torch.randint(0, 10, (320,))),
                      batch_size=16)
    model = Net()
    optimizer = Wrapped(torch.optim.Adam(model.parameters()))
    for epoch in range(1000):
        for x, y in data:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
"""


def test_convolutions_and_recurrent_layers_are_read_and_a_wrapped_step_counts_once(
    tmp_path: Path,
) -> None:
    run = _probe(tmp_path, CONVNET_LSTM, budget=8.0)
    events = run.events
    assert events.steps_an_epoch == 20 and set(events.batches) == {16}
    assert set(events.micro) == {1}  # one step a batch, however many optimizers it ran
    counted = script.architecture_of(events.model["architecture"])
    assert counted is not None
    assert 0 < counted.winograd_share < counted.conv_share < 1  # the stride-2 one is not
    assert [(r.cell, r.units, r.inputs, r.timesteps, r.directions) for r in counted.recurrent] == [
        ("lstm", 64, 32, 225, 2),
        ("lstm", 64, 128, 225, 2),
    ]
    # the LSTM's 8 products a step, forward and backward, are most of the work: at least the
    # forward ones, 2 layers x 2 directions x 225 steps x 4 gates x 2 x (inputs + units) x units
    forward = 2 * 225 * 4 * 2 * 64 * ((32 + 64) + (128 + 64))
    assert counted.train_flops_per_sample > 2 * forward
    assert not math.isnan(counted.activation_elements) and counted.activation_elements > 0


def test_the_pytorch_example_is_probed_and_ranked_on_accelerators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's PyTorch example end to end: probed without an edit, its sizes its own and
    the epochs as given, stored, then ranked on GPUs (its FLOPs counted) from the stored probe."""
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    example = [PYTHON, str(ROOT / "examples" / "torch_mnist.py"), "--samples", "3200",
               "--accumulate", "2", "--workers", "0"]  # fmt: skip
    probed = CliRunner().invoke(
        cli, ["probe", "--budget", "6", "--epochs", "3", "--json", "--", *example]
    )
    assert probed.exit_code == 0, probed.output
    said = json.loads(probed.output)
    assert said["workload"] == "script:torch_mnist" and said["backend"] == "torch"
    assert (said["samples"], said["batch_size"], said["epochs"]) == (3200, 128, 3)
    assert said["sizes"] == "epochs as given, steps an epoch from its data loader"
    assert said["batches_a_step"] == 2 and said["precision"] == "float32"
    assert said["flops_per_sample"] > 1e7  # two convolutions and two dense layers, counted
    # asked for GPUs (a job of seconds, whose image pull a GPU box bills, ranks CPU VMs first)
    ranked = CliRunner().invoke(
        cli, ["recommend", "--model", "torch_mnist", "--deadline", "2h", "--accelerator", "T4",
              "--json"],
    )  # fmt: skip
    assert ranked.exit_code == 0, ranked.output
    options = json.loads(ranked.output)["options"]
    assert options and all(option["accelerator"] == "T4" for option in options)
    # on a GPU the step is never below the host's dispatch of its operators, measured here
    explained = CliRunner().invoke(
        cli, ["recommend", "--model", "torch_mnist", "--deadline", "2h", "--accelerator", "T4",
              "--explain"],
    )  # fmt: skip
    assert explained.exit_code == 0, explained.output
    floor = re.search(
        r"host dispatch ([\d.]+) ms \(measured here[^)]*\) \+ (\d+) kernels", explained.output
    )
    assert floor is not None, explained.output
    assert float(floor.group(1)) > 0 and 50 <= int(floor.group(2)) <= 1000
    # a plain PyTorch loop pays none of Keras's work on a GPU host
    assert "Keras" not in explained.output[floor.start() : floor.end() + 80]


SCRIPTS = ROOT / "benchmarks" / "scripts"


@pytest.mark.parametrize(
    ("name", "epochs", "samples", "per_epoch", "batch", "micro", "rows"),
    [
        ("hf_trainer", 3, 640, 20, 32, 2, 128),  # batches of 16, two accumulated; 128 tokens
        ("lightning_module", 4, 800, 25, 32, 1, 1),
    ],
)
def test_a_trainer_says_its_epochs_and_its_steps_are_its_optimizers(
    name: str, epochs: int, samples: int, per_epoch: int, batch: int, micro: int, rows: int
) -> None:
    """Hugging Face's and Lightning's ``Trainer``: the epochs they hold, the optimizer steps
    they take (accumulation as batches a step), the FLOPs of a step, and how wide its matrix
    products are (a transformer's tokens a sample, whatever the accumulation), with no edit."""
    command = [
        PYTHON,
        str(SCRIPTS / f"{name}.py"),
        "--epochs",
        str(epochs),
        "--samples",
        str(samples),
    ]
    run = script.run_command(command, budget=8.0)
    script.check_run(run, 8.0)
    sizes = script.sizes_of(run.events, epochs=None, samples=None, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (epochs, per_epoch, batch)
    assert sizes.said == "epochs as the script planned them, steps an epoch from its data loader"
    assert script.observed(run.events)["batches_a_step"] == micro
    counted = script.architecture_of(run.events.model["architecture"])
    assert counted is not None and counted.train_flops_per_sample > 1e6
    assert counted.matmul_rows == pytest.approx(rows, rel=0.02)  # the 2-way head: 1 a sample
