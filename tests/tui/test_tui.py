"""The Textual app, driven through Pilot: each flow, and snapshots of the main screens.

The device fingerprint is fixed (``fixed_device``) so that predictions, and so the screens, are
the same on any machine; prices come from the real seed database, the probe from the store.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Select, Switch, TabbedContent, Tabs

import advisor.workloads.zoo
import probes.child
import probes.device
from advisor.errors import UsageError
from advisor.tui import actions
from advisor.tui.app import AdvisorApp, ReplaceScreen, make_app
from advisor.tui.form import FormState, WorkloadForm
from advisor.tui.help import HelpScreen
from advisor.tui.messages import ProbeFinished
from advisor.tui.price_browser import PricesScreen
from advisor.tui.results import ExplainPanel, ResultsTable
from pricing import database
from probes import history
from probes.result import Fingerprint, ProbeResult, WorkloadConfig
from tests.fixtures.pricing.server import FixtureServer, Reply

FIXED = Fingerprint(
    cpu_model="Test CPU @ 2.0GHz", logical_cpus=2, threads=2, accelerator=None,
    accelerator_memory_gib=None, tensorflow="2.21.0", onednn=True, xla=False, precision="fp32",
)  # fmt: skip
BILSTM = WorkloadConfig("imdb_bilstm", 25_000, 25_000, 4, 32)


@pytest.fixture
def fixed_device(monkeypatch: pytest.MonkeyPatch) -> Fingerprint:
    monkeypatch.setattr(probes.device, "fingerprint", lambda **_: FIXED)
    return FIXED


def stored_probe(config: WorkloadConfig = BILSTM) -> ProbeResult:
    """The default workload as a 2-vCPU machine measured it (figures of a real run)."""
    result = ProbeResult(
        config=config, device=FIXED, step_seconds=0.0371, step_interval=(0.0363, 0.0379),
        validation_step_seconds=0.0117, epoch_overhead_seconds=0.0465, startup_seconds=3.85,
        predicted_seconds=150.25, predicted_interval=(140.5, 161.0), samples_per_second=862.5,
        probe_seconds=15.5, flops_per_sample=59e6, parameters=2_658_945,
        peak_host_bytes=793_169_920, op_split={"recurrent": 0.7, "elementwise": 0.2,
        "embedding": 0.05, "overhead": 0.05}, batch_scaling={32: 0.0371},
        created_at="2026-11-21T05:00:00+00:00",
    )  # fmt: skip
    history.save(database.connect(), result)
    return result


async def until(pilot: Pilot, done: Callable[[], bool], seconds: float = 30.0) -> None:
    """Let the app run until ``done()`` (workers post back), or fail after ``seconds``."""
    for _ in range(int(seconds / 0.05)):
        if done():
            return
        await pilot.pause(0.05)
    raise AssertionError(
        f"the app did not get there in time; screen: {pilot.app.screen}; "
        f"labels: {[str(w.render()) for w in pilot.app.screen.query(Label)]}"
    )


def screen_text(app: AdvisorApp) -> list[str]:
    """The screen as the terminal shows it, line by line."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().split("\n")


