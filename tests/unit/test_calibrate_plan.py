"""``zsim.calibrate.plan``: the steps a plan holds, the fio job files and run.sh it writes, the
plan.toml round trip, option validation and the safety checks. No fio is needed; the block
device checks run on files and a fake sysfs tree."""

from __future__ import annotations

import itertools
import os
import struct
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import need_tool
from zsim.calibrate import plan as planmod
from zsim.calibrate.plan import (
    DATA_NAME,
    MARKER_SUFFIX,
    PURPOSES,
    PlanOptions,
    block_device,
    block_device_problems,
    filesystem_signature,
    holder_uses,
    make_plan,
    mount_type,
    mount_uses,
    partitions,
    probe_signature,
    read_plan,
    swap_uses,
    write_plan,
)
from zsim.errors import ZsimError

MiB, GiB = 2**20, 2**30
SMALL = PlanOptions(size=64 * MiB, runtime_s=1.0, ramp_s=0.0, long_write_bytes=32 * MiB)


def parse_fio(text: str) -> list[tuple[str, dict[str, str | None]]]:
    """An fio job file as (section, {key: value}) pairs in order; bare keys map to None."""
    sections: list[tuple[str, dict[str, str | None]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1], {}))
            continue
        assert sections, f"option before any section: {line!r}"
        key, sep, value = line.partition("=")
        sections[-1][1][key.strip()] = value.strip() if sep else None
    return sections


