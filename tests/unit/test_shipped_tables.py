"""The measured tables shipped with zsim (zsim.shipped_tables, tools/ship_tables.py): current,
and the same numbers a measurement gives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import zsim.analytic.engine  # (registers the kinds the analytic engine measures)
import zsim.resilver.scan_disk  # noqa: F401  (registers the resilver's kind)
from zsim import shipped_tables, table_cache
from zsim.errors import ZsimError
from zsim.shipped_tables import (
    SHIPPED_DIR,
    SHIPPED_KINDS,
    bundle_path,
    shipped_entry,
    write_bundle,
)

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "run `python tools/ship_tables.py` (~3 min) and commit zsim/measured_tables/"


def test_every_bundle_is_of_the_code_it_serves():
    kinds = table_cache.registered_kinds()
    stale = []
    for path in sorted(SHIPPED_DIR.glob("*.zip")):
        m = re.fullmatch(r"([a-z]+)-([0-9a-f]{16})\.zip", path.name)
        assert m, f"{path.name}: not a bundle's name"
        kind, revision = m.groups()
        assert kind in kinds, f"{path.name}: no such kind"
        if revision != table_cache.source_revision(kinds[kind]):
            stale.append(path.name)
    missing = [
        k
        for k in SHIPPED_KINDS
        if not bundle_path(k, table_cache.source_revision(kinds[k])).exists()
    ]
    assert not stale and not missing, (
        f"the model's code changed since the shipped tables were measured (stale: {stale}, "
        f"missing: {missing}): {REGENERATE}"
    )


_RUN = """
import json, sys
import zsim
from zsim.app.design import Design
out = {}
for name in Design().workloads:
    r = zsim.simulate(Design().scenario(name), engine="analytic")
    out[name] = [r.read.bytes_per_s, r.write.bytes_per_s, r.read.latency_mean,
                 r.write.latency_mean, r.write.latency_p99, r.limit]
print(json.dumps(out))
"""


_SWEEP = """
import zsim
zsim.sweep(24, "seagate-ironwolf-12tb", workers=1, progress=False)
"""


def _run(tmp: Path, shipped: bool, script: str = _RUN) -> str:
    env = {
        **os.environ,
        "ZSIM_CACHE_DIR": str(tmp),
        "ZSIM_SHIPPED_TABLES": "on" if shipped else "off",
    }
    env.pop("ZSIM_CACHE_MAX_MB", None)  # 0 would write nothing: "nothing measured" vacuous
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
        timeout=600, cwd=ROOT,
    )  # fmt: skip
    return done.stdout


@pytest.mark.slow
def test_shipped_entries_are_what_a_measurement_gives(tmp_path):
    """The app's default design, every workload (each kind the sweep uses), answered from
    the bundles alone — nothing measured, the cache folder stays empty — and measured afresh
    with them off: the same figures (rates, mean and p99 latencies, limit) to the last bit."""
    served = tmp_path / "served"
    measured = tmp_path / "measured"
    from_bundles = json.loads(_run(served, shipped=True))
    assert not list(served.glob("*.json")), "something was measured: a bundle lacks it"
    assert json.loads(_run(measured, shipped=False)) == from_bundles
    kinds = {p.name.split("-")[0] for p in measured.glob("*.json")}
    assert kinds >= set(SHIPPED_KINDS)


def test_a_bundle_is_written_byte_for_byte_the_same_and_read_back(tmp_path, monkeypatch):
    entries = {"b" * 24: {"rate": 1.5, "times": [0.1, 0.2]}, "a" * 24: [1, 2, 3]}
    first, second = tmp_path / "one.zip", tmp_path / "two.zip"
    write_bundle(first, entries)
    write_bundle(second, dict(reversed(entries.items())))
    assert first.read_bytes() == second.read_bytes()
    monkeypatch.setattr(shipped_tables, "SHIPPED_DIR", tmp_path)
    write_bundle(bundle_path("point", "0" * 16), entries)
    shipped_tables.load_bundle.cache_clear()
    try:
        assert shipped_entry("point", "0" * 16, "a" * 24) == [1, 2, 3]
        assert shipped_entry("point", "1" * 16, "a" * 24) is None  # another revision
        monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "off")
        assert shipped_entry("point", "0" * 16, "a" * 24) is None
    finally:
        shipped_tables.load_bundle.cache_clear()


def test_a_damaged_bundle_is_measured_around(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped_tables, "SHIPPED_DIR", tmp_path)
    bundle_path("point", "0" * 16).write_bytes(b"not a zip file")
    shipped_tables.load_bundle.cache_clear()
    try:
        assert shipped_entry("point", "0" * 16, "a" * 24) is None
    finally:
        shipped_tables.load_bundle.cache_clear()


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_a_bundle_holds_entries_under_the_cache_names(kind):
    revision = table_cache.source_revision(table_cache.registered_kinds()[kind])
    bundle = shipped_tables.load_bundle(kind, revision)
    assert bundle is not None
    names = bundle.namelist()
    assert names and all(re.fullmatch(r"[0-9a-f]{24}\.json", n) for n in names)


@pytest.mark.slow
def test_the_24_disk_preset_sweep_measures_nothing(tmp_path):
    """What the bundles are for: a change to what the sweep asks for (its layouts, presets,
    keys) that leaves them unused fails here, not silently in a planner's wait."""
    _run(tmp_path, shipped=True, script=_SWEEP)
    measured = sorted(p.name.split("-")[0] for p in tmp_path.glob("*.json"))
    assert measured == [], f"measured {len(measured)} entries ({set(measured)}): {REGENERATE}"


