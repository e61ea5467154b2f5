"""``advisor probe -- COMMAND``: a user's own training command run for the budget, its steps read
through ``advisor.probe``, the command stopped with everything it started, the probe stored.

The commands are real Python processes (a Keras fit under TensorFlow where marked ``tf``); the
loops that mark their own steps sleep for their step, so their step time is known."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor import service
from advisor.cli import cli
from advisor.errors import AdvisorError, UsageError
from advisor.workloads import stacks
from probes import script

PYTHON = sys.executable


def _write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def _alive(marker: str) -> bool:
    """A process whose command line holds ``marker`` still runs."""
    # -ww: the whole line, whatever COLUMNS says (a width cut the marker off the end)
    listed = subprocess.run(
        ["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True
    )
    return any(marker in line and "ps -eo" not in line for line in listed.stdout.splitlines())


LOOP = """
    import time
    import advisor.probe as ap
    ap.plan(epochs=3, steps=200, batch=16)
    for epoch in range(3):
        for _ in range(200):
            time.sleep(0.02)
            ap.step(batch=16)
"""


def test_a_loop_that_marks_its_steps_is_probed_and_its_whole_run_predicted(
    tmp_path: Path,
) -> None:
    loop = _write(tmp_path, "loop.py", LOOP)
    run = script.run_command([PYTHON, str(loop)], budget=6.0)
    assert run.ended_by_probe and 2 < len(run.events.steps) < 600  # stopped before its end
    script.check_run(run, 6.0)
    sizes = script.sizes_of(run.events, epochs=None, samples=None, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (3, 200, 16)
    result = script.result_of(run, "loop", sizes, _fingerprint(), None)
    assert result.config.workload == "script:loop" and result.config.samples == 3200
    assert 0.019 < result.step_seconds < 0.04  # its sleep, and the machine's noise
    assert result.predicted_seconds == pytest.approx(599 * result.step_seconds, rel=1e-6)
    assert run.seconds < 6.0 + 5.0


def test_the_size_the_user_gives_wins_over_the_script_and_is_said(tmp_path: Path) -> None:
    loop = _write(tmp_path, "loop.py", LOOP)
    run = script.run_command([PYTHON, str(loop)], budget=3.0)
    sizes = script.sizes_of(run.events, epochs=10, samples=1600, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (10, 100, 16)
    assert sizes.said == "epochs as given, samples as given"


def test_a_command_that_crashes_is_one_line_with_its_last_output(tmp_path: Path) -> None:
    crash = _write(tmp_path, "crash.py", """
        print("loading the data")
        raise SystemExit("no such dataset: /data/cifar")
    """)  # fmt: skip
    run = script.run_command([PYTHON, str(crash)], budget=10.0)
    assert not run.ended_by_probe and run.returncode == 1 and run.seconds < 10
    with pytest.raises(AdvisorError) as failed:
        script.check_run(run, 10.0)
    said = str(failed.value)
    assert "before two training steps" in said and "no such dataset: /data/cifar" in said
    assert "\n" not in said


def test_a_command_that_never_steps_is_stopped_with_its_children_within_the_budget(
    tmp_path: Path,
) -> None:
    """It waits (for input it cannot get, for a lock, for nothing) and started a child of its
    own that ignores SIGINT: the group is gone within the budget and a few seconds."""
    marker = f"advisor-test-sleeper-{os.getpid()}"
    stuck = _write(tmp_path, "stuck.py", f"""
        import signal, subprocess, sys, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        subprocess.Popen([sys.executable, "-c",
                          "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                          "time.sleep(600)  # {marker}"])
        time.sleep(600)
    """)  # fmt: skip
    began = time.monotonic()
    run = script.run_command([PYTHON, str(stuck)], budget=2.0)
    assert time.monotonic() - began < 2.0 + 5.0
    assert run.ended_by_probe and not run.events.steps
    assert not _alive(marker)
    with pytest.raises(AdvisorError, match="no two training steps within the budget"):
        script.check_run(run, 2.0)


def test_the_cli_probes_a_command_stores_it_and_recommend_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    loop = _write(tmp_path, "train.py", LOOP)
    probed = CliRunner().invoke(cli, ["probe", "--budget", "3", "--json", "--", PYTHON, str(loop)])
    assert probed.exit_code == 0, probed.output
    assert '"workload": "script:train"' in probed.output
    assert "steps an epoch as the script planned them" in probed.output
    assert service.stored_script_probe("train") is not None
    ranked = CliRunner().invoke(
        cli, ["recommend", "--model", "train", "--deadline", "8h", "--json"]
    )
    assert ranked.exit_code == 0, ranked.output
    assert '"options"' in ranked.output


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["probe", "--name", "x"], "--name names a command's probe"),
        (["probe", "--model", "lstm", "--", "python", "t.py"], "two ways to say what to probe"),
        (["probe", "--name", "../x", "--", "python", "t.py"], "a probe name is up to 64 letters"),
        (["probe", "--name", "lstm", "--", "python", "t.py"], "names a model advisor knows"),
        (["probe", "--", "python", "my train.py"], "(give one with --name)"),
        (
            ["recommend", "--model", "resnet", "--deadline", "1h", "--", "python", "t.py"],
            "names a model advisor knows",
        ),
        (["probe", "--", "/no/such/program"], "cannot run '/no/such/program'"),
        (["probe"], "give --model MODEL, or a training command after --"),
    ],
)
def test_what_cannot_be_probed_is_a_usage_error(
    argv: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    done = CliRunner().invoke(cli, argv)
    assert done.exit_code == 2, done.output
    assert said in done.output


@pytest.mark.tf
def test_a_keras_fit_script_is_probed_without_an_edit(tmp_path: Path) -> None:
    """Keras's fit reports its plan, its steps and its model through the hooks alone: the
    sizes are the script's, the model's FLOPs counted from its configuration."""
    train = _write(tmp_path, "mlp.py", """
        import numpy as np
        import keras
        x = np.random.rand(12800, 784).astype("float32")
        y = np.random.randint(0, 10, 12800)
        model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(512, activation="relu"),
                                  keras.layers.Dense(10, activation="softmax")])
        model.compile("rmsprop", "sparse_categorical_crossentropy")
        model.fit(x, y, batch_size=128, epochs=400, verbose=0)
    """)  # fmt: skip
    run = script.run_command([PYTHON, str(train)], budget=20.0)
    script.check_run(run, 20.0)
    assert run.ended_by_probe  # 400 epochs take longer than the probe
    assert run.events.plan == {"epochs": 400, "steps": 100, "batch": 128}
    assert run.events.model["parameters"] == 784 * 512 + 512 + 512 * 10 + 10
    architecture = script.architecture_of(run.events.model["architecture"])
    assert architecture is not None
    assert architecture.train_flops_per_sample == pytest.approx(
        6 * (784 * 512 + 512 * 10), rel=0.05
    )


def _fingerprint():  # type: ignore[no-untyped-def]
    from probes import device

    return device.fingerprint()


def test_an_epochs_first_boundary_pays_once_and_the_later_ones_each_epoch() -> None:
    """The first boundary also compiles the validation pass: what it takes beyond the later
    ones is paid once, the later ones' gap less a step each epoch."""
    each, once = script._boundary([2.5, 0.6, 0.5, 0.7], step=0.1)
    assert each == pytest.approx(0.5) and once == pytest.approx(1.9)
    assert script._boundary([], step=0.1) == (0.0, 0.0)


