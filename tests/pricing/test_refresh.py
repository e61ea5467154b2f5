"""Refresh end to end against a real HTTP server on 127.0.0.1 serving recorded-format fixtures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlite_utils

from pricing import database, query, refresh
from pricing.fetch import RetryPolicy
from pricing.sources import skypilot_catalog
from tests.fixtures.pricing.server import FIXTURES, FixtureServer, Reply

FAST = RetryPolicy(attempts=3, backoff_seconds=0.01, timeout_seconds=5)
ROOT = Path(__file__).resolve().parents[2]
GCP = "/skypilot/gcp/vms.csv"


def urls(server: FixtureServer) -> dict[str, str]:
    return {
        "skypilot": f"{server.url}/skypilot",
        "azure-retail": f"{server.url}/azure-retail/page1.json",
        "aws-spot-advisor": f"{server.url}/aws-spot-advisor/spot-advisor-data.json",
    }


def snapshot(db: sqlite_utils.Database) -> tuple[list, list]:
    current = db.conn.execute("SELECT * FROM current_prices ORDER BY 1, 2").fetchall()
    rentables = db.conn.execute("SELECT * FROM rentables ORDER BY 1, 2, 4, 8, 9, 11").fetchall()
    return current, rentables


def run(db: sqlite_utils.Database, server: FixtureServer, sources: list[str] | None = None):
    # the fixture catalogs are a few rows: far fewer than the seed, so each refresh shrinks
    return refresh.refresh(db, sources, urls=urls(server), policy=FAST, allow_shrink=True)


V7_CLOUDS = ["skypilot/aws", "skypilot/gcp", "skypilot/azure", "skypilot/lambda"]
"""The clouds the v7-layout fixtures hold (``skypilot/``); ``skypilot-v8/`` holds every one."""


def test_every_source_refreshes_and_stores(db: sqlite_utils.Database, server) -> None:
    events: list[refresh.RefreshProgress] = []
    sources = [*V7_CLOUDS, *refresh.DEFAULT_SOURCES[1:]]
    reports = refresh.refresh(
        db, sources, urls=urls(server), policy=FAST, progress=events.append, allow_shrink=True
    )
    assert [(r.source, r.unit, r.status) for r in reports] == [
        ("skypilot", unit, "ok") for unit in ("aws", "gcp", "azure", "lambda")
    ] + [("aws-spot-advisor", "aws", "ok"), ("azure-retail", "azure", "ok")]
    assert {e.phase for e in events} >= {"download", "write", "done"}
    aws = {r.source: r for r in reports if r.unit == "aws"}["skypilot"]
    assert aws.skipped == 4
    c5 = query.rentables(db, provider="aws", accelerator=None, region="us-east-1", pricing="spot")
    (c5_4x,) = [r for r in c5 if r.instance_type == "c5.4xlarge"]
    assert c5_4x.usd_per_hour == 0.1856
    assert c5_4x.source == "skypilot/aws"
    # Spot Advisor bucket "<5%" replaces the default rate
    assert (
        c5_4x.interruptions_per_hour
        < query.billing_rules(db)[("aws", "spot")].interruptions_per_hour
    )
    # the seed's AWS rows that the catalog no longer lists are retired, their history kept
    assert not query.rentables(db, provider="aws", accelerator="H100")
    assert query.history(db, "p5.48xlarge")
    # GCP: T4 x2 composed with n1-standard-8; L4 has no host in the fixture, so it is not rentable
    (t4,) = query.rentables(db, provider="gcp", accelerator="T4", pricing="on_demand")
    assert (t4.instance_type, t4.usd_per_hour) == ("n1-standard-8", pytest.approx(1.08))
    assert not query.rentables(db, provider="gcp", accelerator="L4")
    # Azure Retail prices joined with the sizes the SkyPilot Azure catalog knows
    (nc6,) = query.rentables(db, provider="azure", pricing="spot", accelerator="v100")
    assert (nc6.usd_per_hour, nc6.vcpus, nc6.source) == (0.918, 6.0, "azure-retail")
    # a size the SkyPilot Azure catalog does not list keeps its price but is not rentable
    assert query.history(db, "Standard_ND96asr_v4")
    azure = {r.instance_type for r in query.rentables(db, provider="azure")}
    assert "Standard_ND96asr_v4" not in azure and "Standard_D8s_v5" in azure
    statuses = {(s.source, s.unit): s for s in query.source_status(db, 7)}
    assert not any(s.stale for s in statuses.values())


def test_a_failing_source_keeps_the_previous_prices(db, server) -> None:
    before = snapshot(db)
    server.script(GCP, Reply(500, b"boom"))
    (report,) = run(db, server, ["skypilot/gcp"])
    assert report.status == "failed"
    assert "HTTP 500" in report.error and "\n" not in report.error
    assert server.hits[GCP] == FAST.attempts
    assert snapshot(db) == before
    statuses = {(s.source, s.unit): s for s in query.source_status(db, 7)}
    assert statuses[("skypilot", "gcp")].last_status == "failed"
    assert statuses[("skypilot", "gcp")].stale


def test_a_truncated_body_fails_cleanly(db, server) -> None:
    before = snapshot(db)
    server.script(GCP, Reply(truncate=True))
    (report,) = run(db, server, ["skypilot/gcp"])
    assert report.status == "failed"
    assert snapshot(db) == before


def test_429_then_success_is_retried(db, server) -> None:
    server.script(GCP, Reply(429, b"slow down", headers={"Retry-After": "0"}), Reply())
    (report,) = run(db, server, ["skypilot/gcp"])
    assert report.status == "ok"
    assert server.hits[GCP] == 2


def test_one_failure_does_not_stop_the_other_sources(db, server) -> None:
    server.script("/aws-spot-advisor/spot-advisor-data.json", Reply(200, b"{not json"))
    reports = run(db, server, ["aws-spot-advisor", "skypilot/lambda"])
    assert [r.status for r in reports] == ["failed", "ok"]
    assert "not JSON" in (reports[0].error or "")


def test_outliers_are_skipped_and_changes_kept_as_history(db, server) -> None:
    run(db, server, ["skypilot/gcp"])
    text = (FIXTURES / GCP.lstrip("/")).read_text()
    changed = text.replace(
        "n2d-standard-8,8.0,32.0,,,,us-central1,us-central1-a,0.33797,0.07013",
        "n2d-standard-8,8.0,32.0,,,,us-central1,us-central1-a,0.35,7.0",  # spot x100: outlier
    )
    server.script(GCP, Reply(body=changed.encode()))
    time.sleep(1.1)  # fetched_at has one-second resolution
    (report,) = run(db, server, ["skypilot/gcp"])
    assert (report.changed, report.skipped) == (1, 3)
    points = [p for p in query.history(db, "n2d-standard-8")]
    assert [(p.pricing, p.usd_per_hour) for p in points] == [
        ("on_demand", 0.33797),
        ("on_demand", 0.35),
        ("spot", 0.07013),
    ]
    (spot,) = query.rentables(
        db, region="us-central1", pricing="spot", cpu_only=True, max_price=0.08
    )
    assert (spot.instance_type, spot.usd_per_hour) == ("n2d-standard-8", 0.07013)
    cpu = query.rentables(db, region="us-central1", pricing="spot", cpu_only=True)
    (n1,) = [r for r in cpu if r.instance_type == "n1-standard-8"]
    assert n1.fetched_at == report.started_at  # unchanged but confirmed by this refresh
    assert spot.fetched_at < report.started_at  # the suspect price was not confirmed


_KILLED_CHILD = """
import sys, time
from pricing import database, refresh
db = database.connect(sys.argv[1])
def progress(event):
    if event.phase == "write":
        print("writing", flush=True)
        time.sleep(60)
