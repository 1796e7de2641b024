"""Finding the files to lint.

Directories are walked recursively for ``*.yaml``, ``*.yml`` and ``*.json``;
hidden files and directories (``.git`` among them) are skipped, and so is what
the ``.gitignore`` files and ``.git/info/exclude`` ignore
(:mod:`kubelint_ml.input.gitignore`). Symlinks are
followed only when they stay inside the root they were found under, and a
directory is never entered twice, so a symlink loop ends the walk instead of
hanging it. Only regular files are picked up by a walk (no FIFOs, sockets or
devices, which could block or never end); a path named on the command line is
read as given, at most ``max_bytes + 1`` bytes of it. A directory that cannot
be listed is reported (as a source whose read fails), not silently skipped.

The result does not depend on the order of the paths: a file reached along
several paths is listed once, under the smallest of its displayed names.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from functools import lru_cache

from kubelint_ml.records import Frozen

EXTENSIONS = (".yaml", ".yml", ".json")
STDIN = "-"


class SourceError(Exception):
    """A path given on the command line that does not exist."""


class Source(Frozen):
    path: str  # as displayed in findings: relative to the cwd when below it
    real: str  # what to open ("-" for stdin)
    error: str  # set when the walk already knows it cannot be read
    identity: str  # the file's real path when the walk already knows it (saves a realpath call)
    skipped: str  # why the walk passes over it (a broken symlink): read as empty, said under -v
    __slots__ = _fields = ("path", "real", "error", "identity", "skipped")

    def __init__(self, path: str, real: str, error: str = "", identity: str = "", skipped: str = "") -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "real", real)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "identity", identity)
        object.__setattr__(self, "skipped", skipped)


def file_key(path: str | None) -> str | None:
    """What two names of one file have in common (real path, case-folded where the system
    folds case), for telling whether they are the same file; None for stdin."""
    if not path or path in (STDIN, "<stdin>"):
        return None
    return _file_key(os.path.abspath(path))


@lru_cache(maxsize=256)
def _file_key(absolute: str) -> str:
    return os.path.normcase(os.path.realpath(absolute))


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # other drive on Windows
        return path
    return path if rel.startswith("..") else rel


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def excluded(path: str, patterns: tuple[str, ...]) -> bool:
    norm = path.replace(os.sep, "/")
    for pat in patterns:
        if fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(norm, pat.rstrip("/") + "/*"):
            return True
        if pat.startswith("**/") and fnmatch.fnmatch(norm, pat[3:]):
            return True
    return False


def _walk(root: str, out: list[Source], excludes: tuple[str, ...], gitignore: bool = True) -> None:
    real_root = os.path.realpath(root)
    seen: set[str] = set()
    layers: tuple = ()
    if gitignore:
        from kubelint_ml.input import gitignore as ignore_files

        layers = ignore_files.root_layers(root)
    stack: list[tuple[str, tuple]] = [(root, layers)]
    while stack:
        current, layers = stack.pop()
        real = os.path.realpath(current)
        if real in seen or not _inside(real, real_root):
            continue
        seen.add(real)
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            if os.path.isdir(current):  # vanished meanwhile: nothing to report
                reason = e.strerror or str(e)
                out.append(Source(display_path(current), current, f"cannot list directory: {reason}"))
            continue
        if gitignore and any(e.name == ".gitignore" for e in entries):
            patterns = ignore_files.read_patterns(os.path.join(current, ".gitignore"))
            if patterns:
                layers = (*layers, ignore_files.Layer(os.path.join(os.path.abspath(current), ""), patterns))
        abs_prefix = os.path.join(os.path.abspath(current), "") if layers else ""
        files_ignorable = any(layer.for_files for layer in layers)  # else only directories are asked
        dirs: list[str] = []
        shown_dir = display_path(current)
        # os.path.join(dir, name) for every name, as one concatenation: join(dir, "") ends with the separator
        shown_prefix = "" if shown_dir == "." else os.path.join(shown_dir, "")
        real_prefix = os.path.join(real, "")
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = entry.path
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
                link = entry.is_symlink()
                if link:
                    target = os.path.realpath(path)
                    if not _inside(target, real_root):
                        continue
            except OSError:
                continue
            # Same text as display_path(path), without a relpath call per file.
            shown = shown_prefix + entry.name
            if excludes and excluded(shown, excludes):
                continue
            # git does not follow a symbolic link: `dir/` patterns do not match one
            if (
                layers
                and (files_ignorable or (is_dir and not link))
                and ignore_files.decide(layers, abs_prefix + entry.name, entry.name, is_dir and not link)
            ):
                continue
            if is_dir:
                dirs.append(path)
            elif link and not is_file and entry.name.lower().endswith(EXTENSIONS) and not os.path.exists(path):
                out.append(
                    Source(
                        shown,
                        path,
                        skipped="broken symbolic link (its target does not exist)",
                        identity=real_prefix + entry.name,
                    )
                )
            elif is_file and entry.name.lower().endswith(EXTENSIONS):
                out.append(Source(shown, path, identity="" if link else real_prefix + entry.name))
        stack.extend((d, layers) for d in reversed(dirs))


_GLOB_CHARS = ("*", "?", "[")


def expand(pattern: str) -> list[str] | None:
    """The paths a glob names (``**`` spans directories), sorted; None when ``pattern`` is no glob.

    A path that exists as written is never a glob. Files a glob matches are
    kept only when they are YAML or JSON; hidden names are matched only by a
    pattern that starts them with a dot."""
    if not any(c in pattern for c in _GLOB_CHARS) or os.path.exists(pattern):
        return None
    import glob

    found = []
    for path in glob.glob(pattern, recursive=True):
        if os.path.isdir(path) or (os.path.isfile(path) and path.lower().endswith(EXTENSIONS)):
            found.append(path)
    return sorted(found)


def collect(
    paths: list[str], excludes: tuple[str, ...] = (), gitignore: bool = True, stdin_name: str | None = None
) -> list[Source]:
    """Files to lint, in a stable order, each once. A walk skips what ``.gitignore`` files and
    ``.git/info/exclude`` ignore (unless ``gitignore`` is false); a path named is always linted.
    Standard input is shown as ``stdin_name`` when given."""
    out: list[Source] = []
    expanded: list[str] = []
    for p in paths:
        matches = expand(p) if p != STDIN else None
        if matches is None:
            expanded.append(p)
        elif not matches:
            raise SourceError(f"no YAML or JSON file matches {p}")
        else:
            expanded.extend(
                m
                for m in matches
                if not os.path.isdir(m)
                or not any(m != o and (m + os.sep).startswith(o + os.sep) for o in matches if os.path.isdir(o))
            )
    for p in expanded:
        if p == STDIN:
            shown = display_path(stdin_name) if stdin_name else "<stdin>"
            if not (stdin_name and excludes and excluded(shown, excludes)):
                out.append(Source(shown, STDIN))
            continue
        if os.path.isdir(p):
            _walk(p, out, excludes, gitignore)
        elif os.path.exists(p):
            shown = display_path(p)
            if not (excludes and excluded(shown, excludes)):
                out.append(Source(shown, p))
        else:
            raise SourceError(f"no such file or directory: {p}")
    unique: dict[str, Source] = {}
    for s in out:
        key = s.real if s.real == STDIN else (s.identity or os.path.realpath(s.real))
        known = unique.get(key)
        if known is None or s.path < known.path:
            unique[key] = s
    return sorted(unique.values(), key=lambda s: s.path)


# Bytes of named pipes and devices (``<(helm template ...)``): they can be read
# only once, so a second read returns what the first one got.
_READ_ONCE: dict[str, bytes] = {}
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_FIRST_READ = 64 * 1024  # below malloc's mmap threshold: the buffer is cheap to shrink


def read_once(source: Source) -> bool:
    """Whether the source can be read only once (stdin, a named pipe, a device): not a regular file.

    A walk lists regular files only, so only the paths named on the command line are looked at."""
    if source.real == STDIN:
        return True
    if source.identity or source.error or source.skipped:
        return False
    try:
        return not stat.S_ISREG(os.stat(source.real).st_mode)
    except OSError:
        return False


def read(source: Source, max_bytes: int) -> bytes:
    """The file's bytes, at most ``max_bytes + 1`` (enough to tell it is too big)."""
    if source.error:
        raise OSError(errno.EIO, source.error)
    if source.skipped:
        return b""
    if source.real == STDIN:
        import sys

        return sys.stdin.buffer.read(max_bytes + 1)
    kept = _READ_ONCE.get(source.real)
    if kept is not None:
        return kept
    fd = os.open(source.real, _OPEN_FLAGS)
    try:
        if source.identity:
            # A file the walk listed as a regular file: a read shorter than asked is its end, so a
            # small file takes one read() and no fstat (a system call is dear on some machines).
            first = min(max_bytes + 1, _FIRST_READ)
            data = os.read(fd, first)
            if len(data) < first:
                return data
            return data + _read_stream(fd, max_bytes + 1 - len(data))
        # Otherwise a regular file is read with one read() sized by fstat, on a bare descriptor:
        # no file object, and no buffer of max_bytes allocated and then shrunk per file.
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if regular and st.st_size <= max_bytes:
            data = os.read(fd, st.st_size + 1)
            if len(data) == st.st_size:
                return data  # the usual case: all of it, and the end of the file
            return data + _read_stream(fd, max_bytes + 1 - len(data))  # grew or shrank since fstat, or a short read
        data = _read_stream(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if not regular:
        _READ_ONCE[source.real] = data
    return data


def read_regular(path: str, max_bytes: int) -> bytes:
    """A regular file's bytes, at most ``max_bytes + 1``. Anything else (a device, a FIFO, a socket,
    a directory) raises OSError without being read: opened non-blocking, so a FIFO with no writer
    does not hang, and checked on the open descriptor."""
    fd = os.open(path, _OPEN_FLAGS | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (devices, pipes and sockets are not read)")
        return _read_stream(fd, max_bytes + 1)
    finally:
        os.close(fd)


def _read_stream(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes, however few each read returns (pipes, devices)."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
