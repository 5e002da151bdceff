"""The app's "design" page (app.py registers this file with st.navigation; the page's code is
zsim/app/pages/design_page.py)."""

from zsim.app.pages import design_page

design_page.render()
