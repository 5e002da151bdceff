"""zsim against the clemtibs fio runs on a 5 × 12 TB raidz2 (calibration/reference/).

GitHub ``clemtibs/zfs_benchmark_tools``, ``zfs_benchmark_logs/``, commit 0e21f713 (no licence:
derived figures only). Every job but metadata_stress (file creation) is predicted, on every
pool that ran it, twice: with the disk described at datasheet level (estimated rates: no
X300 Pro data sheet was found), and with the disk's outer-zone rate taken from the same
benchmark's ``zpool iostat`` (a device measurement below the file system). Every error is
printed beside the rule of thumb's. What is asserted:

* every predicted job gets a figure on every pool that ran it, and the disk-level read rate
  of ``large_read`` is compared too;
* the streaming and mixed jobs land within ±25 % (the tolerance of the Ars absolute
  figures) with either disk description, and a disk is named as the limit: the drives'
  persistent write cache (the profile's header) holds dirty data across flushes, so a
  sustained stream runs at the destage rate, not into a cache each txg's flush empties;
* the 4 KiB random writes into the 1 MiB records of sparse files land within ±25 % with
  either disk rate, bound by the CPU: each write decompresses its record's ARC copy
  (compressed ARC, outside the dbuf cache) on the writer's core before dirtying it;
* the SLOG's effect on the O_SYNC job lies on the measured side of 1, within a factor 1.5;
* zsim's median absolute error is lower than the rule of thumb's, both ways.

Points zsim misses are xfails that carry their error and the reason.
"""

from __future__ import annotations

import pytest

from zsim.validation.clemtibs import (
    PREDICTED_JOBS,
    clemtibs_rows,
    clemtibs_summary,
    clemtibs_table,
)
from zsim.validation.registry import reference_set

pytestmark = pytest.mark.slow

_NO_SLOG_FLUSH = (
    "8 KiB O_SYNC commits without a SLOG: the drives answer FLUSH CACHE from their persistent "
    "write cache (the profile's power_loss_protection, see its header), so a commit costs "
    "the lwb's write and a cheap flush; zsim gives 0.64 ms per commit at 2.8 commits per "
    "lwb where the real pool shows ~5.6 commits per lwb at 0.6 ms (p50) (+32 % before 2.x's "
    "txg space-map appends went to one pool-wide log space map, as spa_log_spacemap.c has "
    "them: fewer metadata writes beside the log blocks, +46 %). OpenZFS 2.2's "
    "zil_process_commit_list() (zl_parallel, see zsim/des/zil.py) batches as the real pool "
    "does, but then zsim's lwb takes 0.28 ms: ~0.3-0.5 ms per commit is not modelled. Not "
    "it: SATA's non-queued FLUSH CACHE waiting for the drive's queue to drain (libata's "
    "ata_std_qc_defer()), tried as a barrier in the drive's queue, moved nothing (91.0 MiB/s "
    "either way); the drive's own command time for a write and a flush is not published"
)
_SLOG_FLUSH = (
    "8 KiB O_SYNC commits on the consumer NVMe SLOG: zsim charges each flush 1 ms (the low "
    "end of the 'milliseconds' measured on drives without power-loss protection); this "
    "drive's commits took 0.84 ms in all, so its flush is nearer 0.6 ms"
)
KNOWN_MISSES = {
    ("datasheet", "slog_punisher-write"): _NO_SLOG_FLUSH,
    ("disk rate", "slog_punisher-write"): _NO_SLOG_FLUSH,
    ("datasheet", "slog_punisher-slog-write"): _SLOG_FLUSH,
    ("disk rate", "slog_punisher-slog-write"): _SLOG_FLUSH,
    ("datasheet", "large_read-disk-read"): "zsim reads cold at the estimated disk rate; the "
    "real disks read only what the ARC did not hold",
    ("disk rate", "large_read-read"): "39 % of the real read came from the ARC (fio laid the "
    "files out seconds before on a 31 GiB ARC); zsim's sequential reads start cold",
}
TOLERANCE = reference_set("clemtibs").tolerance["absolute"]


