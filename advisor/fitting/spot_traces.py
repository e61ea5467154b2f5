"""Derive advisor's spot risk tables from public spot traces (re-runnable; not run by the app).

Reads two git mirrors at named commits and writes ``data/spot-trace-spells.csv`` (every trace as
lossless run lengths of available and unavailable ticks, ``a12 u3 a40``, with its repository,
commit and path) and ``data/spot-risk.csv`` (per trace family and zone, and per family and region
for a run that fails over between zones, ``region_rows``: the share of time a spot machine could
be had, fits of the spells one lived, ``hyperexponential_fit``, and of the waits for one, a
Weibull). The sources, their encodings and the fits: docs/SOURCES.md, "Spot risk". Usage::

    python -m advisor.fitting.spot_traces SPOT_TRACES_MIRROR SKYNOMAD_ARTIFACT_MIRROR
    python -m advisor.fitting.spot_traces --committed   # data/spot-risk.csv from the spells alone"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from advisor.locations import shipped_data_dir

DATA = shipped_data_dir()

SPOT_TRACES = {
    # family: (provider, accelerator class, directory, file suffix, what)
    "aws-v100-preemption-2023-04": (
        "aws",
        "V100",
        "preemption/1-node/aws-04-22-2023/",
        "_v100_1.json",
        "AWS p3.2xlarge (1x V100) spot, 4 zones, 7 days from 2023-04-22",
    ),
    "aws-v100-availability-2023-02": (
        "aws",
        "V100",
        "availability/1-node/aws-02-15-2023/",
        "_v100_1.json",
        "AWS p3.2xlarge (1x V100) spot, 9 zones, 45 days from 2023-02-15",
    ),
    "aws-k80-availability-2022-10": (
        "aws",
        "K80",
        "availability/1-node/aws-10-26-2022/",
        "_k80_1.json",
        "AWS p2.xlarge (1x K80) spot, 2 zones, 13 days from 2022-10-26",
    ),
    "aws-cpu-preemption-2023-04": (
        "aws",
        "cpu",
        "preemption/1-node/aws-04-19-2023/",
        "_intel_64.json",
        "AWS r5.16xlarge (64 vCPU) spot, 3 zones, 7 days from 2023-05-01",
    ),
}
"""The GCP c3-highcpu-88 preemption trace (``preemption/1-node/gcp-04-30-2023``) is left out: read
with this encoding three of its four zones are never available, which contradicts what it was
collected for; its encoding is not documented."""
LABELS = {
    "aws-v100-preemption-2023-04": "spot traces, AWS V100 Apr 2023",
    "aws-v100-availability-2023-02": "spot traces, AWS V100 Feb-Mar 2023",
    "aws-k80-availability-2022-10": "spot traces, AWS K80 Oct 2022",
    "aws-cpu-preemption-2023-04": "spot traces, AWS r5 CPU May 2023",
    "gcp-h100-availability-2025-10": "spot traces, GCP H100 Oct 2025",
}
"""How the app names each family when it states a risk."""
H100_ARCHIVE = "data/converted_multi_region_aligned_h100_16_merged.tar.gz"
H100_FAMILY = "gcp-h100-availability-2025-10"
H100_WHAT = "GCP a3-highgpu (H100) spot, 13 zones, 14 days of October 2025, a probe every 10 min"


@dataclass(frozen=True)
class Trace:
    family: str
    provider: str
    accelerator: str
    repo: str
    commit: str
    path: str
    zone: str
    part: int
    gap_seconds: float
    ticks: list[int]
    what: str


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def spot_traces(repo: Path) -> list[Trace]:
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().split()
    traces = []
    for family, (provider, accel, folder, suffix, what) in SPOT_TRACES.items():
        for name in sorted(n for n in names if n.startswith(folder) and n.endswith(suffix)):
            body = json.loads(git(repo, "show", f"HEAD:{name}"))
            zone = name[len(folder) : -len(suffix)]
            ticks = [1 if x else 0 for x in body["data"]]
            gap = float(body["metadata"]["gap_seconds"])
            traces.append(
                Trace(family, provider, accel, "skypilot-org/spot-traces", commit, name, zone, 0,
                      gap, ticks, what)
            )  # fmt: skip
    return traces


def h100_traces(repo: Path) -> list[Trace]:
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    bodies = {}
    with tarfile.open(fileobj=io.BytesIO(git(repo, "show", f"HEAD:{H100_ARCHIVE}"))) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.name.endswith("/full.json") else None
            if handle is not None:
                bodies[member.name] = json.load(handle)
    traces = []
    for name, body in sorted(bodies.items()):
        zone = body["metadata"]["zone"]
        ticks = [1 if x else 0 for x in body["data"]]
        filled = body["metadata"].get("gap_filled")
        parts = [ticks]
        if filled:
            parts = [ticks[: filled["gap_start_index"]], ticks[filled["gap_end_index"] + 1 :]]
        path = f"{H100_ARCHIVE}:{name}"
        for i, part in enumerate(parts):
            traces.append(
                Trace(H100_FAMILY, "gcp", "H100", "andylizf/skynomad-artifact", commit, path, zone,
                      i, float(body["metadata"]["gap_seconds"]), part, H100_WHAT)
            )  # fmt: skip
    return traces


def runs(ticks: list[int]) -> list[tuple[int, int]]:
    """``(state, length)`` run lengths of a 0/1 series."""
    out: list[tuple[int, int]] = []
    for t in ticks:
        if out and out[-1][0] == t:
            out[-1] = (t, out[-1][1] + 1)
        else:
            out.append((t, 1))
    return out


def encode(ticks: list[int]) -> str:
    return " ".join(f"{'u' if state else 'a'}{n}" for state, n in runs(ticks))


def decode(spells: str) -> list[int]:
    """The 0/1 ticks of an ``encode``d trace (``a2 u1`` -> ``[0, 0, 1]``)."""
    ticks: list[int] = []
    for run in spells.split():
        ticks += [0 if run[0] == "a" else 1] * int(run[1:])
    return ticks


def committed_traces() -> list[Trace]:
    """The traces as committed in ``data/spot-trace-spells.csv`` (what the replay replays)."""
    with (DATA / "spot-trace-spells.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    info = {f: (p, a, w) for f, (p, a, _, _, w) in SPOT_TRACES.items()}
    info[H100_FAMILY] = ("gcp", "H100", H100_WHAT)
    return [
        Trace(row["family"], info[row["family"]][0], info[row["family"]][1], row["repo"],
              row["commit"], row["path"], row["zone"], int(row["part"]),
              float(row["gap_seconds"]), decode(row["spells"]), info[row["family"]][2])
        for row in rows
    ]  # fmt: skip


def zone_rows(traces: list[Trace]) -> list[dict[str, object]]:
    """One row of ``spot-risk.csv`` per family and zone."""
    keys = dict.fromkeys((t.family, t.zone) for t in traces)
    return [zone_row([t for t in traces if (t.family, t.zone) == key]) for key in keys]


def risk_rows(traces: list[Trace]) -> list[dict[str, object]]:
    """Every row of ``spot-risk.csv``: the zones, then the regions."""
    return zone_rows(traces) + region_rows(traces)


def region_of(provider: str, zone: str) -> str:
    """The region of a zone: AWS ``us-east-1c`` -> ``us-east-1``, GCP ``us-central1-a`` ->
    ``us-central1``."""
    return zone.rsplit("-", 1)[0] if provider == "gcp" else zone[:-1]


def region_rows(traces: list[Trace]) -> list[dict[str, object]]:
    """One row of ``spot-risk.csv`` per family and region: a run that fails over between the
    region's zones (``region_row``). A region with one zone in the traces gets one too (its
    zone's figures, ``move_share`` 0)."""
    keys = dict.fromkeys((t.family, region_of(t.provider, t.zone)) for t in traces)
    return [
        region_row([t for t in traces if (t.family, region_of(t.provider, t.zone)) == key])
        for key in keys
    ]


