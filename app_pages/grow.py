"""The app's "Grow this pool" page (app.py registers this file with st.navigation; the page's
code is zsim/app/pages/grow_page.py)."""

from zsim.app.pages import grow_page

grow_page.render()
