"""The DiskSim parameter-file reader, on the drives' real files and on malformed input."""

from __future__ import annotations

from pathlib import Path

import pytest

from zsim.errors import ZsimError
from zsim.hardware import hdd
from zsim.hardware.disksim_params import (
    DisksimDrive,
    disksim_overrides,
    drive_from_disksim,
    parse_disksim,
    parse_disksim_file,
    parse_seek_file,
)

PARAMS = Path(__file__).resolve().parents[2] / "calibration" / "reference" / "disksim" / "params"


def _params(d: DisksimDrive) -> hdd.HddParams:
    curve = hdd.fit_seek_curve(1e-3, 5e-3, 10e-3)
    return hdd.HddParams(
        capacity=d.blocks * 512,
        outer_rate=1e6,
        inner_rate=1e6,
        seek_read=curve,
        seek_write=curve,
        **disksim_overrides(d),  # type: ignore[arg-type]
    )


def test_hp_c2247a_model() -> None:
    d = drive_from_disksim(PARAMS / "hp_c2247a.parv")
    assert (d.blocks, d.surfaces, d.cylinders, d.rpm) == (2054864, 13, 2051, 5400.0)
    assert len(d.zones) == 8
    assert d.zones[0].blocks_per_track == 96 and d.zones[-1].last_cyl == 2050
    assert (d.zones[0].track_skew, d.zones[0].cyl_skew) == (14, 32)
    # DiskSim's block count is met exactly once empty space and spare tracks are taken off
    assert d.zones[-1].first_lbn + d.zones[-1].lbns == d.blocks and d.notes == ()
    # HPL equation with the first ten distances tabulated
    assert d.seek(1) == pytest.approx(2.89) and d.seek(10) == pytest.approx(4.99)
    assert d.seek(100) == pytest.approx(3.81 + 0.33 * 10)
    assert d.seek(1000) == pytest.approx(7.75 + 0.0059 * 1000)
    assert (d.head_switch_ms, d.write_settle_ms) == (0.89, 0.65)
    assert d.bus_read_block_ms == pytest.approx(0.1701)
    assert d.bus_write_block_ms == pytest.approx(0.18686)
    assert (d.fast_write_level, d.segments, d.segment_blocks, d.max_readahead) == (0, 2, 256, 128)
    assert d.read_miss_ms == (0.55821, 0.55821)


def test_extracted_seek_curves() -> None:
    rz26 = drive_from_disksim(PARAMS / "dec_rz26.parv")
    assert len(rz26.zones) == 1 and rz26.cylinders == 2599
    assert len(rz26.seek.distances) == 64
    assert rz26.zones[-1].first_lbn + rz26.zones[-1].lbns == rz26.blocks
    c9 = drive_from_disksim(PARAMS / "cheetah9LP.parv")
    assert (len(c9.zones), c9.cylinders, len(c9.seek.distances)) == (11, 6962, 106)
    assert c9.fast_write_level == 2 and c9.bus_read_block_ms == pytest.approx(0.105)
    ibm = drive_from_disksim(PARAMS / "ibm18es.parv")
    assert (len(ibm.zones), ibm.cylinders, len(ibm.seek.distances)) == (55, 11474, 151)
    # linear interpolation between tabulated points
    table = ibm.seek
    d0, d1 = table.distances[20], table.distances[21]
    mid = (d0 + d1) // 2
    t0, t1 = table.times_ms[20], table.times_ms[21]
    assert table(mid) == pytest.approx(t0 + (t1 - t0) * (mid - d0) / (d1 - d0))
    assert table(0) == 0.0


def test_every_validation_drive_loads_and_maps_its_blocks() -> None:
    for parv in sorted(PARAMS.glob("*.parv")):
        d = drive_from_disksim(parv)
        assert d.zones[-1].first_lbn + d.zones[-1].lbns >= d.blocks, parv.name
        # the HP C2490A model declares 2629 cylinders but its last zone ends on cylinder 2629
        assert d.zones[-1].last_cyl <= d.cylinders
        g = _params(d).geometry
        assert g is not None
        cyl, head, angle, left, bpt = hdd.geo_locate(g, d.blocks - 1)
        assert 0 <= cyl < d.cylinders and 0 <= head < d.surfaces
        assert 0.0 <= angle < 1.0 and left >= 1 and bpt > 0


def test_geometry_service_is_deterministic_and_sequential_reads_hit() -> None:
    d = drive_from_disksim(PARAMS / "hp_c2247a.parv")
    params = _params(d)
    st = hdd.HddState()
    t_miss, parts = hdd.service(params, st, 0.0, 1_000_000 * 512, 8 * 512, False)
    assert t_miss == pytest.approx(sum(parts.values()))
    # the next 8 blocks were read ahead: a hit costs overhead + bus, far below a miss
    now = t_miss + 0.02
    t_hit, _ = hdd.service(params, st, now, 1_000_008 * 512, 8 * 512, False)
    assert t_hit == pytest.approx(0.95343e-3 + 8 * 0.1701e-3 + 0.05665e-3)
    # a write-through write reaches the media: at least overhead + seek
    t_w, _ = hdd.service(params, st, now + t_hit + 0.01, 10 * 512, 8 * 512, True)
    assert t_w > 0.82391e-3 + 2.89e-3


def test_parser_blocks_lists_and_comments() -> None:
    text = """
    # comment
    disksim_bus B { type = 1, Read block transfer time = 0.17, # trailing
       Sub = inner_t { a = [ 1, 2.5, x ] }, }
    instantiate [ b0 ] as B
    topology disksim_bus b0 [ disksim_disk d0 [] ]
    """
    blocks = parse_disksim(text)
    b = blocks["B"]
    assert b["__type__"] == "disksim_bus" and b["type"] == 1
    assert b["Read block transfer time"] == 0.17
    assert b["Sub"] == {"a": [1, 2.5, "x"], "__type__": "inner_t"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("disksim_bus B { type = 1", "not closed"),
        ("disksim_bus B { type 1 }", "expected '='"),
        ("disksim_bus B { = 1 }", "'key = value' expected"),
        ("stray words here", "block"),
        ("disksim_bus B { a = [ 1, 2 }", "a value expected"),
    ],
)
def test_parser_rejects_malformed(text: str, fragment: str) -> None:
    with pytest.raises(ZsimError, match=fragment):
        parse_disksim(text, "bad.parv")


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ZsimError, match="does not exist"):
        drive_from_disksim(tmp_path / "none.parv")
    with pytest.raises(ZsimError, match="does not exist"):
        parse_disksim_file(tmp_path / "none.model")
    seek = tmp_path / "x.seek"
    seek.write_text("Seek distances measured: 2\n1, 1.0\nfoo\n")
    with pytest.raises(ZsimError, match=r"x\.seek:3"):
        parse_seek_file(seek)
    seek.write_text("Seek distances measured: 3\n1, 1.0\n2, 1.5\n")
    with pytest.raises(ZsimError, match="header says 3"):
        parse_seek_file(seek)
    parv = tmp_path / "d.parv"
    parv.write_text("disksim_disk D { Model = source gone.model }\n")
    with pytest.raises(ZsimError, match=r"gone\.model"):
        drive_from_disksim(parv)
    parv.write_text("disksim_bus B { type = 1 }\n")
    with pytest.raises(ZsimError, match="one disksim_disk"):
        drive_from_disksim(parv)
