"""The app's six pages; each module has a ``render()`` that ``app.py`` hands to st.navigation.

:mod:`~zsim.app.pages.widgets` holds what the pages share (the design sidebar, the error
guard, the caches, the download buttons). This package is the only part of zsim that imports
Streamlit, the optional ``zsim[app]`` extra.
"""
