"""The on-disk cache of measured tables: naming by code revision, pruning, the size bound."""

from __future__ import annotations

import os

import pytest

from zsim import table_cache
from zsim.analytic import devices
from zsim.errors import ZsimError
from zsim.hardware.catalog import load_profile
from zsim.table_cache import (
    STALE_AFTER,
    entry_path,
    load_entry,
    prune_cache,
    register_kind,
    source_revision,
    store_entry,
)

register_kind("testkind", ("units",))
NOW = 2_000_000_000.0


def _file(folder, name: str, size: int, age: float):
    path = folder / name
    path.write_bytes(b"x" * size)
    os.utime(path, (NOW - age, NOW - age))
    return path


def test_an_entry_is_named_by_its_kind_and_code_revision(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    path = entry_path("testkind", ("a", 1))
    assert path.parent == tmp_path
    assert path.name.startswith(f"testkind-{source_revision(('units',))}-")
    assert entry_path("testkind", ("a", 2)) != path
    assert load_entry(path) is None
    store_entry(path, {"rate": 1.5})
    assert load_entry(path) == {"rate": 1.5}
    path.write_text("{damaged")
    assert load_entry(path) is None  # measured again, not trusted


def test_a_kind_that_cannot_name_a_file_is_refused():
    with pytest.raises(ValueError, match="lower-case letters"):
        register_kind("Bad-Kind", ("units",))


def test_prune_removes_old_entries_of_other_revisions_and_namings_only(tmp_path):
    rev = source_revision(("units",))
    day = STALE_AFTER
    current_old = _file(tmp_path, f"testkind-{rev}-{'a' * 24}.json", 100, 10 * day)
    other_old = _file(tmp_path, f"testkind-{'0' * 16}-{'b' * 24}.json", 100, 2 * day)
    other_recent = _file(tmp_path, f"testkind-{'0' * 16}-{'c' * 24}.json", 100, 0.5 * day)
    legacy_old = _file(tmp_path, f"{'d' * 24}.json", 100, 2 * day)
    (tmp_path / "streams").mkdir()
    legacy_sub = _file(tmp_path / "streams", f"{'e' * 24}.json", 100, 2 * day)
    unknown_kind = _file(tmp_path, f"otherkind-{'0' * 16}-{'f' * 24}.json", 100, 9 * day)
    report = prune_cache(tmp_path, max_bytes=10_000, now=NOW)
    assert report.files == 6 and report.bytes == 600
    assert report.removed_stale == 3 and report.removed_lru == 0
    assert not other_old.exists() and not legacy_old.exists() and not legacy_sub.exists()
    # the current revision, a revision another install used today, and a kind this
    # process does not know stay (within the bound)
    assert current_old.exists() and other_recent.exists() and unknown_kind.exists()


def test_prune_keeps_the_folder_within_its_bound_least_recently_used_first(tmp_path):
    rev = source_revision(("units",))
    paths = [
        _file(tmp_path, f"testkind-{rev}-{i:024x}.json", 1000, age=100.0 * (10 - i))
        for i in range(10)
    ]
    report = prune_cache(tmp_path, max_bytes=5000, now=NOW)
    # down to three quarters of the bound: the 7 oldest go, the 3 newest stay
    assert report.removed_lru == 7 and report.removed_bytes == 7000
    assert [p.exists() for p in paths] == [False] * 7 + [True] * 3
    assert prune_cache(tmp_path, max_bytes=5000, now=NOW).removed_lru == 0


def test_a_read_counts_as_use(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    old = entry_path("testkind", ("old",))
    new = entry_path("testkind", ("new",))
    store_entry(old, [1] * 200)
    store_entry(new, [1] * 200)
    os.utime(old, (0, 0))
    os.utime(new, (1, 1))
    load_entry(old)  # now the most recently used
    size = old.stat().st_size
    prune_cache(tmp_path, max_bytes=int(1.5 * size))  # down to 1.125 entries
    assert old.exists() and not new.exists()


def test_storing_prunes_once_per_process_and_again_after_an_eighth_of_the_bound(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ZSIM_CACHE_MAX_MB", "8")  # a prune every 1 MiB stored
    monkeypatch.setattr(table_cache, "_STATE", {"stored": 0, "pruned": False})
    calls = []
    real = table_cache.prune_cache
    monkeypatch.setattr(table_cache, "prune_cache", lambda *a: calls.append(a) or real(*a))
    for i in range(30):  # ~6.2 MB in 200 kB entries
        store_entry(entry_path("testkind", (i,)), "y" * 200_000)
    # the first store, then once 1 MiB more is stored (6 entries of 200 kB): stores 1, 7,
    # 13, 19 and 25
    assert len(calls) == 5
    total = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert total <= 8 * 2**20


@pytest.mark.parametrize("value", ["lots", "-5", "nan", "inf", "1e400"])
def test_a_bad_size_bound_names_the_setting_and_the_fix(monkeypatch, value):
    monkeypatch.setenv("ZSIM_CACHE_MAX_MB", value)
    with pytest.raises(ZsimError, match="ZSIM_CACHE_MAX_MB must be a number of MiB"):
        table_cache.max_cache_bytes()


def test_prune_leaves_every_other_file_alone(tmp_path):
    """The folder may be shared (ZSIM_CACHE_DIR points anywhere): only cache entries go."""
    keep = [
        _file(tmp_path, "results.json", 5000, 100 * STALE_AFTER),
        _file(tmp_path, f"notes-{'0' * 24}.json", 5000, 100 * STALE_AFTER),
    ]
    (tmp_path / "sub").mkdir()
    keep.append(_file(tmp_path / "sub", f"{'a' * 24}.json", 5000, 100 * STALE_AFTER))
    old = _file(tmp_path, f"{'b' * 24}.json", 10, 2 * STALE_AFTER)
    report = prune_cache(tmp_path, max_bytes=1, now=NOW)
    assert report.files == 1 and not old.exists()
    assert all(p.exists() for p in keep)


def test_an_entry_serves_when_its_time_cannot_be_touched(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    path = entry_path("testkind", ("ro",))
    store_entry(path, {"rate": 2.0})

    def refuse(*_args, **_kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(os, "utime", refuse)
    assert load_entry(path) == {"rate": 2.0}


def test_a_zero_bound_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ZSIM_CACHE_MAX_MB", "0")
    store_entry(entry_path("testkind", ("zero",)), {"rate": 1.0})
    assert not list(tmp_path.iterdir())


def test_the_size_bound_reads_mib(monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_MAX_MB", "64")
    assert table_cache.max_cache_bytes() == 64 * 2**20
    monkeypatch.delenv("ZSIM_CACHE_MAX_MB")
    assert table_cache.max_cache_bytes() == table_cache.DEFAULT_MAX_BYTES


def test_device_tables_of_any_depth_share_their_measured_points(tmp_path, monkeypatch):
    """A table to k = 12 measures only the depths a table to k = 8 did not (its points are
    kept apart from the table), and gives the same rates at the shared depths."""
    monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "off")  # measured here, not served
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    measured = []
    real = devices._closed_loop
    monkeypatch.setattr(devices, "_closed_loop", lambda *a: measured.append(a[-1]) or real(*a))
    disk = load_profile("seagate-ironwolf-12tb")
    eight = devices.device_table(disk, 4096, False, False, 0.2, 0.3, 8)
    assert measured == [1, 2, 3, 4, 6, 8]
    twelve = devices.device_table(disk, 4096, False, False, 0.2, 0.3, 12)
    assert measured[6:] == [10, 12]
    assert twelve.rate[: len(eight.rate)] == eight.rate
    # another process: every point from the disk, nothing measured
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    assert devices.device_table(disk, 4096, False, False, 0.2, 0.3, 12) == twelve
    assert len(measured) == 8
