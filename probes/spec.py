"""What to probe: a zoo workload or a user's .keras file, with the sizes of the full run.

No TensorFlow here: ``config_for`` turns what a user typed into a ``WorkloadConfig`` (the key
of the probe store) and validates the sizes, so a bad command fails in milliseconds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from advisor.errors import UsageError
from probes import zoo
from probes.limits import MAX_BATCH, MAX_EPOCHS, MAX_SAMPLES
from probes.result import WorkloadConfig

USER_BATCH_SIZE = 32
"""Default batch size of a user's model (Keras' own default)."""


@dataclass(frozen=True)
class ProbeSpec:
    """One thing to probe: the run's sizes plus where its model comes from."""

    config: WorkloadConfig
    workload: zoo.Workload | None = None
    """The zoo workload, or None for a user's model file."""
    path: Path | None = None
    """The user's ``.keras`` file, or None for a zoo workload."""

    @property
    def label(self) -> str:
        return self.workload.id if self.workload else str(self.path)


def is_model_file(name: str) -> bool:
    return name.endswith((".keras", ".h5")) or "/" in name or Path(name).suffix != ""


def spec_for(
    name_or_path: str,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    samples: int | None = None,
    validation_samples: int | None = None,
) -> ProbeSpec:
    """The probe spec for a zoo name/alias or a ``.keras`` path, sizes overridden where given."""
    sizes = {
        "epochs": epochs,
        "batch_size": batch_size,
        "samples": samples,
        "validation_samples": validation_samples,
    }
    ceilings = {"epochs": MAX_EPOCHS, "batch_size": MAX_BATCH}
    for option, value in sizes.items():
        floor = 0 if option == "validation_samples" else 1
        flag = "--" + option.replace("_", "-")
        if value is not None and value < floor:
            raise UsageError(f"{flag} must be {'>= 0' if floor == 0 else '> 0'}, got {value}")
        ceiling = ceilings.get(option, MAX_SAMPLES)
        if value is not None and value > ceiling:
            raise UsageError(f"{flag} must be <= {ceiling:,}, got {value}")
    given = {k: v for k, v in sizes.items() if v is not None}
    if is_model_file(name_or_path):
        return _file_spec(Path(name_or_path), given)
    workload = zoo.get(name_or_path)
    config = WorkloadConfig(
        workload.id, workload.samples, workload.validation_samples, workload.epochs,
        workload.batch_size,
    )  # fmt: skip
    return ProbeSpec(replace(config, **given), workload=workload)  # type: ignore[arg-type]


def config_for(
    name_or_path: str,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    samples: int | None = None,
    validation_samples: int | None = None,
) -> WorkloadConfig:
    """The ``WorkloadConfig`` of a zoo workload or model file; sizes must be > 0."""
    return spec_for(
        name_or_path, epochs=epochs, batch_size=batch_size, samples=samples,
        validation_samples=validation_samples,
    ).config  # fmt: skip


def _file_spec(path: Path, given: dict[str, int]) -> ProbeSpec:
    if not path.exists():
        raise UsageError(f"no such model file: {path}")
    if path.suffix != ".keras":
        raise UsageError(f"{path} is not a Keras model (expected a .keras file)")
    for needed in ("samples", "epochs"):
        if needed not in given:
            raise UsageError(f"a model file needs --{needed} (the size of its full training)")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    config = WorkloadConfig(
        workload=f"file:{digest}",
        samples=given["samples"],
        validation_samples=given.get("validation_samples", 0),
        epochs=given["epochs"],
        batch_size=given.get("batch_size", USER_BATCH_SIZE),
    )
    return ProbeSpec(config, path=path)
