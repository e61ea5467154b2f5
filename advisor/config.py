"""The user's settings, read from ``config.toml`` in the config folder (see ``locations``).

Every setting has a default, so a missing file is a normal state. Example::

    [prices]
    ttl_days = 7          # warn when a source's prices are older than this

    [refresh]
    deadline_seconds = 300  # time for one source, retries and pages included
    command_deadline_seconds = 900  # time for the whole refresh, every source included
    stall_seconds = 30      # longest wait for the next byte of a response
    max_wait_seconds = 10   # longest wait between tries (caps a server's Retry-After)
    max_download_mib = 100  # cap on one response as sent (compressed)
    max_body_mib = 200      # cap on one response once decompressed

    [sources]
    skypilot_url = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"

A file that cannot be read, is not UTF-8 TOML, or holds a value of the wrong type is one error
line naming the file and the setting, never a traceback.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor import display, locations
from advisor.errors import AdvisorError


@dataclass(frozen=True)
class Config:
    prices_ttl_days: float = 7.0
    """Age after which a source's prices are called stale."""
    source_urls: dict[str, str] = field(default_factory=dict)
    """Overrides of price-source URLs, by source name (``[sources]`` table, ``<name>_url``)."""
    refresh_deadline_seconds: float = 300.0
    """Time allowed for one price source, retries and pages included (``pricing.fetch``)."""
    refresh_command_deadline_seconds: float = 900.0
    """Time allowed for a whole refresh, every source included: stalls do not add up."""
    refresh_stall_seconds: float = 30.0
    """Longest a download may go without a byte (a stall after the headers)."""
    refresh_max_wait_seconds: float = 10.0
    """Longest wait between two tries of a source, a server's ``Retry-After`` included."""
    max_download_mib: float = 100.0
    """Cap on one downloaded response as sent over the network."""
    max_body_mib: float = 200.0
    """Cap on one downloaded response once decompressed."""


_LIMITS = {
    # setting: (Config field, largest value accepted)
    "deadline_seconds": ("refresh_deadline_seconds", 24 * 3600.0),
    "command_deadline_seconds": ("refresh_command_deadline_seconds", 7 * 24 * 3600.0),
    "stall_seconds": ("refresh_stall_seconds", 3600.0),
    "max_wait_seconds": ("refresh_max_wait_seconds", 3600.0),
    "max_download_mib": ("max_download_mib", 64 * 1024.0),
    "max_body_mib": ("max_body_mib", 64 * 1024.0),
}


def load() -> Config:
    """Read the user's config, or the defaults when there is none."""
    path = locations.config_path()
    if not path.exists():
        return Config()
    try:
        raw: dict[str, Any] = tomllib.loads(_read_bounded(path).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AdvisorError(f"cannot read {path}: not UTF-8 text (byte {exc.start})") from exc
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise AdvisorError(f"cannot read {path}: {exc}") from exc
    except RecursionError:  # tables or arrays nested thousands deep
        raise AdvisorError(f"cannot read {path}: nested too deeply to read") from None
    prices = _table(raw, "prices", path)
    ttl = _positive(prices, "ttl_days", Config.prices_ttl_days, f"{path}: prices.ttl_days")
    urls = {}
    for key, value in _table(raw, "sources", path).items():
        if not key.endswith("_url"):
            continue
        if not isinstance(value, str) or not value.startswith(("http://", "https://")):
            raise AdvisorError(
                f"{path}: sources.{display.cut(key)} must be an http(s) URL, not "
                f"{display.quoted(value)}"
            )
        urls[key.removesuffix("_url")] = value
    limits: dict[str, float] = {}
    refresh = _table(raw, "refresh", path)
    for key, (name, largest) in _LIMITS.items():
        value = _positive(refresh, key, getattr(Config, name), f"{path}: refresh.{key}")
        if value > largest:
            raise AdvisorError(f"{path}: refresh.{key} must be at most {largest:g}, not {value:g}")
        limits[name] = value
    return Config(prices_ttl_days=ttl, source_urls=urls, **limits)


MAX_CONFIG_BYTES = 1024 * 1024
"""A config file is a few lines; one pointing at an endless device (``/dev/zero``) is read this
far and refused, not forever."""


def _read_bounded(path: Path) -> bytes:
    if not path.is_file():
        raise AdvisorError(f"cannot read {path}: not a regular file")
    with path.open("rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise AdvisorError(f"cannot read {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
    return data


def _table(raw: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = raw.get(name, {})
    if not isinstance(value, dict):
        raise AdvisorError(
            f"{path}: {name} must be a table ([{name}]), not {display.quoted(value)}"
        )
    return value


def _positive(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise AdvisorError(f"{where} must be a finite positive number, not {display.quoted(value)}")
    return float(value)
