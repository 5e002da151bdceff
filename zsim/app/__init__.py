"""The Streamlit app: its pages (:mod:`zsim.app.pages`, the only modules that import
Streamlit) and the pure functions behind them (design, views, formatting), which work
without the optional ``zsim[app]`` extra. ``app.py`` runs the pages."""
