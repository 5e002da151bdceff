"""Scenario TOML: loading, defaults, round trips, overrides, and one-line errors for bad input."""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from tests.conftest import ROOT
from zsim.errors import ZsimError
from zsim.scenario import (
    KEYS,
    Hardware,
    Pool,
    Scenario,
    ScenarioError,
    Workload,
    apply_overrides,
    load_scenario,
    scenario_from_dict,
)

EXAMPLES = sorted((ROOT / "examples" / "scenarios").glob("*.toml"))
GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10

# DESIGN.md §4's inline disk table
INLINE_HDD = {
    "kind": "hdd",
    "capacity": "5TB",
    "rpm": 7200,
    "max_sustained": "180MB/s",
    "min_sustained": "90MB/s",
    "avg_seek": "8.5ms",
    "sector": 4096,
}


def base() -> dict:
    """A small valid scenario as tomllib would read it."""
    return {
        "hardware": {"disk": "seagate-ironwolf-12tb"},
        "pool": {"layout": "raidz2 8"},
        "workload": {"tool": "fio", "rw": "randwrite", "bs": "1M"},
    }


def with_(section: str, **keys: object) -> dict:
    data = base()
    data[section].update(keys)
    return data


def error_of(data: dict) -> str:
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, source="t.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("t.toml: ")
    return message


# ---------------------------------------------------------------- good input


def test_there_are_the_four_examples():
    names = {p.name for p in EXAMPLES}
    assert {
        "ars-raidz2-8-1m-randwrite.toml",
        "ars-mirrors-4k-randread.toml",
        "nvme-raidz1-1m-write.toml",
        "dd-stripe-4k.toml",
    } <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_loads_and_round_trips(path):
    sc = load_scenario(path)
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc
    json.dumps(sc.to_dict())  # JSON-able
    sc.layout_tree()


def test_ars_example_values_in_base_units():
    sc = load_scenario(ROOT / "examples" / "scenarios" / "ars-raidz2-8-1m-randwrite.toml")
    assert sc.hardware.disk.name == "seagate-ironwolf-12tb"
    assert sc.hardware.disk_spec == "seagate-ironwolf-12tb"
    assert sc.hardware.hba is not None and sc.hardware.hba.kind == "hba"
    assert sc.hardware.ram == 64 * GiB
    assert sc.hardware.zfs.key == (0, 7, 0)
    assert sc.pool.recordsize == MiB
    assert sc.workload.bs == MiB
    assert sc.workload.size == 16 * GiB
    assert sc.workload.numjobs * sc.workload.size > sc.hardware.ram  # beyond the ARC


DESIGN_EXAMPLE = """
[hardware]
disk = "seagate-ironwolf-12tb"
log_device = "intel-x25m-160gb"
hba = "lsi-9300-8i"
ram = "64GiB"
cpu_cores = 8
zfs_version = "2.2"

[pool]
layout = "raidz2 8"
ashift = 12
recordsize = "1M"
compression = "off"
checksum = "fletcher4"
dedup = "off"
atime = "on"
xattr = "sa"
sync = "standard"
logbias = "latency"
primarycache = "all"
direct = "standard"
fill = 0.5

[workload]
tool = "fio"
rw = "randwrite"
bs = "1M"
numjobs = 8
iodepth = 8
sync = false
fsync = 0
direct = false
size = "32GiB"
"""


def test_design_section_4_example_loads():
    sc = scenario_from_dict(tomllib.loads(DESIGN_EXAMPLE))
    assert sc.hardware.log_device is not None
    assert sc.hardware.log_device.kind == "ssd"
    assert sc.workload.size == 32 * GiB
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_defaults():
    sc = scenario_from_dict(base())
    assert sc.pool == Pool(layout="raidz2 8")
    assert sc.pool.ashift == 12
    assert sc.pool.recordsize == 128 * KiB
    assert sc.hardware.ram == 64 * GiB
    assert sc.hardware.expander_bw is None
    assert sc.workload.iodepth == 1
    assert sc.workload.rwmixread == 50
    assert sc.name == ""