def weibull_fit(complete: list[float], censored: list[float]) -> tuple[float, float]:
    """Maximum-likelihood Weibull ``(shape, scale)`` of spells, ``censored`` ones cut off by the
    trace's ends (they only say the spell lasted at least that long); bisection on the shape."""
    xs = complete + censored
    mean_log = sum(math.log(x) for x in complete) / len(complete)

    def score(k: float) -> float:
        powers = [x**k for x in xs]
        weighted = sum(p * math.log(x) for p, x in zip(powers, xs, strict=True))
        return weighted / sum(powers) - 1 / k - mean_log

    low, high = 0.05, 20.0
    if score(high) < 0:  # all spells equal: no spread to fit
        return high, complete[0]
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if score(mid) < 0 else (low, mid)
    k = (low + high) / 2
    return k, (sum(x**k for x in xs) / len(complete)) ** (1 / k)


EM_ROUNDS = 5000
"""Rounds of expectation-maximisation at most; it stops once no figure moves by 1e-9 of itself."""


def hyperexponential_fit(
    complete: list[float], censored: list[float]
) -> tuple[float, float, float]:
    """Maximum-likelihood mixture of two exponentials, ``(short_share, short_mean, long_mean)``, of
    ``complete`` spells and ``censored`` ones cut off by the trace's ends, by
    expectation-maximisation: each round shares every spell between the phases by its likelihood
    (``_short_part``), and a phase's mean is the time it holds over the complete spells it holds.
    Without censored spells the mixture's mean is the spells' mean; each phase's mean is kept to
    at most the longest spell seen, where the likelihood would grow without bound (the method and
    its citations: docs/SOURCES.md, "Spot risk")."""
    xs = complete + censored
    longest, mean = max(xs), sum(xs) / len(complete)
    fit = (0.5, mean / 4, min(longest, 4 * mean))
    for _ in range(EM_ROUNDS):
        share, short, long = fit
        parts = [_short_part(x, share, short, long, True) for x in complete]
        parts += [_short_part(x, share, short, long, False) for x in censored]
        events = sum(parts[: len(complete)])
        held = sum(w * x for w, x in zip(parts, xs, strict=True))
        new = (
            sum(parts) / len(xs),
            min(longest, held / events) if events > 0 else longest,
            min(longest, (sum(xs) - held) / (len(complete) - events))
            if events < len(complete)
            else longest,
        )
        settled = all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(new, fit, strict=True))
        fit = new
        if settled:
            break
    share, short, long = fit
    return (share, short, long) if short <= long else (1 - share, long, short)


