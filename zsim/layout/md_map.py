"""Where Linux md and btrfs put a byte: pure logical-offset → (member, member offset) maps.

Offsets are bytes. For md, member offsets count from the start of the member's data area
(add :func:`zsim.layout.mdraid.md_data_offset` for the device offset); for btrfs, from the
start of the device.

Sources:

* RAID0 (``drivers/md/raid0.c``, ``map_sector()``): with equal members one zone; chunk c is
  on member c mod n at chunk row c div n.
* RAID10 near=2 (``drivers/md/raid10.c``, ``__raid10_find_phys()``): chunk c's copies are
  "near" slots 2c and 2c+1 of an n-wide grid: slot s is on member s mod n at row s div n,
  so the copies sit on adjacent members (the second wraps to member 0 of the next row when
  the first is the last member, which happens for odd n).
* RAID5/6 ``left-symmetric`` (``drivers/md/raid5.c``, ``raid5_compute_sector()``,
  ``ALGORITHM_LEFT_SYMMETRIC``; md's default, ``Documentation/admin-guide/md.rst``): stripe
  (chunk row) r has P on member ``d − r mod n`` for RAID5 (d = n − 1 data members) and on
  ``n − 1 − r mod n`` for RAID6 with Q on the next member (wrapping); data chunk i of the
  row is on member ``(P + 1 + i) mod n`` (RAID5) or ``(P + 2 + i) mod n`` (RAID6).
* btrfs chunks (``fs/btrfs/volumes.c``, ``btrfs_create_chunk()`` / ``gather_device_info()``):
  a data chunk's stripes go to the devices with the most unallocated space (ties: device
  order); RAID1: 2 stripes of up to 1 GiB (``BTRFS_MAX_DATA_CHUNK_SIZE`` 10 GiB caps the
  chunk, the per-device stripe is 1 GiB); RAID10: every device (an even count) holds a 1 GiB
  stripe, pairs of stripes mirror each other and data rotates over the pairs in
  ``BTRFS_STRIPE_LEN`` = 64 KiB elements (``btrfs_map_block()``). The first 1 MiB of each
  device is reserved (``BTRFS_DEVICE_RANGE_RESERVED``).
"""

from __future__ import annotations

from dataclasses import dataclass

from zsim.units import GiB, KiB, MiB

BTRFS_STRIPE_LEN = 64 * KiB  # fs/btrfs/volumes.h
BTRFS_DEVICE_STRIPE = GiB  # data chunk stripe per device (fs/btrfs/volumes.c)
BTRFS_RESERVED = MiB  # BTRFS_DEVICE_RANGE_RESERVED


@dataclass(frozen=True)
class Piece:
    """One contiguous part of a logical range on one member.

    ``member`` index, ``offset`` on the member (bytes, from its data start), ``nbytes``;
    ``logical`` the array offset of its first byte; ``row`` the chunk row (stripe) and
    ``column`` the data chunk index within the row (RAID5/6; 0 for other levels).
    """

    member: int
    offset: int
    nbytes: int
    logical: int
    row: int = 0
    column: int = 0


