"""``advisor prices ...`` through click's runner, against the seed and the loopback server."""

from __future__ import annotations

import csv
import io
import json
import time

from click.testing import CliRunner

from advisor.cli import cli
from tests.fixtures.pricing.server import FixtureServer, Reply

CONTRACT = {
    "provider",
    "region",
    "instance_type",
    "accelerator",
    "accelerator_count",
    "pricing",
    "usd_per_hour",
    "fetched_at",
    "source",
}


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_shipped_prices_are_dated_by_their_snapshot_and_stale_until_a_refresh() -> None:
    """A new install's prices are the seed's catalog snapshot, not today's: their age counts
    from the snapshot (``seed_meta.built_at``), and they are stale until a refresh."""
    from pricing import seed as shipped_seed

    code, out, err = invoke("prices", "--json")
    assert code == 0
    (seed,) = json.loads(out)
    built_at, _ = shipped_seed.read_seed()
    assert seed["source"] == "seed" and seed["stale"] is True
    assert seed["last_success"] == built_at and seed["age_days"] > 0.5
    assert "warning: seed/all prices are stale" in err and "advisor prices refresh" in err


def test_prices_warns_when_stale() -> None:
    assert invoke("prices")[0] == 0  # creates the database from the seed
    time.sleep(1.1)  # ages are counted in whole seconds
    code, _, err = invoke("prices", "--ttl-days", "0.00001")
    assert code == 0
    assert "warning: seed/all prices are stale" in err


def test_list_json_is_the_stable_contract() -> None:
    code, out, _ = invoke("prices", "list", "--accelerator", "v100", "--spot", "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(set(row) >= CONTRACT for row in rows)
    assert {row["accelerator"] for row in rows} == {"V100"}
    assert {row["pricing"] for row in rows} == {"spot"}
    prices = [row["usd_per_hour"] for row in rows]
    assert prices == sorted(prices)


def test_list_csv_and_filters() -> None:
    code, out, _ = invoke(
        "prices",
        "list",
        "--provider",
        "GCP",
        "--cpu-only",
        "--on-demand",
        "--max-price",
        "1",
        "--csv",
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {r["provider"] for r in rows} == {"gcp"}
    assert all(float(r["usd_per_hour"]) <= 1 and not r["accelerator"] for r in rows)


def test_list_table_and_limit() -> None:
    code, out, _ = invoke("prices", "list", "--min-count", "8", "--limit", "3")
    assert code == 0
    assert "3 rentable machines" in out


def test_unknown_accelerator_is_one_usage_line() -> None:
    code, _out, err = invoke("prices", "list", "--accelerator", "a10o")
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "did you mean" in err


def test_show_and_history() -> None:
    code, out, _ = invoke("prices", "show", "a2-highgpu-1g", "--json")
    assert code == 0
    assert {row["accelerator"] for row in json.loads(out)} == {"A100"}
    code, out, _ = invoke("prices", "history", "g4dn.xlarge", "--csv")
    assert code == 0
    assert len(out.strip().splitlines()) == 1 + 4  # 2 regions x 2 pricing models
    code, _, err = invoke("prices", "show", "g4dn.xlarg")
    assert code == 2 and "did you mean 'g4dn.xlarge'" in err


def test_refresh_reports_and_fails_in_one_line(server: FixtureServer, monkeypatch) -> None:
    monkeypatch.setenv("ADVISOR_SKYPILOT_CATALOG_URL", f"{server.url}/skypilot")
    code, out, err = invoke("prices", "refresh", "--source", "skypilot/lambda", "--allow-shrink")
    assert code == 0, err
    assert "skypilot/lambda: ok" in out
    server.script("/skypilot/gcp/vms.csv", Reply(404, b"gone"))
    code, out, err = invoke("prices", "refresh", "--source", "skypilot/gcp")
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("advisor: error:")]
    assert len(lines) == 1 and "HTTP 404" in lines[0] and "previous prices are kept" in lines[0]


def test_refresh_url_option_and_unknown_source(server: FixtureServer) -> None:
    code, _out, err = invoke(
        "prices",
        "refresh",
        "--source",
        "skypilot/aws",
        "--url",
        f"{server.url}/skypilot",
        "--allow-shrink",
    )
    assert code == 0, err
    code, _, err = invoke("prices", "refresh", "--source", "skypylot")
    assert code == 2 and "unknown price source" in err


def test_bad_numbers_are_usage_errors() -> None:
    for args in (["--limit", "0"], ["--min-count", "-1"], ["--max-price", "-2"]):
        code, _, err = invoke("prices", "list", *args)
        assert code == 2, args
        assert len(err.strip().splitlines()) == 1


def test_prices_shows_providers_and_offerings_per_source(server: FixtureServer) -> None:
    code, out, _ = invoke("prices", "--json")
    (seed,) = json.loads(out)
    assert seed["offerings"] > 100 and set(seed["providers"].split(", ")) >= {"aws", "gcp"}
    base = f"{server.url}/skypilot-v8"
    code, out, err = invoke(
        "prices", "refresh", "--source", "skypilot/runpod", "--url", base, "--allow-shrink"
    )
    assert code == 0, err
    assert "skypilot/runpod: ok, 8 added" in out
    assert "1 offering of 1 accelerator without a device (no prediction): RTX4000-Ada" in out
    code, out, _ = invoke("prices", "--json")
    rows = {(row["source"], row["cloud"]): row for row in json.loads(out)}
    runpod = rows[("skypilot", "runpod")]
    assert (runpod["providers"], runpod["offerings"]) == ("runpod", 4)
    code, out, _ = invoke("prices")
    assert code == 0 and "offerings" in out and "runpod" in out


def test_the_refresh_summary_shows_a_huge_accelerator_name_by_its_ends() -> None:
    from advisor.cli.prices import NAME_CHARS, _unmapped

    said = _unmapped((("X" * 5_000 + "\x1b[2J", 3), ("RTX4090", 1)))
    assert "(5,004 characters)" in said and "RTX4090" in said
    assert "\x1b" not in said and len(said) < 200
    assert NAME_CHARS < 100