def _short_part(x: float, share: float, short: float, long: float, ended: bool) -> float:
    """The short phase's share of a spell of ``x``: its likelihood under each phase (the density
    where the spell ended, the survival where the trace cut it off); a spell far beyond both means
    goes to the longer."""
    a = share * math.exp(-x / short) / (short if ended else 1.0)
    b = (1 - share) * math.exp(-x / long) / (long if ended else 1.0)
    return a / (a + b) if a + b > 0 else float(short > long)


def spells(trace: Trace, state: int) -> tuple[list[float], list[float]]:
    """Spells in ``state`` in hours: the complete ones, and the first and last of the trace, cut
    off by its ends (censored)."""
    return spells_of(runs(trace.ticks), trace.gap_seconds, state)


def spells_of(
    rs: list[tuple[int, int]], gap_seconds: float, state: int
) -> tuple[list[float], list[float]]:
    """``spells`` of ``(state, ticks)`` run lengths (two runs of one state may follow each other:
    ``failover``'s moves)."""
    hours = gap_seconds / 3600
    complete = [n * hours for s, n in rs[1:-1] if s == state]
    ends = [rs[0]] + ([rs[-1]] if len(rs) > 1 else [])
    return complete, [n * hours for s, n in ends if s == state]


def failover(region_traces: list[Trace]) -> list[tuple[int, int]]:
    """The course of a run that may use any zone of a region, over the zones' time-aligned traces
    (one part each): ``(state, ticks)`` spells, 0 on a machine, 1 waiting for one. The run stays
    on its zone while that zone has capacity; when the zone loses it and another zone has capacity
    at that tick, the run moves there at once (a preemption without a wait: two up spells in a
    row); when none has, it waits until one has and starts on the first (in the zones' order)."""
    length = len(region_traces[0].ticks)
    if any(len(t.ticks) != length for t in region_traces):
        raise ValueError(f"zones not time-aligned: {[t.zone for t in region_traces]}")
    out: list[tuple[int, int]] = []
    on: int | None = None  # the zone of the running machine
    for i in range(length):
        if on is not None and region_traces[on].ticks[i] == 0:
            out[-1] = (0, out[-1][1] + 1)
            continue
        on = next((j for j, t in enumerate(region_traces) if t.ticks[i] == 0), None)
        if on is not None:
            out.append((0, 1))  # a start after a wait, or a move
        elif out and out[-1][0] == 1:
            out[-1] = (1, out[-1][1] + 1)
        else:
            out.append((1, 1))
    return out


def zone_row(zone_traces: list[Trace]) -> dict[str, object]:
    """One zone's availability and spell fits (``fitted_row``)."""
    first = zone_traces[0]
    row = fitted_row(zone_traces, first.zone, [runs(t.ticks) for t in zone_traces])
    row["source"] = f"{first.repo}@{first.commit[:12]} {first.path} ({first.what})"
    row["scope"] = "zone"
    row["move_share"] = 0
    return row


def region_row(region_traces: list[Trace]) -> dict[str, object]:
    """One region's availability and spell fits for a run that fails over between its zones
    (``failover`` on each part's aligned traces, ``fitted_row``). Its up spells are lifetimes on
    one zone's machine, its down spells the non-zero waits until some zone has capacity;
    ``move_share``: the share of preemptions (up spells that ended inside the trace) followed at
    once by a start in another zone; availability: the share of time some zone had capacity."""
    first = region_traces[0]
    region = region_of(first.provider, first.zone)
    by_part: dict[int, list[Trace]] = {}
    for t in region_traces:
        by_part.setdefault(t.part, []).append(t)
    courses = [failover(by_part[part]) for part in sorted(by_part)]
    row = fitted_row(region_traces, region, courses)
    ends = sum(1 for rs in courses for s, _ in rs[:-1] if s == 0)
    moves = sum(1 for rs in courses for a, b in itertools.pairwise(rs) if a[0] == b[0] == 0)
    paths = ", ".join(dict.fromkeys(t.path for t in region_traces))
    zones = len({t.zone for t in region_traces})
    row["source"] = (
        f"{first.repo}@{first.commit[:12]} {paths} ({first.what}; a run failing over between "
        f"{zones} zone{'s' if zones > 1 else ''} of {region})"
    )
    row["scope"] = "region"
    row["move_share"] = round(moves / ends, 4) if moves else 0
    return row


