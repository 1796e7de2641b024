"""Byte-exact edits of YAML text: a fix's changes, made where the file has them.

The file's LibYAML events (those the loader read it from, or the file is
parsed again: safe, nothing is constructed) become a light tree of spans: for every node its start and end
offset, its style (block or flow, plain or quoted), anchor, and the key nodes
of mappings. A change then becomes the smallest edit of the original text:

- a scalar is replaced in place, in its own quoting style;
- keys missing from a block mapping are inserted as whole lines after the
  mapping's last line, at the column of its keys, nested with the file's own
  indentation step and sequence style (indented or indentless ``- ``);
- in a flow mapping or sequence they are inserted before its closing bracket
  (``, key: value``), in the document's own style (JSON quoting for JSON);
- an item is appended to a block sequence as a line after its last item.

Line endings follow the file (CRLF stays CRLF); comments, blank lines and
every other byte stay where they are. A change is refused, with the reason,
when its path goes through an alias, an anchored node that an alias shares,
a mapping with a merge key (``<<``), a document with a parse error or a Helm
directive (``{{``), or a field of another type than the change needs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any

import yaml

try:  # pragma: no cover - depends on how PyYAML was built
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from kubelint_ml.fix import Edit, Fix
from kubelint_ml.input import yamlevents


class Refused(Exception):
    """A change that cannot be made safely here; the message says why."""


class Node:
    __slots__ = ("kind", "start", "end", "anchor", "flow", "style", "value", "items", "keys", "merge", "col")

    def __init__(self, kind: str, start: int, col: int, anchor: str | None) -> None:
        self.kind = kind  # "map" | "seq" | "scalar" | "alias"
        self.start = start
        self.end = start
        self.col = col
        self.anchor = anchor
        self.flow = False
        self.style: str | None = None
        self.value: Any = None  # scalar text, or the alias name
        self.items: list = []  # map: [(key Node, value Node)], seq: [Node]
        self.merge = False

    def last_end(self) -> int:
        """Where the node's text ends: a block collection ends with its last descendant."""
        if self.kind in ("map", "seq") and not self.flow and self.items:
            last = self.items[-1]
            return (last[1] if self.kind == "map" else last).last_end()
        return self.end


class Doc:
    __slots__ = ("root", "aliased", "start", "end", "helm")

    def __init__(self, root: Node, aliased: set[str], start: int, end: int, helm: bool) -> None:
        self.root, self.aliased, self.start, self.end, self.helm = root, aliased, start, end, helm


