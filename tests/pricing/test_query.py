"""The user's price database from the shipped seed: composition, filters, rules, freshness."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlite_utils

from advisor import locations, store
from advisor.errors import UsageError
from pricing import database, materialise, query, seed
from pricing.offers import OfferGroup, Rentable, group_offers, machine_key
from pricing.schema import STEPS
from pricing.sources import skypilot_catalog


def _one(found: list[Rentable], **want: object) -> Rentable:
    match = [r for r in found if all(getattr(r, k) == v for k, v in want.items())]
    assert len(match) == 1, match
    return match[0]


def test_first_use_copies_the_seed_and_never_writes_it(tmp_path: Path) -> None:
    shipped = locations.shipped(seed.SEED_FILE)
    before = hashlib.sha256(shipped.read_bytes()).hexdigest()
    db = database.connect(tmp_path / "a.sqlite")
    assert db.conn.execute("SELECT COUNT(*) FROM current_prices").fetchone()[0] == 285
    assert db.conn.execute("SELECT COUNT(*) FROM prices").fetchone()[0] == 285
    database.connect(tmp_path / "a.sqlite")  # second use: no second copy
    assert db.conn.execute("SELECT COUNT(*) FROM prices").fetchone()[0] == 285
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == before


def test_default_path_is_the_users_data_dir(advisor_home: Path) -> None:
    db = database.connect()
    assert Path(db.conn.execute("PRAGMA database_list").fetchone()[2]) == (
        advisor_home / "data" / "advisor.sqlite"
    )


def test_gcp_gpu_is_priced_with_its_host(db: sqlite_utils.Database) -> None:
    found = query.rentables(db, provider="gcp", accelerator="A100", region="us-central1")
    a100 = _one(found, accelerator_count=1, pricing="on_demand")
    assert a100.instance_type == "a2-highgpu-1g"  # SkyPilot's default host
    assert a100.host_usd_per_hour == 0.73948
    assert a100.accelerator_usd_per_hour == 2.93391
    assert a100.usd_per_hour == pytest.approx(3.67339)  # prices-SOURCES.md example
    assert a100.cpu_family == "cascadelake"


def test_gpu_without_a_known_host_is_not_rentable(db: sqlite_utils.Database) -> None:
    h100 = query.rentables(db, provider="gcp", accelerator="h100")
    assert {r.accelerator_count for r in h100} == {8}  # a3-highgpu-1g/2g/4g are not in the seed
    assert not query.rentables(db, provider="gcp", accelerator="H200")  # no a3-ultragpu-8g


def test_bundled_hosts_are_never_cpu_only(db: sqlite_utils.Database) -> None:
    cpu = query.rentables(db, provider="gcp", cpu_only=True)
    names = {r.instance_type for r in cpu}
    assert "n2-highcpu-16" in names
    assert not names & {"a2-highgpu-1g", "a3-highgpu-8g", "g2-standard-4", "g2-standard-8"}
    assert all(r.accelerator is None and r.accelerator_count == 0 for r in cpu)


def test_tpus_are_rentable_as_they_are(db: sqlite_utils.Database) -> None:
    tpu = _one(
        query.rentables(db, accelerator="TPU-V3-8", region="europe-west4"), pricing="on_demand"
    )
    assert (tpu.instance_type, tpu.usd_per_hour, tpu.host_usd_per_hour) == ("tpu-v3-8", 8.8, 0)


def test_interruptions_are_zero_on_demand_and_the_default_for_spot(
    db: sqlite_utils.Database,
) -> None:
    rules = query.billing_rules(db)
    for r in query.rentables(db):
        if r.pricing == "on_demand":
            assert r.interruptions_per_hour == 0
        else:
            assert r.interruptions_per_hour == rules[(r.provider, "spot")].interruptions_per_hour
            assert r.interruptions_per_hour > 0


def test_billing_rules_are_real_and_sourced(db: sqlite_utils.Database) -> None:
    rules = query.billing_rules(db)
    assert rules[("gcp", "spot")].max_runtime_seconds == 24 * 3600
    assert rules[("aws", "spot")].preemption_notice_seconds == 120
    assert rules[("aws", "on_demand")].minimum_seconds == 60
    assert rules[("azure", "spot")].preemption_notice_seconds == 30
    assert all(rule.source for rule in rules.values())
    assert all(
        rule.interruptions_per_hour == 0 for (_, p), rule in rules.items() if p == "on_demand"
    )


def test_every_provider_taken_has_sourced_billing_terms(db: sqlite_utils.Database) -> None:
    rules = query.billing_rules(db)
    for provider in skypilot_catalog.UNITS:
        assert rules[(provider, "on_demand")].source, provider
    spot = {provider: rule for (provider, pricing), rule in rules.items() if pricing == "spot"}
    assert "lambda" not in spot  # Lambda sells no spot
    assert all(rule.interruptions_per_hour > 0 and rule.source for rule in spot.values())
    assert rules[("nebius", "spot")].preemption_notice_seconds == 60


def test_filters_are_case_insensitive_and_combine(db: sqlite_utils.Database) -> None:
    found = query.rentables(
        db, provider="AWS", region="US-EAST-1", pricing="spot", min_count=4, max_price=10.0
    )
    assert {(r.instance_type, r.accelerator_count) for r in found} == {
        ("g5.12xlarge", 4),
        ("p3.8xlarge", 4),
        ("p4d.24xlarge", 8),
    }
    assert all(r.usd_per_hour <= 10 and r.pricing == "spot" for r in found)


def test_blob_and_sql_paths_agree(db: sqlite_utils.Database) -> None:
    for filters in (
        query.Filters(),
        query.Filters(accelerator="t4"),
        query.Filters(provider="gcp", pricing="spot", max_count=2),
        query.Filters(cpu_only=True, max_price=1.0),
    ):
        fast = query.rentables(db, **filters.__dict__)
        indexed = query.rentable_rows(db, filters)
        assert sorted(fast, key=repr) == sorted(indexed, key=repr)
        assert fast


def _by_machine(groups: list[OfferGroup]) -> dict[tuple[object, ...], list[Rentable]]:
    return {machine_key(g.first): g.members() for g in groups}


@pytest.mark.parametrize("head_rows", [1, materialise.HEAD_ROWS])
def test_offer_groups_are_the_rows_grouped_by_machine_cheapest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head_rows: int
) -> None:
    """With one decoded row a group, every other row comes from the group's own blob."""
    monkeypatch.setattr(materialise, "HEAD_ROWS", head_rows)
    db = database.connect(tmp_path / "prices.sqlite")
    for filters in (query.Filters(), query.Filters(accelerator="t4", pricing="spot")):
        groups = query.offer_groups(db, filters)
        rows = query.rentable_rows(db, filters)
        assert _by_machine(groups) == _by_machine(group_offers(rows))
        assert sum(map(len, groups)) == len(rows)
        assert any(len(g) > 1 for g in groups)
        for group in groups:
            assert list(group.prices) == [r.usd_per_hour for r in group.members()]
            assert list(group.prices) == sorted(group.prices)


