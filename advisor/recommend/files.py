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
    """Write ``text`` to ``path``; a ``UsageError`` for a folder, a symlink, an existing file
    (unless ``overwrite``) or a missing folder, an ``AdvisorError`` when the folder cannot be
    written (full, read-only)."""
    target = check_writable(path, overwrite=overwrite, flag=flag)
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


def check_writable(path: str | Path, *, overwrite: bool = False, flag: str = "--force") -> Path:
    """``path`` as a ``Path`` when ``write_atomic`` may write it, else a ``UsageError`` saying
    why: a command checks before it spends time, and writes after."""
    target = Path(path)
    try:
        if target.is_symlink():
            raise UsageError(f"{target} is a symbolic link; refusing to write through it")
        if target.is_dir():
            raise UsageError(f"{target} is a folder; give a file name")
        if target.exists() and not target.is_file():
            raise UsageError(f"{target} is not a regular file (a device?); give a file name")
        if target.exists() and not overwrite:
            raise UsageError(
                f"{target} exists; refusing to overwrite it (use {flag} to replace it)"
            )
        if not target.parent.is_dir():
            raise UsageError(f"cannot write {target}: no folder {target.parent}")
    except OSError as exc:  # a name too long, a loop of links
        raise UsageError(f"cannot write {str(target)[:200]}: {exc.strerror or exc}") from None
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