def run(app: AdvisorApp, scenario: Callable[[Pilot], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def ranked(app: AdvisorApp) -> bool:
    """Options are listed (False too while the first screen is still being composed)."""
    tables = app.query(ResultsTable)
    return bool(tables) and tables.first().row_count > 0


def test_first_start_shows_the_default_recommendation(fixed_device: Fingerprint) -> None:
    stored_probe()
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        assert app.state.model == "imdb_bilstm"
        assert app.payload["workload"] == "imdb_bilstm"
        summary = str(app.query_one("#summary").render())
        assert summary.startswith("Best:")
        first = app.query_one(ResultsTable).get_row_at(0)
        assert first[0] == 1

    run(app, scenario)


def test_changing_filters_re_ranks_without_probing_again(
    fixed_device: Fingerprint, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored_probe()

    def no_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("the stored probe must be reused")

    monkeypatch.setattr(actions, "run_probe", no_probe)
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        app.query_one("#accelerator", Input).value = "T4"
        # wait for the re-ranking (a T4 may already lead the unfiltered list)
        await until(
            pilot, lambda: {o.get("accelerator") for o in app.payload.get("options", [])} == {"T4"}
        )
        app.query_one("#deadline", Input).value = "nonsense"
        summary = app.query_one("#summary")
        await until(pilot, lambda: summary.has_class("infeasible"))
        assert "nonsense" in str(summary.render())  # the engine's one-line usage error

    run(app, scenario)


def test_selecting_a_row_explains_it(fixed_device: Fingerprint) -> None:
    stored_probe()
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        app.query_one(ResultsTable).focus()
        await pilot.press("down")
        await until(pilot, lambda: str(app.query_one(ExplainPanel).render()).startswith("#2"))
        text = str(app.query_one(ExplainPanel).render())
        assert "Measurement" in text and "Cost" in text

    run(app, scenario)


def test_export_writes_only_the_named_file_and_asks_before_replacing(
    fixed_device: Fingerprint, tmp_path: Path
) -> None:
    stored_probe()
    app = make_app()
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    target = tmp_path / "task.yaml"
    beside = tmp_path / "task.json"
    beside.write_text("keep me")

    async def export_to(pilot: Pilot, path: Path) -> None:
        await pilot.press("e")
        await until(pilot, lambda: bool(app.screen.query("#export-path")))
        app.screen.query_one("#export-path", Input).value = str(path)
        await pilot.press("enter")

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        await export_to(pilot, target)
        await until(pilot, target.exists)
        target.write_text("edited by hand")
        await export_to(pilot, target)  # exists: the app asks; "n" keeps it
        await until(pilot, lambda: isinstance(app.screen, ReplaceScreen))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ReplaceScreen))
        assert target.read_text() == "edited by hand"
        await export_to(pilot, target)  # "y" replaces it
        await until(pilot, lambda: isinstance(app.screen, ReplaceScreen))
        await pilot.press("y")
        await until(pilot, lambda: "resources:" in target.read_text())
        await export_to(pilot, tmp_path / "option.json")
        await until(pilot, (tmp_path / "option.json").exists)

    run(app, scenario)
    assert "resources:" in target.read_text()
    assert beside.read_text() == "keep me"  # never named, never written
    assert (tmp_path / "option.json").read_text().count('"rank": 1') == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["option.json", "task.json", "task.yaml"]


def test_prices_screen_shows_a_failed_refresh_in_place(
    fixed_device: Fingerprint, advisor_home: Path
) -> None:
    stored_probe()
    app = make_app()
    with FixtureServer().running() as server:
        server.script("/skypilot/aws/vms.csv", Reply(404, b"gone"))
        (advisor_home / "config").mkdir(parents=True, exist_ok=True)
        (advisor_home / "config" / "config.toml").write_text(
            f'[sources]\nskypilot_url = "{server.url}/skypilot"\n'
            f'azure-retail_url = "{server.url}/azure-retail/page1.json"\n'
            f'aws-spot-advisor_url = "{server.url}/aws-spot-advisor/spot-advisor-data.json"\n'
        )

        async def scenario(pilot: Pilot) -> None:
            await until(pilot, lambda: ranked(app))
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, PricesScreen))
            table = app.screen.query_one("#prices", DataTable)
            await until(pilot, lambda: table.row_count > 0)

            def aws_prices() -> set[tuple[object, ...]]:
                rows = actions.price_rows({"provider": "aws"})
                return {
                    (r["instance_type"], r["region"], r["pricing"], r["usd_per_hour"]) for r in rows
                }

            aws_before = aws_prices()
            await pilot.press("ctrl+r")
            status = app.screen.query_one("#prices-status", Label)
            await until(pilot, lambda: "skypilot/aws" in str(status.render()), seconds=20)
            assert "404" in str(status.render())
            assert aws_prices() == aws_before  # the failed source's previous prices are kept
            await until(pilot, lambda: table.row_count > 0)
            app.screen.query_one("#prices", DataTable).focus()
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, PricesScreen))

        run(app, scenario)


@pytest.mark.tf
def test_a_probe_runs_in_the_background_and_cancels_cleanly(fixed_device: Fingerprint) -> None:
    app = make_app(FormState(model="cifar10_cnn"))  # its probe takes the whole 20 s budget

    def status() -> str:
        return str(app.query_one("#probe-status").render())

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: app.probing, seconds=60)
        await until(pilot, lambda: " steps" in status(), seconds=60)  # live progress arrived
        await pilot.press("question_mark")  # the interface answers while TensorFlow works
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert app.probing
        await pilot.press("x")
        await until(pilot, lambda: not app.probing, seconds=60)
        # the worker is done; its message, posted just before, may still be on its way
        await until(pilot, lambda: "cancel" in status().lower(), seconds=5)
        assert app.query_one(ResultsTable).row_count == 0

    run(app, scenario)
    workload = advisor.workloads.zoo.get("cifar10_cnn")
    config = WorkloadConfig(workload.id, workload.samples, workload.validation_samples,
                            workload.epochs, workload.batch_size)  # fmt: skip
    assert history.find(database.connect(), config, FIXED.key) is None  # nothing stored


