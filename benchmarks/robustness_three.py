"""Issue 30, hostile input round three: the cases ``benchmarks/robustness.py`` adds for it.

Memory bounded by design (a 1,000,000-row catalog, a model whose config claims 1.6 billion
weights), damaged rows cheap to skip, a full and a read-only disk, a Keras backend only the
commands that probe read, values of any length, and the smaller items of the issue. Built by
``round_three(Case)`` with the runner's own ``Case`` (this module imports nothing of it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.inputs import (
    dense_model_file,
    result_csv,
    string_input_model,
)
from tests.price_catalog import catalog_text

LONG = "x" * 100_000
GCP = "/skypilot/gcp/vms.csv"
ESCAPED = "t\x1b[31mred\x07.yaml"
"""A file name that sets a terminal's colour and rings its bell when printed raw."""


def _million_rows() -> bytes:
    return catalog_text(1_000_000, zones=1).encode()


def _model(name: str, inputs: int, units: int, depth: int = 0) -> Callable[[Path], None]:
    """Writes a .keras file whose one Dense layer declares ``inputs x units`` weights."""

    def make(work: Path) -> None:
        dense_model_file(work / name, inputs, units, depth=depth)

    return make


def _padded_export(size: int) -> str:
    """A probe export of ``size`` characters: its result row again and again, each line 60,000
    characters long (a valid row, under every per-row bound)."""
    header, row, *_ = result_csv().splitlines()
    padded = row.replace("; xla=", "; pad=" + "p" * (60_000 - len(row)) + "; xla=")
    return "\n".join([header, *[padded] * (size // len(padded) + 1)]) + "\n"


def round_three(case: Callable[..., Any]) -> list[Any]:
    rec = ("recommend", "--model", "mlp", "--top", "2")
    fresh = ("probe", "--model", "mlp", "--fresh", "--budget", "10")
    keras_args = ("--samples", "100", "--epochs", "1")
    refresh_config = (
        '[refresh]\ndeadline_seconds = 600\n[sources]\nskypilot_url = "{server}/skypilot"\n'
    )
    garbage = {"KERAS_BACKEND": "garbage"}
    return [
        # 1. memory bounded by design
        case("refresh: 1,000,000-row catalog (95 MB)",
             ("prices", "refresh", "--source", "skypilot/gcp", "--allow-shrink"), 0,
             config=refresh_config, script={GCP: [{"body": _million_rows}]},
             max_seconds=605.0, max_rss_mb=300.0, slow=True),
        case("probe a 17 KB .keras declaring 1.6 billion weights", ("probe", "--model",
             "{dir}/big.keras", *keras_args), 1, make=_model("big.keras", 40_000, 40_000),
             max_seconds=2.0, max_rss_mb=150.0, says="needs about 23.8 GiB"),
        case("probe a .keras whose config claims weights it lacks", ("probe", "--model",
             "{dir}/mid.keras", *keras_args), 1, make=_model("mid.keras", 20_000, 20_000),
             max_seconds=2.0, says="but the file holds"),
        case("probe a .keras whose config.json nests 100,000 deep", ("probe", "--model",
             "{dir}/deep.keras", *keras_args), 1, make=_model("deep.keras", 4, 4, 100_000),
             max_seconds=2.0, says="config.json is nested too deeply"),
        case("import a 20 MB file (of 60,000-character rows)", ("import", "{dir}/in.csv"), 2,
             files={"in.csv": _padded_export(20_000_000)}, says="more than 16 MiB"),
        # 2. damaged data is cheap
        case("recommend over clean rows (for the time)", rec, 0),
        case("recommend over rows claiming 2**31-1 items", rec, 0, damage="claims",
             max_seconds=2.5, says="its offers are skipped"),
        # 3. a full disk, a read-only one, a schema changed by hand
        case("full disk: prices list", ("prices", "list", "--limit", "2"), 0, home="full"),
        case("full disk: recommend from a stored probe", rec, 0, home="full"),
        case("full disk: probe --fresh", fresh, 1, home="full", max_seconds=5.0,
             says="is full (0 bytes free): free space on it"),
        case("full disk: prices refresh", ("prices", "refresh", "--source", "skypilot/gcp"), 1,
             home="full", says="refreshed prices could not be stored"),
        case("full disk: import", ("import", "-"), 1, home="full",
             stdin=result_csv("2026-07-01T00:00:00+00:00"), says="is full"),
        case("read-only disk: recommend from a stored probe", rec, 0, home="read-only"),
        case("read-only disk: probe --fresh", fresh, 1, home="read-only", max_seconds=5.0,
             says="is read-only here"),
        case("database: a table dropped by hand", rec, 1, damage="schema",
             says="its table rentable_groups is missing"),
        case("database: schema version 'abc'", ("prices", "list", "--limit", "1"), 1,
             damage="version", says="move the file aside"),
        # 4. KERAS_BACKEND is read by the commands that probe only
        case("KERAS_BACKEND=garbage: locate", ("locate",), 0, env=garbage),
        case("KERAS_BACKEND=garbage: models", ("models",), 0, env=garbage),
        case("KERAS_BACKEND=garbage: prices list", ("prices", "list", "--limit", "2"), 0,
             env=garbage),
        case("KERAS_BACKEND=garbage: recommend (stored)", rec, 0, env=garbage),
        case("KERAS_BACKEND=garbage: probe --fresh", fresh, 2, env=garbage, max_seconds=5.0,
             says="unknown Keras backend 'garbage'"),
        # 5. the smaller items
        case("probe a string input under --backend jax", ("probe", "--model",
             "{dir}/text.keras", "--samples", "8", "--epochs", "1", "--backend", "jax"), 1,
             slow=True, make=string_input_model),
        case("recommend --model of 100,000 characters", ("recommend", "--model", LONG), 2),
        case("recommend --accelerator of 100,000 characters", (*rec, "--accelerator", LONG), 2),
        case("prices list --provider of 100,000 characters",
             ("prices", "list", "--provider", LONG), 2),
        case("config value of 900 KB", ("prices",), 1,
             config=f'[prices]\nttl_days = "{"7" * 900_000}"\n', says="(900,000 characters)"),
        case("config nested 5,000 deep", ("prices",), 1,
             config="a = " + "[" * 5_000 + "]" * 5_000 + "\n",
             says="config.toml: nested too deeply to read"),
        case("recommend --emit to a name holding an escape",
             (*rec, "--emit", "skypilot", f"{{dir}}/{ESCAPED}"), 0,
             written=f"{{dir}}/{ESCAPED}", says="t\\x1b[31mred\\x07.yaml"),
        case("import a NUL inside a workload id", ("import", "{dir}/in.csv"), 2,
             files={"in.csv": result_csv(workload="mnist\x00mlp")},
             says="neither a zoo workload nor a model file's id"),
        case("bench --dry-run of an unknown model",
             ("bench", "--model", "nope", "--gpus", "T4", "--dry-run"), 2,
             says="unknown model 'nope'"),
    ]  # fmt: skip
