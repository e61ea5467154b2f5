"""A user model's weights counted from its config before anything is built (``advisor.workloads.weights``),
and a model that cannot be trained here refused in one line, in well under two seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.workloads import weights
from probes import data
from probes.run import check_weights_fit
from probes.spec import check_model_file, spec_for
from tests.inputs import dense_config, dense_model_file

ROOT = Path(__file__).resolve().parents[2]


def _layer(kind: str, config: dict, shape: list | None = None) -> dict:
    layer: dict = {"class_name": kind, "config": config}
    if shape is not None:
        layer["build_config"] = {"input_shape": shape}
    return layer


def _model(*layers: dict, optimizer: object = None) -> dict:
    model: dict = {"class_name": "Sequential", "config": {"layers": list(layers)}}
    if optimizer is not None:
        model["compile_config"] = {"optimizer": optimizer}
    return model


def test_weights_are_counted_from_layer_configs() -> None:
    config = _model(
        _layer("Dense", {"units": 7}, [None, 5]),
        _layer("Conv2D", {"filters": 8, "kernel_size": [3, 3]}, [None, 16, 16, 3]),
        _layer(
            "Conv2D",
            {"filters": 4, "kernel_size": [3, 3], "groups": 2, "use_bias": False},
            [None, 14, 14, 8],
        ),
        _layer("Embedding", {"input_dim": 100, "output_dim": 8}),
        _layer("LSTM", {"units": 5}, [None, 10, 8]),
        _layer("GRU", {"units": 4}, [None, 10, 5]),
        _layer("Bidirectional", {"layer": _layer("SimpleRNN", {"units": 2})}, [None, 10, 4]),
        _layer("BatchNormalization", {}, [None, 6]),
        _layer("Sequential", {"layers": [_layer("Dense", {"units": 3}, [None, 6])]}),
    )
    expected = (5 * 7 + 7) + (9 * 3 * 8 + 8) + 9 * 4 * 4 + 100 * 8 + 4 * 5 * (8 + 5 + 1)
    expected += 3 * 4 * (5 + 4 + 2) + 2 * (2 * (4 + 2 + 1)) + 4 * 6 + (6 * 3 + 3)
    assert weights.count(config) == weights.Count(expected, 2, "adam")


@pytest.mark.parametrize(
    ("optimizer", "slots"),
    [
        ({"class_name": "SGD", "config": {"momentum": 0.0}}, 0),
        ({"class_name": "SGD", "config": {"momentum": 0.9}}, 1),
        ("rmsprop", 1),
        ({"class_name": "RMSprop", "config": {"momentum": 0.5, "centered": True}}, 3),
        ("AdamW", 2),
        ({"class_name": "MyOwnOptimizer"}, 2),
        (None, 2),
    ],
)
def test_optimizer_slots(optimizer: object, slots: int) -> None:
    assert weights.count(_model(optimizer=optimizer)).slots == slots


@pytest.mark.parametrize(
    "layer",
    [
        _layer("Dense", {"units": -5}, [None, 3]),
        _layer("Dense", {"units": "many"}, [None, 3]),
        _layer("Dense", {"units": True}, [None, 3]),
        _layer("Dense", {"units": 4}, "not a shape"),  # type: ignore[arg-type]
        _layer("Dense", {"units": 4}),  # never built: no shape
        _layer("Conv2D", {"filters": 4, "kernel_size": "x", "use_bias": False}, [None, 3, 3, 1]),
        {"class_name": "Dense", "config": "not a table"},
        "not a layer",
        _layer("MyOwnLayer", {"units": 10**9}, [None, 10**9]),
    ],
)
def test_nonsense_counts_as_nothing(layer: dict) -> None:
    assert weights.count(_model(layer)).parameters == 0


def test_a_config_nested_too_deeply_is_one_error_line() -> None:
    with pytest.raises(AdvisorError, match=r"config\.json is nested too deeply"):
        weights.read_config(b"[" * 100_000 + b"]" * 100_000, "deep.keras")


def test_a_model_larger_than_any_keras_file_is_refused_with_its_memory_need(
    tmp_path: Path,
) -> None:
    path = dense_model_file(tmp_path / "big.keras", 40_000, 40_000)
    with pytest.raises(AdvisorError) as caught:
        check_model_file(path)
    message = str(caught.value)
    assert "1,600,040,000 weights" in message and "needs about 23.8 GiB" in message
    assert "refused before building it" in message


def test_a_config_that_claims_weights_its_file_lacks_is_refused(tmp_path: Path) -> None:
    path = dense_model_file(tmp_path / "mid.keras", 20_000, 20_000)  # 1.5 GiB in 17 KB
    with pytest.raises(AdvisorError, match=r"declare 400,020,000 weights but the file holds"):
        check_model_file(path)


def test_a_model_whose_training_does_not_fit_here_is_refused_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = dense_model_file(tmp_path / "small.keras", 100, 30)
    spec = spec_for(str(path), samples=64, epochs=1)
    monkeypatch.setattr(data, "available_bytes", lambda: 10_000)
    with pytest.raises(AdvisorError) as caught:
        check_weights_fit(spec)
    assert str(caught.value) == (
        f"training {path} (3,030 weights, their gradients and 2 adam slots, 4 bytes each) does "
        "not fit in memory: needs about 0.0 GiB, 0.0 GiB available; refused before building it"
    )
    monkeypatch.setattr(data, "available_bytes", lambda: 10**9)
    check_weights_fit(spec)  # fits: no error


def test_the_command_refuses_a_huge_model_in_one_line_without_tensorflow(tmp_path: Path) -> None:
    path = dense_model_file(tmp_path / "big.keras", 40_000, 40_000)
    code = (
        "import sys, runpy; sys.argv = ['advisor', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('advisor', run_name='__main__')\n"
        "finally:\n    print('tensorflow' in sys.modules, 'keras' in sys.modules)"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, "probe", "--model", str(path), "--samples", "100",
         "--epochs", "1"],
        capture_output=True, text=True, cwd=ROOT, check=False,
        env={**os.environ, "ADVISOR_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert time.perf_counter() - started < 2.0
    assert done.returncode == 1 and done.stdout.strip() == "False False"
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("advisor: error: ") and "needs about 23.8 GiB" in line


def test_the_hand_written_config_is_what_keras_writes() -> None:
    """The benchmark's model file has the shape of a saved Sequential (checked by Keras in
    ``test_counts_match_keras``)."""
    config = dense_config(3, 2)
    assert weights.count(config).parameters == 3 * 2 + 2
    assert json.loads(json.dumps(config)) == config


@pytest.mark.tf
def test_counts_match_keras(tmp_path: Path) -> None:
    """Every layer kind counted here, saved by Keras itself: the count is ``count_params()``."""
    script = ROOT / "tests" / "probes" / "keras_counts.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=True,
    )  # fmt: skip
    rows = [line.split() for line in done.stdout.splitlines()]
    assert len(rows) == 7
    for name, keras_count in rows:
        with zipfile.ZipFile(tmp_path / f"{name}.keras") as archive:
            config = weights.read_config(archive.read("config.json"), name)
        assert weights.count(config).parameters == int(keras_count), name


@pytest.mark.parametrize("kind", ["pipe", "device"])
def test_a_model_path_that_is_no_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    """A device reads forever (/dev/zero through a link: 15 GB before a MemoryError) and a
    named pipe blocks: both are refused before anything is opened, in one line (a thread, so
    that a regression fails here instead of hanging the suite)."""
    import threading

    from advisor.errors import UsageError

    path = tmp_path / "model.keras"
    if kind == "pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    raised: list[BaseException] = []

    def check() -> None:
        try:
            check_model_file(path)
        except BaseException as error:
            raised.append(error)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "check_model_file blocked on a pipe or a device"
    assert len(raised) == 1 and isinstance(raised[0], UsageError)
    assert "is not a regular file" in str(raised[0])


@pytest.mark.parametrize("units", [-3, 0, float("nan"), "64", 2.5, True])
def test_a_layer_size_that_is_no_positive_whole_number_is_refused_naming_it(
    tmp_path: Path, units: object
) -> None:
    """Keras refused these only while building the model, 6-16 s later, in its own words cut
    mid-word and without the value."""
    path = dense_model_file(tmp_path / "model.keras", 4, units)  # type: ignore[arg-type]
    with pytest.raises(AdvisorError, match=r"layer 'dense' has units .+ a positive whole number"):
        check_model_file(path)