@pytest.fixture(scope="module")
def rows():
    result = clemtibs_rows(seed=1)  # stops at a 5 % CI or 60 simulated seconds
    print("\n" + clemtibs_table(result))
    return result


def test_every_run_of_every_predicted_job_has_a_figure(rows):
    jobs = {r.job for r in rows}
    assert jobs == set(PREDICTED_JOBS)
    assert len(rows) == 24  # 22 fio directions + 2 disk-level read rates
    assert all(r.zsim > 0 and r.zsim_disk_rate > 0 for r in rows)


@pytest.mark.parametrize("variant", ["datasheet", "disk rate"])
@pytest.mark.parametrize(
    "point",
    [
        "async_seq_write-write",
        "sync_seq_write-write",
        "async_rand_write-write",
        "sync_rand_write-write",
        "mixed_rw-read",
        "mixed_rw-write",
        "large_read-read",
        "large_read-disk-read",
        "slog_punisher-write",
        "slog_punisher-slog-write",
    ],
)
def test_point_within_tolerance(rows, variant, point):
    chosen = [r for r in rows if r.id == point]
    assert chosen
    errors = [r.zsim_error if variant == "datasheet" else r.zsim_disk_rate_error for r in chosen]
    worst = max(errors, key=abs)
    if abs(worst) > TOLERANCE and (variant, point) in KNOWN_MISSES:
        pytest.xfail(f"{worst:+.0%}: {KNOWN_MISSES[(variant, point)]}")
    assert abs(worst) <= TOLERANCE, (variant, point, [f"{e:+.0%}" for e in errors])


def test_streaming_writes_are_disk_bound(rows):
    for r in rows:
        if r.job in ("async_seq_write", "sync_seq_write"):
            assert r.limit.startswith("disk:") and r.limit_disk_rate.startswith("disk:"), r


def test_small_writes_into_sparse_records_are_cpu_bound(rows):
    for r in rows:
        if r.job in ("async_rand_write", "sync_rand_write"):
            assert r.limit == "cpu" and r.limit_disk_rate == "cpu", r


def test_a_slog_changes_the_o_sync_job_as_measured_and_zil_is_the_limit(rows):
    """The real pool gained ~10 % from its consumer NVMe SLOG (its disks answer flushes from
    a persistent cache, so the SLOG saves little). zsim's ratio must lie on the same side of
    1 and within a factor 1.5 (the tolerance of the Ars ratios); the SLOG run is limited by
    the ZIL's commit chain."""
    sync = {(r.id, r.pool): r for r in rows if r.job == "slog_punisher"}
    pairs = [
        (
            sync[("slog_punisher-slog-write", f"tank_raidz2_{sp}_slog")],
            sync[("slog_punisher-write", f"tank_raidz2_{sp}_noslog")],
        )
        for sp in ("nospecial", "special")
    ]
    assert all(slog.limit == "zil" for slog, _ in pairs)
    for slog, noslog in pairs:
        measured, predicted = slog.measured / noslog.measured, slog.zsim / noslog.zsim
        print(f"\nSLOG ÷ no SLOG ({slog.pool}): measured {measured:.2f}, zsim {predicted:.2f}")
        same_side = (predicted - 1) * (measured - 1) > 0
        if not (same_side and 1 / 1.5 <= predicted / measured <= 1.5):
            pytest.xfail(
                f"zsim {predicted:.2f} against {measured:.2f}: the SLOG's flush is charged "
                f"1 ms (its known miss) while the data disks' commits lack part of their cost "
                f"(the no-SLOG known miss)"
            )


def test_zsim_beats_the_rule_of_thumb(rows):
    s = clemtibs_summary(rows)
    assert s["zsim_median_abs_error"] < s["baseline_median_abs_error"], s
    assert s["zsim_disk_rate_median_abs_error"] < s["baseline_median_abs_error"], s
