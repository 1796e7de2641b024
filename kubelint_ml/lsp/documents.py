"""The editor's buffers as the server holds them, and positions as the protocol counts them.

A position is a line and a column. Lines end where the LSP says they do: at ``\\n``, ``\\r\\n`` or
``\\r`` (U+2028, U+2029, NEL and the other characters Python's ``str.splitlines`` breaks at are
ordinary characters to an editor). A column counts the code units of the position encoding the
client and the server agreed on at ``initialize``: UTF-8 bytes, UTF-16 code units (the default) or
code points (UTF-32). A column past the end of its line means the end of the line; a line past the
end of the buffer means its end.

Text arrives as JSON strings, which may hold lone surrogates; it is kept as it came and turned into
bytes with ``surrogatepass`` (the loader then reports the bad character as a parse error, once),
so byte offsets and characters map one to one both ways.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
ENCODINGS = (UTF8, UTF16, UTF32)
_BREAK = re.compile(r"\r\n|\r|\n")
_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def choose_encoding(offered: Any) -> str:
    """The first encoding the client lists that the server speaks (UTF-16 when it lists none)."""
    if isinstance(offered, (list, tuple)):
        for name in offered:
            if isinstance(name, str) and name.lower() in ENCODINGS:
                return name.lower()
    return UTF16


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in the encoding's code units."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF16:
        return len(text) + len(_ASTRAL.findall(text))
    return len(encode(text))


def chars_for(text: str, count: int, encoding: str) -> int:
    """How many characters of ``text`` make ``count`` code units (a position inside a character
    counts as that character's start; past the end, the end)."""
    if count <= 0:
        return 0
    if encoding == UTF32 or text.isascii():
        return min(count, len(text))
    used = 0
    for i, c in enumerate(text):
        o = ord(c)
        step = 1 if encoding == UTF16 and o <= 0xFFFF else 2 if encoding == UTF16 else _utf8_len(o)
        if used + step > count:
            return i
        used += step
        if used == count:
            return i + 1
    return len(text)


def _utf8_len(o: int) -> int:
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


@dataclass
class Document:
    uri: str
    text: str
    version: int | None = None
    _starts: list[int] | None = field(default=None, repr=False)
    _data: bytes | None = field(default=None, repr=False)
    _byte_starts: list[int] | None = field(default=None, repr=False)

    # -- lines ---------------------------------------------------------------

    @property
    def starts(self) -> list[int]:
        """The character offset each line starts at."""
        if self._starts is None:
            self._starts = [0] + [m.end() for m in _BREAK.finditer(self.text)]
        return self._starts

    def line_text(self, line: int) -> str:
        """A line without its line break."""
        starts = self.starts
        if line >= len(starts):
            return ""
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        text = self.text[starts[line] : end]
        return text.rstrip("\r\n") if line + 1 < len(starts) else text

    # -- positions -----------------------------------------------------------

    def offset(self, line: int, character: int, encoding: str) -> int:
        """The character offset of an LSP position."""
        starts = self.starts
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        return starts[line] + chars_for(self.line_text(line), character, encoding)

    def position(self, offset: int, encoding: str) -> tuple[int, int]:
        """The LSP position (line, column in code units) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        starts = self.starts
        line = bisect_right(starts, offset) - 1
        start = starts[line]
        # An offset between a CR and its LF (never one an edit makes) counts as the line's end.
        head = self.text[start:offset].rstrip("\r\n")
        return line, units(head, encoding)

    # -- bytes ---------------------------------------------------------------

    @property
    def data(self) -> bytes:
        """The buffer's bytes, as `check` would read the saved file."""
        if self._data is None:
            self._data = encode(self.text)
        return self._data

    def byte_position(self, byte_offset: int, encoding: str) -> tuple[int, int]:
        """The LSP position of a byte offset into :attr:`data` (a fix's edits are in bytes)."""
        data = self.data
        if len(data) == len(self.text):
            return self.position(byte_offset, encoding)
        if self._byte_starts is None:
            self._byte_starts = [0] + [m.end() for m in _BREAK_BYTES.finditer(data)]
        starts = self._byte_starts
        byte_offset = max(0, min(byte_offset, len(data)))
        line = bisect_right(starts, byte_offset) - 1
        head = data[starts[line] : byte_offset].decode("utf-8", "surrogatepass").rstrip("\r\n")
        return line, units(head, encoding)

    # -- changes -------------------------------------------------------------

    def replace(self, start: int, end: int, new: str) -> None:
        old = self.text
        starts = self._starts
        self.text = old[:start] + new + old[end:]
        self._data = self._byte_starts = None
        if starts is None:
            return
        # A keystroke (no line break typed or deleted, not next to a CR): the lines after it move by
        # the length difference, and the line starts are not found again in the whole buffer.
        if (
            "\n" in new
            or "\r" in new
            or (start > 0 and old[start - 1] == "\r")
            or "\n" in old[start:end]
            or "\r" in old[start:end]
        ):
            self._starts = None
            return
        delta = len(new) - (end - start)
        if delta:
            i = bisect_right(starts, start)
            starts[i:] = [s + delta for s in starts[i:]]


def apply_edits(text: str, doc: Document, edits: list[tuple[int, int, int, int, str]], encoding: str) -> str:
    """``text`` (the text of ``doc``) with LSP edits (start line, start column, end line, end column,
    new text) applied the way an editor applies them: positions against the original text."""
    spans = []
    for sl, sc, el, ec, new in edits:
        spans.append((doc.offset(sl, sc, encoding), doc.offset(el, ec, encoding), new))
    out = text
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        out = out[:start] + new + out[end:]
    return out


def common_span(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in ``before``, end in ``after``) of the part that differs: a fix-all is one edit
    of that part, not the whole buffer replaced."""
    limit = min(len(before), len(after))
    start = 0
    if before[:limit] == after[:limit]:
        start = limit
    else:
        lo, hi = 0, limit  # binary search on the common prefix length
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if before[:mid] == after[:mid]:
                lo = mid
            else:
                hi = mid - 1
        start = lo
    # never split a CRLF pair or a surrogate pair an editor would see as one
    while start > 0 and before[start - 1] == "\r":
        start -= 1
    tail = 0
    room = limit - start
    lo, hi = 0, room
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before[len(before) - mid :] == after[len(after) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    tail = lo
    while (
        tail > 0
        and before[len(before) - tail] == "\n"
        and len(before) - tail - 1 >= start
        and before[len(before) - tail - 1] == "\r"
    ):
        tail -= 1
    return start, len(before) - tail, len(after) - tail
