"""The SkyPilot task of one bench candidate, as the plain config SkyPilot's YAML holds.

Setup installs advisor on the node in a virtual environment of its own (Python 3.11 through
``uv``, whatever the image ships): the wheel built from this checkout, sent with
``file_mounts``, or advisor from an index the user names; TensorFlow's CUDA extra on a GPU. Run
probes the workload with ``advisor probe --export`` and prints the exported rows, each behind
``EXPORT_MARK``, so they come back with the job's log (``exported``); on a machine of several
accelerators, or a cluster (``num_nodes``), the probe trains data parallel over all of them,
its processes meeting at the first node SkyPilot lists. The YAML is written by a
serializer: region and instance names come from price catalogs, and are data.

Task format: https://docs.skypilot.co/en/latest/reference/yaml-spec.html
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.bench.plan import Candidate
from advisor.errors import AdvisorError
from probes.backend import BACKENDS

REMOTE_DIR = "~/advisor-bench"
"""Where the node keeps advisor, its database and the export (under the node user's home)."""
EXPORT_FILE = "probe.csv"
COORDINATOR_PORT = 8476
"""Where the rank-0 node's probe listens for the others (JAX's coordination service)."""
EXPORT_MARK = "advisor-export: "
"""Prefix of each exported CSV line in the job's log (a log may prefix lines of its own)."""


@dataclass(frozen=True)
class ProbeArgs:
    """What ``advisor probe`` measures on the node."""

    model: str
    epochs: int | None = None
    batch_size: int | None = None
    samples: int | None = None
    validation_samples: int | None = None
    budget_seconds: float = 20.0
    backend: str = "tensorflow"
    """The Keras backend the node probes with (``probes.backend``)."""

    def command(self) -> list[str]:
        words = ["probe", "--model", self.model]
        for flag, value in (
            ("--epochs", self.epochs),
            ("--batch-size", self.batch_size),
            ("--samples", self.samples),
            ("--validation-samples", self.validation_samples),
        ):
            if value is not None:
                words += [flag, str(value)]
        return [*words, "--budget", f"{self.budget_seconds:g}", "--backend", self.backend,
                "--fresh", "--export", EXPORT_FILE]  # fmt: skip


@dataclass(frozen=True)
class Install:
    """Where the node gets advisor: a local wheel (sent along) or an index."""

    wheel: Path | None = None
    index_url: str | None = None

    def __post_init__(self) -> None:
        if (self.wheel is None) == (self.index_url is None):
            raise ValueError("install advisor from a wheel or from an index, one of them")


def run_commands(probe: ProbeArgs, nodes: int = 1, data_parallel: bool = False) -> str:
    """The job: probe, export, print the export (needs only what setup installed). Data
    parallel (``probes.distributed``), over ``nodes`` machines: every node runs the probe, the
    first one SkyPilot lists (rank 0) coordinates and prints the export."""
    advisor = shlex.join(["env/bin/advisor", *probe.command()])
    show = f"sed -e {shlex.quote('s/^/' + EXPORT_MARK + '/')} {EXPORT_FILE}"
    lines = [
        "set -e",
        f"mkdir -p {REMOTE_DIR} && cd {REMOTE_DIR}",
        'export ADVISOR_HOME="$PWD/home"',
    ]
    if nodes > 1:
        lines.append(f'COORDINATOR="$(echo "$SKYPILOT_NODE_IPS" | head -n1):{COORDINATOR_PORT}"')
        advisor += (
            ' --data-parallel --nodes "$SKYPILOT_NUM_NODES" --node-rank "$SKYPILOT_NODE_RANK"'
            ' --coordinator "$COORDINATOR"'
        )
        show = f'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then {show}; fi'
    elif data_parallel:
        advisor += " --data-parallel"
    return "\n".join([*lines, advisor, show])


def setup_commands(candidate: Candidate, install: Install, backend: str = "tensorflow") -> str:
    """Install advisor (with the backend's extra: TensorFlow's CUDA one on a GPU) into
    ``REMOTE_DIR/env``."""
    name = BACKENDS[backend].extra(candidate.is_gpu)
    extra = f"[{name}]" if name else ""
    if install.wheel is not None:
        source = [f"{install.wheel.name}{extra}"]
    else:
        assert install.index_url is not None
        source = ["--index-url", install.index_url, f"advisor{extra}=={__version__}"]
    install_command = ["python3", "-m", "uv", "pip", "install", "--quiet", "--python"]
    return "\n".join(
        [
            "set -e",
            f"mkdir -p {REMOTE_DIR} && cd {REMOTE_DIR}",
            "python3 -m pip install --quiet --upgrade uv",
            "python3 -m uv venv --quiet --python 3.11 env",
            shlex.join([*install_command, "env/bin/python", *source]),
        ]
    )


def task_config(candidate: Candidate, probe: ProbeArgs, install: Install) -> dict[str, Any]:
    """The task as SkyPilot's YAML holds it (``sky.Task.from_yaml_config`` reads it)."""
    r = candidate.rentable
    infra = "/".join([r.provider, r.region, *([r.zone] if r.zone else [])])
    resources: dict[str, Any] = {"infra": infra, "instance_type": r.instance_type}
    if r.accelerator:
        resources["accelerators"] = {r.accelerator: r.accelerator_count}
    resources["use_spot"] = r.pricing == "spot"
    config: dict[str, Any] = {"name": candidate.cluster, "resources": resources}
    if candidate.nodes > 1:
        config["num_nodes"] = candidate.nodes
    if install.wheel is not None:
        config["file_mounts"] = {f"{REMOTE_DIR}/{install.wheel.name}": str(install.wheel.resolve())}
    config["setup"] = setup_commands(candidate, install, probe.backend)
    config["run"] = run_commands(probe, candidate.nodes, candidate.data_parallel)
    return config


def write_yaml(path: Path, config: dict[str, Any], *, comment: str = "") -> Path:
    """Write ``config`` as YAML (through PyYAML, which SkyPilot brings)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        """Safe dumping; scripts as literal blocks, the way people write SkyPilot tasks."""

    def text_block(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    Dumper.add_representer(str, text_block)
    text = yaml.dump(config, Dumper=Dumper, sort_keys=False, default_flow_style=False)
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    try:
        path.write_text(header + text, encoding="utf-8")
    except OSError as exc:
        raise AdvisorError(f"cannot write the SkyPilot task {path}: {exc.strerror}") from exc
    return path


def exported(log: str) -> str | None:
    """The exported CSV a job printed into its log, or None when it printed none."""
    lines = [line.split(EXPORT_MARK, 1)[1] for line in log.splitlines() if EXPORT_MARK in line]
    return "\n".join(lines) + "\n" if lines else None


def checkout() -> Path | None:
    """The source checkout advisor runs from (with its ``pyproject.toml``), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def wheel_command(root: Path, folder: Path) -> list[str]:
    """The command that builds advisor's wheel from ``root`` into ``folder``."""
    return [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
            str(folder), str(root)]  # fmt: skip


def wheel_name() -> str:
    """The name of the wheel ``wheel_command`` builds."""
    return f"advisor-{__version__}-py3-none-any.whl"


def build_wheel(root: Path, folder: Path) -> Path:
    """Build advisor's wheel from the checkout at ``root`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(wheel_command(root, folder), capture_output=True, text=True)
    wheel = folder / wheel_name()
    if done.returncode != 0 or not wheel.is_file():
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel written"]
        raise AdvisorError(f"cannot build advisor's wheel from {root}: {last[0]}")
    return wheel