@pytest.mark.tf
def test_a_tf_data_pipeline_says_its_batch_through_its_later_stages() -> None:
    """A ``batch`` stage whose last batch may be short leaves the element's batch dimension
    unknown; the hook finds the stage's batch through the map and prefetch after it."""
    import numpy as np
    import tensorflow as tf

    from advisor.probe import keras_hook

    data = (tf.data.Dataset.from_tensor_slices(np.zeros((100, 4), "float32"))
            .batch(48).map(lambda x: x * 2).prefetch(2))  # fmt: skip
    assert data.element_spec.shape[0] is None
    assert keras_hook._batch_of((data,), {}) == 48
    assert keras_hook._batch_of((np.zeros((10, 4)),), {"batch_size": 5}) == 5


def test_recommend_probes_a_command_and_ranks_cpus_alone_when_its_work_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``recommend -- COMMAND`` probes and ranks in one go; a loop that states no FLOPs can be
    predicted on CPUs like this one only, and the answer says why."""
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("advisor.cli.recommend.PROBE_SECONDS", 3.0)
    loop = _write(tmp_path, "loop.py", LOOP)
    done = CliRunner().invoke(
        cli, ["recommend", "--deadline", "2h", "--explain", "--", PYTHON, str(loop)]
    )
    assert done.exit_code == 0, done.output
    assert "CPU machines only: the script's work per step is unknown" in done.output
    ranked = CliRunner().invoke(cli, ["recommend", "--model", "loop", "--deadline", "2h", "--json"])
    options = json.loads(ranked.output)["options"]
    assert options and all(option["accelerator"] is None for option in options)


def test_a_loop_that_states_its_flops_is_predicted_on_accelerators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    stated = _write(
        tmp_path, "stated.py", LOOP.replace("batch=16)\n", "batch=16, flops_per_sample=2e9)\n", 1)
    )
    probed = CliRunner().invoke(
        cli, ["probe", "--budget", "3", "--json", "--", PYTHON, str(stated)]
    )
    assert probed.exit_code == 0, probed.output
    assert json.loads(probed.output)["flops_per_sample"] == 2e9
    # asked for GPUs (a job of seconds, whose image pull a GPU box bills, ranks CPU VMs first)
    ranked = CliRunner().invoke(
        cli, ["recommend", "--model", "stated", "--deadline", "2h", "--accelerator", "T4",
              "--json"],
    )  # fmt: skip
    options = json.loads(ranked.output)["options"]
    assert options and all(option["accelerator"] == "T4" for option in options)


def test_what_a_script_says_of_itself_is_taken_only_as_counts(tmp_path: Path) -> None:
    """A plan of strings, negatives or booleans, and lines that are not advisor's events, are
    left out: the probe asks for the sizes instead of failing on them."""
    events = script.Events()
    for event in (
        {"event": "plan", "t": 1.0, "epochs": "ten", "steps": -5, "batch": True,
         "flops_per_sample": float("nan")},
        {"event": "step", "t": "soon", "batch": 8},
        {"event": "step", "t": 2.0, "batch": 1e9},
        ["not", "a", "dict"],
    ):  # fmt: skip
        if isinstance(event, dict):
            events.add(event)
    assert events.plan == {} and events.steps == [2.0] and events.batches == []
    with pytest.raises(UsageError, match="did not say its batch"):
        script.sizes_of(events, epochs=None, samples=None, batch_size=None)


def test_a_counted_step_is_left_out_and_the_wait_for_data_is_a_share_of_the_steps() -> None:
    """PyTorch's hook marks the step it counted FLOPs in (slower): its gap is no step time.
    The data waited for is said as a share of the later steps; a run that says no epochs is
    taken as one, and the answer says so."""
    events = script.Events()
    for at in range(1, 11):
        step = {"event": "step", "t": float(at), "batch": 32, "micro": 2, "wait": 0.25}
        events.add({**step, "counted": at == 3, "t": float(at) if at != 3 else 3.0})
    assert events.counted == {3.0}
    assert events.durations == [1.0] * 8  # nine gaps, the counted one left out
    assert script.observed(events) == {"data_wait_share": 0.25, "batches_a_step": 2}
    events.add({"event": "plan", "t": 0.5, "steps": 100, "batch": 32})
    sizes = script.sizes_of(events, epochs=None, samples=None, batch_size=None)
    assert sizes.epochs == 1 and sizes.said.startswith("1 epoch: the script did not say")


def test_a_cancelled_probe_stops_the_command_and_its_children(tmp_path: Path) -> None:
    """The app's cancel: the probe raises ``Cancelled`` and nothing the command started is
    left running."""
    import threading

    from advisor.errors import Cancelled

    marker = f"advisor-test-cancelled-{os.getpid()}"
    loop = _write(tmp_path, "loop.py", f"""
        import subprocess, sys, time
        import advisor.probe as ap
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # {marker}"])
        while True:
            time.sleep(0.01)
            ap.step(batch=8)
    """)  # fmt: skip
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    began = time.monotonic()
    with pytest.raises(Cancelled):
        script.run_command([PYTHON, str(loop)], budget=60.0, cancel=cancel)
    assert time.monotonic() - began < 1.5 + 5.0
    assert not _alive(marker)


def test_advisor_terminated_stops_the_command_and_its_children(tmp_path: Path) -> None:
    """``kill`` (SIGTERM) to a running ``advisor probe -- COMMAND``: advisor stops the command
    and everything it started, then exits, instead of dying and leaving the training running."""
    marker = f"advisor-test-terminated-{os.getpid()}"
    loop = _write(tmp_path, "loop.py", f"""
        import subprocess, sys, time
        import advisor.probe as ap
        import random
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # {marker}"])
        while True:  # steps too uneven to be known within the budget: only a signal ends it
            time.sleep(random.choice([0.002, 0.05]))
            ap.step(batch=8)
    """)  # fmt: skip
    env = {**os.environ, "ADVISOR_HOME": str(tmp_path / "home")}
    advisor = subprocess.Popen(
        [str(Path(PYTHON).parent / "advisor"), "probe", "--budget", "60", "--name", "loop",
         "--samples", "800", "--epochs", "1", "--", PYTHON, str(loop)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not _alive(marker) and time.monotonic() < deadline and advisor.poll() is None:
        time.sleep(0.1)
    assert _alive(marker), "the command never started its child"
    began = time.monotonic()
    advisor.terminate()
    _, err = advisor.communicate(timeout=30)
    assert time.monotonic() - began < 10
    assert advisor.returncode != 0 and "probe stopped by SIGTERM" in err
    assert "Traceback" not in err
    assert not _alive(marker)


STACK_LOOP = """
    import sys, time, types
    for name in {modules!r}:
        sys.modules[name] = types.ModuleType(name)
    import advisor.probe as ap
    ap.plan(epochs=1, steps=40, batch=8)
    for _ in range(40):
        time.sleep(0.005)
        ap.step(batch=8)
