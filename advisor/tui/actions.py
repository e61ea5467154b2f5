"""The app's only door to the engine: form state in, plain payloads out.

Everything here runs in worker threads. It translates the form's raw strings into the engine's
requests (so a bad deadline reads exactly as on the command line) and returns what the widgets
render: the ``advisor recommend --json`` payload and one explanation per option.
"""

from __future__ import annotations

import shlex
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor import disk, display, locations, service
from advisor.bench.settle import tie_lines
from advisor.errors import AdvisorError, UsageError
from advisor.recommend import answer, report, skypilot_task, staging
from advisor.recommend.deadline import describe_seconds, parse_duration
from advisor.recommend.files import write_atomic
from advisor.recommend.recommendation import Constraints, Recommendation
from advisor.tui.form import OWN_STORE, FormState

if TYPE_CHECKING:
    from pricing.refresh import RefreshProgress, RunReport
    from probes.fitting import ProbeProgress
    from probes.result import ProbeResult
    from probes.spec import ProbeSpec
from advisor.workloads.llm_job import Options, parse_count
from pricing.offers import Filters


def one_line(exc: BaseException) -> str:
    """An error as the command line would print it (engine errors), or its type and text."""
    if isinstance(exc, AdvisorError):
        return str(exc)
    if isinstance(exc, sqlite3.Error):  # the database broke (damaged, its disk full)
        return disk.explain(exc, locations.database_path())
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def _int(text: str, what: str) -> int | None:
    """A whole number, or None when empty; its range is checked where every door checks it
    (``probes.spec.spec_for``), so the app says what the command line says."""
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be a whole number, not {text!r}") from None


def _float(text: str, what: str) -> float | None:
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, not {text!r}") from None


def request_for(state: FormState) -> service.Request:
    """The engine's request for what the form says (raises UsageError on bad input)."""
    if not (state.spot or state.on_demand):
        raise UsageError("choose spot, on-demand or both")
    confidence = _float(state.confidence, "confidence") or 0.9
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must be between 0 and 1, not {confidence}")
    return service.Request(
        model=script_name(state) if state.command else state.workload,
        epochs=_int(state.epochs, "epochs"),
        samples=_int(state.samples, "samples"),
        batch_size=_int(state.batch_size, "batch size"),
        finetune=_finetune(state),
        data_bytes=staging.parse_size(state.data) if state.data else 0.0,
        data_from=_data_from(state),
        filters=Filters(
            provider=state.provider or None,
            region=state.region or None,
            accelerator=state.accelerator or None,
            pricing=_pricing(state.spot, state.on_demand),
        ),
        constraints=Constraints(
            objective=state.objective,
            deadline_seconds=parse_duration(state.deadline) if state.deadline else None,
            budget_usd=_float(state.budget, "budget"),
            confidence=confidence,
            top=50,
        ),
    )


def _data_from(state: FormState) -> str | None:
    """The provider the data is downloaded from, None for each machine's own (as ``--data-from``
    on the command line, it needs a size)."""
    if state.data_from == OWN_STORE:
        return None
    if state.data_from not in staging.sources():
        choices = ", ".join(staging.sources())
        raise UsageError(f"data from {display.quoted(state.data_from)}: one of {choices}")
    if not state.data:
        raise UsageError(f"data from {display.quoted(state.data_from)}: give the data's size too")
    return state.data_from


def _finetune(state: FormState) -> Options:
    """An LLM's job from the form's LLM fields (empty for any other model)."""
    if not state.is_llm:
        return Options()
    return Options(
        method=state.method,
        tokens=parse_count(state.tokens, "tokens") if state.tokens else None,
        examples=parse_count(state.examples, "examples") if state.examples else None,
        sequence=_int(state.seq_len, "seq len"),
        rank=_int(state.lora_rank, "LoRA rank") if state.method != "full" else None,
        stack=state.stack,
    )


def _pricing(spot: bool, on_demand: bool) -> str | None:
    if spot and on_demand:
        return None
    return "spot" if spot else "on_demand"


SCRIPT_BUDGET = 20.0
"""Seconds a training command is probed for, as ``advisor recommend -- COMMAND`` does."""


def command_words(state: FormState) -> list[str]:
    """The form's command as its words, split as a shell would (never run through one)."""
    try:
        return shlex.split(state.command)
    except ValueError as error:  # an unclosed quote
        raise UsageError(f"cannot read the command: {error}") from None


def script_name(state: FormState) -> str:
    """The name the form's command's probe is stored under (its script's file name)."""
    return service.script_name(command_words(state))


def stored_probe(state: FormState) -> ProbeResult | None:
    """The stored probe for this workload (or this command) on this machine, or None."""
    if state.command:
        return service.stored_script_probe(script_name(state))
    return service.stored_probe(request_for(state))


def run_probe(
    state: FormState, *, progress: Callable[[ProbeProgress], None], cancel: threading.Event
) -> ProbeResult:
    """Probe the workload here (seconds) in a child process, so that TensorFlow never enters the
    app's own (a command: the user's own process, as ``advisor probe -- COMMAND`` runs it);
    stores the result; ``cancel`` stops the child, storing nothing."""
    if state.command:
        probed = service.probe_script(
            command_words(state), script_name(state), budget=SCRIPT_BUDGET,
            epochs=_int(state.epochs, "epochs"), samples=_int(state.samples, "samples"),
            batch_size=_int(state.batch_size, "batch size"), cancel=cancel,
        )  # fmt: skip
        return probed.result

    return service.probe_and_store(request_for(state), runner=_in_child(progress, cancel))


