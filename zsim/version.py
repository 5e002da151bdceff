"""zsim's own release number (hatch reads it from here for the wheel)."""

__version__ = "0.1.0"