def test_inline_disk_table_from_design():
    data = with_("hardware", disk=INLINE_HDD)
    sc = scenario_from_dict(data)
    assert sc.hardware.disk_spec == "inline"
    assert sc.hardware.disk.capacity == 5 * 10**12
    assert sc.hardware.disk.max_sustained == 180e6
    assert sc.hardware.disk.avg_seek == pytest.approx(0.0085)
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_inline_nvme_table_from_design():
    nvme = {
        "kind": "nvme",
        "capacity": "3.2TB",
        "read_bw": "3.5GB/s",
        "write_bw": "3.3GB/s",
        "read_iops": 780000,
        "write_iops": 260000,
    }
    sc = scenario_from_dict(with_("hardware", disk=nvme))
    assert sc.hardware.disk.read_iops == 780_000
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_full_round_trip_of_every_table():
    data = base()
    data["name"] = 'quotes " and \\ back'
    data["hardware"].update(
        log_device="intel-x25m-160gb",
        special_device=INLINE_HDD,
        hba="lsi-9300-8i",
        ram="96GiB",
        cpu_cores=12,
        cpu_ghz=2.4,
        zfs_version="2.1.5",
        expander_bw="2.4GB/s",
        disks_per_link=4,
    )
    data["pool"].update(
        layout="2x raidz2 6 log mirror 2 special mirror 2",
        ashift=13,
        recordsize="1M",
        compression="lz4",
        compress_ratio=1.6,
        checksum="sha256",
        special_small_blocks="32K",
        allocated="659GiB",
        sync="always",
    )
    data["workload"].update(rw="randrw", rwmixread=70, numjobs=4, iodepth=16, sync=True)
    sc = scenario_from_dict(data)
    assert sc.hardware.expander_bw == 2.4e9
    assert sc.pool.allocated == 659 * GiB
    assert sc.hardware.device_for("log").name == "intel-x25m-160gb"
    assert sc.hardware.device_for("cache").name == "seagate-ironwolf-12tb"  # falls back
    assert sc.hardware.device_for("dedup").name == "inline"
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_dd_and_trace_workloads(tmp_path):
    dd_table = {"tool": "dd", "direction": "write", "bs": "4K", "source": "urandom"}
    dd = scenario_from_dict(base() | {"workload": dd_table})
    assert dd.workload.bytes == 10 * GiB
    assert dd.workload.source == "urandom"
    trace = tmp_path / "run1.txt"
    trace.write_text("0 R 0 8\n")
    data = base() | {"workload": {"tool": "trace", "file": "run1.txt"}}
    sc = scenario_from_dict(data, base_dir=tmp_path)
    assert sc.workload.file == str(trace.resolve())
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_relative_profile_path_is_taken_from_the_scenario_folder(tmp_path):
    folder = tmp_path / "profiles"
    folder.mkdir()
    lines = [f"{k} = {json.dumps(v)}" for k, v in INLINE_HDD.items()]
    (folder / "my-disk.toml").write_text("\n".join(lines) + "\n")
    scenario = tmp_path / "pool.toml"
    scenario.write_text(
        '[hardware]\ndisk = "profiles/my-disk.toml"\n[pool]\nlayout = "mirror 2"\n'
        '[workload]\nrw = "read"\nbs = "128K"\n'
    )
    sc = load_scenario(scenario)
    assert sc.hardware.disk.name == "my-disk"
    assert Path(sc.hardware.disk_spec) == (folder / "my-disk.toml").resolve()
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc


def test_support_vdevs_without_their_own_device_use_the_disk():
    sc = scenario_from_dict(with_("pool", layout="raidz2 6 log mirror 2 cache 1"))
    assert sc.hardware.log_device is None
    assert sc.hardware.device_for("log") == sc.hardware.disk


def test_built_in_code():
    disk = scenario_from_dict(base()).hardware.disk
    sc = Scenario(
        hardware=Hardware(disk=disk, disk_spec="seagate-ironwolf-12tb"),
        pool=Pool(layout="mirror 2", recordsize=MiB),
        workload=Workload(rw="rw", bs=4096),
    )
    assert sc.workload.rw == "readwrite"  # fio's alias
    assert scenario_from_dict(tomllib.loads(sc.to_toml())) == sc
    with pytest.raises(ScenarioError, match="numjobs = 8 is a key of tool"):
        Workload(tool="dd", direction="write", bs=4096, numjobs=8)


