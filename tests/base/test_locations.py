"""One locations module: ADVISOR_HOME redirects everything; shipped data is found when installed."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from advisor import locations

REPO = Path(__file__).resolve().parents[2]
PROBE_SHIPPED = textwrap.dedent(
    """
    from advisor import locations
    print(locations.shipped("benchmarks.csv"))
    print(locations.__file__)
    """
)


def test_advisor_home_moves_everything(advisor_home: Path) -> None:
    for path in (locations.database_path(), locations.cache_dir(), locations.config_path()):
        assert advisor_home in path.parents


def test_without_advisor_home_paths_are_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADVISOR_HOME")
    assert "advisor" in str(locations.database_path())
    assert locations.data_dir() != locations.cache_dir()


def test_shipped_data_from_the_checkout() -> None:
    assert locations.shipped("benchmarks.csv") == REPO / "data" / "benchmarks.csv"
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        locations.shipped("no-such-file.csv")


def _run_outside_repo(python: str, tmp_path: Path, extra_path: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(extra_path)}
    out = subprocess.run(
        [python, "-c", PROBE_SHIPPED],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().splitlines()


def test_shipped_data_from_a_regular_wheel_install(tmp_path: Path) -> None:
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, REPO],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("advisor-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", site, wheel],
        check=True,
    )
    deps = sysconfig.get_paths()["purelib"]
    shipped, module = _run_outside_repo(sys.executable, tmp_path, [str(site), deps])
    assert Path(module).is_relative_to(site)
    assert Path(shipped) == site / "advisor" / "_data" / "benchmarks.csv"


def test_shipped_data_from_an_editable_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", REPO], check=True)
    deps = sysconfig.get_paths()["purelib"]
    shipped, module = _run_outside_repo(python, tmp_path, [deps])
    assert Path(module).is_relative_to(REPO)
    assert Path(shipped) == REPO / "data" / "benchmarks.csv"
