"""A refresh against broken or hostile sources keeps the prices it has (real loopback server).

Shrinking catalogs (empty, all invalid, a few rows) are refused inside the transaction;
downloads are bounded in size (compressed and decompressed), in time (one deadline a source)
and in place (redirects and page links stay on the configured origin).
"""

from __future__ import annotations

import gzip
import time
import tracemalloc
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from advisor.cli import cli
from pricing import query, refresh
from pricing.fetch import MIB, RetryPolicy, origin_of
from tests.fixtures.pricing.server import FIXTURES, FixtureServer, Reply

FAST = RetryPolicy(attempts=3, backoff_seconds=0.01, timeout_seconds=5)
GCP = "/skypilot/gcp/vms.csv"
HEADER = (FIXTURES / GCP.lstrip("/")).read_text().splitlines()[0]


def prices(db: sqlite_utils.Database) -> tuple[list, list]:
    current = db.conn.execute("SELECT * FROM current_prices ORDER BY 1, 2").fetchall()
    rentables = db.conn.execute("SELECT * FROM rentables ORDER BY 1, 2, 4, 8, 9, 11").fetchall()
    return current, rentables


def gcp(db, server, policy: RetryPolicy = FAST, **options) -> refresh.RunReport:
    (report,) = refresh.refresh(
        db, ["skypilot/gcp"], urls={"skypilot": f"{server.url}/skypilot"}, policy=policy, **options
    )
    return report


def last_run(db: sqlite_utils.Database) -> tuple[str, str]:
    return db.conn.execute(
        "SELECT status, error FROM refresh_runs WHERE source = 'skypilot' ORDER BY id DESC"
    ).fetchone()


def catalog(*rows: str) -> bytes:
    return "\n".join([HEADER, *rows, ""]).encode()


NA_ROW = "n1-standard-{n},8.0,30.0,,,,us-central1,us-central1-a,N/A,N/A"
ROWS = [
    "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.0963",
    "n1-standard-4,4.0,15.0,,,,us-central1,us-central1-a,0.19,0.04",
    "n2-standard-8,8.0,32.0,,,,us-central1,us-central1-a,0.39,0.09",
]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (catalog(), "empty; it would retire 221 of 221 prices"),
        (catalog(*(NA_ROW.format(n=n) for n in range(40))), "80 of 80 rows"),
        (catalog(*ROWS), "would retire 217 of 221 prices (6 rows, 6 valid)"),
    ],
    ids=["header-only", "all-N/A", "three-rows"],
)
def test_a_shrinking_catalog_is_refused_and_rolled_back(db, server, body, why) -> None:
    before = prices(db)
    server.script(GCP, Reply(body=body))
    report = gcp(db, server)
    assert report.status == "refused"
    assert why in (report.error or "")
    assert prices(db) == before
    status, error = last_run(db)
    assert status == "failed" and error.startswith("refused: ")
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_allow_shrink_accepts_a_real_shrink(db, server) -> None:
    server.script(GCP, Reply(body=catalog(*ROWS)))
    report = gcp(db, server, allow_shrink=True)
    assert (report.status, report.added + report.changed + report.unchanged) == ("ok", 6)
    assert report.removed == 221 - report.changed - report.unchanged
    assert {r.source for r in query.rentables(db, provider="gcp")} == {"skypilot/gcp"}


def test_a_small_change_is_not_a_shrink(db, server) -> None:
    gcp(db, server, allow_shrink=True)  # the fixture catalog replaces the seed
    text = (FIXTURES / GCP.lstrip("/")).read_text()
    lines = text.splitlines()
    server.script(GCP, Reply(body=("\n".join(lines[:-1]) + "\n").encode()))  # one row fewer
    assert gcp(db, server).status == "ok"


