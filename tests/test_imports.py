"""Heavy and UI imports stay where they belong (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

ENGINE = [
    "pricing",
    "probes",
    "advisor.estimate",
    "advisor.recommend",
    "advisor.store",
    "advisor.locations",
    "advisor.config",
    "probes.result",
    "pricing.model",
    "advisor.estimate.model",
    "probes.device",
    "probes.store",
    "probes.exchange",
    "probes.spec",
    "probes.stats",
    "probes.run",
    "probes.models",
    "probes.loading",
    "probes.data",
    "probes.timing",
    "probes.scaling",
    "probes.epochs",
    "probes.profile",
    "probes.threads",
]


def imported_after(code: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_cli_help_never_imports_tensorflow_or_textual() -> None:
    modules = imported_after(
        """
        from click.testing import CliRunner
        from advisor.cli import cli
        for args in (["--help"], ["prices", "--help"], ["recommend", "--help"], ["probe", "--help"]):
            assert CliRunner().invoke(cli, args).exit_code == 0
        """
    )
    assert "tensorflow" not in modules
    assert "keras" not in modules
    assert "textual" not in modules


def test_engine_imports_no_ui_and_no_tensorflow() -> None:
    modules = imported_after("\n".join(f"import {name}" for name in ENGINE))
    for heavy in ("tensorflow", "keras", "textual", "rich"):
        assert heavy not in modules, f"{heavy} imported by the engine"
