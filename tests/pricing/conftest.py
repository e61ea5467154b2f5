"""What the price tests share: a loopback server of recorded-format files, a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils

from pricing import database
from tests.fixtures.pricing.server import FixtureServer


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    """A real HTTP server on 127.0.0.1 serving ``tests/fixtures/pricing``."""
    with FixtureServer().running() as running:
        yield running


@pytest.fixture
def db(tmp_path: Path) -> sqlite_utils.Database:
    """A fresh price database, seeded from the shipped seed."""
    return database.connect(tmp_path / "prices.sqlite")
