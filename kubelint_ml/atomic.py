"""Replace a file so that a reader sees either the old content or the new one, never part of it.

A leaf module (it imports nothing of the package), so that every part that
writes files can use it: the command's ``--output``, the baseline, fixes.

The text is written to a temporary file in the same directory (same file
system, so the rename is atomic), flushed to disk, given the mode of the file
it replaces (or the umask's default for a new file), and renamed over it. If
anything stops the write (an error, Ctrl-C, SIGTERM turned into an exception),
the temporary file is removed and the old file is left as it was. A symlink
is followed: the file it points to is replaced, the link stays. A target that is
not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe) is written to in
place, never replaced.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TextIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(
    path: str,
    write: Callable[[TextIO], None],
    *,
    encoding: str = "utf-8",
    newline: str | None = "\n",
    sync: bool = True,
) -> None:
    """Call ``write(fh)`` on a temporary file and rename it to ``path``; raises OSError.

    ``sync=False`` leaves writing the data back to the kernel: the rename is still
    atomic for every reader and against an interrupted run, not against a power cut.
    """
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(os.path.abspath(target))
    try:
        st = os.stat(target)
        mode = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    else:
        if not stat.S_ISREG(st.st_mode):
            # A device, a pipe or a terminal (`--output /dev/null`, `/dev/stdout`, a FIFO): written to
            # as it is. A rename would put a regular file in its place (for root, even in /dev).
            with open(target, "w", encoding=encoding, newline=newline) as fh:
                write(fh)
            return
    base = os.path.basename(target)
    import tempfile  # here: a run that writes nothing does not pay for it (5 ms of start-up)

    fd, tmp = tempfile.mkstemp(prefix=f".{base[:100]}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline=newline) as fh:
            write(fh)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: str, text: str, *, encoding: str = "utf-8") -> None:
    """:func:`write_atomic` for a string already built."""

    def put(fh: TextIO) -> None:
        fh.write(text)

    write_atomic(path, put, encoding=encoding)


def write_bytes_atomic(path: str, data: bytes, *, sync: bool = True) -> None:
    """:func:`write_atomic` for a file's exact bytes (no newline or encoding translation)."""

    def put(fh: TextIO) -> None:
        fh.flush()
        fh.buffer.write(data)

    write_atomic(path, put, sync=sync)