# ---------------------------------------------------------------- bad input

WORKLOAD = "workload"
ZFS_07 = {"disk": "seagate-ironwolf-12tb", "zfs_version": "0.7"}
# (id, scenario data, a fragment its one-line error must contain)
BAD = [
    ("typo", with_("pool", recordsiz="1M"),
     "unknown key pool.recordsiz; did you mean 'recordsize'?"),
    ("wrong-table", with_(WORKLOAD, ashift=12), "did you mean 'pool.ashift'?"),
    ("table-typo", base() | {"pools": {}}, "unknown table [pools]; did you mean 'pool'?"),
    ("ashift-type", with_("pool", ashift="twelve"),
     'pool.ashift = "twelve": expected a whole number 9…16, e.g. 12'),
    ("ashift-range", with_("pool", ashift=17), "pool.ashift = 17: expected a whole number 9…16"),
    ("float-int", with_(WORKLOAD, numjobs=8.0),
     "workload.numjobs = 8.0: expected a whole number ≥ 1, e.g. 8"),
    ("bool-text", with_(WORKLOAD, direct="yes"), 'workload.direct = "yes": expected true or false'),
    ("enum", with_("pool", compression="lzo"),
     'pool.compression = "lzo": expected one of off, lz4, zstd, gzip, zle'),
    ("rw-enum", with_(WORKLOAD, rw="randomwrite"), "expected one of read, write, randread"),
    ("missing-rw", base() | {WORKLOAD: {"bs": "1M"}},
     'workload.rw is missing for tool = "fio"; a fio job\'s shape has no default: add e.g. rw = '),
    ("missing-rw-bs", base() | {WORKLOAD: {}}, "workload.rw and workload.bs are missing"),
    ("missing-direction", base() | {WORKLOAD: {"tool": "dd", "bs": "4K"}},
     "workload.direction is missing"),
    ("missing-file", base() | {WORKLOAD: {"tool": "trace"}}, "workload.file is missing"),
    ("foreign-key", with_(WORKLOAD, direction="write"),
     'workload.direction = "write" is a key of tool = "dd"'),
    ("fill-allocated", with_("pool", fill=0.3, allocated="1TiB"),
     "pool.fill and pool.allocated are both given"),
    ("fill-range", with_("pool", fill=1.5), "pool.fill = 1.5: expected a fraction 0…1"),
    ("negative-size", with_(WORKLOAD, size="-4GiB"),
     "workload.size = \"-4GiB\": size '-4GiB' is negative"),
    ("zero-bs", with_(WORKLOAD, bs=0), "workload.bs = 0: expected a block size above 0"),
    ("numjobs", with_(WORKLOAD, numjobs=0), "workload.numjobs = 0: expected a whole number ≥ 1"),
    ("iodepth", with_(WORKLOAD, iodepth=-1), "workload.iodepth = -1"),
    ("rwmix", with_(WORKLOAD, rw="randrw", rwmixread=101),
     "workload.rwmixread = 101: expected a percentage 0…100"),
    ("recordsize", with_("pool", recordsize="100K"),
     "pool.recordsize = 102400 (100.00 KiB): expected a power of two"),
    ("ratio-off", with_("pool", compress_ratio=1.6),
     'pool.compress_ratio = 1.6 but pool.compression = "off"'),
    ("ratio-low", with_("pool", compression="lz4", compress_ratio=0.5),
     "pool.compress_ratio = 0.5: expected a finite number from 1 to 10000"),
    ("ratio-huge", with_("pool", compression="lz4", compress_ratio=1e300),
     "pool.compress_ratio = 1e+300: expected a finite number from 1 to 10000"),
    ("ratio-inf", with_("pool", compression="lz4", compress_ratio=float("inf")),
     "pool.compress_ratio = inf: expected a finite number from 1 to 10000"),
    ("ratio-nan", with_("pool", compression="lz4", compress_ratio=float("nan")),
     "pool.compress_ratio = nan: expected a finite number from 1 to 10000"),
    ("ratio-just-above", with_("pool", compression="lz4", compress_ratio=10000.5),
     "pool.compress_ratio = 10000.5: expected a finite number from 1 to 10000"),
    ("raidz3-3", with_("pool", layout="raidz3 3"), 'pool.layout = "raidz3 3": raidz3 needs'),
    ("catalog", with_("hardware", disk="seagate-ironwolf-13tb"),
     "hardware.disk: no hardware profile named 'seagate-ironwolf-13tb' in the catalog; did you"),
    ("profile-path", with_("hardware", disk="missing/disk.toml"),
     'hardware.disk = "missing/disk.toml": no profile file at'),
    ("inline-typo", with_("hardware", disk=INLINE_HDD | {"rpmm": 5400}),
     "hardware.disk (inline table): unknown key 'rpmm'; did you mean 'rpm'?"),
    ("hba-kind", with_("hardware", hba="seagate-ironwolf-12tb"),
     'hardware.hba = "seagate-ironwolf-12tb" is an HDD profile, not an HBA'),
    ("disk-is-hba", with_("hardware", disk="lsi-9300-8i"),
     'hardware.disk = "lsi-9300-8i" is an HBA profile, not a storage device'),
    ("ram", with_("hardware", ram="lots"), "hardware.ram = \"lots\": cannot read 'lots' as a size"),
    ("ram-1-byte", with_("hardware", ram="1"), "hardware.ram = 1: below the 1 GiB minimum"),
    ("ram-1-byte-int", with_("hardware", ram=1), "hardware.ram = 1: below the 1 GiB minimum"),
    ("ram-below-1gib", with_("hardware", ram="1000MiB"),
     "hardware.ram = 1048576000 (1000.00 MiB): below the 1 GiB minimum"),
    ("rate", with_("hardware", expander_bw="2.4GB"),
     "hardware.expander_bw = \"2.4GB\": rate '2.4GB' has no '/s'"),
    ("version-float", with_("hardware", zfs_version=2.2),
     "hardware.zfs_version = 2.2: expected an OpenZFS release as text"),
    ("version-range", with_("hardware", zfs_version="3.0"), 'hardware.zfs_version = "3.0": '),
    ("version-feature", with_("pool", compression="zstd") | {"hardware": ZFS_07},
     'pool.compression = "zstd" needs OpenZFS 2.0 or later'),
    ("no-workload", {"hardware": {"disk": "wd-red-plus-12tb"}, "pool": {"layout": "mirror 2"}},
     "the [workload] table is missing"),
    ("no-disk", base() | {"hardware": {"ram": "64GiB"}}, "hardware.disk is missing"),
    ("pool-not-table", base() | {"pool": "raidz2 8"}, 'pool = "raidz2 8": expected a table'),
]  # fmt: skip