refresh.refresh(
    db, ["skypilot/gcp"], urls={"skypilot": sys.argv[2]}, progress=progress, allow_shrink=True
)
"""


def test_a_refresh_killed_midway_leaves_the_database_as_it_was(tmp_path: Path, server) -> None:
    path = tmp_path / "prices.sqlite"
    before = snapshot(database.connect(path))
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_CHILD, str(path), f"{server.url}/skypilot"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "writing"  # inside the transaction
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    db = database.connect(path)
    assert snapshot(db) == before
    statuses = {(s.source, s.unit): s for s in query.source_status(db, 7)}
    assert statuses[("skypilot", "gcp")].last_status == "running"
    (report,) = run(db, server, ["skypilot/gcp"])  # nothing is left locked
    assert report.status == "ok"
    killed = db.conn.execute(
        "SELECT status, error FROM refresh_runs WHERE source = 'skypilot' ORDER BY id"
    ).fetchall()
    assert killed[0][0] == "failed" and "interrupted" in killed[0][1]
    assert killed[-1] == ("ok", None)


def test_a_reader_sees_old_or_new_prices_never_a_mix(tmp_path: Path, server) -> None:
    path = tmp_path / "prices.sqlite"
    writer = database.connect(path)

    def total() -> float:
        return round(sum(r.usd_per_hour for r in query.rentables(reader, provider="gcp")), 6)

    reader = database.connect(path)
    old = total()
    seen: list[float] = []
    done = threading.Event()

    def read() -> None:
        own = database.connect(path)
        while not done.is_set():
            seen.append(round(sum(r.usd_per_hour for r in query.rentables(own, provider="gcp")), 6))

    thread = threading.Thread(target=read)
    thread.start()
    writing = threading.Event()

    def slow(event: refresh.RefreshProgress) -> None:
        if event.phase == "write" and not writing.is_set():
            writing.set()
            time.sleep(0.5)  # hold the write transaction open while the reader reads

    try:
        refresh.refresh(
            writer,
            ["skypilot/gcp"],
            urls=urls(server),
            policy=FAST,
            progress=slow,
            allow_shrink=True,
        )
    finally:
        done.set()
        thread.join()
    new = total()
    assert new != old
    assert len(seen) > 3
    assert set(seen) <= {old, new}
    assert old in seen


def test_gcp_billing_prices_vms_as_cores_ram_and_gpus(db, server, monkeypatch) -> None:
    path = "/gcp-billing/skus"
    pages = [(FIXTURES / "gcp-billing" / f"skus-page{n}.json").read_bytes() for n in (1, 2)]
    server.script(path, Reply(body=pages[0]), Reply(body=pages[1]))
    (missing,) = refresh.refresh(db, ["gcp-billing"], urls={"gcp-billing": server.url + path})
    assert missing.status == "failed" and "ADVISOR_GCP_API_KEY" in (missing.error or "")
    monkeypatch.setenv("ADVISOR_GCP_API_KEY", "test-key")
    assert "gcp-billing" in {name for name, _ in refresh.plan(None)}
    (report,) = refresh.refresh(
        db, ["gcp-billing"], urls={"gcp-billing": server.url + path}, policy=FAST
    )
    assert report.status == "ok", report.error
    assert "key=test-key" in server.queries[-1] and "pageToken=page-2" in server.queries[-1]
    by_source = [r for r in query.rentables(db, provider="gcp") if r.source == "gcp-billing"]
    n1 = {
        (r.region, r.pricing): r.usd_per_hour
        for r in by_source
        if r.instance_type == "n1-standard-8" and r.accelerator is None
    }
    assert n1[("us-central1", "on_demand")] == pytest.approx(8 * 0.031611 + 30 * 0.004237)
    assert n1[("us-east1", "spot")] == pytest.approx(8 * 0.00898 + 30 * 0.0012)
    a100 = [r for r in by_source if r.accelerator == "A100" and r.accelerator_count == 1]
    (a100_on_demand,) = [r for r in a100 if r.pricing == "on_demand"]
    assert a100_on_demand.instance_type == "a2-highgpu-1g"
    assert a100_on_demand.usd_per_hour == pytest.approx(12 * 0.031611 + 85 * 0.004237 + 2.933908)
    assert report.skipped == 1  # the EUR SKU


def test_a_timeout_is_retried(db, server) -> None:
    server.script(GCP, Reply(delay=1.0), Reply())
    policy = RetryPolicy(attempts=2, backoff_seconds=0.01, timeout_seconds=0.3)
    (report,) = refresh.refresh(
        db, ["skypilot/gcp"], urls=urls(server), policy=policy, allow_shrink=True
    )
    assert report.status == "ok"
    assert server.hits[GCP] == 2


def test_azure_retail_asks_for_linux_vm_consumption_prices_and_pages(db, server) -> None:
    (report,) = run(db, server, ["azure-retail"])
    assert report.status == "ok"
    assert server.hits["/azure-retail/page1.json"] == 1
    assert server.hits["/azure-retail/page2.json"] == 1
    assert "serviceName+eq+%27Virtual+Machines%27" in server.queries[0]


def test_source_urls_come_from_the_argument_then_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("ADVISOR_SKYPILOT_CATALOG_URL", "http://mirror.example/v7")
    monkeypatch.setenv("ADVISOR_AZURE_RETAIL_URL", "http://mirror.example/azure")
    assert refresh.source_url("skypilot") == "http://mirror.example/v7"
    assert refresh.source_url("skypilot", {"skypilot": "http://other/v7"}) == "http://other/v7"
    assert refresh.source_url("azure-retail") == "http://mirror.example/azure"
    monkeypatch.delenv("ADVISOR_SKYPILOT_CATALOG_URL")
    assert refresh.source_url("skypilot") is None  # the public default
    assert skypilot_url("gcp") == f"{skypilot_catalog.DEFAULT_URL}/gcp/vms.csv"
    assert skypilot_catalog.DEFAULT_URL.endswith("/catalogs/v8")  # what SkyPilot reads today
    assert skypilot_url("azure") == f"{skypilot_catalog.DEFAULT_URL}/azure/vms.csv"


def skypilot_url(cloud: str) -> str:
    return skypilot_catalog.url_for(None, cloud)


def test_decoded_rentables_follow_every_refresh(tmp_path: Path, server) -> None:
    path = tmp_path / "prices.sqlite"
    db, other = database.connect(path), database.connect(path)
    before = query.rentables(db, provider="lambda")
    assert query.rentables(db, provider="lambda") == before  # decoded once, same answer
    text = (FIXTURES / "skypilot/lambda/vms.csv").read_text().replace("0.75", "0.79")
    server.script("/skypilot/lambda/vms.csv", Reply(body=text.encode()))
    run(other, server, ["skypilot/lambda"])  # another connection commits
    (a10,) = [r for r in query.rentables(db, provider="lambda") if r.accelerator == "A10"]
    assert a10.usd_per_hour == 0.79
    server.script("/skypilot/lambda/vms.csv", Reply())
    run(db, server, ["skypilot/lambda"])  # this connection commits
    (a10,) = [r for r in query.rentables(db, provider="lambda") if r.accelerator == "A10"]
    assert a10.usd_per_hour == 0.75


def test_a_failing_later_page_fails_the_whole_azure_refresh(db, server) -> None:
    server.script("/azure-retail/page2.json", Reply(503, b"busy"))
    (report,) = run(db, server, ["azure-retail"])
    assert report.status == "failed" and "HTTP 503" in (report.error or "")
    assert server.hits["/azure-retail/page2.json"] == FAST.attempts
    sources = {row[0] for row in db.conn.execute("SELECT source FROM current_prices")}
    assert "azure-retail" not in sources  # page 1 alone was not stored


V8_OFFERINGS = {
    "aws": 5,
    "gcp": 4,
    "azure": 4,
    "lambda": 4,
    "runpod": 4,
    "vast": 4,
    "nebius": 4,
    "oci": 4,
    "cudo": 4,
    "primeintellect": 4,
    "hyperbolic": 3,
    "hyperstack": 5,
    "seeweb": 3,
    "yotta": 3,
    "daytona": 4,
    "jarvislabs": 3,
    "lium": 4,
    "mithril": 3,
    "spheron": 4,
    "verda": 4,
    "shadeform": 4,
}
"""Offerings in each ``skypilot-v8/<cloud>/vms.csv`` fixture (zones folded into regions)."""


def test_catalog_v8_takes_every_provider(db: sqlite_utils.Database, server) -> None:
    assert set(V8_OFFERINGS) == set(skypilot_catalog.UNITS)
    reports = refresh.refresh(
        db, ["skypilot"], urls={"skypilot": f"{server.url}/skypilot-v8"}, policy=FAST,
        allow_shrink=True,
    )  # fmt: skip
    assert [(r.unit, r.status) for r in reports] == [(u, "ok") for u in skypilot_catalog.UNITS]
    held = {s.unit: s for s in query.source_status(db, 7) if s.source == "skypilot"}
    assert {unit: s.offerings for unit, s in held.items()} == V8_OFFERINGS
    assert all(s.providers == (unit,) for unit, s in held.items())
    by_unit = {r.unit: r for r in reports}
    # accelerators the device catalog lacks are kept as named, and counted
    assert by_unit["runpod"].unmapped == (("RTX4000-Ada", 1),)  # the RTX 4090 is in the catalog
    assert by_unit["yotta"].unmapped == (("RTX5090", 3),)
    assert by_unit["aws"].unmapped == (("RTX PRO Server 6000", 1),)
    assert by_unit["spheron"].unmapped == ()  # every spelling there maps to a device
    assert by_unit["seeweb"].skipped == 1  # a GPU row without a region
    # catalog spellings mapped to the device catalog's names
    hyperstack = {r.accelerator for r in query.rentables(db, provider="hyperstack")}
    assert hyperstack == {"A100-80GB", "H100-PCIe", "H100", "A6000", "RTX-A4000"}
    (a6000,) = query.rentables(db, provider="vast", accelerator="A6000")
    assert (a6000.instance_type, a6000.accelerator_count) == ("2x-RTX_A6000-32-65536", 2)
    # Vast writes SpotPrice 0.00: no spot price, not a $0 machine
    assert not query.rentables(db, provider="vast", pricing="spot")
    # each provider's cheap tier carries its stated interruption terms
    rules = query.billing_rules(db)
    (h100_spot,) = query.rentables(db, provider="nebius", accelerator="H100", pricing="spot")
    assert h100_spot.usd_per_hour == 1.25
    assert h100_spot.interruptions_per_hour == rules[("nebius", "spot")].interruptions_per_hour
    assert rules[("nebius", "spot")].preemption_notice_seconds == 60
    for provider in ("runpod", "oci", "daytona", "mithril", "spheron", "verda", "primeintellect"):
        spot = query.rentables(db, provider=provider, pricing="spot")
        assert spot and all(r.interruptions_per_hour > 0 for r in spot), provider
    assert not query.rentables(db, provider="lambda", pricing="spot")  # Lambda sells no spot
    # RunPod writes GiB in the MiB field: no per-device memory rather than 0.08 GiB
    assert all(r.accelerator_memory_gib is None for r in query.rentables(db, provider="runpod"))