AGAIN = "f probes again"
"""How the app says to try an LLM job's proxy again (the command line says ``--fresh``)."""


def stored_fallback(state: FormState) -> str:
    """Why an LLM job's proxy could not be probed here when last tried ("" when it could, or
    for any other workload): the job is then ranked by the device model alone, as the command
    line ranks it, until ``f`` probes again."""
    if not state.is_llm:
        return ""
    found = service.stored_fallback(request_for(state))
    return service.fallback_note(found, AGAIN) if found else ""


def probe_job(
    state: FormState, *, progress: Callable[[ProbeProgress], None], cancel: threading.Event
) -> tuple[ProbeResult | None, str]:
    """Probe an LLM job's proxy here in a child process; where it cannot be, None and why
    (stored, so that the next time ranks at once): the answer comes from the device model."""
    return service.job_probe(
        request_for(state), runner=_in_child(progress, cancel), fresh=True, again=AGAIN
    )


def _in_child(
    progress: Callable[[ProbeProgress], None], cancel: threading.Event
) -> Callable[[ProbeSpec], ProbeResult]:
    """A probe runner that runs the probe child (TensorFlow never enters the app's process)."""
    from probes.child import run_in_child

    def runner(spec: ProbeSpec) -> ProbeResult:
        return run_in_child(spec, progress=progress, cancel=cancel)

    return runner


def describe_probe(probe: ProbeResult) -> str:
    return (
        f"Measured here on {probe.device.backend}: {probe.step_seconds * 1000:.3g} ms/step, "
        "full training here "
        f"{describe_seconds(probe.fit_seconds)} ({probe.created_at[:16]})"
    )


def recommend(
    state: FormState, probe: ProbeResult | None, note: str = ""
) -> tuple[Recommendation, dict[str, Any], dict[int, list[str]]]:
    """Rank every offering for the form's constraints; the payload is ``recommend --json``'s.
    Without a ``probe``, an LLM job is ranked by the device model alone, ``note`` saying why."""
    request = request_for(state)
    job = None if probe is not None else service.job_for_request(request)
    if probe is not None:
        rec = service.rank(request, probe)
    elif job is not None:
        rec = service.rank_job(request, job, None, note=note)
    else:
        raise AdvisorError("nothing measured to rank: probe the workload first")
    payload = report.as_json(rec)
    explanations = {o.rank: report.explain(rec, o) for o in rec.options}
    return rec, payload, explanations


def feasible(payload: dict[str, Any]) -> bool:
    return any(o.get("meets_deadline") for o in payload.get("options", []))


def summary_lines(rec: Recommendation) -> list[str]:
    """The answer in words (``advisor.recommend.answer``) and the ties in one line, as the
    command line prints them above its table."""
    return answer.lines(rec) + tie_lines(rec)


def export(rec: Recommendation, rank: int, path: Path, *, overwrite: bool = False) -> Path:
    """Write option ``rank`` to ``path`` and to no other file: as JSON when its name ends in
    ``.json``, else as a SkyPilot task. An existing file is replaced only when ``overwrite``
    (the app asks first), never through a symlink, atomically (``write_atomic``)."""
    import json

    option = next(o for o in rec.options if o.rank == rank)
    if path.suffix.lower() == ".json":
        row = display.plain_tree(report.option_row(option))
        text = json.dumps(row, indent=2, allow_nan=False, default=str)
        return write_atomic(path, text + "\n", overwrite=overwrite, flag="confirm")
    return skypilot_task.write_task(
        path,
        option.rentable,
        workload=rec.workload,
        overwrite=overwrite,
        plan=option.outcome.fallback,
        prediction=option.outcome.prediction,
    )


def needs_confirmation(path: Path) -> bool:
    """Whether exporting to ``path`` would replace a file (the app asks before it does)."""
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False  # the write reports the problem in one line


PRICE_ROWS_SHOWN = 2000
"""The price browser shows the cheapest this many matches (a filter narrows it)."""


def price_rows(filters: dict[str, str]) -> list[dict[str, Any]]:
    """The cheapest offerings matching the browser's filters (indexed SQL, cheapest first)."""
    wanted = Filters(
        provider=filters.get("provider") or None,
        region=filters.get("region") or None,
        accelerator=filters.get("accelerator") or None,
        max_price=_float(filters.get("max-price", ""), "max price"),
    )
    rows = service.price_rows(wanted, limit=PRICE_ROWS_SHOWN)
    return [r._asdict() for r in rows]


def source_rows() -> list[dict[str, str]]:
    rows = []
    for s in service.source_status():
        age = "never" if s.age_days is None else f"{s.age_days:.1f} days"
        rows.append(
            {
                "source": f"{s.source}/{s.unit}",
                "status": s.last_status + (" (stale)" if s.stale else ""),
                "age": age,
                "note": s.last_error or "",
            }
        )
    return rows


def refresh_prices(progress: Callable[[str, int, int | None, str], None]) -> list[RunReport]:
    def relay(event: RefreshProgress) -> None:
        progress(f"{event.source}/{event.unit}", event.done, event.total, event.phase)

    return service.refresh_prices(progress=relay)
