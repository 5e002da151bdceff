"""The HDD service-time model: seek fit, geometry, rotation, caching, queueing, theory."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy.integrate import quad

from zsim.errors import ZsimError
from zsim.hardware.catalog import list_profiles, load_profile, parse_profile
from zsim.hardware.hdd import (
    HddState,
    choose_next,
    expected_random_service,
    fit_seek_curve,
    hdd_params,
    lba_seek_mean,
    media_rate,
    radial_position,
    rotational_wait,
    seek_mean,
    seek_time,
    service,
    track_bytes,
)

MiB = 1 << 20


@pytest.fixture(scope="module")
def ironwolf():
    return hdd_params(load_profile("seagate-ironwolf-12tb"))


def _random_offsets(p, n, seed, size=4096):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, p.capacity // size, n) * size).tolist()


# ---------------------------------------------------------------- seek curve


SEEK_TRIPLES = [
    (0.5e-3, 8.5e-3, 17e-3),  # IronWolf 12TB
    (0.5e-3, 7.4e-3, 15e-3),  # Exos X16/X20, MG09
    (0.3e-3, 7.4e-3, 15e-3),  # Ultrastar HC550
    (0.85e-3, 8.5e-3, 17e-3),  # fallbacks: 0.1x / 1x / 2x average
    (0.34e-3, 3.4e-3, 6.8e-3),  # 15k rpm fallbacks
    (1.5e-3, 9.5e-3, 18.5e-3),  # write curve of the IronWolf (read + 1 ms settle)
]


@pytest.mark.parametrize(("lo", "avg", "hi"), SEEK_TRIPLES)
def test_seek_fit_reproduces_min_mean_max(lo, avg, hi):
    ncyl = 500_000
    curve = fit_seek_curve(lo, avg, hi, ncyl)
    assert seek_time(curve, 1 / ncyl) == pytest.approx(lo, rel=0.01)
    assert seek_time(curve, 1.0) == pytest.approx(hi, rel=0.01)
    # the mean over the distance density of two uniform positions, by numeric integration
    mean, _ = quad(lambda x: seek_time(curve, x) * 2 * (1 - x), 0, 1, points=[curve.x0], limit=200)
    assert mean == pytest.approx(avg, rel=0.01)
    assert seek_mean(curve) == pytest.approx(mean, rel=1e-6)


@pytest.mark.parametrize(("lo", "avg", "hi"), SEEK_TRIPLES)
def test_seek_curve_is_monotone_continuous_and_zero_at_zero(lo, avg, hi):
    curve = fit_seek_curve(lo, avg, hi, 500_000)
    assert seek_time(curve, 0.0) == 0.0
    xs = np.concatenate([np.geomspace(1 / 500_000, 1e-2, 2000), np.linspace(1e-2, 1, 5000)])
    ts = np.array([seek_time(curve, x) for x in xs])
    assert np.all(np.diff(ts) >= 0)
    assert 0 < curve.x0 < 1
    below, above = seek_time(curve, curve.x0 * (1 - 1e-9)), seek_time(curve, curve.x0)
    assert below == pytest.approx(above, rel=1e-6)
    assert curve.b / (2 * math.sqrt(curve.x0)) == pytest.approx(curve.e, rel=1e-9)


def test_the_seek_fit_is_kept_on_disk_and_read_back_exactly(tmp_path, monkeypatch):
    from zsim.hardware.hdd import seek

    figures = (0.8e-3, 8.5e-3, 17.0e-3)
    monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "off")  # measured here, not served
    monkeypatch.setenv("ZSIM_CACHE_DIR", "off")
    seek._joint.cache_clear()
    searched = fit_seek_curve(*figures)
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    seek._joint.cache_clear()
    assert fit_seek_curve(*figures) == searched  # measured, then stored
    (entry,) = tmp_path.glob("seek-*.json")
    seek._joint.cache_clear()
    assert fit_seek_curve(*figures) == searched  # read back: the same float
    entry.write_text('"damaged"')
    seek._joint.cache_clear()
    assert fit_seek_curve(*figures) == searched  # searched again
    seek._joint.cache_clear()


def test_seek_fit_refuses_an_average_no_concave_curve_reaches():
    with pytest.raises(ZsimError, match="does not fit"):
        fit_seek_curve(0.5e-3, 12e-3, 17e-3)  # above min + 8/15 (max − min) ≈ 9.3 ms
    with pytest.raises(ZsimError, match="does not fit"):
        fit_seek_curve(0.5e-3, 5e-3, 17e-3)  # below the straight line's 6.0 ms
    with pytest.raises(ZsimError, match="must grow"):
        fit_seek_curve(2e-3, 1e-3, 17e-3)


def test_write_curve_adds_the_write_settle(ironwolf):
    gap = seek_mean(ironwolf.seek_write) - seek_mean(ironwolf.seek_read)
    assert gap == pytest.approx(1e-3, rel=1e-6)
    assert seek_time(ironwolf.seek_write, 0.3) - seek_time(ironwolf.seek_read, 0.3) == (
        pytest.approx(1e-3, rel=1e-6)
    )


# ---------------------------------------------------------------- geometry and rotation


def test_media_rate_runs_from_outer_to_inner(ironwolf):
    assert media_rate(ironwolf, 0.0) == pytest.approx(210e6)
    assert media_rate(ironwolf, 1.0) == pytest.approx(100e6)
    fs = np.linspace(0, 1, 101)
    rates = [media_rate(ironwolf, f) for f in fs]
    assert all(a > b for a, b in itertools.pairwise(rates))
    assert track_bytes(ironwolf, 0.0) == pytest.approx(210e6 * 60 / 7200)


def test_bytes_spread_over_the_area(ironwolf):
    assert radial_position(ironwolf, 0.0) == 0.0
    assert radial_position(ironwolf, 1.0) == pytest.approx(1.0)
    # the middle radius holds the bytes outside it: f = (Ro² − r²)/(Ro² − Ri²)
    rho = 100 / 210
    r_mid = (1 + rho) / 2
    f_mid = (1 - r_mid**2) / (1 - rho**2)
    assert radial_position(ironwolf, f_mid) == pytest.approx(0.5, rel=1e-12)
    assert media_rate(ironwolf, f_mid) == pytest.approx(210e6 * r_mid, rel=1e-12)
    # more than half the bytes sit on the outer half of the stroke
    assert f_mid > 0.5


def test_rotational_wait_follows_the_platter(ironwolf):
    p = ironwolf
    f = 0.37
    offset = int(f * p.capacity) // 4096 * 4096
    wait = rotational_wait(p, 0.0, offset / p.capacity, offset)
    assert 0 <= wait < p.period
    # after the wait the sector is under the head: waiting again from then costs nothing
    assert rotational_wait(p, wait, offset / p.capacity, offset) == pytest.approx(0.0, abs=1e-9)
    # arriving dt later (dt < wait) shortens the wait by dt; one turn later changes nothing
    assert rotational_wait(p, wait / 2, offset / p.capacity, offset) == pytest.approx(wait / 2)
    later = rotational_wait(p, p.period * 3, offset / p.capacity, offset)
    assert later == pytest.approx(wait, abs=1e-9)
    # the next sector on the track comes (bytes / track bytes) of a turn later
    step = 64 * 1024
    nxt = rotational_wait(p, 0.0, (offset + step) / p.capacity, offset + step)
    gap = (nxt - wait) % p.period
    assert gap == pytest.approx(step / track_bytes(p, f) * p.period, rel=1e-3)


# ---------------------------------------------------------------- theory and Monte Carlo


def test_expected_random_service_of_a_7200_rpm_drive(ironwolf):
    p = ironwolf
    mean_rate = (210e6 + 100e6) / 2
    by_hand = 8.5e-3 + 0.5 * 60 / 7200 + 1e-4 + 4096 / mean_rate
    assert by_hand == pytest.approx(12.79e-3, rel=1e-3)
    assert expected_random_service(p, 4096, False) == pytest.approx(by_hand, rel=0.02)
    # writes: 1 ms more settle, and a partial physical sector costs a revolution
    assert expected_random_service(p, 4096, True) == pytest.approx(by_hand + 1e-3, rel=0.02)
    assert expected_random_service(p, 512, True) - expected_random_service(
        p, 512, False
    ) == pytest.approx(1e-3 + p.period, rel=1e-6)


def test_uniform_lbas_seek_a_little_shorter_than_uniform_cylinders(ironwolf):
    # bytes crowd the outer zones, so random LBAs are closer together than random cylinders
    lba = lba_seek_mean(ironwolf, False)
    assert 0.97 * 8.5e-3 < lba < 8.5e-3


def test_random_reads_average_the_expected_service(ironwolf):
    p, st, now = ironwolf, HddState(), 0.0
    totals = dict.fromkeys(("overhead", "seek", "rotation", "transfer", "wait", "destage"), 0.0)
    times = []
    for offset in _random_offsets(p, 20_000, seed=7):
        dt, parts = service(p, st, now, offset, 4096, False)
        assert sum(parts.values()) == pytest.approx(dt, rel=1e-9, abs=1e-12)
        assert parts["seek"] > 0  # never a read-ahead hit
        for key, value in parts.items():
            totals[key] += value
        times.append(dt)
        now += dt
    mean = float(np.mean(times))
    assert mean == pytest.approx(expected_random_service(p, 4096, False), rel=0.03)
    assert mean == pytest.approx(
        expected_random_service(p, 4096, False, lba_weighted=True), rel=0.01
    )
    assert totals["rotation"] / len(times) == pytest.approx(p.period / 2, rel=0.02)
    assert totals["seek"] / len(times) == pytest.approx(lba_seek_mean(p, False), rel=0.02)


def test_service_uses_the_public_rotation_and_seek(ironwolf):
    p, st = ironwolf, HddState()
    offset = int(0.61 * p.capacity) // 4096 * 4096
    dt, parts = service(p, st, 1.0, offset, 4096, False)
    t0 = 1.0 + p.overhead
    seek = seek_time(p.seek_read, radial_position(p, offset / p.capacity))
    assert parts["seek"] == pytest.approx(seek)
    rot = rotational_wait(p, t0 + seek, offset / p.capacity, offset)
    assert parts["rotation"] == pytest.approx(rot, abs=1e-9)
    assert parts["transfer"] == pytest.approx(4096 / media_rate(p, offset / p.capacity))
    assert dt == pytest.approx(p.overhead + seek + rot + parts["transfer"])


# ---------------------------------------------------------------- queueing


def _closed_loop(p, depth, policy, n=3000, seed=3):
    rng = np.random.default_rng(seed)
    blocks = p.capacity // 4096

    def new():
        return int(rng.integers(0, blocks)) * 4096, 4096, False

    pending = [new() for _ in range(depth)]
    st, now, total = HddState(), 0.0, 0.0
    for _ in range(n):
        i = choose_next(p, st, now, pending) if policy == "satf" else 0
        offset, nbytes, is_write = pending.pop(i)
        dt, _ = service(p, st, now, offset, nbytes, is_write)
        now += dt
        total += dt
        pending.append(new())
    return total / n


def test_satf_shortens_service_with_queue_depth(ironwolf):
    fifo = _closed_loop(ironwolf, 32, "fifo")
    gains = {d: 1 - _closed_loop(ironwolf, d, "satf") / fifo for d in (8, 16, 32)}
    # measured: 42 %, 52 %, 61 % shorter (78 → 135, 165, 200 IOPS). 7200 rpm drives are
    # reported at roughly 2-2.5x their QD1 random-read IOPS at QD32; the minimum of the
    # positioning time over n candidates falls roughly like its lower tail, so the gain grows
    # with depth but slowly.
    assert gains[8] > 0.30
    assert gains[32] > 0.50
    assert gains[8] < gains[16] < gains[32] < 0.75


def test_choose_next_with_one_request_and_prefers_cache(ironwolf):
    p, st = ironwolf, HddState()
    assert choose_next(p, st, 0.0, [(123 * 4096, 4096, False)]) == 0
    service(p, st, 0.0, 0, 4096, False)  # the head reads ahead from 4 KiB on
    pending = [(p.capacity // 2, 4096, False), (8192, 4096, False), (p.capacity // 3, 4096, True)]
    # the read-ahead hit and the cached write cost no positioning; the hit is older
    assert choose_next(p, st, st.free_at, pending) == 1


# ---------------------------------------------------------------- read-ahead, sequential


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.95])
@pytest.mark.parametrize("size", [MiB, 128 * 1024])
def test_sequential_reads_stream_at_the_media_rate(ironwolf, fraction, size):
    p, st, now = ironwolf, HddState(), 0.0
    start = int(fraction * p.capacity) // 4096 * 4096
    offset = start
    for i in range(100):
        dt, parts = service(p, st, now, offset, size, False)
        now += dt
        offset += size
        if i == 0:
            first_done = now
        else:
            assert parts["seek"] == 0.0 and parts["rotation"] == 0.0
    rate = (offset - start - size) / (now - first_done)
    assert rate >= 0.95 * media_rate(p, start / p.capacity)
    assert rate <= 1.001 * media_rate(p, start / p.capacity)


def test_a_read_ahead_hit_costs_overhead_and_interface_only(ironwolf):
    p, st = ironwolf, HddState()
    dt, _ = service(p, st, 0.0, 0, 4096, False)
    later = dt + 0.05  # the 2 MiB read-ahead is long done
    hit, parts = service(p, st, later, 64 * 1024, 4096, False)
    assert hit == pytest.approx(p.overhead + 4096 / p.buffer_rate)
    assert parts["seek"] == parts["rotation"] == 0.0
    # past the window the drive goes back to the media
    miss, parts = service(p, st, later + 1.0, 64 * MiB, 4096, False)
    assert parts["seek"] > 0 and miss > 1e-3


def test_read_ahead_runs_while_the_host_thinks(ironwolf):
    p = ironwolf
    rate = media_rate(p, 0.0)
    # 1 ms between 1 MiB reads: the drive keeps streaming, the host sees the media rate
    st, now, offset = HddState(), 0.0, 0
    for _ in range(50):
        dt, _ = service(p, st, now, offset, MiB, False)
        now += dt + 1e-3
        offset += MiB
    assert 0.95 * rate <= 50 * MiB / now <= rate
    # 20 ms between reads (the 2 MiB read-ahead fills in 10 ms): every read after the first
    # is a whole hit, served from the buffer at the interface rate
    st, now, offset = HddState(), 0.0, 0
    for i in range(20):
        dt, _ = service(p, st, now, offset, MiB, False)
        now += dt + 20e-3
        offset += MiB
        if i:
            assert dt == pytest.approx(p.overhead + MiB / p.buffer_rate)


# ---------------------------------------------------------------- writes


def test_write_cache_reports_fast_but_sustains_the_destage_rate(ironwolf):
    p = dataclasses.replace(ironwolf, cache_bytes=4 * MiB)
    st, now, lat = HddState(), 0.0, []
    for offset in _random_offsets(p, 6000, seed=5):
        dt, _ = service(p, st, now, offset, 4096, True)
        lat.append(dt)
        now += dt
        assert st.dirty_bytes <= p.cache_bytes
    lat = np.array(lat)
    report = p.overhead + 4096 / p.buffer_rate
    assert lat[:500].max() == pytest.approx(report)  # 500 × 4 KiB fit in the 4 MiB cache
    sustained = 3000 / lat[3000:].sum()
    uncached = 1 / expected_random_service(p, 4096, True)
    # measured 166 vs 72 IOPS: the drive sorts 32 dirty extents by access time, like SATF
    # at queue depth 32 (2.5x for reads above); never better than that, never worse than FIFO
    assert 1.5 * uncached < sustained < 3.0 * uncached
    assert sustained < 0.02 / report


def test_a_full_cache_frees_only_the_room_a_write_needs(ironwolf):
    """A sequential stream fills the cache as one extent. A write that finds it full waits
    while the drive destages about its own size (a track at least), not the whole 64 MiB
    extent (which held the host for ~0.3 s per write, seconds with a 512 MB cache); the
    stream then runs at the media rate, and an arrival after idle time waits for the track
    under way at most."""
    p, st, now = dataclasses.replace(ironwolf, cache_bytes=64 * MiB), HddState(), 0.0
    n = 1 * MiB
    waits = []
    for i in range(200):
        dt, _ = service(p, st, now, i * n, n, True)
        waits.append(dt)
        now += dt
        assert st.dirty_bytes <= p.cache_bytes
    media = n / media_rate(p, 0.0)
    assert max(waits[100:]) < 3 * media  # was the whole extent: 64 × media
    rate = 100 * n / sum(waits[100:])
    assert rate == pytest.approx(media_rate(p, 0.0), rel=0.05)
    before = st.dirty_bytes
    dt, _ = service(p, st, now + 0.05, 200 * n, 4096, True)  # 50 ms idle
    assert dt < p.period + 1e-3  # the arrival waits for the track under way at most
    assert before - st.dirty_bytes == pytest.approx(0.05 * media_rate(p, 0.0), rel=0.15)


def test_idle_time_pays_the_destage_debt(ironwolf):
    p, st = ironwolf, HddState()
    now = 0.0
    for offset in _random_offsets(p, 50, seed=11):
        dt, _ = service(p, st, now, offset, 4096, True)
        now += dt
    # 50 reports take 5 ms: the head destaged in the gaps, but most is still dirty
    assert 40 * 4096 < st.dirty_bytes < 50 * 4096
    service(p, st, now + 2.0, 0, 4096, False)  # 2 s idle: 50 random writes take ~0.3 s
    assert st.dirty_bytes == 0


def test_flush_writes_everything_to_the_media(ironwolf):
    p, st, now = ironwolf, HddState(), 0.0
    for offset in _random_offsets(p, 100, seed=13):
        dt, _ = service(p, st, now, offset, 4096, True)
        now += dt
    dt, parts = service(p, st, now, 0, 0, True, needs_flush=True)
    assert st.dirty_bytes == 0 and not st.dirty
    # 100 random writes sorted 32 at a time: between SATF-32 and FIFO speed
    per_write = (dt - p.overhead) / 100
    assert 0.25 * expected_random_service(p, 4096, True) < per_write
    assert per_write < expected_random_service(p, 4096, True)
    assert parts["destage"] == pytest.approx(dt - p.overhead)


def test_uncached_sequential_writes_queued_stream_but_qd1_loses_a_turn(ironwolf):
    p = dataclasses.replace(ironwolf, write_cache=False)
    rate = media_rate(p, 0.5)
    start = int(0.5 * p.capacity) // 4096 * 4096
    for think, expect in ((0.0, rate), (1e-4, MiB / (MiB / rate + p.period))):
        st, now, offset = HddState(), 0.0, start
        for i in range(60):
            dt, _ = service(p, st, now, offset, MiB, True)
            now += dt + think
            offset += MiB
            if i == 0:
                first = now
        achieved = 59 * MiB / (now - first)
        assert achieved == pytest.approx(expect, rel=0.05)


def test_partial_physical_sector_writes_cost_a_revolution(ironwolf):
    p = dataclasses.replace(ironwolf, write_cache=False)
    offset = 1000 * 4096
    full, _ = service(p, HddState(), 0.0, offset, 4096, True)
    part, _ = service(p, HddState(), 0.0, offset, 512, True)
    assert part - full == pytest.approx(p.period - 3584 / media_rate(p, offset / p.capacity))


def test_a_call_before_the_previous_completion_waits(ironwolf):
    p, st = ironwolf, HddState()
    dt, _ = service(p, st, 0.0, 10 * MiB, 4096, False)
    dt2, parts = service(p, st, dt / 2, p.capacity // 2, 4096, False)
    assert dt2 > dt / 2 + p.overhead and parts["wait"] >= dt / 2 - 1e-12


# ---------------------------------------------------------------- parameters


def test_fallbacks_for_a_bare_inline_profile():
    prof = parse_profile(
        {"kind": "hdd", "capacity": "4TB", "rpm": 7200, "max_sustained": "180MB/s"}
    )
    p = hdd_params(prof)
    assert p.inner_rate == pytest.approx(90e6)
    assert seek_mean(p.seek_read) == pytest.approx(8.5e-3)
    assert seek_mean(p.seek_write) == pytest.approx(9.5e-3)
    assert seek_time(p.seek_read, 1 / p.seek_read.cylinders) == pytest.approx(0.85e-3)
    assert seek_time(p.seek_read, 1.0) == pytest.approx(17e-3)
    assert p.cache_bytes == 64 * MiB and p.readahead == 2 * MiB
    assert p.buffer_rate == pytest.approx(600e6)
    assert len(p.notes) == 5


def test_single_avg_seek_applies_to_reads_and_writes_and_overrides_win():
    prof = parse_profile(
        {
            "kind": "hdd",
            "capacity": "2TB",
            "rpm": 5400,
            "max_sustained": "150MB/s",
            "avg_seek": "11ms",
            "link_rate": "3Gb/s",
            "cache": "1MiB",
        }
    )
    p = hdd_params(prof, overhead=0.3e-3, write_cache=False)
    assert seek_mean(p.seek_read) == pytest.approx(11e-3)
    assert seek_mean(p.seek_write) == pytest.approx(11e-3)
    assert p.overhead == 0.3e-3 and not p.write_cache
    assert p.buffer_rate == pytest.approx(300e6)
    assert p.readahead == MiB  # capped at the cache
    assert p.period == pytest.approx(60 / 5400)


def test_hdd_params_refuses_wrong_input():
    with pytest.raises(ZsimError, match="not an hdd"):
        hdd_params(load_profile("samsung-pm9a3-3.84tb"))
    with pytest.raises(ZsimError, match="unknown HDD parameters"):
        hdd_params(load_profile("seagate-ironwolf-12tb"), rmp=7200)


@pytest.mark.parametrize("name", list_profiles("hdd"))
def test_every_catalog_drive_gets_a_model(name):
    prof = load_profile(name)
    p = hdd_params(prof)
    assert seek_mean(p.seek_read) == pytest.approx(prof.avg_seek_read or prof.avg_seek or 8.5e-3)
    qd1 = 1 / expected_random_service(p, 4096, False)
    assert 60 < qd1 < 110  # 7200 rpm class random-read IOPS at QD1


def test_a_kept_placement_gives_the_same_access_as_a_fresh_one(ironwolf):
    """The drive's state keeps each waiting offset's placement (cylinder, rotational phase)
    instead of computing it at every decision: the seek, rotation and start must be the
    same, to the bit, as with nothing kept, for any head position and time."""
    from zsim.hardware.hdd import access

    rng = np.random.default_rng(7)
    kept = HddState()
    for _ in range(3000):
        offset = int(rng.integers(0, ironwolf.capacity // 4096)) * 4096
        radial, now = float(rng.random()), float(rng.random() * 100)
        is_write = bool(rng.integers(0, 2))
        answers = []
        for st in (HddState(), kept, kept):  # nothing kept; then kept (placed, then reused)
            st.radial = radial
            head = access._Head(ironwolf, st, now, now + ironwolf.overhead)
            answers.append(access._access(ironwolf, st, head, offset, is_write))
        assert answers[0] == answers[1] == answers[2]
    assert 0 < len(kept.placed) <= access.PLACED_MAX
