"""Linux md RAID geometry: where the data starts on each member and how big the array is.

Sources: mdadm ``super1.c`` — ``choose_bm_space()`` and the data-offset rule at the end of
``validate_geometry1()`` for the default metadata 1.2 (superblock 4 KiB from the start, an
internal-bitmap area, and up to 128 MiB of reshape headroom, 0.1 % of the device, the total
rounded up to 1 MiB). The resulting 264,192-sector (129 MiB) data offset on large disks is the
figure ``mdadm --examine`` shows. Canonical's installer (subiquity, ``get_raid_size()``)
checks the same rule against real arrays and rounds each member's data area down to 1 MiB;
zsim also rounds it down to whole chunks for the striped levels, as md's RAID0/5/6/10 do.
"""

from __future__ import annotations

from zsim.units import MiB

SECTOR = 512
_ONE_MIB_SECTORS = 2048
_DEFAULT_CHUNK_KIB = 512


def md_data_offset(device_bytes: int) -> int:
    """Bytes before the first data byte on a member of ``device_bytes`` (metadata 1.2)."""
    sectors = device_bytes // SECTOR
    sectors -= sectors % _DEFAULT_CHUNK_KIB
    # choose_bm_space() in mdadm super1.c, spelled as it is there: sizes in 512 B sectors
    if sectors < 64 * 2:
        bitmap = 0
    elif sectors - 64 * 2 >= 200 * 1024 * 1024 * 2:
        bitmap = 128 * 2
    elif sectors - 4 * 2 > 8 * 1024 * 1024 * 2:
        bitmap = 64 * 2
    else:
        bitmap = 4 * 2
    # validate_geometry1()'s reshape headroom, 128 MiB in sectors, as mdadm spells it
    headroom = 128 * 1024 * 2
    while (headroom << 10) > sectors and headroom // 2 >= _DEFAULT_CHUNK_KIB * 2 * 2:
        headroom >>= 1
    offset = 12 * 2 + bitmap + headroom
    offset = -(-offset // _ONE_MIB_SECTORS) * _ONE_MIB_SECTORS
    return offset * SECTOR


def md_member_data_bytes(device_bytes: int, level: int, chunk: int) -> int:
    """Bytes of one member used for array data: after the data offset, in whole units."""
    unit = MiB
    if level != 1:
        unit = max(unit, chunk)
    usable = device_bytes - md_data_offset(device_bytes)
    return max(0, usable // unit * unit)


def md_array_bytes(level: int, member_data_bytes: list[int], chunk: int) -> int:
    """Size of the md block device from the members' data areas (the smallest one counts)."""
    n = len(member_data_bytes)
    smallest = min(member_data_bytes)
    if level == 0:
        # RAID0 uses every member fully (zones); with equal members this is n × size.
        return sum(member_data_bytes)
    if level == 1:
        return smallest
    if level == 10:
        # near=2: every chunk twice, on adjacent members; n × size / 2 in whole chunks.
        return (smallest * n // 2) // chunk * chunk
    if level == 5:
        return smallest * (n - 1)
    if level == 6:
        return smallest * (n - 2)
    raise ValueError(f"md level {level} is not modelled")
