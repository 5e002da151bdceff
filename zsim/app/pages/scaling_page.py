"""Page 3, "How vdevs scale" (teaching): performance against the number of disks for single
disks, mirrors and raidz2 vdevs of 4 against one raidz2 growing wider, for 4K and 1M reads and
writes, with the rule of thumb dashed; and the anatomy of one record on RAIDZ next to md
RAID6's chunks."""

from __future__ import annotations

from typing import Any

import streamlit as st

from zsim.app import anatomy, scaling_model, ui
from zsim.app import design as model
from zsim.app.pages import widgets
from zsim.units import MB, parse_size


def scaling_chart(rows: list[dict[str, Any]], workload: str, rule: bool) -> Any:
    import altair as alt

    sel = [r for r in rows if r["workload"] == workload]
    streaming = sel[0]["streaming"]
    key, unit = ("bytes_per_s", "MB/s") if streaming else ("iops", "IOPS")
    data = [
        {
            "family": r["family"],
            "disks": r["disks"],
            "layout": r["layout"],
            "vdevs": r["vdevs"],
            "limit": r["limit"],
            "source": "zsim",
            "value": r[key] / (MB if streaming else 1.0),
        }
        for r in sel
    ]
    if rule:
        data += [
            {
                "family": r["family"],
                "disks": r["disks"],
                "layout": r["layout"],
                "vdevs": r["vdevs"],
                "limit": "rule of thumb",
                "source": "rule of thumb",
                "value": r[f"rule_{key}"] / (MB if streaming else 1.0),
            }
            for r in sel
        ]
    return (
        alt.Chart(alt.Data(values=data))
        .mark_line(point=True)
        .encode(
            x=alt.X("disks:Q", title="disks in the pool"),
            y=alt.Y("value:Q", title=f"{workload}, {unit}"),
            color=alt.Color("family:N", title="pool built from", sort=list(scaling_model.FAMILIES)),
            strokeDash=alt.StrokeDash("source:N", title=None, sort=["zsim", "rule of thumb"]),
            tooltip=[
                "layout:N",
                "vdevs:Q",
                "source:N",
                alt.Tooltip("value:Q", format=",.0f", title=unit),
                "limit:N",
            ],
        )
        .properties(title=workload, height=260)
    )


RECORDS = ["4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M"]
MAX_DISKS = [8, 12, 16, 20, 24, 32, 48]


def _query_index(key: str, options: list[Any], default: Any) -> int:
    """The index of the URL's ``key`` among ``options`` (a shared link), else the default's."""
    text = st.query_params.get(key)
    for i, option in enumerate(options):
        if str(option) == text:
            return i
    return options.index(default)


def _query_int(key: str, low: int, high: int, default: int) -> int:
    try:
        value = int(st.query_params.get(key, default))
    except ValueError:
        return default
    return value if low <= value <= high else default