def test_version_1_databases_get_their_offer_groups(tmp_path: Path) -> None:
    path = tmp_path / "prices.sqlite"
    before = _by_machine(query.offer_groups(database.connect(path)))
    old = sqlite_utils.Database(path)
    with old.conn:  # back to schema version 1: one blob of rows a provider, no groups
        old.conn.execute("DROP TABLE rentable_groups")
        old.conn.execute("CREATE TABLE rentable_blobs (provider TEXT PRIMARY KEY, "
                         "row_count INTEGER NOT NULL, rows BLOB NOT NULL)")  # fmt: skip
        old.conn.execute("UPDATE schema_versions SET version = 1 WHERE component = 'pricing'")
    old.conn.close()
    db = database.connect(path)
    assert _by_machine(query.offer_groups(db)) == before
    assert store.schema_version(db, "pricing") == len(STEPS)


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"provider": "gpc"}, "did you mean 'gcp'"),
        ({"accelerator": "a10o"}, "did you mean"),
        ({"region": "us-centrl1"}, "'us-central1'"),
        ({"pricing": "preemptible"}, "unknown pricing"),
        ({"provider": "azure"}, "knows 'aws', 'gcp', 'lambda'; 'advisor prices refresh'"),
        ({"cpu_only": True, "accelerator": "T4"}, "exclude each other"),
    ],
)
def test_unknown_names_are_usage_errors(
    db: sqlite_utils.Database, filters: dict, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        query.rentables(db, **filters)


def test_known_name_without_matches_is_an_empty_answer(db: sqlite_utils.Database) -> None:
    assert query.rentables(db, provider="lambda", pricing="spot") == []


def test_source_status_turns_stale_after_the_ttl(db: sqlite_utils.Database) -> None:
    db.conn.execute(
        "INSERT INTO refresh_runs (source, unit, started_at, finished_at, status, added) "
        "VALUES ('skypilot', 'aws', ?, ?, 'ok', 1)",
        [datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")] * 2,
    )
    statuses = {s.source: s for s in query.source_status(db, 7)}
    fresh, seed = statuses["skypilot"], statuses["seed"]
    assert (fresh.stale, fresh.last_status) == (False, "ok")
    assert seed.stale  # a snapshot of no stated date: stale until a refresh
    later = datetime.now(UTC) + timedelta(days=8)
    old = next(s for s in query.source_status(db, 7, now=later) if s.source == "skypilot")
    assert old.stale and old.age_days is not None and old.age_days > 7


def test_show_and_history(db: sqlite_utils.Database) -> None:
    shown = query.show(db, "P3.2XLARGE")
    assert {(r.region, r.pricing) for r in shown} == {
        (region, pricing)
        for region in ("us-east-1", "us-west-2")
        for pricing in ("on_demand", "spot")
    }
    t4 = query.show(db, "t4")
    assert {(r.provider, r.accelerator) for r in t4} == {("aws", "T4"), ("gcp", "T4")}
    points = query.history(db, "t4")
    assert {p.accelerator for p in points} == {"T4"}
    with pytest.raises(UsageError, match=r"did you mean 'p3\.2xlarge'"):
        query.show(db, "p3.2xlarg")