@pytest.fixture
def small_plan(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    plan = make_plan(str(target), SMALL)
    out = write_plan(plan, tmp_path / "plan")
    return plan, out


def jobs_of(out: Path, step) -> list[tuple[str, dict[str, str | None]]]:
    return parse_fio((out / step.jobfile).read_text())


# ---------------------------------------------------------------- files and round trip


def test_write_plan_writes_files_and_round_trips(small_plan):
    plan, out = small_plan
    assert (out / "plan.toml").is_file() and (out / "run.sh").is_file()
    assert os.access(out / "run.sh", os.X_OK)
    fio_steps = [s for s in plan.steps if s.tool == "fio"]
    assert sorted(p.name for p in (out / "jobs").iterdir()) == sorted(
        f"{s.name}.fio" for s in fio_steps
    )
    again = read_plan(out)
    assert again == plan
    assert again.options.size == 64 * MiB and again.target_type == "directory"
    assert again.data_path == str(Path(plan.target) / DATA_NAME)
    assert again.zsim_version and again.hostname and again.uname and again.ram_bytes > 0
    assert "T" in again.created  # ISO time


def test_default_single_disk_steps(tmp_path):
    plan = make_plan(str(tmp_path), PlanOptions())
    names = [s.name for s in plan.steps]
    zones = ["00", "20", "40", "60", "80", "95"]
    random = [
        f"{rw}-{bs}-qd{d}"
        for rw in ("randread", "randwrite")
        for bs, depths in (("4k", (1, 2, 4, 8, 16, 32)), ("64k", (1, 4, 32)), ("1m", (1, 4, 32)))
        for d in depths
    ]
    expected = (
        ["prepare"]
        + [f"zoneread-{z}" for z in zones]
        + [n for n in random if n.startswith("randread")]
        + ["short-seek", "cache-hit", "dd-read"]
        + [f"zonewrite-{z}" for z in zones]
        + [n for n in random if n.startswith("randwrite")]
        + ["sync-latency", "long-write", "dd-write"]
    )
    assert names == expected and len(names) == 43
    assert {s.purpose for s in plan.steps} <= set(PURPOSES)
    assert plan.options.size == 4 * GiB and plan.options.zone_bytes == 4 * GiB // 20 // MiB * MiB
    assert plan.options.long_write_bytes == 4 * GiB
    # zsim's own file in a directory: nothing is destructive, no warnings
    assert not plan.destructive and plan.warnings == ()
    assert plan.steps[0].purpose == "prepare" and plan.steps[0].size == 4 * GiB


def test_depths_and_block_sizes_as_asked(tmp_path):
    options = replace(SMALL, depths_4k=(1, 3), depths_large=(2,), block_sizes=(8192, 131072))
    plan = make_plan(str(tmp_path), options)
    random = {(s.rw, s.bs, s.iodepth) for s in plan.steps if s.purpose == "random"}
    assert random == {
        (rw, bs, d)
        for rw in ("randread", "randwrite")
        for bs, depths in ((8192, (1, 3)), (131072, (2,)))
        for d in depths
    }


def test_every_job_file_has_the_right_options(small_plan):
    plan, out = small_plan
    for step in plan.steps:
        if step.tool != "fio":
            continue
        sections = jobs_of(out, step)
        head, glob = sections[0]
        assert head == "global"
        assert glob["ioengine"] == "libaio" and glob["direct"] == "1"
        assert glob["filename"] == plan.data_path and glob["group_reporting"] == "1"
        assert "rate" not in glob and "rate_iops" not in glob
        if step.timed:
            assert glob["time_based"] == "1" and glob["runtime"] == "1"
            assert "ramp_time" not in glob  # ramp 0
        else:
            assert "time_based" not in glob and "runtime" not in glob
        jobs = sections[1:]
        if step.purpose != "long-write":
            assert [name for name, _ in jobs] == [step.name]
            job = jobs[0][1]
            assert job["rw"] == step.rw and int(job["bs"]) == step.bs
            assert int(job["iodepth"]) == step.iodepth
            assert int(job["offset"]) == step.offset and int(job["size"]) == step.size
            assert step.offset + step.size <= plan.options.size
            if step.rw.startswith("rand"):
                assert "norandommap" in job and job["randrepeat"] == "0"


def test_job_shapes(small_plan):
    plan, out = small_plan
    size = plan.options.size
    step = plan.step("sync-latency")
    job = jobs_of(out, step)[1][1]
    assert job["rw"] == "write" and job["bs"] == "4096" and job["iodepth"] == "1"
    assert job["ioengine"] == "psync" and job["sync"] == "1"
    cache = plan.step("cache-hit")
    assert (cache.rw, cache.bs, cache.iodepth) == ("read", 4096, 1)
    assert cache.size == min(256 * MiB, plan.options.size)
    short = plan.step("short-seek")
    assert short.rw == "randread" and short.iodepth == 1 and short.size <= max(MiB, size // 100)
    for zone in (s for s in plan.steps if s.purpose == "zone-read"):
        assert (zone.rw, zone.bs, zone.iodepth, zone.timed) == ("read", MiB, 4, True)
        assert zone.size == plan.options.zone_bytes
    for step in plan.steps:
        if step.purpose == "random":
            assert step.offset == 0 and step.size == size


def test_rate_limits_on_every_measuring_job(tmp_path):
    plan = make_plan(str(tmp_path / "t"), replace(SMALL, rate_bw=50_000_000, rate_iops=150))
    out = write_plan(plan, tmp_path / "plan")
    checked = 0
    for step in plan.steps:
        if step.tool != "fio":
            continue
        glob = jobs_of(out, step)[0][1]
        if step.purpose == "prepare":  # laying the file out is not measured
            assert "rate" not in glob and "rate_iops" not in glob
            continue
        # fio takes rate or rate_iops, not both: the tighter cap at the job's block size
        assert "rate" not in glob
        assert glob["rate_iops"] == str(max(1, min(150, 50_000_000 // step.bs)))
        checked += 1
    assert checked == sum(1 for s in plan.steps if s.tool == "fio") - 1
    assert any("rate limits" in note for note in plan.notes)
    only_bw = make_plan(str(tmp_path / "u"), replace(SMALL, rate_bw=50_000_000))
    out = write_plan(only_bw, tmp_path / "plan2")
    step = only_bw.step("randread-4k-qd1")
    assert jobs_of(out, step)[0][1]["rate"] == "50000000"


def test_zone_offsets_grow(small_plan):
    plan, _ = small_plan
    for purpose in ("zone-read", "zone-write"):
        zones = [s for s in plan.steps if s.purpose == purpose]
        assert len(zones) == 6
        offsets = [s.offset for s in zones]
        assert offsets == sorted(offsets) and len(set(offsets)) == 6 and offsets[0] == 0
        assert all(o % MiB == 0 for o in offsets)
        assert all(s.offset + s.size <= plan.options.size for s in zones)
        assert offsets[-1] >= 0.9 * plan.options.size


def test_long_write_is_stonewalled_segments(tmp_path):
    options = replace(SMALL, long_write_bytes=40 * MiB, long_write_segments=5)
    plan = make_plan(str(tmp_path / "t"), options)
    out = write_plan(plan, tmp_path / "plan")
    step = plan.step("long-write")
    assert step.segments == 5 and not step.timed and step.size == 40 * MiB
    sections = jobs_of(out, step)
    assert "time_based" not in sections[0][1]
    jobs = sections[1:]
    assert [name for name, _ in jobs] == [f"long-write-seg{i}" for i in range(5)]
    offsets = [int(job["offset"]) for _, job in jobs]
    assert offsets == [i * 8 * MiB for i in range(5)]
    for _, job in jobs:
        assert "stonewall" in job and job["rw"] == "write" and int(job["size"]) == 8 * MiB
    # an uneven split: whole-MiB segments, the last one takes the rest, nothing overlaps
    plan = make_plan(str(tmp_path / "t"), replace(options, long_write_bytes=43 * MiB))
    out = write_plan(plan, tmp_path / "plan2")
    jobs = jobs_of(out, plan.step("long-write"))[1:]
    spans = [(int(job["offset"]), int(job["size"])) for _, job in jobs]
    assert [size for _, size in spans] == [8 * MiB] * 4 + [11 * MiB]
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(spans))
    assert sum(size for _, size in spans) == 43 * MiB


def test_dd_commands(small_plan):
    plan, _ = small_plan
    write, read = plan.step("dd-write"), plan.step("dd-read")
    count = 64  # min(size, 4 GiB) / 1 MiB
    assert write.argv == (
        "dd",
        "if=/dev/zero",
        f"of={plan.data_path}",
        "bs=1M",
        f"count={count}",
        "oflag=direct",
        "conv=fsync,notrunc",
    )
    assert read.argv == (
        "dd",
        f"if={plan.data_path}",
        "of=/dev/null",
        "bs=1M",
        f"count={count}",
        "iflag=direct",
    )
    buffered = make_plan(plan.target, replace(SMALL, direct=False))
    assert not any("direct" in a for a in buffered.step("dd-write").argv)


def test_include_switches(tmp_path):
    plan = make_plan(str(tmp_path), replace(SMALL, include_writes=False, include_dd=False))
    assert all(s.tool == "fio" for s in plan.steps)
    assert [s for s in plan.steps if s.writes] == [plan.step("prepare")]


def test_pool_kind_sizes_by_ram(tmp_path):
    plan = make_plan(str(tmp_path), PlanOptions(kind="pool", size=64 * MiB))
    ram = plan.ram_bytes
    assert ram > 0 and plan.options.size >= 2 * ram
    purposes = {s.purpose for s in plan.steps}
    assert not purposes & {"cache-hit", "short-seek"}
    assert {s.name for s in plan.steps if s.purpose in ("zone-read", "zone-write")} == {
        "seqread-1m",
        "seqwrite-1m",
    }
    for step in plan.steps:
        if step.purpose != "cache-hit":
            assert step.size >= 2 * ram, step.name
    assert plan.options.long_write_bytes >= 2 * ram
    assert any("no single LBA space" in n for n in plan.notes)
    assert any("2.3" in n and "O_DIRECT" in n for n in plan.notes)
    assert read_plan(write_plan(plan, tmp_path / "plan")) == plan


def test_pool_kind_needs_a_directory(tmp_path):
    with pytest.raises(ZsimError, match="needs a directory"):
        make_plan(str(tmp_path / "new.img"), PlanOptions(kind="pool"))


def test_run_script_is_valid_bash(small_plan):
    bash = need_tool("bash", "checks run.sh with bash -n")
    plan, out = small_plan
    script = (out / "run.sh").read_text()
    assert script.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in script and "--output-format=json" in script
    for step in plan.steps:
        assert f"# {step.name}:" in script
    assert '2> "results/.$name.dd.txt.part"' in script
    subprocess.run([bash, "-n", str(out / "run.sh")], check=True)


def test_run_script_warns_before_destroying(tmp_path):
    bash = need_tool("bash", "checks run.sh with bash -n")
    victim = tmp_path / "theirs.img"
    victim.write_bytes(b"precious" * 1000)
    plan = make_plan(str(victim), replace(SMALL, allow_destroy=True))
    out = write_plan(plan, tmp_path / "plan")
    script = (out / "run.sh").read_text()
    assert "WARNING" in script and "DESTROY" in script and "ZSIM_CONFIRM_DESTROY" in script
    subprocess.run([bash, "-n", str(out / "run.sh")], check=True)
    done = subprocess.run(
        [bash, str(out / "run.sh")], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 1 and "not confirmed" in done.stderr
    assert victim.read_bytes() == b"precious" * 1000


# ---------------------------------------------------------------- bad options


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"kind": "raid"}, "unknown kind"),
        ({"size": 0}, "size 0"),
        ({"size": -4096}, "size -4096"),
        ({"size": 4 * MiB}, "too small"),
        ({"depths_4k": (0, 1)}, "depths_4k"),
        ({"depths_large": (4, 4)}, "repeat"),
        ({"block_sizes": (1000,)}, "multiples of 512"),
        ({"runtime_s": 0}, "runtime_s"),
        ({"ramp_s": -1.0}, "ramp_s"),
        ({"zones": (0.5, 1.2)}, "zones"),
        ({"long_write_segments": 0}, "long_write_segments"),
        ({"long_write_bytes": 128 * MiB}, "larger than size"),
        ({"rate_iops": -3}, "rate_iops"),
        ({"ioengine": "lib aio"}, "ioengine"),
    ],
)
def test_bad_options_raise_with_a_fix(tmp_path, change, words):
    with pytest.raises(ZsimError) as err:
        make_plan(str(tmp_path), replace(SMALL, **change))
    message = str(err.value)
    assert words in message
    assert "; " in message  # problem; fix


def test_size_larger_than_a_device_is_refused():
    with pytest.raises(ZsimError, match=r"larger than the device.*--size"):
        planmod._resolve(PlanOptions(size=2 * GiB), target_type="block", device_size=GiB, ram=GiB)
    resolved, _ = planmod._resolve(
        PlanOptions(), target_type="block", device_size=GiB + 4096, ram=GiB
    )
    assert resolved.size == GiB  # the whole device, rounded down to 1 MiB


def test_missing_target_folder(tmp_path):
    with pytest.raises(ZsimError, match="does not exist"):
        make_plan(str(tmp_path / "nope" / "x.img"), SMALL)


# ---------------------------------------------------------------- read_plan errors


def test_read_plan_errors_name_the_file(small_plan, tmp_path):
    _, out = small_plan
    toml = out / "plan.toml"
    good = toml.read_text()
    with pytest.raises(ZsimError, match=r"plan\.toml does not exist"):
        read_plan(tmp_path / "empty")
    cases = [
        (good + "\nbogus = 1\n", "unknown keys"),
        (good.replace('purpose = "cache-hit"', 'purpose = "coffee"'), "purpose 'coffee'"),
        (good.replace("depths_4k = [1, 2, 4, 8, 16, 32]", "depths_4k = [0]"), "depths_4k"),
        (good.replace("ram_bytes =", "ram_byte ="), "unknown keys"),
        (good.replace("format = 1", "format = 9"), "format"),
        ("[plan\n", "not valid TOML"),
    ]
    for text, words in cases:
        assert text != good
        toml.write_text(text)
        with pytest.raises(ZsimError) as err:
            read_plan(out)
        assert str(toml) in str(err.value) and words in str(err.value), str(err.value)


def test_write_plan_refuses_a_folder_with_results(small_plan):
    plan, out = small_plan
    (out / "results").mkdir()
    (out / "results" / "prepare.json").write_text("{}")
    with pytest.raises(ZsimError, match="already holds results"):
        write_plan(plan, out)


# ---------------------------------------------------------------- safety


def image(path: Path, *writes: tuple[int, bytes], size: int = 300 * 1024) -> Path:
    data = bytearray(size)
    for offset, payload in writes:
        data[offset : offset + len(payload)] = payload
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("writes", "found"),
    [
        (((1080, b"\x53\xef"),), "ext2/3/4"),
        (((0, b"XFSB"),), "xfs"),
        (((65600, b"_BHRfS_M"),), "btrfs"),
        (((4086, b"SWAPSPACE2"),), "swap"),
        (((3, b"NTFS    "),), "ntfs"),
        (((82, b"FAT32   "),), "vfat"),
        (((0, b"LUKS\xba\xbe"),), "crypto_LUKS"),
        (((512, b"LABELONE"),), "LVM2_member"),
        (((128 * 1024 + 5 * 1024, struct.pack("<Q", 0x00BAB10C)),), "zfs_member"),
        (((128 * 1024 + 127 * 1024, struct.pack(">Q", 0x00BAB10C)),), "zfs_member"),
        ((), None),
    ],
)
def test_signature_by_magic(tmp_path, writes, found):
    path = image(tmp_path / "disk.img", *writes)
    assert probe_signature(path) == found
    assert filesystem_signature(path, blkid=None) == found


