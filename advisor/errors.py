"""Errors that reach the user as one clear line, never as a traceback.

The engine raises these; the command line prints ``advisor: error: <message>`` and exits with
``exit_code``. Anything else escaping the engine is a bug and keeps its traceback.
"""


class AdvisorError(Exception):
    """A failure the user can act on (a missing file, an unreachable price source, ...)."""

    exit_code = 1


class UsageError(AdvisorError):
    """The user asked for something malformed (an unknown model name, a bad deadline, ...)."""

    exit_code = 2


class Cancelled(AdvisorError):
    """The user interrupted long work (Ctrl-C during a probe or a refresh); nothing was stored."""

    exit_code = 130
