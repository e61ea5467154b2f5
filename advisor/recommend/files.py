"""Writing a file the user named: never through a symlink, never over an existing file unless
asked, and atomically (a temporary file in the same folder, then ``os.replace``), so a reader
sees the old file or the whole new one, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from advisor.errors import AdvisorError, UsageError


def write_atomic(
    path: str | Path, text: str, *, overwrite: bool = False, flag: str = "--force"
) -> Path:
    """Write ``text`` to ``path``; a ``UsageError`` for a folder, a symlink, or an existing file
    (unless ``overwrite``), an ``AdvisorError`` when the folder cannot be written."""
    target = Path(path)
    if target.is_symlink():
        raise UsageError(f"{target} is a symbolic link; refusing to write through it")
    if target.is_dir():
        raise UsageError(f"{target} is a folder; give a file name")
    if target.exists() and not overwrite:
        raise UsageError(f"{target} exists; refusing to overwrite it (use {flag} to replace it)")
    folder = target.parent
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise AdvisorError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise AdvisorError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
