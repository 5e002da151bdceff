"""The Design page's tools beyond one design's figures: pinning designs side by side, the
one-page report download, and what the page's resilver figures share with ``zsim resilver``.

The computing is in :mod:`zsim.app.pins` (no Streamlit); this module draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import pins
from zsim.version import __version__

#: session_state key of the pinned designs (a list, at most pins.MAX_PINS)
PINS_KEY = "zsim_pins"


def pinned() -> list[model.Design]:
    """The pinned designs of this session (oldest first)."""
    found: list[model.Design] = st.session_state.setdefault(PINS_KEY, [])
    return found


def pins_section(
    design: model.Design,
    summary: dict[str, Any],
    summarize: Callable[[model.Design], dict[str, Any]],
) -> None:
    """ "Pin this design" / "Clear the pins" and the pinned designs side by side; each
    pinned design's ``summarize(design)`` is recomputed from the caches on every run (so a
    resilver still running when it was pinned fills in when done)."""
    st.subheader("Pinned designs")
    ss = pinned()
    c = st.columns([1, 1, 3])
    already = design in ss
    if c[0].button(
        "Pin this design",
        key="w_pin",
        disabled=already,
        help="Keep this design to compare with the next ones "
        f"(at most {pins.MAX_PINS}; the oldest goes first)",
    ):
        if len(ss) >= pins.MAX_PINS:
            ss.pop(0)
        ss.append(design)
        st.rerun()
    if c[1].button("Clear the pins", key="w_pins_clear", disabled=not ss):
        ss.clear()
        st.rerun()
    if already:
        c[2].caption("This design is pinned: change the sidebar to build the next one.")
    if not ss:
        st.caption(
            f"Pin two or three designs (up to {pins.MAX_PINS}) to see their capacity, "
            "performance with accuracy bands, resilver time, risk and cost side by side."
        )
        return
    summaries = [summary if d == design else summarize(d) for d in ss]
    st.dataframe(pins.side_by_side(summaries), hide_index=True, width="stretch")


def resilver_note(design: model.Design) -> str:
    """Why the page's resilver figures match ``zsim resilver`` of the resilver scenario, and
    differ from ``zsim resilver`` of a workload's scenario when the recordsize is "auto"."""
    text = (
        "The same figures as `zsim resilver --engine auto` (seed 1) on the resilver scenario "
        "(download below): the analytic scan where it answers (milliseconds, within 15 % of "
        "the simulated scan), else the simulated one in the background."
    )
    if design.recordsize == "auto" and design.workloads:
        rs = design.workload_recordsize(design.workloads[0])
        if rs != "128K":
            text += (
                f" `zsim resilver` on the first workload's scenario gives another time: it "
                f"holds {rs} records, while the page resilvers 128K records (OpenZFS's "
                f"default; recordsize 'auto' picks one per workload, not per pool)."
            )
    return text


def report_button(
    summary: dict[str, Any], *, scenario_toml: str, resilver_toml: str, capacity_notes: tuple
) -> None:
    """The one-page report (Markdown) and the resilver scenario as downloads."""
    text = pins.report_markdown(
        summary,
        version=__version__,
        scenario_toml=scenario_toml,
        capacity_notes=capacity_notes,
        resilver_note="resilver scenario: zsim-resilver.toml (download it beside this report)",
    )
    c = st.columns(3)
    c[0].download_button(
        "One-page report (Markdown)",
        text,
        file_name="zsim-design-report.md",
        mime="text/markdown",
        key="dl-report",
        help="Capacity, performance with accuracy bands, resilver, risk, cost, assumptions, "
        "the zsim version and the scenario",
    )
    c[1].download_button(
        "Resilver scenario (TOML)",
        resilver_toml,
        file_name="zsim-resilver.toml",
        mime="application/toml",
        key="dl-resilver-toml",
        help="The file `zsim resilver` runs to give the page's resilver figures",
    )