def test_ext4_magic_is_found(tmp_path):
    path = image(tmp_path / "ext4.img", (1080, b"\x53\xef"))
    assert probe_signature(path) == "ext2/3/4"
    # with blkid (when installed) a bare magic may not satisfy it; the magic check still finds it
    assert filesystem_signature(path) is not None


def test_mount_and_swap_text():
    mounts = (
        "sysfs /sys sysfs rw 0 0\n"
        "/dev/sdb1 /srv/my\\040data ext4 rw,relatime 0 0\n"
        "/dev/sdc /other xfs rw 0 0\n"
        "tank/home /home zfs rw 0 0\n"
    )
    assert mount_uses(["sdb", "sdb1"], mounts) == ["/dev/sdb1 is mounted on /srv/my data"]
    assert mount_uses(["sdd"], mounts) == []
    swaps = "Filename Type Size Used Priority\n/dev/sdb2 partition 8388604 0 -2\n"
    assert swap_uses(["sdb2"], swaps) == ["/dev/sdb2 is in use as swap"]
    assert swap_uses(["sdb1"], swaps) == []


def test_mount_type():
    mounts = (
        "/dev/vda / ext4 rw 0 0\n"
        "tank /tank zfs rw 0 0\n"
        "tank/bench /tank/bench zfs rw 0 0\n"
        "tmpfs /tank/bench/tmp tmpfs rw 0 0\n"
    )
    assert mount_type("/tank/bench/x", mounts) == "zfs"
    assert mount_type("/tank/bench/tmp/y", mounts) == "tmpfs"
    assert mount_type("/tankful", mounts) == "ext4"
    assert mount_type("/x", "") is None