@pytest.mark.tf
def test_without_a_stored_probe_the_app_probes_then_recommends(fixed_device: Fingerprint) -> None:
    app = make_app(FormState(model="mnist_mlp", samples="4000", epochs="2"))
    config = WorkloadConfig("mnist_mlp", 4000, 10_000, 2, 128)

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: app.probing, seconds=60)
        await until(pilot, lambda: ranked(app), seconds=120)
        assert app.payload["workload"] == "mnist_mlp"
        assert "Measured here" in str(app.query_one("#probe-status").render())

    run(app, scenario)
    # the child process measured with the real fingerprint; the app stored what it sent back
    stored = [r for r in history.latest(database.connect(), "mnist_mlp") if r.config == config]
    assert stored and stored[0].step_seconds > 0  # measured, and kept for next time


@pytest.mark.tf
def test_a_model_file_that_needs_code_is_refused_in_place(
    fixed_device: Fingerprint, tmp_path: Path
) -> None:
    import keras

    inputs = keras.Input((4,))
    outputs = keras.layers.Lambda(lambda t: t * 2)(inputs)
    path = tmp_path / "lambda.keras"
    keras.Model(inputs, outputs).save(path)
    app = make_app(FormState(model_file=str(path), samples="1000", epochs="1"))

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: bool(app.query("#probe-status")))
        status = app.query_one("#probe-status")
        await until(pilot, lambda: "safe" in str(status.render()).lower(), seconds=60)
        assert len(str(status.render()).splitlines()) == 1
        assert app.query_one(ResultsTable).row_count == 0

    run(app, scenario)


SNAPSHOT_SIZE = (80, 24)


async def ranked_screen(pilot: Pilot) -> None:
    await until(pilot, lambda: ranked(pilot.app))  # type: ignore[arg-type]
    await pilot.pause(0.2)


def test_snapshot_main_screen(fixed_device: Fingerprint, snap_compare) -> None:
    stored_probe()
    assert snap_compare(make_app(), terminal_size=SNAPSHOT_SIZE, run_before=ranked_screen)


def test_snapshot_help_screen(fixed_device: Fingerprint, snap_compare) -> None:
    stored_probe()

    async def help_open(pilot: Pilot) -> None:
        await ranked_screen(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(make_app(), terminal_size=SNAPSHOT_SIZE, run_before=help_open)


def on_tab(tab: str) -> Callable[[Pilot], Awaitable[None]]:
    """``run_before`` for a snapshot of the ranked screen with ``tab`` open."""

    async def opened(pilot: Pilot) -> None:
        await ranked_screen(pilot)
        pilot.app.query_one("#tabs").active = tab
        await pilot.pause(0.3)

    return opened


def test_snapshot_cost_time_chart(fixed_device: Fingerprint, snap_compare) -> None:
    stored_probe()
    assert snap_compare(make_app(), terminal_size=SNAPSHOT_SIZE, run_before=on_tab("tab-chart"))


def test_the_app_refuses_bad_sizes_as_the_command_line_does(advisor_home: Path) -> None:
    with pytest.raises(UsageError, match="--epochs must be > 0"):
        actions.stored_probe(FormState(epochs="0"))
    with pytest.raises(UsageError, match="batch size must be a whole number"):
        actions.stored_probe(FormState(batch_size="lots"))


def test_at_120_columns_where_machine_time_and_cost_fit(fixed_device: Fingerprint) -> None:
    """The rest (the wait when a fallback plan widens the pricing column, $/h, meet) fits or is
    said under the table (tests/tui/test_fit.py)."""
    stored_probe()
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: ranked(app))
            table = app.query_one(ResultsTable)
            assert table.fit is not None
            shown = [c.key for c in table.fit.shown]
            assert {"where", "machine", "pricing", "time", "cost"} <= set(shown)
            needed = sum(column.get_render_width(table) for column in table.columns.values())
            assert needed <= table.scrollable_content_region.width

    asyncio.run(main())


