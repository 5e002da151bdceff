"""The app's five pages; each module has a ``render()`` that ``app.py`` hands to st.navigation."""
