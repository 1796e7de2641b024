"""``.gitignore`` rules, read as git reads them, for the directory walk.

Patterns follow gitignore(5) and git's wildmatch: blank lines and ``#`` comments
are skipped, unescaped trailing spaces dropped, ``!`` re-includes, a trailing
``/`` matches directories only, a pattern with a ``/`` before its end is anchored
to its file's directory (else it matches the name at any depth), ``*``, ``?`` and
``[...]`` (ranges, ``!``/``^`` negation, ``[:alpha:]`` classes) never match a
``/``, ``**/`` spans zero or more directories, a trailing ``/**`` everything
inside, and ``\\`` escapes. Within one file the last matching pattern decides; a
deeper ``.gitignore`` overrides a shallower one, then ``.git/info/exclude``, then
git's global excludes file (``core.excludesFile``). A file inside an ignored directory cannot be re-included: the walk does not
enter the directory (as git does not). ``tests/test_gitignore.py`` compares the
result with git's own on generated trees. Patterns are matched with RE2, in time
linear in the name, so that no ignore file can make the walk backtrack for
minutes (RE2 is imported when the first ignore file is read).
"""

from __future__ import annotations

import os
import re
from typing import Any

# POSIX character classes inside brackets, as wildmatch knows them (C locale), as code-point ranges.
_CLASSES = {
    "alnum": ((97, 122), (65, 90), (48, 57)),
    "alpha": ((97, 122), (65, 90)),
    "blank": ((32, 32), (9, 9)),
    "cntrl": ((0, 31), (127, 127)),
    "digit": ((48, 57),),
    "graph": ((33, 126),),
    "lower": ((97, 122),),
    "print": ((32, 126),),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)),
    "space": ((32, 32), (9, 13)),
    "upper": ((65, 90),),
    "xdigit": ((48, 57), (97, 102), (65, 70)),
}
_SLASH = ord("/")


def _class(ranges: list[tuple[int, int]], negate: bool) -> str:
    """A character class (RE2 has no lookahead) of ``ranges``, or of their complement, never
    matching ``/`` (wildmatch with WM_PATHNAME)."""
    parts = []
    for lo, hi in ranges:
        if negate or not lo <= _SLASH <= hi:
            parts.append((lo, hi))
        else:  # the range without "/"
            if lo < _SLASH:
                parts.append((lo, _SLASH - 1))
            if hi > _SLASH:
                parts.append((_SLASH + 1, hi))
    body = "".join(f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}" for lo, hi in parts)
    if negate:
        return f"[^/{body}]"
    return f"[{body}]" if body else "[^\\x{0}-\\x{10ffff}]"  # an empty class: matches nothing


class Pattern:
    __slots__ = ("regex", "negated", "dir_only", "basename")

    def __init__(self, regex: Any, negated: bool, dir_only: bool, basename: bool) -> None:
        self.regex = regex
        self.negated = negated
        self.dir_only = dir_only
        self.basename = basename  # no slash in it: matched against the entry's name only


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """The regex of the bracket expression that starts at ``pat[i] == '['``, and the index after
    it; None when it is not closed (wildmatch then matches nothing)."""
    n = len(pat)
    j = i + 1
    negate = j < n and pat[j] in "!^"
    if negate:
        j += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while j < n:
        c = pat[j]
        if c == "]" and not first:
            return _class(ranges, negate), j + 1
        first = False
        if c == "[" and pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            if end < 0:
                ranges.append((ord("["), ord("[")))
                j += 1
                continue
            name = pat[j + 2 : end]
            if name not in _CLASSES:
                return None
            ranges.extend(_CLASSES[name])
            j = end + 2
            continue
        if c == "\\":
            j += 1
            if j >= n:
                return None
            c = pat[j]
        if j + 2 < n and pat[j + 1] == "-" and pat[j + 2] != "]":
            hi = pat[j + 2]
            k = j + 2
            if hi == "\\":
                k += 1
                if k >= n:
                    return None
                hi = pat[k]
            if ord(hi) >= ord(c):
                ranges.append((ord(c), ord(hi)))
            j = k + 1
            continue
        ranges.append((ord(c), ord(c)))
        j += 1
    return None