def test_a_crashed_probe_is_a_message_not_a_dead_app(
    fixed_device: Fingerprint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        probes.child,
        "child_command",
        lambda spec, budget=0: [sys.executable, "-c", "import os; os._exit(3)"],
    )
    app = make_app(FormState(model="mnist_mlp", samples="4000", epochs="2"))

    async def scenario(pilot: Pilot) -> None:
        status = app.query_one("#probe-status")
        await until(pilot, lambda: "unexpectedly" in str(status.render()), seconds=30)
        assert "exit 3" in str(status.render())
        await pilot.press("question_mark")  # still answering
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))

    run(app, scenario)
    assert not history.latest(database.connect(), "mnist_mlp")


def probe_children() -> list[int]:
    """The probe children (``python -m probes.child``) of this process that are alive (Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue  # not a process, or it ended while we looked
        parent, state = int(stat.rsplit(")", 1)[1].split()[1]), stat.rsplit(")", 1)[1].split()[0]
        if parent == os.getpid() and state != "Z" and b"probes.child" in command:
            found.append(int(entry.name))
    return found


async def until_gone(pilot: Pilot | None = None, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if not probe_children():
            return
        await (pilot.pause(0.05) if pilot else asyncio.sleep(0.05))
    raise AssertionError(f"probe children still alive: {probe_children()}")


@pytest.mark.tf
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads children from /proc")
def test_cancel_and_quit_kill_the_probe_and_do_not_wait_for_it(fixed_device: Fingerprint) -> None:
    """Cancel and quit kill the probing child at once: neither waits out the probe's 20 s budget.
    How fast they return (well under a second) is measured in benchmarks/app_latency.py, not
    here, where a loaded CI machine would make a bound on it flaky."""
    app = make_app(FormState(model="cifar10_cnn"))
    timings: dict[str, float] = {}

    async def main() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await until(pilot, lambda: app.probing and bool(probe_children()), seconds=60)
            await pilot.pause(1.0)  # the child is importing TensorFlow or measuring
            started = time.monotonic()
            await pilot.press("x")
            await until(pilot, lambda: not app.probing, seconds=5)
            timings["cancel"] = time.monotonic() - started
            await until_gone(pilot)
            await pilot.press("f")
            await until(pilot, lambda: app.probing and bool(probe_children()), seconds=60)
            await pilot.pause(1.0)
            started = time.monotonic()
            await pilot.press("ctrl+q")
        timings["quit"] = time.monotonic() - started
        await until_gone()

    asyncio.run(main())
    assert timings["cancel"] < probes.child.BUDGET_SECONDS / 4, timings
    assert timings["quit"] < probes.child.BUDGET_SECONDS / 4, timings
    assert not history.latest(database.connect(), "cifar10_cnn")  # killed, not finished


DRIVE_A_PROBE = """
import asyncio, json, sys
from advisor.tui.app import make_app
from advisor.tui.form import FormState, WorkloadForm

async def main():
    app = make_app(FormState(model="mnist_mlp", samples="4000", epochs="2"))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(2400):
            await pilot.pause(0.05)
            if app.rec is not None:
                break
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"tensorflow", "keras"})
    print(json.dumps({"ranked": app.rec is not None, "loaded": loaded}))