def test_an_empty_spot_advisor_file_keeps_the_spot_risks(db, server) -> None:
    urls = {"aws-spot-advisor": f"{server.url}/aws-spot-advisor/spot-advisor-data.json"}
    (first,) = refresh.refresh(db, ["aws-spot-advisor"], urls=urls, policy=FAST)
    assert first.status == "ok"
    risks = db.conn.execute("SELECT * FROM spot_risk ORDER BY 1, 2, 3").fetchall()
    server.script("/aws-spot-advisor/spot-advisor-data.json", Reply(body=b'{"spot_advisor": {}}'))
    (report,) = refresh.refresh(db, ["aws-spot-advisor"], urls=urls, policy=FAST)
    assert report.status == "refused" and "empty" in (report.error or "")
    assert db.conn.execute("SELECT * FROM spot_risk ORDER BY 1, 2, 3").fetchall() == risks


def test_an_absurd_price_is_skipped_like_an_invalid_row(db, server) -> None:
    gcp(db, server, allow_shrink=True)
    text = (FIXTURES / GCP.lstrip("/")).read_text()
    absurd = text + "n1-standard-96,96.0,360.0,,,,us-central1,us-central1-a,4560.0,\n"
    server.script(GCP, Reply(body=absurd.encode()))
    before = gcp(db, server).skipped
    assert not [r for r in query.rentables(db) if r.instance_type == "n1-standard-96"]
    server.script(GCP, Reply(body=absurd.replace("4560.0", "4.56").encode()))
    report = gcp(db, server)
    assert report.skipped == before - 1 and report.added == 1


def test_the_cli_refuses_in_one_line_and_allow_shrink_accepts(server, monkeypatch) -> None:
    monkeypatch.setenv("ADVISOR_SKYPILOT_CATALOG_URL", f"{server.url}/skypilot")
    server.script(GCP, Reply(body=catalog(*ROWS)))
    runner = CliRunner()
    listed = runner.invoke(cli, ["prices", "list", "--provider", "gcp", "--json"]).stdout
    refused = runner.invoke(cli, ["prices", "refresh", "--source", "skypilot/gcp"])
    assert refused.exit_code == 1
    (line,) = [line for line in refused.stderr.splitlines() if line.startswith("advisor:")]
    assert line.startswith("advisor: error:") and "Traceback" not in refused.stderr
    assert "refused: the new catalog would retire 217 of 221 prices (6 rows, 6 valid)" in line
    assert "prices unchanged; --allow-shrink accepts it" in line
    assert runner.invoke(cli, ["prices", "list", "--provider", "gcp", "--json"]).stdout == listed
    accepted = runner.invoke(
        cli, ["prices", "refresh", "--source", "skypilot/gcp", "--allow-shrink"]
    )
    assert accepted.exit_code == 0, accepted.stderr
    assert "skypilot/gcp: ok" in accepted.stdout


