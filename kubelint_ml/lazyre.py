"""A regular expression compiled when it is first used, not when its module is imported.

Compiling a pattern costs a few tenths of a millisecond; a plain ``check`` imports
a few dozen that most runs never use (process-count heuristics for commands a
manifest does not have, Markdown and XML escaping, the line breaks of exotic
files). :class:`LazyPattern` keeps the source and compiles it on the first call.
Then the compiled pattern's own methods take the place of the lookup: a call
after the first costs what a call on ``re.Pattern`` costs (some of these patterns
are matched against every quantity and command word).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, Generic

_METHODS = ("match", "fullmatch", "search", "finditer", "findall", "split", "sub", "subn")


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)`` on first use, with the methods of ``re.Pattern`` that the code calls."""

    # Unset until the first call: reading one then goes to __getattr__, which compiles the
    # pattern and sets every slot to the compiled pattern's bound method.
    match: Callable[..., re.Match[AnyStr] | None]
    fullmatch: Callable[..., re.Match[AnyStr] | None]
    search: Callable[..., re.Match[AnyStr] | None]
    finditer: Callable[..., Iterator[re.Match[AnyStr]]]
    findall: Callable[..., list[Any]]
    split: Callable[..., list[Any]]
    sub: Callable[..., AnyStr]
    subn: Callable[..., tuple[AnyStr, int]]
    __slots__ = ("pattern", "_flags", *_METHODS)

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name not in _METHODS:
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)
