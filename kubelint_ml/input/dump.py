"""What `kubectl get -o json|yaml` prints, read object by object.

JSON (a ``List`` of 50,000 pods is half a gigabyte) is streamed: the top-level
object is read key by key and the items of its ``items`` array are decoded one
at a time with the standard library's C decoder (``json.JSONDecoder.raw_decode``)
from a buffer refilled in 4 MiB chunks, so memory holds one chunk and one item,
not the dump. Each item comes with its line and column, and its text from the
start of its line: a finding's position is found by reading that text again
with the positions loader (only for the few objects that are reported on).

YAML is read whole with the positions loader (``kubelint_ml.input.loader``).

Errors (not JSON or YAML, truncated, not a Kubernetes object or List) are a
:class:`DumpError` with the file, line and column.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Generator, Iterator
from typing import IO, Any

from kubelint_ml.input.loader import Limits
from kubelint_ml.input.objects import K8sObject, make_ref
from kubelint_ml.records import replace

CHUNK = 4 << 20
_WS = " \t\r\n\ufeff"


class DumpError(Exception):
    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{file}:{line}:{column}: {message}")
        self.file, self.line, self.column, self.message = file, line, column, message


class Item:
    """One object of a dump: its value, position, and (JSON) its text from the start of its line."""

    __slots__ = ("data", "line", "column", "text", "obj", "shift", "_span")

    def __init__(
        self,
        data: Any,
        line: int,
        column: int,
        text: str | None = None,
        obj: Any = None,
        span: tuple[str, int, int, int] | None = None,
    ) -> None:
        self.data = data
        self.line = line
        self.column = column
        self.text = text
        self.obj = obj  # YAML: the K8sObject (with positions) already
        # Columns to add to a position on the text's first line: the text starts at the object, not at its
        # line, when other values precede it on the line (compact JSON: `jq -c`, an API client's output).
        self.shift = 0
        self._span = span  # (buffer, line start, object start, end): the text, copied only when kept

    def keep(self) -> None:
        """Copy the item's text out of the reader's buffer (only the items that are judged need it): from the
        start of its line when only indentation precedes the object there (kubectl's output), else from the
        object itself (the rest of the line is other objects, and may be the whole dump)."""
        if self._span is not None:
            buf, line_start, start, end = self._span
            k = start - 1
            while k >= line_start and buf[k] in " \t":
                k -= 1
            if k < line_start and start - line_start == self.column - 1:
                self.text = buf[line_start:end]
            else:
                self.text, self.shift = buf[start:end], self.column - 1
            self._span = None


class _JsonStream:
    def __init__(self, fh: IO[bytes], file: str) -> None:
        self.fh = fh
        self.file = file
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.dec = json.JSONDecoder()
        self.buf = ""
        self.eof = False
        self.base_line = 1  # the line of buf[0]
        self.base_col = 0  # the column of buf[0] in its line (0 but in compact JSON, cut within a line)
        self.counted_at = 0  # lines are counted incrementally: the line of buf[counted_at]
        self.counted_nl = -1  # the last newline before buf[counted_at] (-1: none in buf)
        self.counted_line = 1

    # -- buffer ------------------------------------------------------------

    def more(self) -> bool:
        if self.eof:
            return False
        raw = self.fh.read(CHUNK)
        try:
            text = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as e:
            line, col = self.position(len(self.buf))
            raise DumpError(self.file, line, col, f"not UTF-8 text ({e.reason})") from None
        if not raw:
            self.eof = True
        self.buf += text
        return bool(raw) or bool(text)

    def drop(self, upto: int) -> int:
        """Forget buf[:upto] (cut at the last line start before it, or at ``upto`` when the line is longer:
        compact JSON is one line); returns how far indices moved."""
        cut = self.buf.rfind("\n", 0, upto) + 1
        if cut <= 0:
            cut = upto
            if cut <= 0:
                return 0
            self.base_col += cut
        else:
            self.base_col = 0
        self.position(cut)  # counts the lines up to the cut
        self.base_line = self.counted_line
        self.buf = self.buf[cut:]
        self.counted_at, self.counted_nl = 0, -1
        return cut

    def position(self, i: int) -> tuple[int, int]:
        if i < self.counted_at:
            self.counted_at, self.counted_line, self.counted_nl = 0, self.base_line, -1
        self.counted_line += self.buf.count("\n", self.counted_at, i)
        nl = self.buf.rfind("\n", self.counted_at, i)
        if nl < 0:  # (searched from the last position only: a compact line is long)
            nl = self.counted_nl
        self.counted_at, self.counted_nl = i, nl
        return self.counted_line, (i + self.base_col if nl < 0 else i - nl - 1) + 1

    def error(self, i: int, message: str) -> DumpError:
        line, col = self.position(min(i, len(self.buf)))
        return DumpError(self.file, line, col, message)

    def skip(self, i: int) -> int:
        """The index of the next non-blank character (reading more when needed); len(buf) at the end."""
        while True:
            n = len(self.buf)
            while i < n and self.buf[i] in _WS:
                i += 1
            if i < n or not self.more():
                return i

    def value(self, i: int) -> tuple[Any, int]:
        """One JSON value from buf[i]; more is read while it is incomplete."""
        while True:
            try:
                value, end = self.dec.raw_decode(self.buf, i)
            except json.JSONDecodeError as e:
                # An error where the text read so far ends (a string, literal, escape or number cut by the
                # chunk) is read past; one before it, or at the end of the input, is the input's.
                content = len(self.buf.rstrip())
                cut = e.pos >= content - 8 or e.msg.startswith("Unterminated string")
                if self.eof or not cut:
                    what = "truncated" if self.eof and cut else "not valid JSON"
                    raise self.error(e.pos, f"{what}: {e.msg}") from None
                self.more()
                continue
            if end >= len(self.buf) and not self.eof and not isinstance(value, (dict, list, str)):
                self.more()  # a number may go on in the next chunk
                continue
            return value, end

    # -- structure ----------------------------------------------------------

    def documents(self) -> Iterator[Item]:
        i = self.skip(0)
        if i >= len(self.buf):
            return
        while i < len(self.buf):
            c = self.buf[i]
            if c == "{":
                i = yield from self.top_object(i)
            elif c == "[":
                i = yield from self.items(i)
            else:
                raise self.error(i, "not a JSON object: a dump is what `kubectl get -o json` prints")
            i -= self.drop(i)
            i = self.skip(i)

    def top_object(self, start: int) -> Generator[Item, None, int]:
        """A List (its items streamed) or one object; returns the index after it."""
        line, col = self.position(start)
        top: dict[str, Any] = {}
        streamed = False
        i = self.skip(start + 1)
        if i < len(self.buf) and self.buf[i] == "}":
            raise self.error(start, "an empty JSON object is not a Kubernetes object or List")
        while True:
            if i >= len(self.buf):
                raise self.error(i, "truncated: the object is not closed")
            if self.buf[i] != '"':
                raise self.error(i, "not valid JSON: expected a key")
            key, i = self.value(i)
            i = self.skip(i)
            if i >= len(self.buf) or self.buf[i] != ":":
                raise self.error(i, "not valid JSON: expected ':'")
            i = self.skip(i + 1)
            kind = top.get("kind", "List")  # kubectl prints "items" before "kind"
            if key == "items" and i < len(self.buf) and self.buf[i] == "[" and str(kind).endswith("List"):
                i = yield from self.items(i)
                streamed = True
            else:
                top[key], i = self.value(i)
            i = self.skip(i)
            if i >= len(self.buf):
                raise self.error(i, "truncated: the object is not closed")
            if self.buf[i] == ",":
                i = self.skip(i + 1)
                continue
            if self.buf[i] == "}":
                i += 1
                break
            raise self.error(i, "not valid JSON: expected ',' or '}'")
        if streamed:
            kind = top.get("kind")
            if not isinstance(kind, str) or not kind.endswith("List"):
                raise DumpError(self.file, line, col, f"an object with items but kind {kind!r}: not a List")
            return i
        if not isinstance(top.get("kind"), str) or not isinstance(top.get("apiVersion"), str):
            raise DumpError(self.file, line, col, "not a Kubernetes object or List (no apiVersion and kind)")
        if isinstance(top.get("items"), list) and top["kind"].endswith("List"):
            for item in top["items"]:  # a List whose items came before its kind (read whole)
                yield Item(item, line, col, None)
            return i
        begin = self.buf.rfind("\n", 0, start) + 1
        yield Item(top, line, col, self.buf[begin:i])
        return i

    def items(self, start: int) -> Generator[Item, None, int]:
        """The objects of a JSON array, one at a time; returns the index after the array."""
        i = self.skip(start + 1)
        if i < len(self.buf) and self.buf[i] == "]":
            return i + 1
        while True:
            if i >= len(self.buf):
                raise self.error(i, "truncated: the items array is not closed")
            if self.buf[i] != "{":
                raise self.error(i, "not a Kubernetes object: an item must be a JSON object")
            value, end = self.value(i)
            line, col = self.position(i)
            begin = self.buf.rfind("\n", 0, i) + 1
            yield Item(value, line, col, None, None, (self.buf, begin, i, end))
            moved = self.drop(i) if i > CHUNK else 0
            i = self.skip(end - moved)
            if i >= len(self.buf):
                raise self.error(i, "truncated: the items array is not closed")
            if self.buf[i] == ",":
                i = self.skip(i + 1)
                continue
            if self.buf[i] == "]":
                return i + 1
            raise self.error(i, "not valid JSON: expected ',' or ']' between items")


def read_json(fh: IO[bytes], file: str) -> Iterator[Item]:
    return _JsonStream(fh, file).documents()


def dump_limits(limits: Limits) -> Limits:
    """A dump of a cluster read whole (YAML) is one file of many objects: the per-file size and node
    limits scale to it (depth and aliases stay bounded)."""
    return replace(limits, max_file_bytes=max(limits.max_file_bytes, 1 << 31), max_nodes=max(limits.max_nodes, 1 << 31))


def plain_object(data: dict, file: str) -> K8sObject:
    """An object of a streamed dump as the facts read it (no positions)."""
    return K8sObject(data, data, (), make_ref(data), file, 0)


def looks_like_json(head: bytes) -> bool:
    stripped = head.lstrip()
    if stripped.startswith(codecs.BOM_UTF8):
        stripped = stripped[3:].lstrip()
    return stripped[:1] in (b"{", b"[")
