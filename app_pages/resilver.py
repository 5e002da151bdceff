"""The app's "resilver" page (app.py registers this file with st.navigation; the page's code is
zsim/app/pages/resilver_page.py)."""

from zsim.app.pages import resilver_page

resilver_page.render()