asyncio.run(main())
"""


@pytest.mark.tf
def test_after_a_probe_the_app_process_has_no_tensorflow() -> None:
    out = subprocess.run(
        [sys.executable, "-c", DRIVE_A_PROBE], capture_output=True, text=True, timeout=300
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"ranked": True, "loaded": []}, out.stderr[-2000:]


def test_snapshot_main_screen_at_120_columns(fixed_device: Fingerprint, snap_compare) -> None:
    stored_probe()
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=ranked_screen)


def test_snapshot_main_screen_at_100x30(fixed_device: Fingerprint, snap_compare) -> None:
    """The answer, then the options in the columns that fit (tests/tui/test_fit.py holds it)."""
    stored_probe()
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=ranked_screen)


def test_snapshot_why_at_100x30(fixed_device: Fingerprint, snap_compare) -> None:
    """The chosen option walked through: the time in parts, the trace and its stand-in."""
    stored_probe()
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=on_tab("tab-why"))


HOSTILE_REGION = "us-east-1\x1b]0;owned\x07\x1b[2J[link=https://evil.example]x[/link]"


def test_hostile_catalog_strings_show_literally(
    fixed_device: Fingerprint, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    stored_probe()
    real = actions.recommend

    def hostile(state: FormState, probe: ProbeResult, note: str = ""):  # type: ignore[no-untyped-def]
        rec, payload, explanations = real(state, probe, note)
        first = rec.options[0]
        first = dataclasses.replace(first, rentable=first.rentable._replace(region=HOSTILE_REGION))
        return dataclasses.replace(rec, options=(first, *rec.options[1:])), payload, explanations

    monkeypatch.setattr(actions, "recommend", hostile)
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        row = [str(cell) for cell in app.query_one(ResultsTable).get_row_at(0)]
        assert not any("\x1b" in cell or "\x07" in cell for cell in row)
        # its escapes make the region too wide for a column: left out, and said
        await until(pilot, lambda: "where" in str(app.query_one("#options-notes").render()))
        summary = str(app.query_one("#summary").render())
        assert "[link=https://evil.example]x[/link]" in summary and "\x07" not in summary
        explained = str(app.query_one(ExplainPanel).render())
        assert "[link=" in explained and "\x1b" not in explained

    run(app, scenario)


def test_an_llm_job_from_the_form_is_ranked_as_on_the_command_line(
    fixed_device: Fingerprint,
) -> None:
    """The LLM fields show for an LLM only; a stored probe of its proxy ranks the job with the
    device model, as ``advisor recommend --model llama3-8b --method qlora --tokens 20M``."""
    state = FormState(model="llama3.1-8b", method="qlora", tokens="20M", deadline="6h")
    request = actions.request_for(state)
    assert request.finetune.method == "qlora" and request.finetune.tokens == 20_000_000
    proxy = actions.service.spec_of(request).config
    stored_probe(proxy)
    assert actions.stored_probe(state) is not None
    rec, payload, _ = actions.recommend(state, stored_probe(proxy))
    assert payload["workload"] == "llama3.1-8b-qlora" and rec.options
    assert all(o.rentable.accelerator for o in rec.options)

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(pilot.app))
        assert not pilot.app.query_one("#llm_fields").display
        pilot.app.query_one("#tokens", Input).value = "20M"
        form = pilot.app.query_one("WorkloadForm")
        form._update("model", "llama3.1-8b")  # what choosing it in the Select does
        await pilot.pause(0.1)
        assert pilot.app.query_one("#llm_fields").display
        assert pilot.app.query_one("#stack", Select).value == "hf"
        form._update("stack", "torchtune")
        await pilot.pause(0.1)
        assert actions.request_for(form.state).finetune.stack == "torchtune"

    stored_probe()
    run(make_app(), scenario)


def test_the_app_refuses_bad_llm_fields_as_the_command_line_does(advisor_home: Path) -> None:
    with pytest.raises(UsageError, match="tokens must be a count like 20M"):
        actions.request_for(FormState(model="llama3.1-8b", tokens="lots"))
    with pytest.raises(UsageError, match="--lora-rank must be between"):
        actions.stored_probe(FormState(model="llama3.1-8b", tokens="1M", lora_rank="0"))
    with pytest.raises(UsageError, match="--tokens"):
        actions.stored_probe(FormState(model="llama3.1-8b"))


def test_a_number_typed_in_the_form_is_read_as_the_command_line_reads_it(
    fixed_device: Fingerprint,
) -> None:
    """'1e999' typed in the epochs field became 1999 (the integer field kept its digits)."""
    stored_probe()
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        epochs = app.query_one("#epochs", Input)
        epochs.focus()
        await pilot.press(*"1e999")
        assert epochs.value == "1e999"
        summary = app.query_one("#summary")
        await until(pilot, lambda: summary.has_class("infeasible"))
        assert "epochs must be a whole number, not '1e999'" in str(summary.render())

    run(app, scenario)


def test_a_training_command_typed_in_the_form_is_probed_on_enter_and_ranked(
    fixed_device: Fingerprint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form's command field: nothing runs while it is typed; on Enter the command is
    probed as ``advisor probe -- COMMAND`` probes it (a real process, its steps marked with
    ``advisor.probe``), stored under its script's name, and its options ranked."""
    monkeypatch.setattr(actions, "SCRIPT_BUDGET", 4.0)
    train = tmp_path / "train.py"
    train.write_text(
        "import time\nimport advisor.probe as ap\n"
        "ap.plan(epochs=3, steps=200, batch=16, flops_per_sample=2e9)\n"
        "for _ in range(600):\n    time.sleep(0.01)\n    ap.step(batch=16)\n"
    )
    stored_probe()
    app = make_app(FormState())

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        field = app.query_one("#command", Input)
        field.focus()
        field.value = f"{sys.executable} {train}"
        await pilot.pause(0.5)
        assert app.state.command == "" and app.payload["workload"] == "imdb_bilstm"
        await pilot.press("enter")
        await until(pilot, lambda: app.payload.get("workload") == "script:train", seconds=60)
        assert "Measured here" in str(app.query_one("#probe-status").render())

    run(app, scenario)
    assert actions.stored_probe(FormState(command=f"python {train}")) is not None