def test_a_gzip_bomb_of_invalid_rows_is_refused(db, server) -> None:
    rows = "\n".join(NA_ROW.format(n=n % 97) for n in range(200_000))
    bomb = gzip.compress(catalog(rows).decode().encode(), compresslevel=9)
    server.script(GCP, Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    before = prices(db)
    report = gcp(db, server)
    assert report.status == "refused" and "invalid" in (report.error or "")
    assert prices(db) == before


def test_a_gzip_bomb_is_cut_off_without_taking_memory(db, server) -> None:
    bomb = gzip.compress(b"\0" * (64 * MIB), compresslevel=9)
    assert len(bomb) < 100_000
    server.script(GCP, Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    before = prices(db)
    tracemalloc.start()
    try:
        report = gcp(db, server, RetryPolicy(attempts=1, max_body_bytes=4 * MIB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.status == "failed"
    assert "decompressed body passed 4 MiB" in (report.error or "")
    assert "max_body_mib" in (report.error or "")
    assert peak < 16 * MIB  # the 64 MiB never existed
    assert prices(db) == before


@pytest.mark.parametrize("announce", [True, False], ids=["announced", "unannounced"])
def test_a_download_past_its_cap_is_stopped(db, server, announce: bool) -> None:
    big = catalog(*ROWS * 50_000)
    assert len(big) > 8 * MIB
    server.script(GCP, Reply(body=big, announce=announce))
    events: list[refresh.RefreshProgress] = []
    (report,) = refresh.refresh(
        db,
        ["skypilot/gcp"],
        urls={"skypilot": f"{server.url}/skypilot"},
        policy=RetryPolicy(attempts=1, max_download_bytes=MIB),
        progress=events.append,
    )
    assert report.status == "failed" and "body passed 1 MiB" in (report.error or "")
    assert "max_download_mib" in (report.error or "")
    received = [e.done for e in events if e.phase == "download"]
    assert max(received) <= 2 * MIB  # stopped early, not after the 8 MiB


def test_the_configured_deadline_applies_to_the_cli(server, advisor_home: Path) -> None:
    (advisor_home / "config").mkdir(parents=True)
    (advisor_home / "config" / "config.toml").write_text(
        f'[refresh]\ndeadline_seconds = 1\n[sources]\nskypilot_url = "{server.url}/skypilot"\n'
    )
    server.script(GCP, Reply(stall=30))
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["prices", "refresh", "--source", "skypilot/gcp"])
    assert time.monotonic() - started < 8
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "stopped at the 1 s deadline of this source" in result.stderr


def test_origins_compare_scheme_host_and_port() -> None:
    assert origin_of("http://Example.org/a?b") == origin_of("http://example.org:80/c")
    assert origin_of("https://example.org/") == "https://example.org:443"
    assert origin_of("https://example.org/") != origin_of("http://example.org/")
    assert origin_of("http://127.0.0.1:8001/") != origin_of("http://127.0.0.1:8002/")


def test_a_server_that_stalls_after_its_headers_is_cut_off_at_the_deadline(db, server) -> None:
    server.script(GCP, Reply(stall=30))
    started = time.monotonic()
    report = gcp(db, server, RetryPolicy(attempts=3, backoff_seconds=0.01, deadline_seconds=1.0))
    assert time.monotonic() - started < 4
    assert report.status == "failed" and "1 s deadline" in (report.error or "")


def test_a_trickling_server_is_cut_off_at_the_deadline(db, server) -> None:
    server.script(GCP, Reply(trickle=0.1))
    started = time.monotonic()
    report = gcp(db, server, RetryPolicy(attempts=3, backoff_seconds=0.01, deadline_seconds=1.5))
    assert time.monotonic() - started < 4
    assert report.status == "failed" and "1.5 s deadline" in (report.error or "")
    assert server.hits[GCP] == 1  # the deadline covers the retries too


def test_a_redirect_to_another_origin_is_refused(db, server) -> None:
    with FixtureServer().running() as elsewhere:
        server.script(GCP, Reply(302, b"", headers={"Location": f"{elsewhere.url}{GCP}"}))
        before = prices(db)
        report = gcp(db, server)
        assert report.status == "failed"
        assert f"redirected to {elsewhere.url}{GCP}" in (report.error or "")
        assert "outside the configured origin" in (report.error or "")
        assert elsewhere.hits == {}
        assert prices(db) == before


def test_a_redirect_within_the_origin_is_followed(db, server) -> None:
    server.script("/moved/gcp/vms.csv", Reply(301, b"", headers={"Location": GCP}))
    (report,) = refresh.refresh(
        db,
        ["skypilot/gcp"],
        urls={"skypilot": f"{server.url}/moved"},
        policy=FAST,
        allow_shrink=True,
    )
    assert report.status == "ok", report.error
    assert server.hits[GCP] == 1


def test_an_azure_page_link_to_another_origin_is_refused(db, server) -> None:
    page = (FIXTURES / "azure-retail" / "page1.json").read_text()
    with FixtureServer().running() as elsewhere:
        server.script(
            "/azure-retail/page1.json",
            Reply(body=page.replace("{BASE}", elsewhere.url).encode()),
        )
        (report,) = refresh.refresh(
            db,
            ["azure-retail"],
            urls={"azure-retail": f"{server.url}/azure-retail/page1.json"},
            policy=FAST,
        )
        assert report.status == "failed"
        assert "NextPageLink points to" in (report.error or "")
        assert elsewhere.hits == {}
    assert "azure-retail" not in {
        r[0] for r in db.conn.execute("SELECT source FROM current_prices")
    }


def test_a_slow_trickle_is_cut_off_at_the_deadline_not_a_read_later(db, server) -> None:
    """One byte every 5 s: each read would end inside its timeout, so only the watchdog that
    shuts the socket at the deadline keeps the refresh to it."""
    server.script(GCP, Reply(trickle=5.0))
    policy = RetryPolicy(attempts=2, backoff_seconds=0.01, deadline_seconds=2.0, stall_seconds=9)
    started = time.monotonic()
    report = gcp(db, server, policy)
    assert time.monotonic() - started < 4
    assert report.status == "failed" and "2 s deadline" in (report.error or "")


def test_a_stall_is_cut_off_by_the_stall_bound_before_the_deadline(db, server) -> None:
    server.script(GCP, Reply(stall=30), Reply(stall=30))
    policy = RetryPolicy(attempts=2, backoff_seconds=0.01, deadline_seconds=20, stall_seconds=1)
    started = time.monotonic()
    report = gcp(db, server, policy)
    assert time.monotonic() - started < 5
    assert report.status == "failed" and "timed out (after 2 tries)" in (report.error or "")


def test_stalled_sources_share_the_deadline_of_the_whole_refresh(db, server) -> None:
    units = ("gcp", "aws", "azure", "lambda")
    for unit in units:
        server.script(f"/skypilot/{unit}/vms.csv", Reply(stall=30))
    policy = RetryPolicy(attempts=1, deadline_seconds=20, command_deadline_seconds=2)
    started = time.monotonic()
    reports = refresh.refresh(
        db,
        [f"skypilot/{unit}" for unit in units],
        urls={"skypilot": f"{server.url}/skypilot"},
        policy=policy,
    )
    assert time.monotonic() - started < 5  # not 4 x 20 s
    assert [r.status for r in reports] == ["failed"] * 4
    assert "deadline of the whole refresh" in (reports[0].error or "")
    assert all("deadline of the whole refresh" in (r.error or "") for r in reports[1:])


def test_a_huge_retry_after_is_capped(db, server) -> None:
    server.script(GCP, Reply(429, b"", headers={"Retry-After": "99999"}), Reply(stall=0))
    policy = RetryPolicy(attempts=2, max_wait_seconds=1.0)
    started = time.monotonic()
    report = gcp(db, server, policy, allow_shrink=True)
    assert time.monotonic() - started < 4
    assert report.status == "ok", report.error
    assert server.hits[GCP] == 2


def test_an_azure_page_link_to_itself_is_a_loop(db, server) -> None:
    path = "/azure-retail/loop.json"
    page = f'{{"Items": [], "NextPageLink": "{server.url}{path}"}}'.encode()
    server.script(path, *[Reply(body=page)] * 5)
    started = time.monotonic()
    (report,) = refresh.refresh(
        db, ["azure-retail"], urls={"azure-retail": f"{server.url}{path}"}, policy=FAST
    )
    assert time.monotonic() - started < 3
    assert report.status == "failed" and "a loop" in (report.error or "")
    assert server.hits[path] <= 2


def test_a_header_of_200000_columns_is_refused_fast(db, server) -> None:
    wide = ",".join(f"c{n}" for n in range(200_000)) + "\n"
    assert len(wide) > 1_000_000
    server.script(GCP, Reply(body=(wide + HEADER + "\n").encode()))
    started = time.monotonic()
    report = gcp(db, server)
    assert time.monotonic() - started < 3
    assert report.status == "failed" and "not a catalog" in (report.error or "")


def test_a_gzip_of_empty_lines_is_parsed_as_a_stream(db, server) -> None:
    """16 MiB of newlines once inflated: parsed line by line from a spooled file, never whole
    (``benchmarks/robustness.py`` runs the 64 MiB one and measures the process's peak)."""
    bomb = gzip.compress(catalog(*ROWS) + b"\n" * (16 * MIB), 9)
    server.script(GCP, Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        report = gcp(db, server, allow_shrink=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.status == "ok", report.error
    assert report.added + report.changed + report.unchanged == 6  # three rows, two prices each
    assert peak < 16 * MIB
