"""Writing files so that nothing is ever half-written: a temporary file beside the target,
flushed and fsynced, then renamed over it (``os.replace`` is atomic on POSIX); and reading
input files safely (:func:`read_bytes`, :func:`read_text`): regular files only, each kind with
a size limit, errors that name the file and the fix but never quote its content."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from zsim.errors import ZsimError


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(target: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` atomically; the folder must exist."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file 0600; give it the mode any new file gets (0666 less the
        # umask), or the mode of the file it replaces
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- reading input files

#: The most zsim reads from one file of each kind (bytes). A file above its limit is refused
#: before it is read, so a huge or endless input can never fill the memory.
TOML_LIMIT = 16 * 2**20  # scenario, profile, plan.toml, workloads
TEXT_LIMIT = 64 * 2**20  # a tool's text output (dd, zpool), a fio job file
RESULTS_LIMIT = 512 * 2**20  # fio JSON, a results file (JSON lines)


class InputFileError(ZsimError):
    """An input file zsim refuses to read: ``path``, and ``problem`` (what is wrong and the
    fix, without the file's name) for callers that name the file their own way."""

    def __init__(self, what: str, path: str, problem: str):
        self.path, self.problem = path, problem
        super().__init__(f"{what} {path} {problem}")


_KINDS = {"fifo": stat.S_ISFIFO, "device": stat.S_ISBLK, "character device": stat.S_ISCHR}


def _size_text(nbytes: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:g} {unit}"
    return f"{nbytes} bytes"


def read_bytes(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    Raises :class:`~zsim.errors.ZsimError` naming the file, the problem and the fix — for a
    missing file, a directory, a FIFO or device (never opened for reading, so a FIFO cannot
    block and ``/dev/zero`` cannot fill the memory), a file over ``limit`` (checked before
    reading and while reading, for files that grow or lie about their size) and a read error.
    ``what`` names the kind of file in messages ("scenario", "profile"…). Never quotes the
    file's content.
    """
    name = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputFileError(what, name, "does not exist; check the path") from None
    except OSError as err:
        raise InputFileError(
            what, name, f"cannot be opened ({err.strerror}); check the path and its permissions"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            for word, test in _KINDS.items():
                if test(info.st_mode):
                    kind = f"a {word}, not a regular file"
            raise InputFileError(what, name, f"is {kind}; give a regular file")
        too_big = InputFileError(
            what,
            name,
            f"is larger than the {_size_text(limit)} zsim reads from such a file; give a "
            "smaller file",
        )
        if info.st_size > limit:
            raise too_big
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        got = 0
        while True:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            except OSError as err:
                raise InputFileError(
                    what, name, f"cannot be read ({err.strerror}); give a readable regular file"
                ) from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                raise too_big
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8; :class:`~zsim.errors.ZsimError` (saying where, not
    what) when it is not UTF-8 text."""
    data = read_bytes(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ZsimError(
            f"{what} {os.fspath(path)} is not UTF-8 text (byte {err.start} cannot be decoded); "
            "give a text file"
        ) from None
