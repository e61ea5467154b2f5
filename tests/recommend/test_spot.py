"""Spot arithmetic on hand-computed cases: Young's interval, expected wall time, the 24 h cap."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from advisor.recommend import spot
from pricing.spot_risk import Lifetimes, SpotRisk, ZoneRisk, exponential


def walls_of(median: float, sigma: float, rate: float, *args: object, **kw: object) -> list[float]:
    """Simulated wall times of a memoryless, always available spot machine at ``rate`` per hour."""
    runs = spot.simulate(median, sigma, exponential(rate, "test"), *args, **kw)  # type: ignore[arg-type]
    return [run.wall for run in runs]


def test_checkpoint_cost_from_model_size() -> None:
    # imdb_bilstm: 2,658,945 float32 weights + Adam's two slots = 31,907,340 bytes at 100 MB/s
    assert spot.checkpoint_seconds(2_658_945, "adam") == pytest.approx(2 + 0.3190734)
    # momentum keeps one slot: 25.56 M weights x 4 B x 2 = 204.48 MB -> 2.0448 s
    assert spot.checkpoint_seconds(25_560_000, "momentum") == pytest.approx(2 + 2.0448)


def test_young_interval() -> None:
    # C = 50 s, 0.36 preemptions/h = 1e-4 /s: tau = sqrt(2 * 50 / 1e-4) = 1000 s
    assert spot.young_interval(50, 0.36) == pytest.approx(1000)
    assert spot.young_interval(50, 0.0) == math.inf


def test_expected_run_daly() -> None:
    # T = 10 h, tau = 1000 s, M = 1 / rate = 10,000 s, R = 150 s, C = 50 s:
    # E = M e^(R/M) (e^((tau+C)/M) - 1) T/tau = 10000 * e^0.015 * (e^0.105 - 1) * 36 = 40458.16 s
    run = spot.expected_run(36_000, 0.36, 50, 150)
    assert run.interval_seconds == pytest.approx(1000)
    assert run.expected_seconds == pytest.approx(
        10_000 * math.exp(0.015) * (math.exp(0.105) - 1) * 36
    )
    assert run.expected_seconds == pytest.approx(40_458.16, abs=0.01)
    assert run.expected_preemptions == pytest.approx(4.045816, abs=1e-6)
    assert run.cap_restarts == 0


def test_short_run_needs_no_checkpoint() -> None:
    # T = 500 s < tau = 1000 s: one segment, E = M e^(R/M) (e^(T/M) - 1)
    run = spot.expected_run(500, 0.36, 50, 150)
    assert run.interval_seconds == math.inf
    assert run.expected_seconds == pytest.approx(10_000 * math.exp(0.015) * math.expm1(0.05))


def test_no_preemptions_no_overhead() -> None:
    run = spot.expected_run(36_000, 0.0, 50, 150)
    assert run.expected_seconds == 36_000
    assert run.expected_preemptions == 0


def test_preemptible_24h_cap_forces_restarts_even_at_rate_zero() -> None:
    # 200,000 s of work under a 86,400 s cap: two forced restarts, each R + C = 200 s
    run = spot.expected_run(200_000, 0.0, 50, 150, cap_seconds=86_400)
    assert run.cap_restarts == 2
    assert run.expected_seconds == 200_400
    # the simulation walks the same leases: 86,350 s of work saved in each of the first two
    walls = walls_of(200_000, 0.0, 0.0, 50, 150, 86_400, samples=8)
    assert walls == [200_400] * 8


def test_preempted_far_faster_than_it_saves_never_finishes() -> None:
    # 500 /h: M = 7.2 s, a restart alone takes 25 M: e^25 restarts per segment
    run = spot.expected_run(3600, 500.0, 5, 180)
    assert run.expected_seconds > spot.HOPELESS * 3600
    assert walls_of(3600, 0.1, 500.0, 5, 180, None) == [math.inf] * spot.SAMPLES


def test_simulation_mean_matches_the_closed_form() -> None:
    walls = walls_of(36_000, 0.0, 0.36, 50, 150, None)
    mean = sum(walls) / len(walls)
    # the simulation saves no checkpoint at the very end, ignores preemptions during a restart
    # and is random: within 2% of Daly's 40,458 s
    assert mean == pytest.approx(40_458.16, rel=0.02)
    assert min(walls) >= 36_000 + 35 * 50  # never faster than work plus its checkpoints


def test_simulation_is_reproducible_and_sorted() -> None:
    first = walls_of(36_000, 0.2, 0.36, 50, 150, None)
    assert first == walls_of(36_000, 0.2, 0.36, 50, 150, None)
    assert first == sorted(first)


def test_without_preemptions_the_spread_is_the_prediction() -> None:
    walls = walls_of(1000, 0.3, 0.0, 50, 150, None)
    assert spot.quantile(walls, 0.5) == pytest.approx(1000, rel=0.01)
    assert spot.quantile(walls, 0.9) == pytest.approx(1000 * math.exp(1.2816 * 0.3), rel=0.01)
    assert spot.fraction_within(walls, 1000) == pytest.approx(0.5, abs=0.01)


def test_quantile_and_fraction_within() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert spot.quantile(values, 0.5) == 2.0
    assert spot.quantile(values, 0.9) == 4.0
    assert spot.fraction_within(values, 3.0) == 0.75
    assert spot.fraction_within(values, 0.5) == 0.0


def zone(
    availability: float, up_hours: float, down_hours: float, moves: float = 0.0, long: float = 0.0
) -> ZoneRisk:
    """A zone whose machines live ``up_hours`` on average (one exponential; with ``long`` > 0,
    that share of them ten times as long as the others: heavy-tailed), or with ``moves`` > 0 a
    region whose preemptions find another zone at once with that share."""
    short = up_hours * 3600 / (1 + 9 * long)
    lives = Lifetimes(1 - long, short, 10 * short)
    return ZoneRisk("z", availability, lives, 1.0, down_hours * 3600, 0.0, moves)


def test_weibull_lifetimes_have_the_fitted_mean() -> None:
    rng = spot.sample_rng(0)
    draws = [spot.weibull(rng, 0.6, 3600.0) for _ in range(40_000)]
    assert sum(draws) / len(draws) == pytest.approx(3600 * math.gamma(1 + 1 / 0.6), rel=0.05)
    median = sorted(draws)[len(draws) // 2]
    assert median == pytest.approx(3600 * math.log(2) ** (1 / 0.6), rel=0.03)


def test_waiting_for_capacity_lengthens_the_run() -> None:
    # 10 h of work, machines live ~2 h; one family always has capacity, the other has it 20% of
    # the time and makes the run wait 3 h (mean) after each preemption
    always = SpotRisk("a", "a", (zone(1.0, 2.0, 1e-6, long=0.1),), "test")
    scarce = SpotRisk("s", "s", (zone(0.2, 2.0, 3.0, long=0.1),), "test")
    easy = spot.simulate(36_000, 0.0, always, 20, 300, None, samples=200)
    hard = spot.simulate(36_000, 0.0, scarce, 20, 300, None, samples=200)
    assert sum(r.waited for r in easy) / 200 < 1.0
    mean_wait = sum(r.waited for r in hard) / 200
    preemptions = sum(r.preemptions for r in hard) / 200
    # each preemption waits 3 h on average, and 80% of runs wait once more at the start
    assert mean_wait == pytest.approx(3 * 3600 * (preemptions + 0.8), rel=0.2)
    assert spot.quantile([r.wall for r in hard], 0.5) > spot.quantile([r.wall for r in easy], 0.5)


def test_a_family_is_an_equal_mixture_of_its_zones() -> None:
    good, bad = zone(1.0, 1000.0, 0.1), zone(1.0, 0.5, 0.1)
    mixed = SpotRisk("m", "m", (good, bad), "test")
    runs = spot.simulate(36_000, 0.0, mixed, 20, 300, None, samples=100)
    # the good zone (mean life 1000 h) is almost never preempted in 10 h, the bad one often
    quiet = sum(1 for r in runs if r.preemptions == 0)
    assert 40 <= quiet <= 55


def uncached(
    median: float,
    sigma: float,
    risk: SpotRisk,
    checkpoint: float,
    restart: float,
    cap: float | None,
) -> list[spot.Sim]:
    """The simulation as it was before spells were kept: each sample draws its own spells from a
    fresh stream (``simulate_wall``), the reference the kept spells must reproduce exactly."""
    runs = [
        spot.simulate_wall(
            median * math.exp(NormalDist().inv_cdf((i + 0.5) / 64) * sigma),
            risk.zones[i % len(risk.zones)],
            checkpoint,
            restart,
            cap,
            spot.sample_rng(i),
        )
        for i in range(64)
    ]
    return sorted(runs)


@pytest.mark.parametrize("moves", [0.0, 0.4])
@pytest.mark.parametrize(
    ("work_hours", "cap_hours"),
    [(0.5, None), (10, None), (10, 4.0), (60, 24.0), (200, None)],
)
def test_kept_spells_give_exactly_the_fresh_draws(
    work_hours: float, cap_hours: float | None, moves: float
) -> None:
    # two zones, one with capacity half the time and short heavy-tailed lives: runs of 200 h need
    # more spells than are kept, runs of 10 h under a 4 h cap take the other path after a cap;
    # with moves, two regions whose preemptions find another zone at once 40% of the time
    members = (zone(0.5, 1.0, 0.5, moves, 0.1), zone(0.9, 6.0, 2.0, moves, 0.1))
    risk = SpotRisk("k", "k", members, "test")
    cap = cap_hours * 3600 if cap_hours else None
    args = (work_hours * 3600, 0.3, risk, 20.0, 300.0, cap)
    first = spot.simulate(*args, samples=64)
    assert first == uncached(*args)
    assert spot.simulate(*args, samples=64) == first  # the kept spells are not used up
    assert any(run.preemptions for run in first)
    if moves:  # some preemptions moved: 1 s waits
        kept = spot.spells(members, 64)
        assert any(spot.MOVE_SECONDS in sample.lengths[1:] for sample in kept)


@pytest.mark.parametrize("moves", [0.0, 0.3])
def test_spells_are_the_streams_draws_in_order(moves: float) -> None:
    z = zone(0.4, 2.0, 1.0, moves, 0.1)
    for stream in (0, 7):
        rng = spot.sample_rng(stream)
        available = rng.random() < z.availability
        down = (z.down_shape, z.down_scale_seconds)
        first = spot.lifetime(rng, z.lifetimes, True) if available else spot.residual(rng, *down)
        expected = [first]
        for k in range(1, spot.CACHED_SPELLS + 40):  # past the kept ones
            state_up = (k % 2 == 0) == available
            if not state_up and moves and rng.random() < moves:  # a move: one number, 1 s
                expected.append(spot.MOVE_SECONDS)
                continue
            draw = spot.lifetime(rng, z.lifetimes) if state_up else spot.weibull(rng, *down)
            expected.append(draw)
        sample = spot.Spells(z, stream)
        drawn = [length for length, _ in zip(sample, expected, strict=False)]
        assert sample.available == available
        assert drawn == expected
        assert [length for length, _ in zip(sample, expected, strict=False)] == expected


def test_a_move_is_a_preemption_with_a_restart_and_no_wait() -> None:
    # capacity always there at first, lives of ~1 h, and the waits 1000 h: a run that waited even
    # once would take 1000 h. Every preemption finds another zone of the region at once.
    region = zone(1.0, 1.0, 1000.0, moves=1.0)
    pinned = zone(1.0, 1.0, 1000.0)
    work, checkpoint, restart = 10 * 3600.0, 20.0, 300.0
    for stream in range(8):
        moved = spot.simulate_wall(work, region, checkpoint, restart, None, spot.sample_rng(stream))
        assert moved.preemptions >= 1
        assert moved.waited == pytest.approx(moved.preemptions * spot.MOVE_SECONDS)
        # every preemption pays the restart and loses the work since the last checkpoint
        assert moved.wall > work + moved.preemptions * (restart + spot.MOVE_SECONDS)
        assert moved.wall < 3 * work
        waited = spot.simulate_wall(
            work, pinned, checkpoint, restart, None, spot.sample_rng(stream)
        )
        assert waited.wall > 100 * 3600
    # half the preemptions move, half wait a Weibull spell of mean 1 h: 0.5 h per preemption
    half = SpotRisk("h", "h", (zone(1.0, 1.0, 1.0, 0.5),), "test")
    runs = spot.simulate(work, 0.0, half, checkpoint, restart, None, samples=128)
    count = sum(r.preemptions for r in runs)
    assert count > 300
    assert sum(r.waited for r in runs) / count == pytest.approx(1800, rel=0.3)


def test_groups_with_the_same_inputs_share_one_simulation() -> None:
    # two families with equal zones (a stand-in is one): the same runs, from one simulation, and
    # each caller gets a list of its own
    z = (zone(0.6, 3.0, 1.0, long=0.1),)
    one, other = SpotRisk("a", "a", z, "test"), SpotRisk("b", "b", z, "test", "a stand-in")
    args = (5 * 3600.0, 0.25)
    first = spot.simulate(*args, one, 20.0, 300.0, None, samples=64)
    assert first == uncached(*args, one, 20.0, 300.0, None)
    first.clear()
    again = spot.simulate(*args, other, 20.0, 300.0, None, samples=64)
    assert again == uncached(*args, one, 20.0, 300.0, None)
    assert spot.simulate(*args, one, 20.0, 300.0, 2 * 3600.0, samples=64) != again  # a cap
