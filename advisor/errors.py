"""Errors that reach the user as one clear line, never as a traceback.

The engine raises these; the command line prints ``advisor: error: <message>`` and exits with
``exit_code``. Anything else escaping the engine is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterable


class AdvisorError(Exception):
    """A failure the user can act on (a missing file, an unreachable price source, ...)."""

    exit_code = 1


class UsageError(AdvisorError):
    """The user asked for something malformed (an unknown model name, a bad deadline, ...)."""

    exit_code = 2


class Cancelled(AdvisorError):
    """The user interrupted long work (Ctrl-C during a probe or a refresh); nothing was stored."""

    exit_code = 130


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``"; did you mean 'x', 'y'?"`` for the names of ``known`` closest to ``name`` (case
    ignored, spelled as known), or ``""`` when none is close: the tail of an "unknown ..." error."""
    import difflib

    if len(name) > 200:  # no name is this long; comparing it would only cost time
        return ""
    spelled = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.strip().lower(), list(spelled), n=3, cutoff=cutoff)
    return f"; did you mean {', '.join(repr(spelled[c]) for c in close)}?" if close else ""
