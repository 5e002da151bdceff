"""The app's "calibrate" page (app.py registers this file with st.navigation; the page's code is
zsim/app/pages/calibrate_page.py)."""

from zsim.app.pages import calibrate_page

calibrate_page.render()
