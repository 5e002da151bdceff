"""The app's "scaling" page (app.py registers this file with st.navigation; the page's code is
zsim/app/pages/scaling_page.py)."""

from zsim.app.pages import scaling_page

scaling_page.render()