@pytest.mark.parametrize(("data", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_one_clear_line(data, fragment):
    assert fragment in error_of(data)


def test_errors_are_zsim_errors():
    with pytest.raises(ZsimError):
        scenario_from_dict(with_("pool", ashift="twelve"))


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match=r"nope\.toml: the scenario file does not exist"):
        load_scenario(tmp_path / "nope.toml")


def test_truncated_toml_file(tmp_path):
    path = tmp_path / "cut.toml"
    path.write_text('[hardware]\ndisk = "seagate-ironwolf-12tb"\n[pool]\nlayout = "raidz2')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid TOML: ")
    assert "Unterminated string (at end of document)" in message
    assert "\n" not in message


def test_error_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        '[hardware]\ndisk = "seagate-ironwolf-12tb"\n[pool]\nlayout = "raidz2 8"\n'
        'ashift = "twelve"\n[workload]\nrw = "read"\nbs = "1M"\n'
    )
    with pytest.raises(ScenarioError, match=rf'^{path}: pool\.ashift = "twelve": expected'):
        load_scenario(path)


# ---------------------------------------------------------------- overrides


def _diff(a: dict, b: dict) -> set[tuple[str, str]]:
    keys = {(s, k) for s in (*a, *b) if isinstance(a.get(s, b.get(s)), dict)
            for k in (*a.get(s, {}), *b.get(s, {}))}  # fmt: skip
    return {(s, k) for s, k in keys if a.get(s, {}).get(k) != b.get(s, {}).get(k)}


