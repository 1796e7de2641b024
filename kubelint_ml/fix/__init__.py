"""Fixes: what a finding's template says would remove it, and the byte edits that do it.

A template attaches a :class:`Fix` to its hit (``Hit(..., fix=Fix(...))``). The
fix speaks in field paths, as hits do: :func:`put` a value at a path (creating
the mappings on the way) and :func:`append` an item to a sequence (creating it
when missing). The engine binds those paths to the object's place in its
document; :mod:`kubelint_ml.fix.yamltext` turns them into byte edits of the
original file (every byte outside the edited lines kept), and
:mod:`kubelint_ml.fix.apply` applies them, resolving overlaps, re-linting until
nothing more changes, and writing each file atomically.

``applicability`` is ``safe`` (the API server would reject the object as it is,
or behaviour does not change) or ``unsafe`` (it changes how the workload runs:
applied only with ``--unsafe-fixes``). ``source`` says where the value comes
from (``"the request"``, ``"GPU share of p4d.24xlarge"``, a rule param).

Observed usage. When a usage source is configured, ``Context.usage`` is an
object with one method the memory fixes call::

    ctx.usage.recommend(obj, tpl, container) -> (request_bytes, limit_bytes, source) | None

``request_bytes`` is the container's median working set, ``limit_bytes`` its
peak plus headroom (as the memory paper in the rules spec recommends), both
ints, and ``source`` a short text naming where they come from (shown in the
fix's ``source``). ``None`` means no trustworthy observation: the fix then
falls back to the GPU share of the node, or is not offered (``-v`` says why).
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.records import Frozen, Record, replace

SAFE = "safe"
UNSAFE = "unsafe"


class Change(Frozen):
    """``op``: ``put`` (set ``value`` at ``path``), ``append`` or ``prepend`` (add ``value`` to the end or the
    start of the sequence at ``path``)."""

    op: str
    path: tuple
    value: Any
    __slots__ = _fields = ("op", "path", "value")

    def __init__(self, op: str, path: tuple, value: Any) -> None:
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "value", value)


def put(path: tuple, value: Any) -> Change:
    return Change("put", tuple(path), value)


def append(path: tuple, item: Any) -> Change:
    return Change("append", tuple(path), item)


def prepend(path: tuple, item: Any) -> Change:
    """Put ``item`` first in the sequence at ``path`` (created when missing)."""
    return Change("prepend", tuple(path), item)


class Edit(Frozen):
    """Replace bytes ``[start, end)`` of the file with ``text`` (UTF-8)."""

    start: int
    end: int
    text: str
    __slots__ = _fields = ("start", "end", "text")

    def __init__(self, start: int, end: int, text: str) -> None:
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)
        object.__setattr__(self, "text", text)

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}


class Fix(Record):
    description: str
    applicability: str
    source: str
    changes: tuple[Change, ...]
    document: int  # set by the engine: the document of the file the paths are in
    edits: tuple[Edit, ...]  # set when resolved against the file's bytes
    unfixable: str | None  # why the edits could not be made (alias on the path, Helm, ...)
    resolved: bool
    __slots__ = _fields = (
        "description",
        "applicability",
        "source",
        "changes",
        "document",
        "edits",
        "unfixable",
        "resolved",
    )

    def __init__(
        self,
        description: str,
        applicability: str = UNSAFE,
        source: str = "",
        changes: tuple[Change, ...] = (),
        document: int = 0,
        edits: tuple[Edit, ...] = (),
        unfixable: str | None = None,
        resolved: bool = False,
    ) -> None:
        self.description = description
        self.applicability = applicability
        self.source = source
        self.changes = changes
        self.document = document
        self.edits = edits
        self.unfixable = unfixable
        self.resolved = resolved

    def bound(self, base: tuple, document: int) -> Fix:
        """The same fix with paths from the document's root (``base``: the object's place in it)."""
        changes = tuple(Change(c.op, base + c.path, c.value) for c in self.changes) if base else self.changes
        return replace(self, changes=changes, document=document)

    def applies(self, unsafe: bool) -> bool:
        return self.applicability == SAFE or unsafe

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "description": self.description,
            "applicability": self.applicability,
            "source": self.source,
        }
        if self.resolved:
            if self.unfixable:
                out["unfixable"] = self.unfixable
            else:
                out["edits"] = [e.to_dict() for e in self.edits]
        return out