def md_data_members(level: int, width: int) -> int:
    """Data chunks per row: RAID0 n, RAID1 1, RAID10 (near 2) n/2, RAID5 n − 1, RAID6 n − 2."""
    return {0: width, 1: 1, 10: width // 2, 5: width - 1, 6: width - 2}[level]


def parity_members(level: int, width: int, row: int) -> tuple[int, ...]:
    """Members holding parity of chunk row ``row``: (P,) for RAID5, (P, Q) for RAID6."""
    if level == 5:
        return ((width - 1 - row % width),)
    if level == 6:
        p = width - 1 - row % width
        return (p, (p + 1) % width)
    return ()


def raid56_member(level: int, width: int, row: int, column: int) -> int:
    """Member of data chunk ``column`` of row ``row`` (left-symmetric)."""
    p = parity_members(level, width, row)[0]
    return (p + (1 if level == 5 else 2) + column) % width


def raid10_copies(width: int, chunk_index: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(member, chunk row) of the two near copies of logical chunk ``chunk_index``."""
    first, second = 2 * chunk_index, 2 * chunk_index + 1
    return (first % width, first // width), (second % width, second // width)


def md_locate(level: int, width: int, chunk: int, logical: int) -> list[tuple[int, int]]:
    """Every (member, member offset) holding the byte at ``logical`` (copies for RAID1/10)."""
    if level == 1:
        return [(m, logical) for m in range(width)]
    index, within = divmod(logical, chunk)
    if level == 0:
        row, member = divmod(index, width)
        return [(member, row * chunk + within)]
    if level == 10:
        return [(m, r * chunk + within) for m, r in raid10_copies(width, index)]
    ndata = md_data_members(level, width)
    row, column = divmod(index, ndata)
    return [(raid56_member(level, width, row, column), row * chunk + within)]


def md_pieces(level: int, width: int, chunk: int, logical: int, nbytes: int) -> list[Piece]:
    """Split a logical range into per-chunk pieces on their first (or only) copy.

    RAID1 and RAID10 list the first copy only; :func:`md_locate` gives the others.
    """
    pieces: list[Piece] = []
    end = logical + nbytes
    pos = logical
    ndata = md_data_members(level, width)
    while pos < end:
        if level == 1:
            pieces.append(Piece(0, pos, end - pos, pos))
            break
        index, within = divmod(pos, chunk)
        size = min(chunk - within, end - pos)
        member, offset = md_locate(level, width, chunk, pos)[0]
        row, column = divmod(index, ndata) if level in (5, 6) else (index, 0)
        pieces.append(Piece(member, offset, size, pos, row, column))
        pos += size
    return pieces


# ---------------------------------------------------------------- btrfs


@dataclass(frozen=True)
class BtrfsChunk:
    """One data chunk: ``devices`` in stripe order and each stripe's device ``offsets``."""

    devices: tuple[int, ...]
    offsets: tuple[int, ...]
    logical_bytes: int


def btrfs_next_chunk(profile: str, used: list[int]) -> tuple[BtrfsChunk, list[int]]:
    """The next data chunk and the devices' allocated bytes after it: stripes go to the
    devices with the most unallocated space (least used; ties by device order)."""
    ndevices = len(used)
    order = sorted(range(ndevices), key=lambda d: (used[d], d))
    stripes = 2 if profile == "raid1" else ndevices - ndevices % 2
    chosen = tuple(order[:stripes])
    if profile == "raid10":
        chosen = tuple(sorted(chosen))
    offsets = tuple(used[d] for d in chosen)
    after = list(used)
    for d in chosen:
        after[d] += BTRFS_DEVICE_STRIPE
    logical = BTRFS_DEVICE_STRIPE * (1 if profile == "raid1" else stripes // 2)
    return BtrfsChunk(chosen, offsets, logical), after


def btrfs_allocate_chunks(profile: str, ndevices: int, count: int) -> list[BtrfsChunk]:
    """The first ``count`` data chunks a fresh filesystem allocates (:func:`btrfs_next_chunk`)."""
    used = [BTRFS_RESERVED] * ndevices
    chunks = []
    for _ in range(count):
        chunk, used = btrfs_next_chunk(profile, used)
        chunks.append(chunk)
    return chunks


def btrfs_chunk_copies(
    profile: str, chunk: BtrfsChunk, within: int, nbytes: int
) -> list[list[tuple[int, int, int]]]:
    """Pieces of a range inside one chunk: a list per stripe element, each the copies as
    (device, device offset, bytes)."""
    if profile == "raid1":
        return [
            [(d, o + within, nbytes) for d, o in zip(chunk.devices, chunk.offsets, strict=True)]
        ]
    pairs = len(chunk.devices) // 2
    out = []
    pos, end = within, within + nbytes
    while pos < end:
        element, inner = divmod(pos, BTRFS_STRIPE_LEN)
        size = min(BTRFS_STRIPE_LEN - inner, end - pos)
        row, pair = divmod(element, pairs)
        at = row * BTRFS_STRIPE_LEN + inner
        out.append(
            [(chunk.devices[k], chunk.offsets[k] + at, size) for k in (2 * pair, 2 * pair + 1)]
        )
        pos += size
    return out


# ---------------------------------------------------------------- RAID5/6 stripe writes


@dataclass(frozen=True)
class StripePlan:
    """What md does for the writes landing in one chunk row of a RAID5/6 array.

    ``heads`` stripe_heads used (one per 4 KiB page row touched); ``reads`` and ``writes``
    as (member, member offset, bytes) runs; ``rmw_heads``/``rcw_heads``/``full_heads`` how
    many page rows took each path; ``data_bytes`` new data, ``parity_input_bytes`` the data
    the parity is computed over.
    """

    row: int
    heads: int
    reads: tuple[tuple[int, int, int], ...]
    writes: tuple[tuple[int, int, int], ...]
    rmw_heads: int
    rcw_heads: int
    full_heads: int
    data_bytes: int
    parity_input_bytes: int


def _runs(member: int, base: int, page: int, pages: list[int]) -> list[tuple[int, int, int]]:
    """Sorted page indices → contiguous (member, offset, bytes) runs."""
    runs: list[tuple[int, int, int]] = []
    start = prev = -2
    for p in sorted(pages):
        if p != prev + 1:
            if start >= 0:
                runs.append((member, base + start * page, (prev - start + 1) * page))
            start = p
        prev = p
    if start >= 0:
        runs.append((member, base + start * page, (prev - start + 1) * page))
    return runs


def plan_stripe_write(
    level: int,
    width: int,
    chunk: int,
    row: int,
    columns: dict[int, list[tuple[int, int]]],
    page: int = 4096,
    raid6_rmw: bool = True,
    failed: frozenset[int] = frozenset(),
) -> StripePlan:
    """md's choice per stripe_head (``handle_stripe_dirtying()`` in ``drivers/md/raid5.c``).

    ``columns`` maps a data column of row ``row`` to the within-chunk byte intervals being
    written (rounded out to pages). Per page row md counts the blocks it must read:
    read-modify-write = old data of the written blocks + P (+ Q); reconstruct-write = the
    data blocks not being written. It takes rmw only when strictly cheaper (ties go to rcw
    under the default ``rmw_level``); a page row with every data block written reads
    nothing. RAID6 rmw needs ``xor_syndrome`` (Linux ≥ 4.1 on SSE2/AVX2 CPUs).

    ``failed``: members that are missing (a degraded array). A path that would read a
    missing block is not possible; when neither is, md reads every surviving block of the
    row and computes the missing one (``handle_stripe_fill()``). Nothing is written to a
    missing member.
    """
    ndata = md_data_members(level, width)
    parity = parity_members(level, width, row)
    npages = chunk // page
    covered: dict[int, set[int]] = {}
    for col, intervals in columns.items():
        pages: set[int] = set()
        for a, b in intervals:
            pages.update(range(a // page, min(npages, -(-b // page))))
        covered[col] = pages
    members = [raid56_member(level, width, row, c) for c in range(ndata)]
    base = row * chunk
    heads = sorted(set().union(*covered.values())) if covered else []
    reads: dict[int, list[int]] = {}
    writes: dict[int, list[int]] = {}
    rmw = rcw = full = 0
    allow_rmw = level == 5 or raid6_rmw
    for p in heads:
        written = [c for c in range(ndata) if p in covered.get(c, ())]
        k = len(written)
        if k == ndata:
            full += 1
            to_read: list[int] = []
        else:
            rmw_read = [members[c] for c in written] + list(parity)
            rcw_read = [members[c] for c in range(ndata) if c not in written]
            rmw_ok = allow_rmw and not failed.intersection(rmw_read)
            rcw_ok = not failed.intersection(rcw_read)
            if rmw_ok and (len(rmw_read) < len(rcw_read) or not rcw_ok):
                rmw += 1
                to_read = rmw_read
            elif rcw_ok:
                rcw += 1
                to_read = rcw_read
            else:  # degraded: read what survives of the row, compute the rest
                rcw += 1
                to_read = [m for m in [*members, *parity] if m not in failed]
        for m in to_read:
            reads.setdefault(m, []).append(p)
        for m in [members[c] for c in written] + list(parity):
            if m not in failed:
                writes.setdefault(m, []).append(p)
    read_runs = [r for m, ps in sorted(reads.items()) for r in _runs(m, base, page, ps)]
    write_runs = [r for m, ps in sorted(writes.items()) for r in _runs(m, base, page, ps)]
    data_bytes = sum(len(ps) for ps in covered.values()) * page
    return StripePlan(
        row=row,
        heads=len(heads),
        reads=tuple(read_runs),
        writes=tuple(write_runs),
        rmw_heads=rmw,
        rcw_heads=rcw,
        full_heads=full,
        data_bytes=data_bytes,
        parity_input_bytes=len(heads) * ndata * page,
    )