def test_a_command_the_form_cannot_read_is_one_line_and_runs_nothing() -> None:
    """An unclosed quote in the form's command: one usage line, nothing split or run."""
    with pytest.raises(UsageError, match="cannot read the command: No closing quotation"):
        actions.stored_probe(FormState(command='python "train.py'))


def test_the_answer_is_marked_stale_the_moment_the_inputs_change(
    fixed_device: Fingerprint,
) -> None:
    """After a change (a model with no stored probe: the probe would run) the summary says the
    options are the previous inputs' and they dim; a new answer clears the mark. A failed
    probe leaves them marked with its error."""
    stored_probe()
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        tabs = app.query_one("#tabs")
        assert not tabs.has_class("stale")
        app.query_one("WorkloadForm")._update("deadline", "4h")  # a change that ranks again
        await pilot.pause(0)
        assert tabs.has_class("stale")
        assert "for the previous inputs" in str(app.query_one("#summary").render())
        await until(pilot, lambda: not tabs.has_class("stale"))
        assert "Best: " in str(app.query_one("#summary").render())
        app.post_message(ProbeFinished(error="cancelled"))
        await until(pilot, lambda: tabs.has_class("stale"))
        assert "cancelled. The options below are for the previous inputs." in str(
            app.query_one("#summary").render()
        )

    run(app, scenario)


def test_the_llm_fields_render_at_80x24(fixed_device: Fingerprint) -> None:
    """At 80x24 the LLM job's fields took a share of the form's height and rendered none; each
    now has its own line and can be reached by scrolling the form."""
    state = FormState(model="llama3.1-8b", tokens="20M", deadline="6h")
    stored_probe(actions.service.spec_of(actions.request_for(state)).config)
    app = make_app(state)

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ranked(app))
            fields = app.query_one("#llm_fields")
            names = ("method", "tokens", "examples", "seq_len", "lora_rank", "stack")
            assert fields.size.height >= 1 + len(names)  # its label and a line a field
            for name in names:  # each inside it, not clipped away
                assert fields.region.contains_region(app.query_one(f"#{name}").region), name

    asyncio.run(main())


def test_the_palette_holds_the_apps_commands(fixed_device: Fingerprint) -> None:
    """ctrl+p lists the app's own commands (probe, cancel, prices and their refresh, export)
    beside Textual's, and each runs its action."""
    stored_probe()
    app = make_app()

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        wanted = {"Recommend", "Probe again", "Cancel the probe", "Prices", "Refresh prices",
                  "Export"}  # fmt: skip
        assert wanted <= set(commands)
        commands["Prices"].callback()
        await until(pilot, lambda: isinstance(app.screen, PricesScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PricesScreen))

    run(app, scenario)


def test_the_app_and_the_command_line_count_the_same_offerings(fixed_device: Fingerprint) -> None:
    """One query, one database: ``advisor recommend`` and the app say the same number of
    offerings considered and the same "cheapest of the N offerings" (they said 268 and 304:
    the fallback plans counted among them followed how many options each lists)."""
    from click.testing import CliRunner

    from advisor.cli import cli

    stored_probe()
    query = ["recommend", "--model", "imdb_bilstm", "--deadline", "8h"]
    as_json = CliRunner().invoke(cli, [*query, "--json"])
    assert as_json.exit_code == 0, as_json.output
    said = CliRunner().invoke(cli, query, terminal_width=200)
    counted = re.search(r"the cheapest of the (\d+) offerings", said.output)
    assert counted, said.output
    app = make_app(FormState(model="imdb_bilstm", deadline="8h"))

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        assert app.rec is not None and len(app.rec.options) > 10  # it lists more than the CLI
        assert app.payload["considered"] == json.loads(as_json.output)["considered"]
        summary = str(app.query_one("#summary").render()).replace("\n", " ")
        assert f"the cheapest of the {counted[1]} offerings" in summary

    run(app, scenario)


FORM_FIELDS = ("model", "model_file", "command", "epochs", "samples", "batch_size", "data",
               "data_from", "method",
               "tokens", "examples", "seq_len", "lora_rank", "stack", "deadline", "budget",
               "objective", "spot", "on_demand", "provider", "region", "accelerator",
               "confidence")  # fmt: skip


