"""The Streamlit app's pages and the pure functions behind them (app.py runs them)."""
