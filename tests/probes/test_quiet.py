"""TensorFlow's logging is silenced before it is imported, unless asked for."""

from __future__ import annotations

import os
import sys
import types

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from probes import quiet


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*quiet._QUIET, quiet.VERBOSE_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    # as if TensorFlow were already loaded: these tests check settings, not the import
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))


def test_quiet_by_default(clean_env: None) -> None:
    quiet.prepare_tensorflow()
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "3"
    assert os.environ["GRPC_VERBOSITY"] == "ERROR"


@pytest.mark.parametrize(
    ("value", "verbose"), [("1", True), ("yes", True), ("0", False), ("", False)]
)
def test_advisor_verbose_shows_it_again(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, value: str, verbose: bool
) -> None:
    monkeypatch.setenv(quiet.VERBOSE_VARIABLE, value)
    quiet.prepare_tensorflow()
    assert ("TF_CPP_MIN_LOG_LEVEL" not in os.environ) is verbose


def test_the_verbose_option_reaches_every_process(clean_env: None) -> None:
    result = CliRunner().invoke(cli, ["--verbose", "locate", "--json"])
    assert result.exit_code == 0, result.output
    assert os.environ.get(quiet.VERBOSE_VARIABLE) == "1"
    os.environ.pop(quiet.VERBOSE_VARIABLE)
