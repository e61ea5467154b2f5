"""Loading a user's .keras file: any failure is one AdvisorError line naming the file, and the
load always asks for Keras' safe mode. A stand-in ``keras`` module keeps this free of TensorFlow."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from advisor.errors import AdvisorError
from probes.loading import load_safely


def fake_keras(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def load_model(path: str, **options: Any) -> None:
        calls.append(options)
        raise error

    module = types.ModuleType("keras")
    module.models = types.SimpleNamespace(load_model=load_model)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras", module)
    return calls


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            RuntimeError("zip is broken\nsecond line\nthird"),
            "cannot load model.keras as a Keras model: zip is broken",
        ),
        (KeyError("config"), "cannot load model.keras"),
        (
            ValueError("Requested the deserialization of a Lambda layer ... safe_mode=False"),
            "refusing model.keras",
        ),
        (AttributeError(""), "AttributeError"),
        (OSError(2, "No such file or directory"), "cannot read model.keras: No such file"),
        (RecursionError("maximum recursion depth exceeded"), "maximum recursion"),
    ],
)
def test_any_load_failure_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: BaseException, message: str
) -> None:
    calls = fake_keras(monkeypatch, error)
    with pytest.raises(AdvisorError) as caught:
        load_safely(str(tmp_path / "model.keras"))
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert calls == [{"safe_mode": True, "compile": True}]


def test_keras_floor_is_declared() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert '"keras>=3.12"' in pyproject
