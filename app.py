"""zsim's Streamlit app: ``streamlit run app.py`` (the README's first command starts it).

Six pages share the design in the sidebar (and in the URL's query string): design a pool,
compare every layout of its disks, how vdevs scale (teaching), calibrate and validate from
fio/dd/zpool output, the resilver, and growing the pool (zpool attach / zpool add). The
pages live in ``zsim/app/pages`` (``app_pages/`` holds the one-line scripts st.navigation
runs); they only call zsim's Python API (through ``zsim/app/design.py``).
"""

from __future__ import annotations

import streamlit as st

from zsim.app.pages import widgets

st.set_page_config(page_title="zsim — ZFS pool planner", page_icon="💽", layout="wide")

# One small file per page under app_pages/ (so AppTest.switch_page can select it); each
# calls its module's render().
# The Design page is the default, served at "/"; the same page is also served at "/design"
# (a hidden entry: Streamlit gives the default page the root and needs a distinct url_path).
PAGES = [
    st.Page("app_pages/design.py", title="Design a pool", url_path="home", default=True),
    st.Page("app_pages/design.py", title="Design a pool", url_path="design", visibility="hidden"),
    st.Page("app_pages/compare.py", title="Compare layouts", url_path="compare"),
    st.Page("app_pages/scaling.py", title="How vdevs scale", url_path="scaling"),
    st.Page("app_pages/calibrate.py", title="Calibrate and validate", url_path="calibrate"),
    st.Page("app_pages/resilver.py", title="Resilver", url_path="resilver"),
    st.Page("app_pages/grow.py", title="Grow this pool", url_path="grow"),
]

page = st.navigation(PAGES)
design = widgets.design_sidebar()
st.session_state["zsim_page_query"] = {}  # the page sets its own URL parameters, if any
page.run()
widgets.sync_query(design, st.session_state.get("zsim_page_query"))
