"""Heavy and UI imports stay where they belong (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

ENGINE_PACKAGES = ["pricing", "probes", "advisor.estimate", "advisor.recommend", "advisor.bench"]
ENGINE_MODULES = ["advisor.store", "advisor.locations", "advisor.config", "advisor.errors",
                  "advisor.skypilot"]  # fmt: skip


def engine_modules() -> list[str]:
    """Every module of the engine packages (so a new module is checked without listing it)."""
    names = list(ENGINE_MODULES)
    for package in ENGINE_PACKAGES:
        names.append(package)
        path = [str(Path(__file__).resolve().parents[2] / package.replace(".", "/"))]
        names += [info.name for info in pkgutil.walk_packages(path, prefix=f"{package}.")]
    return names


def imported_after(code: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_cli_help_never_imports_tensorflow_or_textual() -> None:
    modules = imported_after(
        """
        from click.testing import CliRunner
        from advisor.cli import cli
        for args in (["--help"], ["prices", "--help"], ["recommend", "--help"], ["probe", "--help"],
                     ["bench", "--help"]):
            assert CliRunner().invoke(cli, args).exit_code == 0
        """
    )
    assert "tensorflow" not in modules
    assert "keras" not in modules
    assert "textual" not in modules
    assert "sky" not in modules


def test_recommend_never_imports_skypilot() -> None:
    from tests.recommend.test_service import stored_mlp_probe

    stored_mlp_probe()
    modules = imported_after(
        """
        from click.testing import CliRunner
        from advisor.cli import cli
        result = CliRunner().invoke(cli, ["recommend", "--model", "mlp", "--json"])
        assert result.exit_code == 0, result.output
        """
    )
    assert "sky" not in modules
    assert "tensorflow" not in modules


def test_engine_imports_no_ui_and_no_tensorflow() -> None:
    modules = imported_after("\n".join(f"import {name}" for name in engine_modules()))
    for heavy in ("tensorflow", "keras", "textual", "rich", "sky"):
        assert heavy not in modules, f"{heavy} imported by the engine"
