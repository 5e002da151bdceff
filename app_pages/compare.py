"""The app's "compare" page (app.py registers this file with st.navigation; the page's code is
zsim/app/pages/compare_page.py)."""

from zsim.app.pages import compare_page

compare_page.render()