"""


@pytest.mark.parametrize(
    ("modules", "stack", "evidence"),
    [
        (["transformers", "peft"], "hf", "transformers, peft"),
        (["torch", "torchtune", "transformers"], "torchtune", "torchtune"),
        (["transformers", "trl", "unsloth"], "unsloth", "unsloth"),
    ],
)
def test_a_script_is_recognised_as_the_stack_its_imports_say(
    modules: list[str], stack: str, evidence: str, tmp_path: Path
) -> None:
    """The modules the script imported (here, stand-ins put in ``sys.modules``) say its
    fine-tuning stack, the most specific first, and the probe reports them as its evidence."""
    loop = _write(tmp_path, "tune.py", STACK_LOOP.format(modules=modules))
    run = script.run_command([PYTHON, str(loop)], budget=20.0)
    assert not run.ended_by_probe and run.returncode == 0, run.output_tail
    found = script.observed(run.events)
    assert found["stack"] == stack and found["stack_evidence"] == evidence
    title = stacks.get(stack).title
    assert script.stack_line(found) == (
        f"stack: {title} (its imports: {evidence}); plan an LLM job on it with --stack {stack}"
    )


def test_a_plain_loop_and_transformers_alone_are_no_stack(tmp_path: Path) -> None:
    """A model borrowed from ``transformers`` without its Trainer, ``trl`` or ``peft`` is no
    fine-tuning stack: nothing is said."""
    loop = _write(tmp_path, "plain.py", STACK_LOOP.format(modules=["transformers"]))
    run = script.run_command([PYTHON, str(loop)], budget=20.0)
    assert run.returncode == 0 and len(run.events.steps) == 40, run.output_tail
    found = script.observed(run.events)
    assert "stack" not in found and "stack_evidence" not in found
    assert run.events.stack == "" and script.stack_line(found) is None


def test_the_cli_table_says_the_stack_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    loop = _write(tmp_path, "tune.py", STACK_LOOP.format(modules=["transformers", "peft"]))
    probed = CliRunner().invoke(cli, ["probe", "--budget", "20", "--", PYTHON, str(loop)])
    assert probed.exit_code == 0, probed.output
    assert (
        "stack: Hugging Face (Transformers Trainer or TRL + PEFT) (its imports: transformers, peft)"
        in probed.output
    )


@pytest.mark.parametrize(
    ("modules", "said"),
    [
        ({"unsloth": 1, "transformers": 1, "trl": 1}, ("unsloth", ["unsloth"])),
        ({"axolotl": 1, "transformers": 1}, ("hf", ["axolotl"])),
        ({"llamafactory": 1}, ("hf", ["llamafactory"])),
        ({"torchtitan": 1, "torch": 1}, ("torchtitan", ["torchtitan"])),
        ({"megatron": 1, "megatron.core": 1}, ("nemo", ["megatron.core"])),
        ({"nemo_automodel": 1, "nemo": 1}, ("automodel", ["nemo_automodel"])),
        ({"nemo": 1, "megatron.bridge": 1}, ("nemo", ["nemo", "megatron.bridge"])),
        ({"composer": 1, "transformers": 1, "peft": 1}, ("llm-foundry", ["composer"])),
        ({"transformers": 1, "transformers.trainer": 1}, ("hf", ["transformers", "transformers.trainer"])),
        ({"transformers": 1}, None),
        ({"peft": 1, "trl": 1, "megatron": 1, "torch": 1}, None),
    ],
)  # fmt: skip
def test_the_stack_is_the_most_specific_its_modules_say(
    modules: dict[str, object], said: tuple[str, list[str]] | None
) -> None:
    from advisor.probe import stacks

    assert stacks.detect(modules) == said


def test_every_stack_the_probe_can_name_is_one_advisor_plans() -> None:
    """The probe (standard library only, in the user's process) keeps its own table of
    evidence: each stack it can name is one of ``data/llm-stacks.csv``'s, the CLI's ``--stack``."""
    from advisor.probe import stacks as probe_stacks

    named = {stack for stack, _ in probe_stacks._SPECIFIC} | {"hf"}
    assert named <= set(stacks.stacks()) and len(named) >= 6


def test_the_stack_is_said_once_at_the_third_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hook's steps pass through ``emit``: the stack is read at the third, said once."""
    import types

    from advisor.probe import events as probe_events

    path = tmp_path / "events.jsonl"
    monkeypatch.setenv("ADVISOR_PROBE_EVENTS", str(path))
    monkeypatch.setattr(probe_events, "_handle", None)
    monkeypatch.setattr(probe_events, "_steps", 0)
    for name in ("torchtune", "peft"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    try:
        for _ in range(6):
            probe_events.emit({"event": "step", "batch": 4})
    finally:
        probe_events._handle.close()
    kinds = [json.loads(line) for line in path.read_text().splitlines()]
    assert [k["event"] for k in kinds] == ["step"] * 3 + ["stack"] + ["step"] * 3
    assert kinds[3]["stack"] == "torchtune" and kinds[3]["modules"] == ["torchtune"]


def test_a_hostile_stack_event_is_left_out() -> None:
    """A stack advisor does not name (a command, a number, 10 kB) is no stack; a named one
    keeps only its module names that are dotted identifiers, five at most."""
    events = script.Events()
    for stack in ("rm -rf /", 42, "x" * 10_000, None, ["hf"], "HF", "hf "):
        events.add({"event": "stack", "t": 1.0, "stack": stack, "modules": ["transformers"]})
    assert events.stack == "" and events.stack_modules == []
    assert "stack" not in script.observed(events)
    events.add({"event": "stack", "t": 2.0, "stack": "nemo", "modules": "nemo"})
    assert script.observed(events) == {"stack": "nemo"}
    assert script.stack_line(script.observed(events)) == (
        "stack: NVIDIA NeMo (Megatron-Bridge / Megatron-Core); plan an LLM job on it with --stack nemo"
    )
    events.add({"event": "stack", "t": 3.0, "stack": "hf", "modules": [
        "transformers", "rm -rf /", 5, "a" * 10_000, "peft; x", "trl", "../x", "transformers.trainer",
        "a.", "peft", "accelerate", "datasets"]})  # fmt: skip
    assert events.stack_modules == ["transformers", "trl", "transformers.trainer", "peft",
                                     "accelerate"]  # fmt: skip
    events.add({"event": "stack", "t": "soon", "stack": "torchtune", "modules": ["torchtune"]})
    assert script.observed(events)["stack"] == "hf"


def test_hostile_operator_counts_and_backend_flags_are_left_out() -> None:
    """A script's process writes its own events: an operator count or an operator's seconds that
    is not a sane number (NaN, infinity, negative, huge, a bool, text) leaves the host floor
    unmeasured; only ``native`` exactly true makes the loop native."""
    events = script.Events()
    for operators, seconds in (
        (float("nan"), 2e-6), (100, float("nan")), (100, float("inf")), (-5, 2e-6),
        (10**9, 2e-6), (True, 2e-6), ("100", 2e-6), (100, 1.0), (100, 0.0), (100, "2e-6"),
    ):  # fmt: skip
        events.add(
            {"event": "model", "t": 1.0, "operators": operators, "operator_seconds": seconds}
        )
        assert (events.operators, events.operator_seconds) == (0, 0.0), (operators, seconds)
    events.add({"event": "model", "t": 2.0, "operators": 1097, "operator_seconds": 2.5e-6})
    assert (events.operators, events.operator_seconds) == (1097, 2.5e-6)
    for flag in ("true", 1, "yes", None):
        events.add({"event": "backend", "t": 3.0, "name": "torch", "native": flag})
        assert not events.native, flag
    events.add({"event": "backend", "t": 4.0, "name": "torch", "native": True})
    assert events.native
