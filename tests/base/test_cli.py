"""The command-line frame: help everywhere, version, exit codes, one-line errors."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from advisor import __version__
from advisor.cli import SUBCOMMANDS, cli


def all_command_paths() -> list[list[str]]:
    paths: list[list[str]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, f"{[*path, name]} is listed but cannot be loaded"
                walk(sub, [*path, name])

    walk(cli, [])
    return paths


@pytest.mark.parametrize("path", all_command_paths(), ids=lambda p: " ".join(p) or "advisor")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_has_help(path: list[str], flag: str) -> None:
    result = CliRunner().invoke(cli, [*path, flag])
    assert result.exit_code == 0, result.output
    assert "Usage: advisor" in result.output
    # the command's own summary, not just the usage line
    assert len(result.output.strip().splitlines()) >= 3


def test_every_promised_subcommand_exists() -> None:
    assert set(SUBCOMMANDS) >= {
        "recommend",
        "probe",
        "models",
        "prices",
        "devices",
        "validate",
        "import",
        "locate",
    }
    prices = cli.get_command(click.Context(cli), "prices")
    assert isinstance(prices, click.Group)
    assert set(prices.list_commands(click.Context(prices))) >= {
        "list",
        "refresh",
        "show",
        "history",
    }


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_unknown_command_is_one_usage_line_with_a_suggestion() -> None:
    result = CliRunner().invoke(cli, ["recomend"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "did you mean 'recommend'" in lines[0]
    assert "Traceback" not in result.output


def test_unknown_option_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["locate", "--no-such-option"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("advisor: error:")


def test_locate_follows_advisor_home(advisor_home) -> None:
    result = CliRunner().invoke(cli, ["locate", "database"])
    assert result.exit_code == 0
    assert result.output.strip() == str(advisor_home / "data" / "advisor.sqlite")

    listing = CliRunner().invoke(cli, ["locate", "--json"])
    assert listing.exit_code == 0
    assert str(advisor_home / "config" / "config.toml") in listing.output


def test_did_you_mean_ignores_case_and_keeps_the_known_spelling() -> None:
    from advisor.errors import did_you_mean

    hint = did_you_mean("a10o", ["A100", "A10G", "T4"])
    assert hint.startswith("; did you mean ") and {"'A100'", "'A10G'"} <= set(
        hint[15:-1].split(", ")
    )
    assert "T4" not in hint
    assert did_you_mean("gpc", ["gcp", "aws"]) == "; did you mean 'gcp'?"
    assert did_you_mean("zzz", ["gcp", "aws"]) == ""


@pytest.mark.parametrize("stdin", ["closed", "devnull"])
def test_the_app_without_a_terminal_is_one_usage_error(stdin: str) -> None:
    """`advisor <&-` printed Textual's traceback and exited 0; `advisor </dev/null >/dev/null`
    ran forever writing screen escapes into the file."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "advisor"]
    if stdin == "closed":
        command = ["sh", "-c", 'exec "$0" -m advisor <&-', sys.executable]
    run = subprocess.run(
        command,
        stdin=subprocess.DEVNULL if stdin == "devnull" else None,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "the app needs a terminal" in lines[0]
    assert run.stdout == ""