def fitted_row(
    traces: list[Trace], zone: str, courses: list[list[tuple[int, int]]]
) -> dict[str, object]:
    """Availability and spell fits of ``courses`` (``(state, ticks)`` spells, one list per part of
    ``traces``). Fewer than two complete spells of a kind give an exponential whose mean is the
    hours observed in that state (at most one event in the window: the usual conservative bound).
    ``ends_per_up_hour``: spells of availability that ended inside the trace per hour available
    (for a running machine: preemptions per hour)."""
    first = traces[0]
    row: dict[str, object] = {
        "family": first.family,
        "provider": first.provider,
        "accelerator": first.accelerator,
        "zone": zone,
        "label": LABELS[first.family],
    }
    total = sum(sum(n for _, n in rs) * first.gap_seconds / 3600 for rs in courses)
    for state, name in ((0, "up"), (1, "down")):
        complete: list[float] = []
        censored: list[float] = []
        for rs in courses:
            c, o = spells_of(rs, first.gap_seconds, state)
            complete += c
            censored += o
        observed = sum(complete) + sum(censored)
        if name == "up":
            row["hours"] = round(total, 2)
            row["availability"] = round(observed / total, 4)
        row[f"{name}_spells"] = len(complete)
        row |= fit_columns(name, complete, censored, max(observed, first.gap_seconds / 3600))
        ordered = sorted(complete)
        row[f"{name}_median_hours"] = round(ordered[len(ordered) // 2], 3) if ordered else ""
    up_hours = sum(
        sum(c) + sum(o) for c, o in (spells_of(rs, first.gap_seconds, 0) for rs in courses)
    )
    ends = sum(1 for rs in courses for s, _ in rs[:-1] if s == 0)
    row["ends_per_up_hour"] = round(ends / up_hours, 4) if up_hours else ""
    return row


def fit_columns(
    name: str, complete: list[float], censored: list[float], observed: float
) -> dict[str, float]:
    """The fit of the ``up`` spells (lifetimes: a mixture of two exponentials) or ``down`` spells
    (waits: a Weibull), or one exponential of mean ``observed`` hours where there are fewer than
    two complete spells or all are alike."""
    fitted = len(complete) >= 2 and len(set(complete + censored)) > 1
    values: dict[str, float]
    if name == "up":
        share, short, long = (
            hyperexponential_fit(complete, censored) if fitted else (1.0, observed, observed)
        )
        values = {"up_short_share": share, "up_short_hours": short, "up_long_hours": long}
    else:
        shape, scale = weibull_fit(complete, censored) if fitted else (1.0, observed)
        values = {"down_shape": shape, "down_scale_hours": scale}
    return {key: round(value, 4) for key, value in values.items()}


RISK_FILE = "spot-risk.csv"


def risk_csv(rows: list[dict[str, object]]) -> str:
    """``data/spot-risk.csv`` as text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_risk(rows: list[dict[str, object]]) -> None:
    (DATA / RISK_FILE).write_text(risk_csv(rows), encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv[1:] == ["--committed"]:
        traces = committed_traces()
    elif len(argv) == 3:
        traces = spot_traces(Path(argv[1])) + h100_traces(Path(argv[2]))
        with (DATA / "spot-trace-spells.csv").open("w", newline="") as handle:
            out = csv.writer(handle, lineterminator="\n")
            out.writerow(
                ["family", "zone", "part", "gap_seconds", "repo", "commit", "path", "spells"]
            )
            for t in traces:
                out.writerow(
                    [t.family, t.zone, t.part, f"{t.gap_seconds:g}", t.repo, t.commit, t.path,
                     encode(t.ticks)]
                )  # fmt: skip
    else:
        print(__doc__.split("Usage::")[1], file=sys.stderr)
        return 2
    rows = risk_rows(traces)
    write_risk(rows)
    for row in rows:
        print(
            f"{row['family']:32} {row['scope']:6} {row['zone']:18} "
            f"avail {row['availability']:.2f} up {row['up_short_share']:.0%} "
            f"{row['up_short_hours']}h, else {row['up_long_hours']}h n={row['up_spells']} "
            f"down k={row['down_shape']} scale={row['down_scale_hours']}h "
            f"ends/up-h {row['ends_per_up_hour']} moves {row['move_share']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