def render() -> None:
    st.title("How vdevs scale")
    design = st.session_state.get(widgets.DESIGN_KEY)
    disk: str | dict[str, Any] = "seagate-ironwolf-12tb"
    ram, cores = "64GiB", 8
    if design is not None:
        disk = dict(design.custom_disk) if design.disk == model.CUSTOM else design.disk
        ram, cores = design.ram, design.cpu_cores
    st.caption(
        f"Disks: {design.disk_label() if design else disk} (the sidebar's), {ram} of RAM. "
        "Random I/O on a pool goes as fast as its vdevs, not its disks: a raidz vdev reads a "
        "whole record from every data disk, so one wide raidz2 serves about one disk's worth "
        "of small random reads however wide it grows, while the same disks as mirrors or "
        "several narrow vdevs scale. Streaming scales with the data disks either way. "
        "Analytic engine; 64 fio jobs × iodepth 4 over 2 TiB."
    )
    max_disks = st.select_slider(
        "Up to how many disks",
        options=MAX_DISKS,
        value=MAX_DISKS[_query_index("max", MAX_DISKS, 24)],
        key="w_scale_max",
    )
    rule = st.checkbox("Show the rule of thumb (dashed)", value=True, key="w_scale_rule")
    query: dict[str, str] = {"max": str(max_disks)}
    with widgets.guard("scaling"):
        counts = list(range(4, int(max_disks) + 1, 4))
        with st.spinner("Computing every pool"):
            rows = scaling_model.scaling_rows(disk, counts, widgets.cached_simulate, ram, cores)
        c = st.columns(2)
        for i, w in enumerate(scaling_model.WORKLOADS):
            c[i % 2].altair_chart(scaling_chart(rows, w.name, rule), width="stretch")
        last = {
            r["family"]: r
            for r in rows
            if r["workload"] == "4K random read" and r["disks"] == counts[-1]
        }
        first = {
            r["family"]: r
            for r in rows
            if r["workload"] == "4K random read" and r["disks"] == counts[0]
        }
        m = st.columns(len(scaling_model.FAMILIES))
        for i, fam in enumerate(scaling_model.FAMILIES):
            m[i].metric(
                f"4K reads, {counts[-1]} disks: {fam}",
                f"{last[fam]['iops']:,.0f} IOPS",
                delta=f"{last[fam]['iops'] / first[fam]['iops']:.1f}× {counts[0]} disks",
                delta_color="off",
            )
        pick = st.columns(3)
        fam = pick[0].selectbox(
            "Scenario of one point: pool", scaling_model.FAMILIES, index=3, key="w_scale_fam"
        )
        n = pick[1].selectbox("disks", counts, index=len(counts) - 1, key="w_scale_n")
        names = [w.name for w in scaling_model.WORKLOADS]
        wname = pick[2].selectbox("workload", names, key="w_scale_w")
        work = scaling_model.WORKLOADS[names.index(wname)]
        point = scaling_model.scenario_dict(
            disk, scaling_model.family_layout(fam, n), work, ram, cores
        )
        toml = ui.to_toml_text(point)
        widgets.downloads("zsim-scaling", scenario_toml=toml, rows=rows, key="scaling")

    st.header("Anatomy of a record")
    st.caption(
        "How one record lands on the disks of a RAIDZ vdev — data, parity and skip (padding) "
        "sectors, from the same column map zsim's capacity, engines and resilver use — next to "
        "how md RAID6 puts the same bytes into chunks."
    )
    inputs = st.columns(5)
    record = inputs[0].selectbox(
        "Record size",
        RECORDS,
        index=_query_index("rec", RECORDS, "128K"),
        key="w_anat_record",
    )
    width = inputs[1].number_input(
        "RAIDZ width",
        min_value=2,
        max_value=24,
        value=_query_int("w", 2, 24, 8),
        key="w_anat_width",
    )
    parity = inputs[2].selectbox(
        "Parity", [1, 2, 3], index=_query_index("p", [1, 2, 3], 2), key="w_anat_parity"
    )
    ashift = inputs[3].selectbox(
        "ashift", [9, 12, 13], index=_query_index("ashift_a", [9, 12, 13], 12), key="w_anat_ashift"
    )
    chunk = inputs[4].selectbox(
        "md chunk",
        ["64K", "128K", "256K", "512K"],
        index=_query_index("chunk", ["64K", "128K", "256K", "512K"], "512K"),
        key="w_anat_chunk",
    )
    query.update(
        {"rec": record, "w": str(width), "p": str(parity), "ashift_a": str(ashift), "chunk": chunk}
    )
    st.session_state["zsim_page_query"] = query
    cols = st.columns(2)
    with cols[0], widgets.guard("RAIDZ anatomy"):
        a = anatomy.raidz_anatomy(parse_size(record), int(width), int(parity), int(ashift))
        s = a.summary
        st.altair_chart(
            anatomy.anatomy_chart(
                a, f"raidz{parity} of {width}, ashift {ashift}: one {record} record"
            ),
            width="stretch",
        )
        st.markdown(
            f"**{s['data_sectors']}** data + **{s['parity_sectors']}** parity + "
            f"**{s['skip_sectors']}** skip sectors = {ui.fmt_size(s['allocated_bytes'])} "
            f"allocated for {record}: **{s['overhead']:.0%}** overhead."
        )
        widgets.downloads("zsim-raidz-anatomy", rows=anatomy.anatomy_rows(a), key="anat-raidz")
    with cols[1], widgets.guard("md RAID6 anatomy"):
        md_width = max(int(width), 4)
        b = anatomy.md_raid6_anatomy(parse_size(record), md_width, parse_size(chunk))
        t = b.summary
        st.altair_chart(
            anatomy.anatomy_chart(b, f"md RAID6 of {md_width}, {chunk} chunks: the same {record}"),
            width="stretch",
        )
        rmw = (
            "needs a read-modify-write (it does not fill a whole stripe of "
            f"{ui.fmt_size(t['full_stripe_bytes'])})"
            if t["read_modify_write"]
            else "fills whole stripes: no read before the write"
        )
        st.markdown(f"Writing this record alone {rmw}.")