class Text:
    """One file's text, its documents' span trees, and its style."""

    def __init__(self, data: bytes, events: list | None = None) -> None:
        """``events``: the stream's parse events, as LibYAML gave them for ``data`` (all of them,
        from the stream's start to its end); None: ``data`` is parsed here."""
        self.data = data
        self.bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        self.text = data[self.bom :].decode("utf-8")
        self.ascii = len(self.text) == len(data) - self.bom
        self.nl = "\r\n" if "\r\n" in self.text else "\n"
        self.docs: list[Doc] = []
        self.broken_from: int | None = None  # documents from this index on did not parse
        self._parse(events)
        self._style: tuple[int, int] | None = None

    # ------------------------------------------------------------------ parsing

    def _parse(self, events: list | None) -> None:
        # One pass over the events; the innermost open collection and the key awaiting its
        # value are kept in locals (the stacks hold the outer ones).
        stack: list[tuple[Node | None, Node | None]] = []
        parent: Node | None = None
        key: Node | None = None  # a mapping's key whose value comes next
        root: Node | None = None
        aliased: set[str] = set()
        doc_start = 0
        E = yamlevents
        scalar_event, alias_event = E.ScalarEvent, E.AliasEvent
        map_start, seq_start = E.MappingStartEvent, E.SequenceStartEvent
        map_end, seq_end = E.MappingEndEvent, E.SequenceEndEvent
        doc_start_event, doc_end_event = E.DocumentStartEvent, E.DocumentEndEvent
        try:
            for ev in E.parse(self.data, _Loader) if events is None else events:
                cls = ev.__class__
                a = ev.args
                if cls is scalar_event:
                    mark = a[E.SCALAR_START]
                    n = Node("scalar", mark.index, mark.column, a[E.ANCHOR])
                    n.end = a[E.SCALAR_END].index
                    n.value = a[E.VALUE]
                    n.style = a[E.STYLE] or None
                elif cls is map_start or cls is seq_start:
                    mark = a[E.COLLECTION_START]
                    n = Node("map" if cls is map_start else "seq", mark.index, mark.column, a[E.ANCHOR])
                    n.flow = bool(a[E.FLOW])
                elif cls is map_end or cls is seq_end:
                    assert parent is not None
                    parent.end = a[E.END].index
                    parent, key = stack.pop()
                    continue
                elif cls is alias_event:
                    mark = a[E.ALIAS_START]
                    n = Node("alias", mark.index, mark.column, None)
                    n.end = a[E.ALIAS_END].index
                    n.value = a[E.ANCHOR]
                    aliased.add(a[E.ANCHOR])
                elif cls is doc_start_event:
                    root, aliased, doc_start = None, set(), a[E.START].index
                    continue
                elif cls is doc_end_event:
                    end = a[E.END].index
                    helm = "{{" in self.text[doc_start:end]
                    self.docs.append(Doc(root, aliased, doc_start, end, helm))  # type: ignore[arg-type]
                    continue
                else:
                    continue  # the stream's start and end
                # the new node's place: the root, an item, a key, or a key's value
                if parent is None:
                    root = n
                elif parent.kind == "seq":
                    parent.items.append(n)
                elif key is None:
                    key = n
                    if n.kind == "scalar" and n.value == "<<" and n.style is None:
                        parent.merge = True
                else:
                    parent.items.append((key, n))
                    key = None
                if n.kind == "map" or n.kind == "seq":
                    stack.append((parent, key))
                    parent, key = n, None
        except yaml.YAMLError:
            self.broken_from = len(self.docs)

    def doc(self, index: int) -> Doc:
        if self.broken_from is not None and index >= self.broken_from:
            raise Refused("the document has a parse error")
        if index >= len(self.docs) or self.docs[index].root is None:
            raise Refused("the document was not found")
        d = self.docs[index]
        if d.helm:
            raise Refused("the document holds a Helm/Go template directive ({{ ... }})")
        return d

    # ------------------------------------------------------------------ style

    def style(self) -> tuple[int, int]:
        """(indentation step, offset of a block sequence's dash under its key) as the file writes them."""
        if self._style is None:
            steps: Counter[int] = Counter()
            seqs: Counter[int] = Counter()
            todo = [d.root for d in self.docs if d.root is not None]
            while todo:
                n = todo.pop()
                if n.kind == "map":
                    for k, v in n.items:
                        if v.kind == "map" and not v.flow and v.items and v.col > k.col:
                            steps[v.col - k.col] += 1
                        elif v.kind == "seq" and not v.flow and v.items and v.col >= k.col:
                            seqs[v.col - k.col] += 1
                        todo.append(v)
                elif n.kind == "seq":
                    todo.extend(n.items)
            step = steps.most_common(1)[0][0] if steps else 2
            offset = seqs.most_common(1)[0][0] if seqs else step
            self._style = (step, offset)
        return self._style

    # ------------------------------------------------------------------ offsets

    def byte_offset(self, i: int) -> int:
        if self.ascii:
            return self.bom + i
        return self.bom + len(self.text[:i].encode("utf-8"))

    def after_line(self, i: int) -> tuple[int, str]:
        """Where a line inserted after the line holding offset ``i`` goes, and what must precede it."""
        t = self.text
        if i > 0 and t[i - 1] == "\n":
            return i, ""
        nl = t.find("\n", i)
        if nl < 0:
            return len(t), self.nl
        return nl + 1, ""

    # ------------------------------------------------------------------ resolving

    def resolve(self, fix: Fix) -> list[Edit]:
        """The edits that make ``fix``'s changes here; raises :class:`Refused`."""
        d = self.doc(fix.document)
        patch: dict = {}
        for change in fix.changes:
            if change.op == "put":
                _add(patch, change.path, change.value)
            else:
                _add(patch, change.path, Append([change.value], front=change.op == "prepend"))
        out: list[tuple[int, int, str]] = []
        self._apply(d, d.root, patch, (), None, out)
        out = _merge_inserts(out)
        for a, b in zip(out, out[1:]):
            if a[1] > b[0] or (a[0] == a[1] == b[0] == b[1]):
                raise Refused("the changes overlap")
        return [Edit(self.byte_offset(s), self.byte_offset(e), text) for s, e, text in out]

    def _check(self, d: Doc, node: Node, path: tuple) -> None:
        if node.kind == "alias":
            raise Refused(f"{_show(path)} is an alias (*{node.value}); editing it would change the anchored node")
        if node.anchor is not None and node.anchor in d.aliased:
            raise Refused(f"{_show(path)} is anchored (&{node.anchor}) and shared by an alias")
        if node.kind == "map" and node.merge:
            raise Refused(f"{_show(path)} has a merge key (<<)")

    def _apply(
        self, d: Doc, node: Node, patch: dict, path: tuple, key: Node | None, out: list[tuple[int, int, str]]
    ) -> None:
        self._check(d, node, path)
        if node.kind == "map":
            missing: dict = {}
            for k, v in patch.items():
                child = _child(node, k)
                if child is None:
                    missing[k] = v
                    continue
                kn, vn = child
                self._value(d, vn, v, path + (k,), kn, out)
            if missing:
                out.append(self._insert_map(d, node, _plain(missing), path))
        elif node.kind == "seq":
            for k, v in patch.items():
                if not isinstance(k, int) or not 0 <= k < len(node.items):
                    raise Refused(f"{_show(path)} has no item {k!r}")
                self._value(d, node.items[k], v, path + (k,), None, out)
        elif _is_null(node) and key is not None and all(isinstance(k, str) for k in patch):
            out.append(self._fill_null(d, node, key, _plain(patch)))
        else:
            raise Refused(f"{_show(path)} is not a mapping")

    def _value(
        self, d: Doc, node: Node, v: Any, path: tuple, key: Node | None, out: list[tuple[int, int, str]]
    ) -> None:
        if isinstance(v, dict):
            self._apply(d, node, v, path, key, out)
        elif isinstance(v, Append):
            self._check(d, node, path)
            if node.kind == "seq":
                out.append(self._prepend(d, node, v.items, path) if v.front else self._append(d, node, v.items, path))
            elif _is_null(node) and key is not None:
                out.append(self._fill_null(d, node, key, list(v.items)))
            else:
                raise Refused(f"{_show(path)} is not a list")
        else:
            self._check(d, node, path)
            if node.kind != "scalar":
                raise Refused(f"{_show(path)} is not a single value")
            if node.style in ("|", ">"):
                raise Refused(f"{_show(path)} is a block scalar")
            out.append((node.start, node.end, _scalar(v, node.style, json_style=d.root.flow)))

    # ------------------------------------------------------------------ insertions

    def _insert_map(self, d: Doc, node: Node, entries: dict, path: tuple) -> tuple[int, int, str]:
        js = d.root.flow
        if node.flow:
            body = ", ".join(f"{_key(k, js)}: {_flow(v, js)}" for k, v in entries.items())
            if not node.items:  # {} -> {key: value}
                return node.start, node.end, "{" + body + "}"
            return node.items[-1][1].end, node.items[-1][1].end, ", " + body
        if not node.items:
            raise Refused(f"{_show(path)} is an empty block mapping")
        col = node.items[0][0].col
        at, lead = self.after_line(node.last_end())
        lines = self._block(entries, col)
        return at, at, lead + "".join(line + self.nl for line in lines)

    def _append(self, d: Doc, node: Node, items: tuple, path: tuple) -> tuple[int, int, str]:
        js = d.root.flow
        if node.flow:
            body = ", ".join(_flow(v, js) for v in items)
            if not node.items:
                return node.start, node.end, "[" + body + "]"
            return node.items[-1].end, node.items[-1].end, ", " + body
        dash = node.col
        first = node.items[0]
        gap = max(1, first.col - dash - 1) if first.col > dash else 1
        at, lead = self.after_line(node.last_end())
        lines: list[str] = []
        for item in items:
            lines += self._seq_item(item, dash, gap)
        return at, at, lead + "".join(line + self.nl for line in lines)

    def _prepend(self, d: Doc, node: Node, items: tuple, path: tuple) -> tuple[int, int, str]:
        js = d.root.flow
        if node.flow or not node.items:
            if not node.items:
                return node.start, node.end, "[" + ", ".join(_flow(v, js) for v in items) + "]"
            body = "".join(_flow(v, js) + ", " for v in items)
            return node.items[0].start, node.items[0].start, body
        line_start = self.text.rfind("\n", 0, node.start) + 1
        if self.text[line_start : node.start].strip(" "):
            raise Refused(f"{_show(path)} starts on a line with other content")
        first = node.items[0]
        gap = max(1, first.col - node.col - 1) if first.col > node.col else 1
        lines: list[str] = []
        for item in items:
            lines += self._seq_item(item, node.col, gap)
        return line_start, line_start, "".join(line + self.nl for line in lines)

    def _fill_null(self, d: Doc, node: Node, key: Node, value: Any) -> tuple[int, int, str]:
        """``key:`` (empty, ``~`` or ``null``) becomes ``key:`` followed by a block."""
        js = d.root.flow
        if js or self._in_flow(d, key):
            return node.start, node.end, _flow(value, js)
        step, offset = self.style()
        if isinstance(value, dict):
            lines = self._block(value, key.col + step)
        else:
            lines = []
            for item in value:
                lines += self._seq_item(item, key.col + offset, 1)
        body = "".join(self.nl + line for line in lines)
        if node.start == node.end:  # empty: the block goes after the key's line (its comment stays there)
            at, lead = self.after_line(key.end)
            return at, at, lead + body[len(self.nl) :] + self.nl
        colon = self.text.rfind(":", key.end, node.start)
        return colon + 1, node.end, body

    def _in_flow(self, d: Doc, key: Node) -> bool:
        return (
            self.text[key.end : key.end + 1] in (",", "}")
            or "{" in self.text[self.text.rfind("\n", 0, key.start) + 1 : key.start]
        )

    def _block(self, entries: dict, col: int) -> list[str]:
        step, offset = self.style()
        pad = " " * col
        lines: list[str] = []
        for k, v in entries.items():
            if isinstance(v, dict) and v:
                lines.append(f"{pad}{_key(k)}:")
                lines += self._block(v, col + step)
            elif isinstance(v, list) and v:
                lines.append(f"{pad}{_key(k)}:")
                for item in v:
                    lines += self._seq_item(item, col + offset, 1)
            else:
                lines.append(f"{pad}{_key(k)}: {_flow(v, False)}")
        return lines

    def _seq_item(self, item: Any, dash: int, gap: int) -> list[str]:
        head = " " * dash + "-" + " " * gap
        if isinstance(item, dict) and item:
            inner = self._block(item, dash + 1 + gap)
            return [head + inner[0].lstrip(" ")] + inner[1:]
        return [head + _flow(item, False)]


