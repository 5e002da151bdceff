"""The errors zsim raises for bad input.

Every message names the problem and the fix, in one sentence or two, so that the command
line can print it on one line and the app can show it with ``st.error``.
"""

from __future__ import annotations


class ZsimError(ValueError):
    """Bad input to zsim: a malformed layout, an impossible size, an unknown key, ...

    Subclasses :class:`ValueError` so that callers that already catch that keep working.
    """


class LayoutError(ZsimError):
    """A pool layout that cannot be parsed or cannot exist."""


class UnitError(ZsimError):
    """A size, rate or time that cannot be parsed."""


class CatalogError(ZsimError):
    """A hardware profile that is missing or does not validate."""


def check_arg(
    function: str, name: str, value: object, kinds: type | tuple[type, ...], want: str
) -> None:
    """Raise :class:`ZsimError` unless ``value`` is one of ``kinds`` (never a ``bool`` where a
    number is wanted): "``function``: ``name`` must be ``want``, not <type>"."""
    number_wanted = (isinstance(kinds, tuple) and (int in kinds or float in kinds)) or kinds in (
        int,
        float,
    )
    if isinstance(value, kinds) and not (number_wanted and isinstance(value, bool)):
        return
    raise ZsimError(f"{function}: {name} must be {want}, not {type(value).__name__}")