@pytest.mark.parametrize(
    ("override", "section", "key", "value"),
    [
        ("pool.recordsize=1M", "pool", "recordsize", "1M"),
        ("workload.numjobs=8", "workload", "numjobs", 8),
        ("workload.direct=true", "workload", "direct", True),
        ("pool.fill=0.8", "pool", "fill", 0.8),
        ("pool.ashift=13", "pool", "ashift", 13),
        ("hardware.disk=wd-red-plus-12tb", "hardware", "disk", "wd-red-plus-12tb"),
    ],
)
def test_override_changes_exactly_one_key(override, section, key, value):
    data = base()
    before = copy.deepcopy(data)
    out = apply_overrides(data, [override])
    assert data == before  # input untouched
    assert out[section][key] == value
    assert type(out[section][key]) is type(value)
    assert _diff(before, out) == {(section, key)}
    scenario_from_dict(out)


def test_overrides_take_effect_in_load_scenario():
    path = ROOT / "examples" / "scenarios" / "ars-raidz2-8-1m-randwrite.toml"
    sc = load_scenario(path, overrides=["pool.recordsize=128K", "workload.iodepth=32"])
    plain = load_scenario(path)
    assert sc.pool.recordsize == 128 * KiB
    assert sc.workload.iodepth == 32
    assert sc.pool == Pool(**{**plain.pool.__dict__, "recordsize": 128 * KiB})


def test_override_inline_table_and_name():
    ssd = '{ kind = "ssd", capacity = "1TB", read_bw = "500MB/s", write_bw = "400MB/s" }'
    out = apply_overrides(base(), [f"hardware.disk={ssd}", "name=x"])
    sc = scenario_from_dict(out)
    assert sc.hardware.disk.kind == "ssd"
    assert sc.name == "x"


def test_override_allocated_replaces_fill():
    out = apply_overrides(with_("pool", fill=0.3), ["pool.allocated=1TiB"])
    assert "fill" not in out["pool"]
    assert scenario_from_dict(out).pool.allocated == 1 << 40


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("pool.recordsiz=1M", "unknown key pool.recordsiz; did you mean 'recordsize'?"),
        ("pol.recordsize=1M", "unknown table [pol]; did you mean 'pool'?"),
        ("workload.numjobs=eight", "expected a whole number ≥ 1, e.g. workload.numjobs=8"),
        ("workload.direct=yes", "expected true or false"),
        ("pool.fill=half", "expected a fraction 0…1"),
        ("recordsize=1M", "write section.key=value"),
        ("pool.recordsize", "write section.key=value"),
    ],
)
def test_bad_override(override, fragment):
    with pytest.raises(ScenarioError) as info:
        apply_overrides(base(), [override])
    message = str(info.value)
    assert message.startswith(f"override {override!r}: ")
    assert fragment in message


def test_bad_override_in_load_scenario_names_the_file():
    path = ROOT / "examples" / "scenarios" / "dd-stripe-4k.toml"
    with pytest.raises(ScenarioError, match=r"dd-stripe-4k\.toml: override 'workload\.stream=2'"):
        load_scenario(path, overrides=["workload.stream=2"])


# ---------------------------------------------------------------- the contract stays whole


@pytest.mark.parametrize(("table", "kind"), [("hardware", Hardware), ("pool", Pool),
                                             ("workload", Workload)])  # fmt: skip
def test_every_toml_key_is_a_documented_field(table, kind):
    names = (
        {f.name for f in fields(kind)}
        - {"disk_spec"}
        - {f"{k}_spec" for k in ("log_device", "cache_device", "special_device", "hba")}
    )
    assert set(KEYS[table]) == names
    for name in names:
        assert f"{name}:" in kind.__doc__, f"{kind.__name__}.{name} is not documented"


def test_ram_and_compress_ratio_at_their_limits_are_accepted():
    sc = scenario_from_dict(with_("hardware", ram="1GiB"))
    assert sc.hardware.ram == 1 << 30
    sc = scenario_from_dict(with_("pool", compression="lz4", compress_ratio=1e4))
    assert sc.pool.compress_ratio == 1e4
