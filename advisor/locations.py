"""Where advisor keeps things: one module, one environment variable to move them all.

The user's own state lives under the platform's user directories (platformdirs):

- ``data_dir()``: the price and probe database, ``advisor.sqlite``;
- ``cache_dir()``: downloaded price-source files and other things safe to delete;
- ``config_dir()``: ``config.toml``.

Setting ``ADVISOR_HOME`` puts all three below that one folder (``data/``, ``cache/``,
``config/``), which is what the tests and scripts do.

What ships with the package (seed prices, device catalog, calibration measurements) is
read-only and found by ``shipped()``: inside an installed wheel it is ``advisor/_data``; in a
source checkout or an editable install it is the repository's ``data/`` folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "advisor"
HOME_ENV = "ADVISOR_HOME"
DATABASE_NAME = "advisor.sqlite"
CONFIG_NAME = "config.toml"

_PACKAGE_DIR = Path(__file__).resolve().parent


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """Folder of the user's database."""
    home = _home()
    return home / "data" if home else platformdirs.user_data_path(APP_NAME)


def cache_dir() -> Path:
    """Folder of downloads and other disposable files."""
    home = _home()
    return home / "cache" if home else platformdirs.user_cache_path(APP_NAME)


def config_dir() -> Path:
    """Folder of ``config.toml``."""
    home = _home()
    return home / "config" if home else platformdirs.user_config_path(APP_NAME)


def database_path() -> Path:
    """The user's SQLite database (created from the shipped seed on first use)."""
    return data_dir() / DATABASE_NAME


def config_path() -> Path:
    return config_dir() / CONFIG_NAME


def shipped_data_dir() -> Path:
    """The read-only data that ships with advisor (never written to)."""
    installed = _PACKAGE_DIR / "_data"
    if installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent / "data"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"advisor's shipped data is missing: looked in {installed} and {checkout}"
    )


def shipped(name: str) -> Path:
    """Path of one shipped data file, e.g. ``shipped("benchmarks.csv")``."""
    path = shipped_data_dir() / name
    if not path.exists():
        raise FileNotFoundError(f"advisor's shipped data file {name!r} is missing ({path})")
    return path


def ensure_dirs() -> None:
    """Create the user's folders (the engine calls this before writing)."""
    for folder in (data_dir(), cache_dir(), config_dir()):
        folder.mkdir(parents=True, exist_ok=True)