def test_a_damaged_entry_in_a_sound_bundle_is_measured_around(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped_tables, "SHIPPED_DIR", tmp_path)
    path = bundle_path("point", "0" * 16)
    write_bundle(path, {"a" * 24: {"times": [i * 0.123456789 for i in range(400)]}})
    raw = bytearray(path.read_bytes())
    start = raw.index(b"aaaa.json") + len(b"aaaa.json")  # the local header's name, then data
    for i in range(start + 4, start + 24):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))
    shipped_tables.load_bundle.cache_clear()
    try:
        assert shipped_entry("point", "0" * 16, "a" * 24) is None
    finally:
        shipped_tables.load_bundle.cache_clear()


def test_a_bad_setting_names_itself_and_the_fix(monkeypatch):
    monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "maybe")
    with pytest.raises(ZsimError, match="ZSIM_SHIPPED_TABLES must be 'on' or 'off'"):
        shipped_entry("point", "0" * 16, "a" * 24)


def test_the_cache_folder_comes_first_then_the_bundle_then_a_measurement(tmp_path, monkeypatch):
    """load_or_measure's order, and what a rejected shipped entry leads to."""
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    monkeypatch.setattr(shipped_tables, "SHIPPED_DIR", bundles)
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(table_cache._KINDS, "testkind", ("units",))
    revision, digest = table_cache.entry_name("testkind", ["k"])
    write_bundle(bundle_path("testkind", revision), {digest: {"v": "shipped"}})
    shipped_tables.load_bundle.cache_clear()
    measured = []

    def measure() -> str:
        measured.append(1)
        return "measured"

    def get(decode=lambda d: d["v"]) -> str:
        return table_cache.load_or_measure("testkind", ["k"], measure, decode, lambda v: {"v": v})

    try:
        assert get() == "shipped" and not measured  # no cache entry: the bundle's
        assert not list((tmp_path / "cache").glob("*"))  # not copied into the folder
        table_cache.store_entry(table_cache.entry_path("testkind", ["k"]), {"v": "cached"})
        assert get() == "cached"  # the folder's entry wins
        monkeypatch.setenv("ZSIM_CACHE_DIR", "off")
        assert get() == "shipped"  # no folder: the bundle still serves

        def fussy(d: dict[str, str]) -> str:
            if d["v"] == "shipped":
                raise ValueError("of another shape")
            return d["v"]

        assert get(fussy) == "measured" and measured == [1]  # a rejected one is measured
    finally:
        shipped_tables.load_bundle.cache_clear()
