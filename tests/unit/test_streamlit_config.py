"""The app's Streamlit settings (issue 19, item 5): it listens on this machine only, and the
README says how to expose it deliberately."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_app_listens_on_localhost_only():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"
    # the settings that were there before stay
    assert config["server"]["showEmailPrompt"] is False
    assert config["server"]["maxUploadSize"] == 20
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"


def test_readme_says_how_to_expose_the_app():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--server.address 0.0.0.0" in readme and "127.0.0.1" in readme
