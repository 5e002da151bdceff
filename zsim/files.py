"""Writing files so that nothing is ever half-written: a temporary file beside the target,
flushed and fsynced, then renamed over it (``os.replace`` is atomic on POSIX)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(target: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` atomically; the folder must exist."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
