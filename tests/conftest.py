"""Every test runs with its own ADVISOR_HOME, so nothing touches the user's real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(autouse=True)
def advisor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "advisor-home"
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    return home
