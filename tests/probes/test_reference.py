"""The fixed reference kernel that tells whether the machine's speed moved during a probe."""

from __future__ import annotations

from probes.reference import reference_seconds


def test_the_reference_kernel_is_short_and_repeatable() -> None:
    """A few milliseconds on any machine; two readings seconds apart agree within a factor that
    only a machine changing speed explains (generous: this is a shared CI machine)."""
    first, second = reference_seconds(), reference_seconds()
    assert 0 < first < 0.5 and 0 < second < 0.5
    assert 0.05 < first / second < 20
