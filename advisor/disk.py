"""What a failed read or write of the user's database means, as one line that says what to do.

SQLite says ``disk I/O error`` when a full disk keeps it from making the file a WAL reader needs
(``-shm``), ``no such table: x`` when a table was dropped by hand, ``database disk image is
malformed`` when a page is damaged. None of that text reaches the user: ``explain`` names the
state (a full disk first, whatever SQLite called it, since the disk's free space says it best),
what it costs and the way out.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from pathlib import Path

from advisor import display

FULL_BYTES = 1024 * 1024
"""A disk with less free space than this is full for advisor: SQLite cannot grow a WAL file,
make its shared-memory index, or store a probe."""
RECOVERY = (
    "run 'advisor locate' to find it and move the file aside; advisor then starts a new one "
    "from the shipped seed (refreshed prices and stored probes in the old one are lost)"
)
_MISSING = re.compile(r"no such (table|column|index): (\S+)")


def free_bytes(path: Path | str) -> int | None:
    """Free bytes on the disk holding ``path`` (its nearest existing folder); None if unknown."""
    folder = Path(path)
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def is_full(path: Path | str) -> bool:
    """Whether the disk holding ``path`` has less than ``FULL_BYTES`` free."""
    free = free_bytes(path)
    return free is not None and free < FULL_BYTES


def full(path: Path | str) -> str:
    """The line for a write refused by a full disk: where, how much is free, what to free."""
    folder = Path(path).parent
    free = free_bytes(path) or 0
    size = _size(Path(path))
    return (
        f"the disk holding {display.cut(folder, 120)} is full ({_bytes(free)} free): free space "
        f"on it (a price refresh needs about as much as the database holds, {size}; a probe, a "
        "megabyte) or set ADVISOR_HOME to a folder on another disk; nothing was changed, and "
        "commands that only read still work"
    )


def scratch_folder() -> Path:
    """Where SQLite writes its temporary files (sorts, temporary tables, a source's spool): the
    first of ``SQLITE_TMPDIR``, ``TMPDIR``, /var/tmp, /usr/tmp, /tmp that is a writable folder,
    as SQLite looks (``unixTempFileDir``)."""
    for name in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp",
                 "/usr/tmp", "/tmp"):  # fmt: skip
        if name and os.path.isdir(name) and os.access(name, os.W_OK | os.X_OK):
            return Path(name)
    return Path(".")


def scratch_full() -> str:
    """The line for work refused because SQLite's scratch folder is on a full disk."""
    folder = scratch_folder()
    return (
        f"the disk holding {display.cut(folder, 120)} (SQLite's scratch space) is full "
        f"({_bytes(free_bytes(folder) or 0)} free): free space on it or set TMPDIR to a folder on "
        "another disk; nothing was changed"
    )


def explain(exc: sqlite3.Error, path: Path | str) -> str:
    """One line for a SQLite failure on the database at ``path``: what happened, what to do."""
    shown = display.cut(path, 200)
    name = getattr(exc, "sqlite_errorname", "") or ""
    message = str(exc)
    if name == "SQLITE_FULL" or name.startswith(("SQLITE_IOERR", "SQLITE_READONLY")):
        if is_full(path):
            return full(path)
        if not name.startswith("SQLITE_READONLY") and is_full(scratch_folder()):
            return scratch_full()
    if name == "SQLITE_FULL":
        return f"a disk is full (writing {shown}): free space, then try again; nothing was changed"
    if "file is not a database" in message or name == "SQLITE_NOTADB":
        return f"{shown} is not a SQLite database: {RECOVERY}"
    if "malformed" in message or "corrupt" in message or name.startswith("SQLITE_CORRUPT"):
        return f"{shown} is damaged (a page of it does not read back): {RECOVERY}"
    if "readonly" in message or "read-only" in message or name.startswith("SQLITE_READONLY"):
        return (
            f"{shown} is read-only here: reading works; to refresh prices or store probes, make "
            "its folder writable or set ADVISOR_HOME to a writable folder"
        )
    if "locked" in message or "busy" in message or name.startswith("SQLITE_BUSY"):
        return f"{shown} is busy: another advisor is writing it; try again"
    if name.startswith("SQLITE_IOERR") or name == "SQLITE_CANTOPEN":
        return f"{shown} cannot be read or written here (the disk or its folder failed): {RECOVERY}"
    missing = _MISSING.search(message)
    if missing:
        what = f"its {missing.group(1)} {display.cut(missing.group(2), 40)} is missing"
        return f"{shown} is not as advisor left it ({what}): {RECOVERY}"
    return f"{shown} is not as advisor left it (were its tables changed by hand?): {RECOVERY}"


def _size(path: Path) -> str:
    try:
        return _bytes(path.stat().st_size)
    except OSError:
        return "unknown"


def _bytes(count: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"
