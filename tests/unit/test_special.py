"""Special vdevs and metadata: indirect blocks go to the special class, small blocks too."""

from __future__ import annotations

import pytest

from zsim.des.engine import Engine
from zsim.machine.run_control import RunControl
from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate
from zsim.zfs.indirect import BP_COMPRESSED_BYTES

KiB = 1024


def _scenario(layout: str, *, ssb: str | int = 0, rm: str = "all", rs: str = "16K"):
    return scenario_from_dict(
        {
            "hardware": {
                "disk": "seagate-ironwolf-12tb",
                "special_device": "samsung-870-evo-500gb",
                "ram": "4GiB",
                "zfs_version": "2.2",
            },
            "pool": {
                "layout": layout,
                "recordsize": rs,
                "fill": 0.01,
                "special_small_blocks": ssb,
                "redundant_metadata": rm,
            },
            "workload": {
                "tool": "fio",
                "rw": "randwrite",
                "bs": rs,
                "numjobs": 4,
                "iodepth": 4,
                "size": "8GiB",
                "overwrite": True,
            },
        }
    )


def _indirects(rm: str, records: int) -> list[tuple[int, int]]:
    engine = Engine(_scenario("raidz2 6", rm=rm), 1, RunControl())
    return engine.zfs.indirect_writes({(0, r): None for r in range(records)})


def test_indirect_blocks_per_level_and_copies():
    """8 GiB of 16 KiB records = 524,288 records: two levels of 1024-pointer indirect
    blocks. Records 0…4999 have 5 level-1 parents and 1 level-2 parent."""
    assert len(_indirects("all", 5000)) == (5 + 1) * 2
    assert len(_indirects("most", 5000)) == 5 + 1 * 2
    assert len(_indirects("none", 5000)) == 5 + 1
    full_l1 = max(p for p, _ in _indirects("all", 5000))
    assert full_l1 == 1024 * BP_COMPRESSED_BYTES  # 80 KiB: a full level-1 block


def test_metadata_goes_to_the_special_vdev():
    r = simulate(_scenario("raidz2 6 special mirror 2"), seed=1, max_sim_seconds=3)
    written = r.details["device_write_bytes"]
    special = written["sdg"] + written["sdh"]
    assert r.details["indirect_blocks_written"] > 0
    assert not r.details["data_on_special"]
    # each indirect block copy lands on both sides of the special mirror
    assert special >= r.details["indirect_blocks_written"] * 4 * KiB * 2
    data = sum(written[d] for d in ("sda", "sdb", "sdc", "sdd", "sde", "sdf"))
    # the records themselves stay on the raidz2 (the run may end before its last txg syncs)
    assert data >= 0.5 * r.write.bytes_per_s * r.sim_seconds


def test_small_blocks_go_to_the_special_vdev():
    r = simulate(_scenario("raidz2 6 special mirror 2", ssb="16K"), seed=1, max_sim_seconds=3)
    written = r.details["device_write_bytes"]
    assert r.details["data_on_special"]
    data = sum(written[d] for d in ("sda", "sdb", "sdc", "sdd", "sde", "sdf"))
    special = written["sdg"] + written["sdh"]
    assert data <= 64 * KiB * 6 * max(1, r.details["txgs_synced"])  # labels/uberblocks only
    assert special > 100 * data


def test_special_small_blocks_below_the_record_size_keeps_data_on_the_pool():
    r = simulate(_scenario("raidz2 6 special mirror 2", ssb="8K"), seed=1, max_sim_seconds=2)
    assert not r.details["data_on_special"]


@pytest.mark.parametrize("rm", ["all", "most"])
def test_without_special_the_pool_writes_its_metadata(rm):
    r = simulate(_scenario("raidz2 6", rm=rm), seed=1, max_sim_seconds=3)
    assert r.details["indirect_blocks_written"] > 0
