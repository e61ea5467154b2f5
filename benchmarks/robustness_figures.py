"""The figures of issue 30 (hostile input, round three), each through the real command line.

    .venv/bin/python benchmarks/robustness_figures.py [--rows 1000000] [--repeat 5]

1. Peak resident memory of ``advisor prices refresh`` of a SkyPilot-format catalog of ``--rows``
   distinct offerings (every row its own offering, on-demand and spot), served by a real HTTP
   server on 127.0.0.1: ``VmHWM`` of the advisor process itself (target < 300 MB at 1,000,000).
2. ``advisor recommend`` from a stored probe over a clean price database, then over the same
   database with one damaged ``rentable_groups`` value per provider but GCP (five bytes that
   claim 2**31 - 1 items): median of ``--repeat`` runs each (target: damaged <= clean + 0.5 s).
3. ``advisor probe`` of a 20 KB .keras file holding one 40,000 x 40,000 Dense layer (1.6 billion
   parameters): refused in one line, with its memory need, before anything is built (< 2 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tests.inputs as inputs  # noqa: E402
from tests.fixtures.pricing.server import FixtureServer  # noqa: E402
from tests.price_catalog import write_catalog  # noqa: E402


def advisor(home: Path, *args: str, peak: Path | None = None) -> tuple[int, str, float]:
    """Run ``python -m advisor *args`` with ``ADVISOR_HOME=home``: exit code, stderr, seconds
    (with ``peak``: its ``VmHWM`` in KiB is written there)."""
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-c", inputs.MEASURED, str(peak or os.devnull), *args]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return done.returncode, done.stderr, time.perf_counter() - started


def refresh_peak(folder: Path, rows: int) -> None:
    write_catalog(folder / "catalog", rows, zones=1)
    size = (folder / "catalog" / "skypilot" / "aws" / "vms.csv").stat().st_size
    home = folder / "refresh-home"
    (home / "config").mkdir(parents=True)
    with FixtureServer(folder / "catalog").running() as server:
        (home / "config" / "config.toml").write_text(
            f'[refresh]\ndeadline_seconds = 3600\n[sources]\nskypilot_url = "{server.url}/skypilot"\n'
        )
        advisor(home, "prices", "list", "--limit", "1")  # the seed, outside the measurement
        peak = folder / "peak"
        code, err, seconds = advisor(
            home, "prices", "refresh", "--source", "skypilot/aws", "--allow-shrink", peak=peak
        )
    mb = int(peak.read_text()) / 1024
    print(
        f"refresh of {rows:,} rows ({size / 1e6:.0f} MB of CSV): exit {code}, {seconds:.1f} s, "
        f"peak RSS {mb:.0f} MB (target < 300 MB){'; stderr: ' + err.strip() if code else ''}"
    )


def _database(home: Path) -> Path:
    (found,) = home.rglob("advisor.sqlite")
    return found


def recommend_damaged(folder: Path, repeat: int) -> None:
    clean = folder / "clean"
    advisor(clean, "prices", "list", "--limit", "1")  # the seed prices
    subprocess.run(
        [sys.executable, "-m", "advisor", "import", "-"],
        input=inputs.result_csv(), text=True, check=True, capture_output=True,
        env={**os.environ, "ADVISOR_HOME": str(clean)},
    )  # fmt: skip
    damaged = folder / "damaged"
    shutil.copytree(clean, damaged)
    with closing(sqlite3.connect(_database(damaged))) as conn, conn:
        count = conn.execute(  # every provider but GCP: the recommendation still has offers
            "UPDATE rentable_groups SET groups = ? WHERE provider != 'gcp'", [inputs.CLAIMS_2_31]
        ).rowcount
    args = ("recommend", "--model", "mlp", "--top", "3")
    times: dict[str, list[float]] = {"clean": [], "damaged": []}
    for _ in range(repeat):
        for name, home in (("clean", clean), ("damaged", damaged)):
            code, err, seconds = advisor(home, *args)
            assert code == 0, err
            times[name].append(seconds)
    warnings = sum(line.startswith("advisor: warning") for line in err.splitlines())
    clean_s, damaged_s = (statistics.median(times[k]) for k in ("clean", "damaged"))
    print(
        f"recommend from a stored probe, median of {repeat}: clean {clean_s:.2f} s, over "
        f"{count} damaged rows {damaged_s:.2f} s ({warnings} warning lines; target <= clean "
        f"+ 0.5 s); all: clean {', '.join(f'{t:.2f}' for t in times['clean'])}, damaged "
        f"{', '.join(f'{t:.2f}' for t in times['damaged'])}"
    )


def refuse_big_model(folder: Path) -> None:
    model = inputs.dense_model_file(folder / "big.keras", 40_000, 40_000)
    code, err, seconds = advisor(
        folder / "model-home", "probe", "--model", str(model), "--samples", "1000", "--epochs", "1"
    )
    print(
        f"probe of a {model.stat().st_size / 1024:.0f} KB .keras with a 40,000 x 40,000 Dense: "
        f"exit {code} in {seconds:.2f} s (target < 2 s): {err.strip()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=("refresh", "recommend", "model"), default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if args.only in (None, "model"):
            refuse_big_model(folder)
        if args.only in (None, "recommend"):
            recommend_damaged(folder, args.repeat)
        if args.only in (None, "refresh"):
            refresh_peak(folder, args.rows)


if __name__ == "__main__":
    main()
