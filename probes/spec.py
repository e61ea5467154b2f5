"""What to probe: a zoo workload or a user's .keras file, with the sizes of the full run.

No TensorFlow here: ``config_for`` turns what a user typed into a ``WorkloadConfig`` (the key
of the probe store) and validates the sizes, so a bad command fails in milliseconds.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import zipfile

from advisor import display
from advisor.errors import AdvisorError, UsageError
from advisor.workloads import llm, llm_job, weights, zoo
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
    if llm_job.is_probe_name(name_or_path):  # an LLM job's proxy, named by the probe store
        job = llm_job.job_of_probe(
            name_or_path, given.get("samples", 1), given.get("epochs", 1),
            given.get("batch_size", 1),
        )  # fmt: skip
        workload = llm_job.workload_of(job)
        config = WorkloadConfig(workload.id, job.sequences, 0, job.epochs, workload.batch_size)
        return ProbeSpec(config, workload=workload)
    if is_model_file(name_or_path) and llm.find(name_or_path) is None:
        return _file_spec(Path(name_or_path), given)
    if llm.find(name_or_path) is not None:
        raise UsageError(
            f"{name_or_path} is an LLM: 'advisor recommend --model {name_or_path} --tokens 20M' "
            "plans a fine-tuning job and probes its proxy"
        )
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


MAX_PATH_CHARS = 4_096
"""Longest model path taken (Linux's PATH_MAX)."""
MAX_MODEL_BYTES = 2 * 1024**3
"""Most a .keras archive may hold once unpacked. Keras refuses 4 GiB and unpacks the weights
into memory; a model whose weights fill 2 GiB has 500 million float32 parameters, more than a
20-second CPU probe can step."""
MAX_MODEL_ENTRIES = 256
"""Most entries a .keras archive may have: Keras writes three (``metadata.json``,
``config.json``, ``model.weights.h5``) plus any assets."""


def check_model_file(path: Path) -> weights.Count:
    """Refuse, in one line and before TensorFlow loads anything, a model path that is not a
    readable .keras archive (a regular file: never a device such as ``/dev/zero``, which reads
    forever, nor a named pipe, which blocks) within ``MAX_MODEL_BYTES`` unpacked and ``MAX_MODEL_ENTRIES``
    entries, whose entry names leave the archive, or whose layers declare more weights than
    ``MAX_MODEL_BYTES`` holds: a 4 MB zip bomb must not cost 8 GB, nor a 20 KB config that
    claims 1.6 billion weights 26 GB. Returns the weights its layers declare."""
    import zipfile

    shown = display.cut(str(path), 200)
    if len(str(path)) > MAX_PATH_CHARS:
        raise UsageError(f"model path of {len(str(path)):,} characters is too long: {shown}")
    try:
        if path.is_dir():
            raise UsageError(f"{shown} is a folder, not a .keras model file")
        if not path.exists():
            raise UsageError(f"no such model file: {shown}")
        if path.suffix != ".keras":
            raise UsageError(f"{shown} is not a Keras model (expected a .keras file)")
        status = path.stat()  # through a symbolic link: what would be read
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(
                f"{shown} is not a regular file (a device, a pipe or a socket): a .keras model "
                "is a file"
            )
        if status.st_size > MAX_MODEL_BYTES:
            raise AdvisorError(
                f"{shown} is {status.st_size / 1024**3:.1f} GiB (at most "
                f"{MAX_MODEL_BYTES / 1024**3:g} GiB); refused before reading it"
            )
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
            unpacked = _check_entries(entries, shown)
            config = archive.read(CONFIG_ENTRY) if CONFIG_ENTRY in archive.namelist() else b""
    except OSError as exc:
        raise UsageError(f"cannot read {shown}: {exc.strerror or exc}") from None
    except (zipfile.BadZipFile, ValueError, EOFError, NotImplementedError) as exc:
        raise AdvisorError(
            f"{shown} is not a .keras model file (not a zip archive: {display.cut(str(exc), 80)})"
        ) from None
    layers = weights.read_config(config, shown) if config else {}
    wrong = weights.bad_size(layers)
    if wrong is not None:
        raise AdvisorError(
            f"{shown}: {wrong}, where a positive whole number belongs; refused before building it"
        )
    declared = weights.count(layers) if config else weights.Count(0)
    stored = declared.parameters * weights.BYTES_PER_WEIGHT
    if stored > MAX_MODEL_BYTES:
        raise AdvisorError(
            f"{shown}: its layers declare {declared.parameters:,} weights "
            f"({weights.gib(stored)} as float32, more than the {MAX_MODEL_BYTES / 1024**3:g} GiB "
            f"a .keras file may hold); training them needs about "
            f"{weights.gib(declared.training_bytes)} ({declared.describe()}); refused before "
            "building it"
        )
    if declared.parameters > unpacked:  # each weight is stored: a byte at least (int8)
        raise AdvisorError(
            f"{shown}: its layers declare {declared.parameters:,} weights but the file holds "
            f"{unpacked:,} bytes in all (a saved model stores every weight); training them "
            f"would need about {weights.gib(declared.training_bytes)}; refused before building it"
        )
    return declared


CONFIG_ENTRY = "config.json"


def _check_entries(entries: list[zipfile.ZipInfo], shown: str) -> int:
    """Refuse too many entries, too many bytes, or names that leave the archive; returns the
    bytes they unpack to."""
    if len(entries) > MAX_MODEL_ENTRIES:
        raise AdvisorError(
            f"{shown} has {len(entries):,} entries (at most {MAX_MODEL_ENTRIES}); refused"
        )
    unpacked = sum(entry.file_size for entry in entries)
    if unpacked > MAX_MODEL_BYTES:
        raise AdvisorError(
            f"{shown} would unpack to {unpacked / 1024**3:.1f} GiB (at most "
            f"{MAX_MODEL_BYTES / 1024**3:g} GiB); refused before loading"
        )
    for entry in entries:
        name = entry.filename
        if name.startswith(("/", "\\")) or ".." in name.split("/") or "\0" in name:
            raise AdvisorError(f"{shown} has an entry named {name[:80]!r}; refused")
        if name == CONFIG_ENTRY and entry.file_size > weights.MAX_CONFIG_BYTES:
            raise AdvisorError(
                f"{shown}: its config.json is {entry.file_size:,} bytes (at most "
                f"{weights.MAX_CONFIG_BYTES:,}); refused"
            )
    return unpacked


def _file_spec(path: Path, given: dict[str, int]) -> ProbeSpec:
    check_model_file(path)
    for needed in ("samples", "epochs"):
        if needed not in given:
            raise UsageError(f"a model file needs --{needed} (the size of its full training)")
    digest = _digest(path)
    config = WorkloadConfig(
        workload=f"file:{digest}",
        samples=given["samples"],
        validation_samples=given.get("validation_samples", 0),
        epochs=given["epochs"],
        batch_size=given.get("batch_size", USER_BATCH_SIZE),
    )
    return ProbeSpec(config, path=path)


def _digest(path: Path) -> str:
    """The file's SHA-256 (16 hex digits), read in pieces rather than whole."""
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        while piece := handle.read(1024 * 1024):
            hasher.update(piece)
    return hasher.hexdigest()[:16]
