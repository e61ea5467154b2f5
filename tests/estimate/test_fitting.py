"""``python -m advisor.fitting``: every fitted file and constant is what its fit derives."""

from __future__ import annotations

import pytest

from advisor.fitting import __main__ as refit


def test_the_quick_fits_reproduce_their_shipped_files_and_constants(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The kernel, spot, teardown and LLM fits and the run spread (the device-model calibration
    takes 40 s and runs in ``make refit-check``)."""
    names = ["kernels", "spot", "teardown", "llm", "run-spread"]
    assert refit.main(["--check", *names]) == 0
    said = capsys.readouterr().out.splitlines()
    assert len(said) == len(names) and all("as derived" in line for line in said)


def test_a_shipped_file_that_is_not_its_fit_fails_the_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    drifted = refit.Fit("spot-risk.csv", lambda: "family,zone\n")
    monkeypatch.setitem(refit.FITS, "spot", drifted)
    assert refit.main(["--check", "spot"]) == 1
    captured = capsys.readouterr()
    assert "DIFFERS" in captured.out and "spot-risk.csv" in captured.err


def test_a_constant_that_is_not_its_fit_fails_and_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spread = refit.CONSTANTS["run-spread"]
    monkeypatch.setitem(
        refit.CONSTANTS, "run-spread", refit.Constant(spread.where, lambda: 0.5, spread.derive)
    )
    assert refit.main(["run-spread"]) == 1  # a refit never rewrites code: it says what to change
    assert "DEFAULT_RUN_LOG_SIGMA = 0.5, its fit gives 0.183: change it" in capsys.readouterr().out
