"""A SkyPilot task for the chosen offering, so ``sky launch task.yaml`` rents exactly it.

The task is built as a dict and written by PyYAML's safe dumper (``yaml.SafeDumper``, with our
own ``run`` command as a literal block): every catalog string (a region,
an instance type) is a quoted scalar under its own key, whatever characters it holds, so no
catalog row can add keys (a ``setup:`` or ``run:`` of its own) to the task. Comment lines hold
only sanitized single-line text. Task format:
https://docs.skypilot.co/en/latest/reference/yaml-spec.html
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from advisor.recommend.files import write_atomic
from pricing.offers import Rentable

PLACEHOLDER_RUN = "python train.py  # advisor: replace with your training command\n"
_CLOUDS = {"aws": "aws", "gcp": "gcp", "azure": "azure", "lambda": "lambda"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")


def task(rentable: Rentable, *, workload: str, run: str = PLACEHOLDER_RUN) -> dict[str, Any]:
    """The task as plain data: ``name``, ``resources`` and ``run`` (ours), nothing else."""
    resources: dict[str, Any] = {
        "cloud": _CLOUDS.get(rentable.provider, str(rentable.provider)),
        "region": str(rentable.region),
    }
    if rentable.zone:
        resources["zone"] = str(rentable.zone)
    if rentable.instance_type:
        resources["instance_type"] = str(rentable.instance_type)
    if rentable.accelerator:
        resources["accelerators"] = f"{rentable.accelerator}:{int(rentable.accelerator_count)}"
    resources["use_spot"] = rentable.pricing == "spot"
    return {"name": f"advisor-{workload}", "resources": resources, "run": _Block(run)}


class _Block(str):
    """Our own multi-line command, written as a YAML literal block (``run: |``)."""


class _Dumper(yaml.SafeDumper):
    """The safe dumper, writing ``_Block`` strings as literal blocks (nothing else changes)."""


def _block(dumper: yaml.SafeDumper, value: _Block) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")


_Dumper.add_representer(_Block, _block)


def task_yaml(rentable: Rentable, *, workload: str, run: str = PLACEHOLDER_RUN) -> str:
    """The task YAML text for ``rentable``."""
    body = yaml.dump(
        task(rentable, workload=workload, run=run),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=False,
        width=1_000,
    )
    price = rentable.usd_per_hour
    shown = f"${price:.4f}/h" if isinstance(price, int | float) and math.isfinite(price) else "?"
    comment = (
        f"# advisor: where to train {_safe(workload)}: {_safe(rentable.provider)} "
        f"{_safe(rentable.region)}, {shown} ({_safe(rentable.pricing)})\n"
    )
    return comment + body


def _safe(value: object) -> str:
    """One short line of plain characters for a comment (anything else becomes ``_``)."""
    return _UNSAFE.sub("_", str(value))[:80]


def write_task(
    path: str | Path, rentable: Rentable, *, workload: str, overwrite: bool = True
) -> Path:
    """Write the task file atomically (never through a symlink; over an existing file only when
    ``overwrite``), returning its path."""
    return write_atomic(path, task_yaml(rentable, workload=workload), overwrite=overwrite)
