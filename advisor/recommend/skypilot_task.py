"""A SkyPilot task for the chosen offering, so ``sky launch task.yaml`` rents exactly it.

Written by hand (no YAML dependency): a handful of scalar keys, strings double-quoted in JSON
style, which YAML reads as the same strings. Task format: https://docs.skypilot.co/en/latest/reference/yaml-spec.html
"""

from __future__ import annotations

import json
from pathlib import Path

from advisor.errors import AdvisorError, UsageError
from pricing.offers import Rentable

PLACEHOLDER_RUN = "python train.py  # advisor: replace with your training command"
_CLOUDS = {"aws": "aws", "gcp": "gcp", "azure": "azure", "lambda": "lambda"}


def task_yaml(rentable: Rentable, *, workload: str, run: str = PLACEHOLDER_RUN) -> str:
    """The task YAML text for ``rentable``."""
    resources = {
        "cloud": _CLOUDS.get(rentable.provider, rentable.provider),
        "region": rentable.region,
    }
    if rentable.zone:
        resources["zone"] = rentable.zone
    if rentable.instance_type:
        resources["instance_type"] = rentable.instance_type
    if rentable.accelerator:
        resources["accelerators"] = f"{rentable.accelerator}:{rentable.accelerator_count}"
    lines = [
        f"# advisor: where to train {workload}: {rentable.provider} {rentable.region}, "
        f"${rentable.usd_per_hour:.4f}/h ({rentable.pricing})",
        f"name: {json.dumps('advisor-' + workload)}",
        "resources:",
        *(f"  {key}: {json.dumps(value)}" for key, value in resources.items()),
        f"  use_spot: {'true' if rentable.pricing == 'spot' else 'false'}",
        "run: |",
        *(f"  {line}" for line in run.splitlines()),
    ]
    return "\n".join(lines) + "\n"


def write_task(path: str | Path, rentable: Rentable, *, workload: str) -> Path:
    """Write the task file (refusing a folder), returning its path."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--emit skypilot needs a file name, and {target} is a folder")
    try:
        target.write_text(task_yaml(rentable, workload=workload), encoding="utf-8")
    except OSError as exc:
        raise AdvisorError(f"cannot write the SkyPilot task to {target}: {exc.strerror}") from exc
    return target