class Append:
    """Items to add to a sequence, at its end or (``front``) its start (in a change's patch tree)."""

    __slots__ = ("items", "front")

    def __init__(self, items: list, front: bool = False) -> None:
        self.items = tuple(items)
        self.front = front


def _add(patch: dict, path: tuple, value: Any) -> None:
    if not path:
        raise Refused("a change names no field")
    node = patch
    for part in path[:-1]:
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, dict):
            raise Refused(f"two changes of {_show(path)}")
        node = nxt
    last = path[-1]
    old = node.get(last)
    if old is None:
        node[last] = value
    elif isinstance(old, Append) and isinstance(value, Append) and old.front == value.front:
        node[last] = Append(list(old.items) + list(value.items), old.front)
    elif isinstance(old, dict) and isinstance(value, dict):
        for k, v in value.items():
            _add(old, (k,), v)
    elif old != value:
        raise Refused(f"two changes of {_show(path)}")


def _merge_inserts(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """One fix's edits sorted; insertions at the same point joined, the deeper-indented first
    (a block filled under a key comes before the next key of its mapping)."""

    def depth(text: str) -> int:
        body = text.lstrip("\r\n")
        return len(body) - len(body.lstrip(" "))

    out: list[tuple[int, int, str]] = []
    for e in sorted(edits, key=lambda e: (e[0], e[1], -depth(e[2]))):
        if out and e[0] == e[1] == out[-1][0] == out[-1][1]:
            prev = out[-1][2]
            if prev.endswith(("\n",)) and not e[2].startswith(("\r", "\n")):
                out[-1] = (e[0], e[1], prev + e[2])
                continue
        out.append(e)
    return out


def _plain(value: Any) -> Any:
    """A patch as plain values (an Append on a missing field becomes the list)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Append):
        return [_plain(v) for v in value.items]
    return value


def _child(node: Node, key: Any) -> tuple[Node, Node] | None:
    want = str(key)
    for k, v in node.items:
        if k.kind == "scalar" and k.value == want:
            return k, v
    return None


def _is_null(node: Node) -> bool:
    return node.kind == "scalar" and node.style is None and node.value in ("", "~", "null", "Null", "NULL")


def _show(path: tuple) -> str:
    from kubelint_ml.input.loader import render_path

    return render_path(path) or "the document"


_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./-]*\Z")


@lru_cache(maxsize=4096)  # the same keys and values come back fix after fix
def _plain_ok(text: str) -> bool:
    if not _PLAIN_SAFE.match(text):
        return False
    try:
        return yaml.load(text, Loader=_Loader) == text
    except yaml.YAMLError:
        return False


def _key(k: Any, js: bool = False) -> str:
    return _flow(str(k), js)


def _flow(v: Any, js: bool) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k, js)}: {_flow(x, js)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_flow(x, js) for x in v) + "]"
    text = str(v)
    if not js and _plain_ok(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _scalar(v: Any, style: str | None, json_style: bool) -> str:
    """A new value for an existing scalar, in the scalar's own quoting style."""
    if isinstance(v, str):
        if style == "'":
            return "'" + v.replace("'", "''") + "'"
        if style == '"':
            return json.dumps(v, ensure_ascii=False)
    return _flow(v, json_style)
