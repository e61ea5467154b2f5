"""Loading a user's .keras file: any failure is one AdvisorError line naming the file, and the
load always asks for Keras' safe mode. A stand-in ``keras`` module keeps this free of TensorFlow."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from advisor.errors import AdvisorError, UsageError
from probes.loading import load_safely
from probes.spec import MAX_MODEL_ENTRIES, check_model_file


def archive(path: Path, entries: dict[str, bytes] | None = None, lie: int | None = None) -> Path:
    """A zip at ``path`` shaped like a .keras file; ``lie`` overwrites the unpacked size its
    central directory states (a bomb declares what it would inflate to)."""
    import zipfile

    with zipfile.ZipFile(path, "w") as out:
        for name, data in (entries or {"metadata.json": b"{}", "config.json": b"{}"}).items():
            out.writestr(name, data)
    if lie is not None:
        data = bytearray(path.read_bytes())
        at = data.index(b"PK\x01\x02")
        data[at + 24 : at + 28] = lie.to_bytes(4, "little")
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda p: archive(p, lie=0xF0000000), AdvisorError, "would unpack to 3.8 GiB"),
        (
            lambda p: archive(p, {f"e{n}": b"" for n in range(MAX_MODEL_ENTRIES + 1)}),
            AdvisorError,
            f"{MAX_MODEL_ENTRIES + 1} entries",
        ),
        (lambda p: archive(p, {"../evil": b"x"}), AdvisorError, "an entry named '../evil'"),
        (lambda p: p.write_bytes(b"PK\x03\x04 no zip"), AdvisorError, "not a zip archive"),
        (lambda p: p.mkdir(), UsageError, "is a folder"),
    ],
    ids=["bomb", "entries", "parent-entry", "garbage", "folder"],
)
def test_a_model_file_is_checked_before_loading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make: Any, error: type, message: str
) -> None:
    calls = fake_keras(monkeypatch, RuntimeError("never reached"))
    path = tmp_path / "model.keras"
    make(path)
    with pytest.raises(error) as caught:
        load_safely(str(path))
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert calls == []  # Keras never saw the file


def test_a_path_of_10000_characters_is_one_line() -> None:
    with pytest.raises(UsageError, match="too long"):
        check_model_file(Path("/tmp/" + "m" * 10_000 + ".keras"))


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
        load_safely(str(archive(tmp_path / "model.keras")))
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert calls == [{"safe_mode": True, "compile": True}]


def test_keras_floor_is_declared() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert '"keras>=3.12"' in pyproject
