"""A regular expression compiled when it is first used, not when its module is imported.

Compiling a pattern costs a few tenths of a millisecond; a plain ``check`` imports
a few dozen that most runs never use (process-count heuristics for commands a
manifest does not have, Markdown and XML escaping, the line breaks of exotic
files). :class:`LazyPattern` keeps the source and compiles it on the first call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, Generic


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)`` on first use; the methods of ``re.Pattern`` that the code calls."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = pattern
        self._flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self._source, self._flags)
        return found

    @property
    def pattern(self) -> AnyStr:
        return self._source

    def match(self, string: AnyStr, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[AnyStr] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: AnyStr, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[AnyStr] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: AnyStr, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[AnyStr] | None:
        return self.compiled.search(string, pos, endpos)

    def finditer(self, string: AnyStr, pos: int = 0, endpos: int = 2**63 - 1) -> Iterator[re.Match[AnyStr]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = 2**63 - 1) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled.sub(repl, string, count)

    def subn(
        self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0
    ) -> tuple[AnyStr, int]:
        return self.compiled.subn(repl, string, count)