def llm_state() -> FormState:
    """An LLM job with its proxy's probe stored, as ``advisor recommend --model llama3.1-8b
    --method qlora --tokens 20M --deadline 6h`` asks it."""
    state = FormState(model="llama3.1-8b", method="qlora", tokens="20M", deadline="6h")
    stored_probe(actions.service.spec_of(actions.request_for(state)).config)
    return state


def label_of(field: Widget) -> str:
    """The label beside (or above) a form field: what says what the field is."""
    if isinstance(field, Switch):
        return str(field.parent.children[field.parent.children.index(field) + 1].render())
    if field.id == "model":
        return "Model"
    return str(field.parent.query_one(Label).render())


def test_at_80x24_tab_reaches_every_field_with_its_label_in_sight(
    fixed_device: Fingerprint,
) -> None:
    """The form scrolls: tab walks every field of an LLM job, each comes into sight with its
    label, and the label stays while the field is typed in (a placeholder went at the first
    key)."""
    app = make_app(llm_state())
    reached: list[str] = []

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ranked(app))
            form = app.query_one(WorkloadForm)
            form.focus()
            for _ in range(len(FORM_FIELDS)):
                await pilot.press("tab")
                await pilot.pause(0.1)  # the form scrolls the field into sight
                field = app.focused
                assert field is not None and field.id in FORM_FIELDS, field
                reached.append(field.id)
                assert form.region.contains_region(field.region), field.id
                assert label_of(field) in "\n".join(screen_text(app)), field.id
            tokens = app.query_one("#tokens", Input)
            tokens.focus()
            await pilot.press("end", "backspace", "backspace", "backspace", *"40M")
            await pilot.pause(0.1)
            assert tokens.value == "40M" and "tokens" in "\n".join(screen_text(app))

    asyncio.run(main())
    assert reached == list(FORM_FIELDS)


def test_the_form_collapses_from_a_key_and_the_palette(fixed_device: Fingerprint) -> None:
    """ctrl+b (said in the footer) hides the form and the options take the width; a field
    that had focus hands it to the options, or to the tabs when another tab is open; the
    palette's command brings the form back."""
    stored_probe()
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ranked(app))
            form, table = app.query_one(WorkloadForm), app.query_one(ResultsTable)
            await pilot.pause(0.2)  # the footer drawn
            assert "^b Form" in "\n".join(screen_text(app))  # the footer says the key
            narrow = table.size.width
            app.query_one("#deadline", Input).focus()
            await pilot.press("ctrl+b")
            await pilot.pause(0.2)
            assert not form.display or form.region.width == 0
            assert table.size.width >= narrow + 24 and app.focused is table
            commands = {c.title: c for c in app.get_system_commands(app.screen)}
            commands["Hide or show the form"].callback()
            await pilot.pause(0.2)
            assert form.region.width > 0 and table.size.width == narrow
            app.query_one("#tabs", TabbedContent).active = "tab-why"  # the options out of sight
            app.query_one("#budget", Input).focus()
            await pilot.press("ctrl+b")
            await pilot.pause(0.2)
            assert isinstance(app.focused, Tabs)  # the tabs, in sight, take the keys

    asyncio.run(main())


def test_the_focused_field_is_marked(fixed_device: Fingerprint) -> None:
    """A compact field's own focus mark is a 5% tint: the app's marks it in the accent colour,
    bolds its label and marks the form's edge while the keys go to it."""
    stored_probe()
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ranked(app))
            budget, region = app.query_one("#budget", Input), app.query_one("#region", Input)
            budget.focus()
            await pilot.pause(0.1)
            label = budget.parent.query_one(Label)
            other = region.parent.query_one(Label)
            assert budget.styles.background != region.styles.background
            assert budget.styles.background.a > 0  # a colour of its own, not a tint
            assert label.styles.text_style.bold and not other.styles.text_style.bold
            assert label.styles.color != other.styles.color
            form = app.query_one(WorkloadForm)
            in_form = form.styles.border_right
            app.query_one(ResultsTable).focus()
            await pilot.pause(0.1)
            assert form.styles.border_right != in_form  # the pane with the keys is marked

    asyncio.run(main())


