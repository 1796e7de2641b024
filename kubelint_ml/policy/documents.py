"""The documents of a file as conftest gives them to its policies.

conftest (parser/yaml) splits a file on a line that is exactly ``---`` (the
separator ``\\n---\\n``, or ``\\r\\n---\\r\\n`` when the file has CRLF line
ends; a file that starts with a ``%`` directive keeps it with the first
part), and reads each part as one document: a part of only comments, blank
lines or a lone ``---`` is a document too, ``null``, on which the policies
run with ``input = null``. So a licence header above a first ``---`` is a
``null`` document, a file of comments only is one, and two separators in a row
(``---`` then ``---``) are one separator (the second line is part of the next
part) where the YAML stream has an empty document between them.

Here the documents come from the YAML stream (with positions); this module
lines them up with conftest's parts: ``null`` documents where conftest has
an empty part, none where it has not. A part that holds more than one YAML
document (a separator written ``--- `` or ``--- # comment`` does not split for
conftest, which then reads the first document only) keeps all of its
documents here: nothing is left unlinted.
"""

from __future__ import annotations

from typing import Any

_EMPTY_LINES = (b"", b"---", b"...")


def _empty(part: bytes) -> bool:
    for raw in part.splitlines():
        line = raw.strip()
        if line and line not in _EMPTY_LINES and not line.startswith(b"#"):
            return False
    return True


def parts(data: bytes) -> list[tuple[int, bool]]:
    """``(first line, empty)`` of each part conftest reads, in order."""
    crlf = b"\r\n" in data
    sep = b"\r\n---\r\n" if crlf else b"\n---\n"
    pieces = data.split(sep)
    if data.startswith(b"%") and len(pieces) > 1:
        pieces = [pieces[0] + sep + pieces[1], *pieces[2:]]
    out = []
    line = 1
    for i, piece in enumerate(pieces):
        out.append((line, _empty(piece)))
        line += piece.count(b"\n") + (2 if i + 1 < len(pieces) else 0)
    return out


def conftest_units(data: bytes, units: list[tuple[Any, list]]) -> list[tuple[Any, list]]:
    """``units`` (``(Document, objects)`` in file order) with conftest's ``null`` documents: one for
    each empty part, and none of the stream's empty documents that conftest does not have."""
    from kubelint_ml.input.loader import Document

    layout = parts(data)
    starts = [line for line, _ in layout]
    by_part: list[list[tuple[Any, list]]] = [[] for _ in layout]
    nulls: list[list[tuple[Any, list]]] = [[] for _ in layout]
    for unit in units:
        doc = unit[0]
        k = max(0, _part_of(starts, int(getattr(doc, "line", 1) or 1)))
        (nulls if doc.data is None else by_part)[k].append(unit)
    out: list[tuple[Any, list]] = []
    for k, (line, empty) in enumerate(layout):
        if by_part[k]:
            out.extend(by_part[k])
        elif empty:
            out.append(nulls[k][0] if nulls[k] else (Document(_index(out), None, line), []))
    return out


def _part_of(starts: list[int], line: int) -> int:
    k = 0
    for i, start in enumerate(starts):
        if start <= line:
            k = i
    return k


def _index(before: list[tuple[Any, list]]) -> int:
    """An index for a new null document: after the document before it (0 at the top)."""
    return int(before[-1][0].index) + 1 if before else 0
