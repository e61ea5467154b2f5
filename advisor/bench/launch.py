"""Launch the bench tasks through SkyPilot, in parallel; tear every cluster down; import.

``Cloud`` is the one boundary to SkyPilot: ``launch`` starts a task on a new cluster, waits for
its job and returns the job's exit code (raising ``Preempted`` when the cluster was taken back),
``down`` tears a cluster down. ``SkyPilot`` is the real one, over SkyPilot's Python API; a
candidate that fails or is preempted is reported, never fatal, and its cluster goes down too.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from advisor.bench.plan import Candidate
from advisor.bench.task import exported
from advisor.estimate import catalog
from probes import exchange
from probes import history as probe_store
from probes.result import ProbeResult

if TYPE_CHECKING:
    import sqlite_utils

AUTOSTOP_MINUTES = 10
"""A node left idle this long tears itself down, should this process die before ``down``."""


class Preempted(Exception):
    """The cloud took the (spot) machine back before the job finished."""


class Cloud(Protocol):
    def launch(self, config: dict[str, Any], cluster: str, log: TextIO) -> int:
        """Run the task on a new cluster named ``cluster``, its output into ``log``; the job's
        exit code."""
        ...

    def down(self, cluster: str) -> None: ...


@dataclass
class Outcome:
    """What became of one candidate."""

    candidate: Candidate
    status: str
    """``measured``, ``failed`` or ``preempted``."""
    message: str = ""
    csv: Path | None = None
    results: list[ProbeResult] = field(default_factory=list)
    seconds: float = 0.0
    """Wall time from launch to teardown."""
    torn_down: bool = True


def bench(
    candidates: list[Candidate],
    configs: dict[str, dict[str, Any]],
    cloud: Cloud,
    out: Path,
    *,
    report: Callable[[str], None] = lambda line: None,
) -> list[Outcome]:
    """Launch every candidate's task at once and wait for all; each cluster is torn down."""
    out.mkdir(parents=True, exist_ok=True)

    def one(candidate: Candidate) -> Outcome:
        report(f"{candidate.cluster}: launching {candidate.label}")
        outcome = _run(candidate, configs[candidate.cluster], cloud, out)
        report(
            f"{candidate.cluster}: {outcome.status}{': ' + outcome.message if outcome.message else ''}"
        )
        return outcome

    if not candidates:
        return []
    with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
        return list(pool.map(one, candidates))


def _run(candidate: Candidate, config: dict[str, Any], cloud: Cloud, out: Path) -> Outcome:
    log_path = out / f"{candidate.cluster}.log"
    start = time.monotonic()
    outcome = Outcome(candidate, "failed")
    try:
        with log_path.open("w", encoding="utf-8") as log:
            code = cloud.launch(config, candidate.cluster, log)
        text = log_path.read_text(encoding="utf-8", errors="replace")
        csv = exported(text)
        if code != 0:
            outcome.message = f"the job exited with {code} (see {log_path})"
        elif csv is None:
            outcome.message = f"the job printed no probe export (see {log_path})"
        else:
            path = out / f"{candidate.cluster}.csv"
            path.write_text(csv, encoding="utf-8")
            outcome = Outcome(candidate, "measured", csv=path)
    except Preempted as exc:
        outcome = Outcome(candidate, "preempted", message=str(exc) or "the machine was taken back")
    except Exception as exc:  # a candidate's failure is reported, never fatal to the others
        outcome.message = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    finally:
        try:
            cloud.down(candidate.cluster)
        except Exception as exc:
            outcome.torn_down = False
            outcome.message += f"; teardown failed ({exc}): run 'sky down {candidate.cluster}'"
    outcome.seconds = time.monotonic() - start
    return outcome


def import_results(db: sqlite_utils.Database, outcomes: list[Outcome]) -> list[Outcome]:
    """Read each measured candidate's export as ``advisor import`` does, name its device as the
    offering rented names it, and store it; an unreadable export fails that candidate only."""
    done = []
    for outcome in outcomes:
        if outcome.status != "measured" or outcome.csv is None:
            done.append(outcome)
            continue
        try:
            results = exchange.from_rows(exchange.read_csv(outcome.csv))
        except Exception as exc:
            done.append(replace(outcome, status="failed", message=f"bad export: {exc}"))
            continue
        named = [as_rented(result, outcome.candidate) for result in results]
        for result in named:
            probe_store.save(db, result, source=f"bench:{outcome.candidate.cluster}")
        done.append(replace(outcome, results=named))
    return done


def as_rented(result: ProbeResult, candidate: Candidate) -> ProbeResult:
    """The result with its device named as the price database names the rented one.

    ``nvidia-smi`` says ``A100`` on an ``A100-80GB`` offering; a cloud CPU often hides its model
    (``Intel(R) Xeon(R) CPU @ 2.20GHz``), and the offering's CPU family then names it.
    """
    device, r = result.device, candidate.rentable
    named = device.accelerator
    if (
        named
        and r.accelerator
        and r.accelerator != named
        and r.accelerator.upper().startswith(named.upper())
    ):
        device = replace(device, accelerator=r.accelerator)
    if not device.accelerator and r.cpu_family and catalog.resolve_family(device.cpu_model) is None:
        device = replace(device, cpu_model=r.cpu_family)
    return replace(result, device=device)


class SkyPilot:
    """The real ``Cloud``: SkyPilot's Python API (``advisor[skypilot]``), imported on use."""

    def launch(self, config: dict[str, Any], cluster: str, log: TextIO) -> int:
        import sky

        task = sky.Task.from_yaml_config(config)
        try:
            request = sky.launch(
                task, cluster_name=cluster, idle_minutes_to_autostop=AUTOSTOP_MINUTES, down=True
            )
            job_id, _ = sky.stream_and_get(request, output_stream=log)
            if job_id is None:
                raise RuntimeError("SkyPilot started no job")
            code = sky.tail_logs(cluster, job_id, follow=True, output_stream=log)
        except Exception as exc:
            if self._taken_back(cluster):
                raise Preempted(f"the cluster went away: {exc}") from exc
            raise
        if code != 0 and self._taken_back(cluster):
            raise Preempted(f"the cluster went away while the job ran (exit {code})")
        return int(code)

    def down(self, cluster: str) -> None:
        import sky

        with contextlib.suppress(sky.exceptions.ClusterDoesNotExist):  # preempted, autostopped
            sky.get(sky.down(cluster))

    def _taken_back(self, cluster: str) -> bool:
        """True when the cluster is no longer up (a spot machine reclaimed)."""
        import sky

        try:
            records = sky.get(sky.status([cluster], refresh=sky.StatusRefreshMode.FORCE))
        except Exception:
            return False
        if not records:
            return True
        record = records[0]
        status = record.get("status") if isinstance(record, dict) else record.status
        return bool(status != sky.ClusterStatus.UP)
