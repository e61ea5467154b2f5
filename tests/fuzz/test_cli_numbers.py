"""Numeric options through the real command tree: a value or a one-line usage error (exit 2),
never a traceback. Only options that are checked before any probe or network work are fuzzed."""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from advisor.cli import cli
from tests.fuzz.strategies import FUZZ, NUMBER_TEXT

OPTIONS = [
    (["prices", "list", "--json", "--max-price"], "float"),
    (["prices", "list", "--json", "--limit"], "int"),
    (["prices", "list", "--json", "--min-count"], "int"),
    (["prices", "--json", "--ttl-days"], "float"),
]


@FUZZ
@given(st.sampled_from(OPTIONS), st.one_of(NUMBER_TEXT, st.text(max_size=12)))
def test_numbers(option: tuple[list[str], str], value: str) -> None:
    args, _ = option
    outcome = CliRunner().invoke(cli, [*args, value])
    assert outcome.exit_code in (0, 2), (outcome.exit_code, outcome.output, outcome.exception)
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    if outcome.exit_code == 2:
        err = outcome.stderr.strip()
        assert err.startswith("advisor: error: ") and "Traceback" not in err
    else:
        assert "NaN" not in outcome.stdout and "Infinity" not in outcome.stdout
