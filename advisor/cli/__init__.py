"""The ``advisor`` command line: a thin layer over the engine.

Bare ``advisor`` opens the terminal app; the subcommands do the same work for scripts. Each
subcommand lives in its own module and is imported only when it runs (or when help lists it),
so ``advisor --help`` stays fast and TensorFlow is imported only where a probe runs.

Exit codes: 0 ok, 1 failure, 2 usage error, 130 cancelled. Errors are one line on stderr.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sqlite3
import sys
from typing import Any

import click

from advisor import __version__
from advisor.cli.backend import backend_option
from advisor.errors import AdvisorError, UsageError, did_you_mean

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# name -> "module:attribute"; the order is the order of `advisor --help`.
SUBCOMMANDS = {
    "recommend": "advisor.cli.recommend:recommend",
    "probe": "advisor.cli.probe:probe",
    "models": "advisor.cli.probe:models",
    "prices": "advisor.cli.prices:prices",
    "devices": "advisor.cli.estimate:devices",
    "validate": "advisor.cli.estimate:validate",
    "import": "advisor.cli.probe:import_results",
    "bench": "advisor.cli.bench:bench",
    "locate": "advisor.cli.locate:locate",
}


MAX_LINE_CHARS = 2_000
"""Longest error or warning line: a value that no message cut itself is cut here."""


def fail(message: str, code: int = 1) -> None:
    """Print one error line and exit (the only way the CLI reports a failure). The message may
    quote a file name or a catalog's words: ``display.plain`` shows their control characters."""
    from advisor import display

    text = display.cut(display.plain(" ".join(str(message).split("\n"))), MAX_LINE_CHARS)
    with contextlib.suppress(OSError, ValueError):  # stderr closed or full: the code says it
        click.echo(f"advisor: error: {text}", err=True)
    sys.exit(code)


def _warning_line(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
    """A warning (a damaged stored row, skipped) as one ``advisor: warning:`` line."""
    from advisor import display

    with contextlib.suppress(OSError, ValueError):
        text = display.cut(display.plain(message), MAX_LINE_CHARS)
        click.echo(f"advisor: warning: {text}", err=True)


def _os_error(exc: OSError) -> str:
    """An operating-system failure as one line: what broke, on which file when known."""
    from advisor import display

    if not exc.filename:  # a write to stdout or stderr
        return f"cannot write the output: {exc.strerror or exc}"
    where = display.cut(exc.filename, 200)
    if exc.errno == errno.ENOSPC:
        return f"cannot write {where}: its disk is full; free space on it, or write elsewhere"
    return f"cannot use {where}: {exc.strerror or exc}"


def _finish_output() -> None:
    """Flush stdout now, so that a closed or full stdout is one error line, not a traceback
    from the interpreter's shutdown."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        _silence_stdout()
        fail(f"cannot write the output: {getattr(exc, 'strerror', None) or exc}")


def _silence_stdout() -> None:
    with contextlib.suppress(OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the process exits


class AdvisorGroup(click.Group):
    """A group that loads subcommands lazily and turns every user error into one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if name not in SUBCOMMANDS and not name.startswith("-"):
            hint = did_you_mean(name, SUBCOMMANDS)
            raise click.UsageError(f"no such command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        import warnings

        warnings.showwarning = _warning_line
        if sys.stdout is None:  # started with stdout closed (>&-): say so, print nothing
            fail("standard output is closed; nothing can be printed (redirect it to a file)")
        try:
            result = super().main(*args, **kwargs)
        except click.exceptions.Abort:
            fail("cancelled", 130)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "advisor"
            fail(f"{exc.format_message()} (see '{where} --help')", 2)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except AdvisorError as exc:
            fail(str(exc), exc.exit_code)
        except sqlite3.Error as exc:  # the database broke mid-command (damaged, disk full)
            from advisor import disk, locations

            fail(disk.explain(exc, locations.database_path()))
        except KeyboardInterrupt:
            fail("cancelled", 130)
        except BrokenPipeError:
            _silence_stdout()
            sys.exit(1)
        except OSError as exc:  # stdout full or closed, a path too long or a link loop
            _silence_stdout()
            fail(_os_error(exc))
        except RecursionError:  # a reader that does not name its input yet
            fail("input nested too deeply to read")
        _finish_output()
        sys.exit(result if isinstance(result, int) else 0)


@click.group(
    "advisor", cls=AdvisorGroup, invoke_without_command=True, context_settings=CONTEXT_SETTINGS
)
@click.version_option(__version__, "-V", "--version", prog_name="advisor")
@click.option(
    "--verbose",
    is_flag=True,
    help="Show TensorFlow's own log lines (also ADVISOR_VERBOSE=1).",
)
@backend_option
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Where should I train this model? Measure it here, predict it everywhere, compare prices.

    Run without a command to open the terminal app. For scripts:

    \b
      advisor recommend --model lstm --deadline 8h
      advisor probe --model mnist_cnn --json
      advisor prices refresh
    """
    if verbose:  # read by probes.quiet in this process and in every probe child process
        os.environ["ADVISOR_VERBOSE"] = "1"
    if ctx.invoked_subcommand is None:
        check_terminal()
        from advisor.tui import run_app

        run_app()


def check_terminal() -> None:
    """The app draws on a terminal and reads its keys: without one (standard input closed or
    not a terminal, output to a file or a pipe) it would run forever writing screen escapes, so
    it is refused in one line."""
    streams = (sys.stdin, sys.stdout)
    if any(stream is None or stream.closed or not stream.isatty() for stream in streams):
        raise UsageError(
            "the app needs a terminal (standard input and output); without one, use a command: "
            "advisor recommend --model lstm --deadline 8h (see 'advisor --help')"
        )


def main() -> None:
    """Console-script entry point. A command that probed here ends without the framework's
    tear-down: freeing a model's graphs and weights took TensorFlow 1-4 s after an LLM probe,
    time its user waits for with the answer already printed and stored."""
    code: int | str | None = 0
    try:
        cli.main(prog_name="advisor")
    except SystemExit as exc:
        code = exc.code
    if not any(name in sys.modules for name in _FRAMEWORKS):
        sys.exit(code)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    if isinstance(code, str):  # sys.exit("message") prints it, then exits 1
        print(code, file=sys.stderr, flush=True)
    os._exit(code if isinstance(code, int) else 1 if code else 0)


_FRAMEWORKS = ("tensorflow", "jax", "torch")
"""What a probe imports whose tear-down at exit ``main`` skips."""
