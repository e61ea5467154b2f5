"""When a refresh must not replace the prices it has: an empty, broken or shrunken catalog.

A source that answers with a header and no rows, with rows whose every price is ``N/A``, or
with a few rows of its usual thousands, is far more likely broken (a failed export, a truncated
mirror, a hostile server) than a cloud that stopped selling most of its machines overnight. As
a refresh retires the current prices a catalog no longer lists, accepting such a catalog would
delete the prices of a whole cloud. So it is refused, the transaction is rolled back, and the
user can still accept a real shrink explicitly (``allow_shrink``, ``--allow-shrink``).
"""

from __future__ import annotations

from pricing.ingest import Counts

MAX_RETIRED_SHARE = 0.5
"""A catalog may retire at most this share of the current prices it replaces."""
MIN_VALID_SHARE = 0.5
"""At least this share of a catalog's prices must pass validation."""


class Refused(Exception):
    """A batch that would shrink a source's prices past the bounds; its message says why."""


def refusal(counts: Counts) -> str | None:
    """Why the write that produced ``counts`` must be rolled back, or None when it may stand."""
    valid = counts.added + counts.changed + counts.unchanged
    rows = valid + counts.skipped
    retired, out_of = counts.removed, counts.replaceable
    tally = f"({rows} rows, {valid} valid)"
    if rows == 0:
        return f"the new catalog is empty; it would retire {retired} of {out_of} prices"
    if valid < rows * MIN_VALID_SHARE:
        return (
            f"{counts.skipped} of {rows} rows of the new catalog are invalid; it would retire "
            f"{retired} of {out_of} prices {tally}"
        )
    if retired > out_of * MAX_RETIRED_SHARE:
        return f"the new catalog would retire {retired} of {out_of} prices {tally}"
    return None