def fake_sysfs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A disk sdx with partitions sdx1 (held by dm-0) and sdx2, and /dev files for them."""
    devices = tmp_path / "sys" / "devices" / "virtio" / "block"
    disk = devices / "sdx"
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "rotational").write_text("1\n")
    (disk / "size").write_text(str(2048 * 1024) + "\n")
    for number in (1, 2):
        part = disk / f"sdx{number}"
        part.mkdir()
        (part / "partition").write_text(f"{number}\n")
        (part / "size").write_text("1024\n")
        (part / "holders").mkdir()
    (disk / "holders").mkdir()
    (disk / "sdx1" / "holders" / "dm-0").mkdir()
    class_block = tmp_path / "sys" / "class" / "block"
    class_block.mkdir(parents=True)
    for name, where in (("sdx", disk), ("sdx1", disk / "sdx1"), ("sdx2", disk / "sdx2")):
        (class_block / name).symlink_to(where)
    dev_block = tmp_path / "sys" / "dev" / "block"
    dev_block.mkdir(parents=True)
    (dev_block / "8:16").symlink_to(disk)
    (dev_block / "8:18").symlink_to(disk / "sdx2")
    dev = tmp_path / "dev"
    dev.mkdir()
    image(dev / "sdx")
    image(dev / "sdx1", (1080, b"\x53\xef"))
    image(dev / "sdx2")
    return class_block, dev_block, dev


def test_block_device_from_sysfs(tmp_path):
    _, dev_block, _ = fake_sysfs(tmp_path)
    whole = block_device(8, 16, dev_block)
    assert whole == planmod.BlockDevice("sdx", "sdx", 2048 * 1024 * 512, True)
    part = block_device(8, 18, dev_block)
    assert part == planmod.BlockDevice("sdx2", "sdx", 1024 * 512, True)
    assert block_device(8, 99, dev_block) is None


def test_block_device_problems(tmp_path):
    class_block, _, dev = fake_sysfs(tmp_path)
    assert partitions("sdx", class_block) == ["sdx1", "sdx2"]
    assert holder_uses("sdx1", class_block) == [
        "sdx1 is held by dm-0 (LVM, dm-crypt, md or multipath)"
    ]
    problems = block_device_problems(
        "sdx",
        dev_dir=dev,
        sys_class_block=class_block,
        mounts_text="/dev/sdx2 /mnt/x vfat rw 0 0\n",
        swaps_text="Filename Type Size Used Priority\n",
        blkid=None,
    )
    text = "; ".join(problems)
    assert "/dev/sdx2 is mounted on /mnt/x" in text
    assert "held by dm-0" in text
    assert f"{dev / 'sdx1'} holds an ext2/3/4 signature" in text
    assert len(problems) == 3
    # a clean device with no partitions and no users
    (dev / "sdy").write_bytes(bytes(1 << 18))
    clean = block_device_problems(
        "sdy", dev_dir=dev, sys_class_block=class_block, mounts_text="", swaps_text="", blkid=None
    )
    assert clean == []


def test_foreign_file_needs_allow_destroy(tmp_path):
    theirs = tmp_path / "theirs.img"
    theirs.write_bytes(b"x" * 4096)
    with pytest.raises(ZsimError, match=r"not zsim's own.*--destroy-data"):
        make_plan(str(theirs), SMALL)
    plan = make_plan(str(theirs), replace(SMALL, allow_destroy=True))
    assert plan.target_type == "file" and plan.data_path == str(theirs)
    assert f"writes to {theirs} will destroy its data" in plan.warnings
    assert plan.step("prepare").destructive and plan.step("zonewrite-00").destructive
    assert not plan.step("zoneread-00").destructive
    # zsim's own files: by name, or marked by an earlier run
    own = tmp_path / DATA_NAME
    own.write_bytes(b"x")
    assert not make_plan(str(own), SMALL).destructive
    Path(f"{theirs}{MARKER_SUFFIX}").write_text("zsim\n")
    assert not make_plan(str(theirs), SMALL).destructive


def test_new_file_target(tmp_path):
    plan = make_plan(str(tmp_path / "bench.img"), SMALL)
    assert plan.target_type == "file" and plan.data_path == str(tmp_path / "bench.img")
    assert plan.steps[0].name == "prepare" and not plan.destructive
