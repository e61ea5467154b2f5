"""The user's settings, read from ``config.toml`` in the config folder (see ``locations``).

Every setting has a default, so a missing file is a normal state. Example::

    [prices]
    ttl_days = 7          # warn when a source's prices are older than this

    [sources]
    skypilot_url = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Any

from advisor import locations
from advisor.errors import AdvisorError


@dataclass(frozen=True)
class Config:
    prices_ttl_days: float = 7.0
    """Age after which a source's prices are called stale."""
    source_urls: dict[str, str] = field(default_factory=dict)
    """Overrides of price-source URLs, by source name (``[sources]`` table, ``<name>_url``)."""


def load() -> Config:
    """Read the user's config, or the defaults when there is none."""
    path = locations.config_path()
    if not path.exists():
        return Config()
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AdvisorError(f"cannot read {path}: {exc}") from exc
    prices = raw.get("prices", {})
    sources = raw.get("sources", {})
    for table, value in (("prices", prices), ("sources", sources)):
        if not isinstance(value, dict):
            raise AdvisorError(f"{path}: [{table}] must be a table, not {type(value).__name__}")
    ttl = prices.get("ttl_days", Config.prices_ttl_days)
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= 36_500:
        raise AdvisorError(
            f"{path}: prices.ttl_days must be a number of days in (0, 36500], not {ttl!r}"
        )
    urls = {
        key.removesuffix("_url"): str(value)
        for key, value in sources.items()
        if key.endswith("_url")
    }
    return Config(prices_ttl_days=float(ttl), source_urls=urls)
