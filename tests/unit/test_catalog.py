"""The hardware catalog: every shipped profile validates and names its sources."""

from __future__ import annotations

import pytest

from zsim.errors import CatalogError
from zsim.hardware.catalog import SCHEMA, list_profiles, load_profile, parse_profile


def test_catalog_has_the_required_spread():
    kinds = [load_profile(n).kind for n in list_profiles()]
    assert kinds.count("hdd") >= 6
    assert kinds.count("ssd") + kinds.count("nvme") >= 4
    assert kinds.count("hba") >= 4
    for name in (
        "seagate-ironwolf-12tb",
        "wd-ultrastar-sn840-3.2tb",
        "lsi-9211-8i",
        "lsi-9300-8i",
        "lsi-9400-16i",
        "lsi-9500-16i",
    ):
        assert name in list_profiles()


@pytest.mark.parametrize("name", list_profiles())
def test_every_figure_has_a_source(name):
    profile = load_profile(name)
    for key, value in profile.to_dict().items():
        if key in SCHEMA and SCHEMA[key][2] and value is not None:
            assert profile.source_of(key), f"{name}: {key} has no source"


@pytest.mark.parametrize("name", list_profiles("hdd"))
def test_hdd_profiles_are_physically_plausible(name):
    p = load_profile(name)
    assert p.rpm in (5400, 5900, 7200, 10000, 15000)
    assert 50e6 < p.max_sustained < 400e6
    if p.min_sustained:
        assert p.min_sustained < p.max_sustained
    assert p.size_bytes > 10**12


def test_inline_table_uses_the_same_schema():
    p = load_profile(
        {
            "kind": "hdd",
            "capacity": "5TB",
            "rpm": 7200,
            "max_sustained": "180MB/s",
            "min_sustained": "90MB/s",
            "avg_seek": "8.5ms",
            "sector": 4096,
        }
    )
    assert p.size_bytes == 5 * 10**12 and p.avg_seek == pytest.approx(0.0085)
    assert p.physical_sector_bytes == 4096
    nvme = load_profile(
        {
            "kind": "nvme",
            "capacity": "3.2TB",
            "read_bw": "3.5GB/s",
            "write_bw": "3.3GB/s",
            "read_iops": 780000,
            "write_iops": 260000,
        }
    )
    assert nvme.read_bw == 3.5e9


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        (
            {"kind": "hdd", "capacity": "5TB", "rpm": 7200, "max_sustained": "180MB/s", "rpmm": 1},
            "did you mean 'rpm'",
        ),
        ({"kind": "floppy"}, "'kind' must be one of"),
        ({"kind": "hdd", "capacity": "5TB", "rpm": 7200}, "needs max_sustained"),
        ({"kind": "hdd", "capacity": "-5TB", "rpm": 7200, "max_sustained": "1MB/s"}, "negative"),
        (
            {"kind": "hdd", "capacity": "5TB", "rpm": "fast", "max_sustained": "1MB/s"},
            "not a whole number",
        ),
        (
            {"kind": "nvme", "capacity": "1TB", "read_bw": "1GB/s", "write_bw": "1GB/s", "rpm": 1},
            "does not apply to a nvme",
        ),
        (
            {
                "kind": "hdd",
                "capacity": "5TB",
                "rpm": 7200,
                "max_sustained": "100MB/s",
                "min_sustained": "200MB/s",
            },
            "swap them",
        ),
    ],
)
def test_bad_profiles_say_what_to_fix(table, fragment):
    with pytest.raises(CatalogError, match=fragment):
        parse_profile(table)


def test_catalog_file_without_sources_is_rejected():
    table = {"kind": "hba", "ports": 8, "lane_rate": "12Gb/s", "pcie_gen": 3, "pcie_lanes": 8}
    with pytest.raises(CatalogError, match="no source"):
        parse_profile(table, require_sources=True)


def test_unknown_name_suggests_a_close_one():
    with pytest.raises(CatalogError, match="did you mean 'seagate-ironwolf-12tb'"):
        load_profile("seagate-ironwolf-12t")


def test_profile_file_by_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('kind = "ssd"\ncapacity = "1TB"\nread_bw = "550MB/s"\nwrite_bw = "520MB/s"\n')
    assert load_profile(str(path)).name == "mine"
    path.write_text('kind = "ssd"\ncapacity = "1TB\n')
    with pytest.raises(CatalogError, match="not valid TOML"):
        load_profile(str(path))