def test_escape_cancels_a_probe_while_a_field_has_focus(
    fixed_device: Fingerprint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`x` is a letter to a text field; escape reaches the app from any field and cancels a
    running probe (a real training command, its process stopped, nothing stored)."""
    monkeypatch.setattr(actions, "SCRIPT_BUDGET", 120.0)
    train = tmp_path / "train.py"
    train.write_text(
        "import time\nimport advisor.probe as ap\n"
        "ap.plan(epochs=3, steps=2000, batch=16, flops_per_sample=2e9)\n"
        "for _ in range(20000):\n    time.sleep(0.01)\n    ap.step(batch=16)\n"
    )
    stored_probe()
    app = make_app()
    command = f"{sys.executable} {train}"

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(app))
        field = app.query_one("#command", Input)
        field.focus()
        field.value = command
        await pilot.press("enter")
        await until(pilot, lambda: app.probing, seconds=30)
        await pilot.pause(1.0)  # the command runs
        assert app.focused is field and app.probing
        started = time.monotonic()
        await pilot.press("escape")
        await until(pilot, lambda: not app.probing, seconds=10)
        assert time.monotonic() - started < 5
        assert "cancel" in str(app.query_one("#probe-status").render()).lower()
        assert field.value == command  # the field kept what was typed

    run(app, scenario)
    assert actions.stored_probe(FormState(command=command)) is None


def test_snapshot_an_llm_job_at_80x24(fixed_device: Fingerprint, snap_compare) -> None:
    """Issue 47's target: at 80x24 an LLM job is set up in the form, every field beside its
    label (tokens has focus), and its answer is read beside it."""

    async def tokens_focused(pilot: Pilot) -> None:
        await ranked_screen(pilot)
        pilot.app.query_one("#tokens", Input).focus()
        await pilot.pause(0.2)

    assert snap_compare(make_app(llm_state()), terminal_size=(80, 24), run_before=tokens_focused)


def test_snapshot_the_form_hidden_at_100x30(fixed_device: Fingerprint, snap_compare) -> None:
    """ctrl+b: the options take the whole width, and more of their columns fit."""
    stored_probe()

    async def hidden(pilot: Pilot) -> None:
        await ranked_screen(pilot)
        await pilot.press("ctrl+b")
        await pilot.pause(0.3)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=hidden)


def test_an_llm_job_whose_proxy_cannot_be_probed_is_ranked_as_the_command_line_ranks_it(
    fixed_device: Fingerprint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy probe that fails leaves the job to the device model, in the app as in
    ``advisor recommend``: an answer that says why, and the failure stored, so that the next
    start ranks at once without probing again (``f`` would)."""
    monkeypatch.setattr(
        probes.child,
        "child_command",
        lambda spec, budget=0: [sys.executable, "-c", "import os; os._exit(3)"],
    )
    state = FormState(model="llama3.1-8b", method="qlora", tokens="20M", deadline="6h")

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(pilot.app), seconds=60)
        status = str(pilot.app.query_one("#probe-status").render())
        assert "could not be probed" in status and "f probes again" in status
        assert pilot.app.rec is not None and pilot.app.rec.options
        assert all(o.rentable.accelerator for o in pilot.app.rec.options)

    run(make_app(state), scenario)
    assert actions.stored_fallback(state).startswith("the proxy could not be probed here")

    def no_probe(spec: object, budget: float = 0) -> list[str]:
        raise AssertionError("probed again where the stored fallback says why not")

    monkeypatch.setattr(probes.child, "child_command", no_probe)
    run(make_app(state), scenario)


def test_the_data_fields_bill_the_download_as_data_does(fixed_device: Fingerprint) -> None:
    """The form's data size and its store are ``--data`` and ``--data-from``: each machine pays
    its download's time, an offering of another provider its egress; a store without a size,
    or a size nobody writes, is one usage error."""
    probe = stored_probe()
    plain = FormState(deadline="")
    _, bare, _ = actions.recommend(plain, probe)
    staged = FormState(deadline="", data="150GB", data_from="aws")
    assert actions.request_for(staged).data_bytes == 150e9
    _, payload, _ = actions.recommend(staged, probe)
    assert all(o["staging_hours"] > 0 for o in payload["options"])
    assert not any(o["staging_hours"] for o in bare["options"])
    egress = [o["egress_usd"] for o in payload["options"] if o["provider"] != "aws"]
    assert egress and all(usd > 0 for usd in egress)
    with pytest.raises(UsageError, match="give the data's size too"):
        actions.request_for(FormState(data_from="gcp"))
    with pytest.raises(UsageError, match="is not a size"):
        actions.request_for(FormState(data="lots"))
    with pytest.raises(UsageError, match="one of aws"):  # the field is a list; the state is data
        actions.request_for(FormState(data="1GB", data_from="evil\x07"))

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: ranked(pilot.app))
        pilot.app.query_one("#data", Input).value = "150GB"
        await until(
            pilot, lambda: "150 GB of data" in str(pilot.app.query_one("#summary").render())
        )

    run(make_app(plain), scenario)
