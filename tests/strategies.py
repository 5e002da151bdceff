"""Hypothesis strategies for layouts and disks, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def vdev_specs(draw, allow_draid: bool = True) -> str:
    """One compact data-vdev spec such as '2x raidz2 6', 'mirror 3', 'stripe 2'."""
    kinds = ["stripe", "mirror", "raidz"] + (["draid"] if allow_draid else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 4))}"
    count = draw(st.integers(1, 3))
    prefix = f"{count}x " if count > 1 else ""
    if kind == "mirror":
        return f"{prefix}mirror {draw(st.integers(2, 4))}"
    parity = draw(st.integers(1, 3))
    if kind == "raidz":
        return f"{prefix}raidz{parity} {draw(st.integers(parity + 1, 16))}"
    ndata = draw(st.integers(1, 12))
    spares = draw(st.integers(0, 2))
    children = draw(st.integers(ndata + parity + spares, ndata + parity + spares + 20))
    return f"draid{parity}:{ndata}d:{spares}s:{children}c"


@st.composite
def layouts(draw, allow_draid: bool = True, support: bool = True) -> str:
    parts = draw(st.lists(vdev_specs(allow_draid), min_size=1, max_size=3))
    text = " + ".join(parts)
    if support:
        if draw(st.booleans()):
            text += draw(st.sampled_from([" log 1", " log mirror 2", " log 2x mirror 2"]))
        if draw(st.booleans()):
            text += draw(st.sampled_from([" special mirror 2", " special mirror 3"]))
        if draw(st.booleans()):
            text += f" cache {draw(st.integers(1, 2))}"
    return text


#: Disk sizes from a small SSD to a large HDD, in bytes.
disk_sizes = st.integers(min_value=8 * 10**9, max_value=30 * 10**12)
ashifts = st.sampled_from([9, 12, 13])
recordsizes = st.sampled_from([1 << k for k in range(9, 25)])