def _translate(pat: str) -> str | None:
    """The regex (anchored at both ends) of a wildmatch pattern with WM_PATHNAME; None for one
    that can never match (a trailing backslash, an unclosed bracket)."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            if j - i >= 2 and (i == 0 or pat[i - 1] == "/") and (j == n or pat[j] == "/"):
                if j == n:
                    out.append(".*")  # a trailing `**`: everything, slashes included
                    i = j
                else:
                    out.append("(?:.*/)?")  # `**/`: zero or more directories
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            got = _bracket(pat, i)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
        elif c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out) + "$"


def parse(text: str) -> list[Pattern]:
    """The patterns of one ignore file, in order."""
    import re2  # linear time: a hostile .gitignore (`*a*a*a*a*a*a*a*a*a*a*a*b`) cannot stall the walk

    out: list[Pattern] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.startswith("#"):
            continue
        # Trailing spaces go unless escaped with a backslash.
        end = len(line)
        while end > 0 and line[end - 1] == " ":
            if end >= 2 and line[end - 2] == "\\":
                break
            end -= 1
        line = line[:end]
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        if not line:
            continue
        dir_only = line.endswith("/")
        if dir_only:
            line = line.rstrip("/")
            if not line:
                continue
        basename = "/" not in line
        if line.startswith("/"):
            line = line[1:]
        regex = _translate(line)
        if regex is None:
            continue
        out.append(Pattern(re2.compile("(?s)" + regex), negated, dir_only, basename))
    return out


def read_patterns(path: str) -> list[Pattern]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return []
    return parse(data.decode("utf-8", "surrogateescape"))


class Layer:
    """One ignore file's patterns and the directory they are relative to (absolute, with a
    trailing separator)."""

    __slots__ = ("base", "patterns", "for_dirs", "for_files")

    def __init__(self, base: str, patterns: list[Pattern]) -> None:
        self.base = base
        self.patterns = patterns
        # the patterns that can match a directory, and a file (not `dir/` ones), last first
        self.for_dirs = tuple(reversed(patterns))
        self.for_files = tuple(p for p in self.for_dirs if not p.dir_only)


def decide(layers: tuple[Layer, ...], path: str, name: str, is_dir: bool) -> bool:
    """Whether the entry at absolute ``path`` is ignored; ``layers`` from the lowest priority
    (``info/exclude``) to the highest (the deepest ``.gitignore``)."""
    for layer in reversed(layers):
        patterns = layer.for_dirs if is_dir else layer.for_files
        if not patterns or not path.startswith(layer.base):
            continue
        rel = path[len(layer.base) :].replace(os.sep, "/")
        for p in patterns:
            if p.regex.match(name if p.basename else rel):
                return not p.negated
    return False


def _git_dir(work_tree: str) -> str | None:
    """The git directory whose ``info/exclude`` applies to ``work_tree`` (a worktree's ``.git``
    file names its own directory; its common directory holds ``info/``)."""
    dot = os.path.join(work_tree, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = os.path.join(work_tree, first[len("gitdir:") :].strip())
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            return os.path.normpath(os.path.join(gitdir, fh.read().strip()))
    except OSError:
        return gitdir


def _config_value(path: str, section: str, key: str) -> str | None:
    """``section.key`` in a git config file (the last one set), read as plain INI; None when unset."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return None
    current, found = "", None
    for line in lines:
        text = line.strip()
        if text.startswith("["):
            current = text[1:].split("]", 1)[0].strip().lower()
            continue
        name, eq, value = text.partition("=")
        if eq and current == section and name.strip().lower() == key:
            value = value.split(" #", 1)[0].split(" ;", 1)[0].strip()
            found = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return found


def _excludes_file(git_dir: str | None) -> str:
    """git's ``core.excludesFile``: from the repository's config, else the global one
    (``$GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` and ``~/.gitconfig``), else
    ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = (
        [os.environ["GIT_CONFIG_GLOBAL"]]
        if os.environ.get("GIT_CONFIG_GLOBAL")
        else [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    )
    if git_dir:
        configs.append(os.path.join(git_dir, "config"))
    value = None
    for config in configs:  # later files win, as in git
        value = _config_value(config, "core", "excludesfile") or value
    return os.path.expanduser(value) if value else os.path.join(xdg, "git", "ignore")


def root_layers(root: str) -> tuple[Layer, ...]:
    """The ignore files that apply to a walk of ``root`` from above it: git's global excludes
    file (``core.excludesFile``), the repository's ``info/exclude`` and the ``.gitignore`` of every directory from the work tree's top down to
    ``root``'s parent (``root``'s own is read by the walk). Outside a repository, none."""
    start = os.path.abspath(root)
    probe = start
    above: list[str] = []
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            return ()
        above.append(parent)
        probe = parent
    top = probe
    layers: list[Layer] = []
    git_dir = _git_dir(top)
    for path in (_excludes_file(git_dir), os.path.join(git_dir, "info", "exclude") if git_dir else None):
        patterns = read_patterns(path) if path else []
        if patterns:
            layers.append(Layer(os.path.join(top, ""), patterns))
    for directory in reversed(above):
        patterns = read_patterns(os.path.join(directory, ".gitignore"))
        if patterns:
            layers.append(Layer(os.path.join(directory, ""), patterns))
    return tuple(layers)
