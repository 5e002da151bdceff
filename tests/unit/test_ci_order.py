"""The slowest test files are collected first (tests/conftest.py), so CI's two workers start
them at once: every file named there must exist, or a rename would silently drop it."""

from __future__ import annotations

from tests.conftest import ROOT, SLOWEST_FILES


def test_every_slowest_file_exists():
    assert len(set(SLOWEST_FILES)) == len(SLOWEST_FILES)
    for path in SLOWEST_FILES:
        assert (ROOT / path).is_file(), path
