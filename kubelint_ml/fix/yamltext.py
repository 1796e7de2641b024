"""Byte-exact edits of YAML text: a fix's changes, made where the file has them.

The file's LibYAML events (those the loader read it from, or the file is
parsed again: safe, nothing is constructed) become a light tree of spans: for
every node its start and end offset, its style (block or flow, plain or
quoted), anchor, and the key nodes of mappings. One pass over the events finds
where each collection ends; a collection's items are made when a change first
reads them, so a fix pays for the mappings on its path, not for the whole file.
A change then becomes the smallest edit of the original text:

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
from kubelint_ml.lazyre import LazyPattern


class Refused(Exception):
    """A change that cannot be made safely here; the message says why."""


class Node:
    """A node's spans. A collection's items are read from the events the first time they are
    asked for: a fix reads the few mappings on its path, not the whole file; and a mapping's
    value is looked up by its key without making the other items (:func:`_child`)."""

    __slots__ = (
        "kind",
        "start",
        "end",
        "anchor",
        "flow",
        "style",
        "value",
        "_items",
        "_merge",
        "col",
        "_tree",
        "_at",
        "_found",
    )

    def __init__(self, kind: str, start: int, col: int, anchor: str | None) -> None:
        self.kind = kind  # "map" | "seq" | "scalar" | "alias"
        self.start = start
        self.end = start
        self.col = col
        self.anchor = anchor
        self.flow = False
        self.style: str | None = None
        self.value: Any = None  # scalar text, or the alias name
        self._items: list = []
        self._merge: bool | None = False  # None: not read yet
        self._tree: _Tree | None = None  # a collection whose items are not read yet
        self._at = -1  # its start event's index
        self._found: dict[str, tuple[Node, Node] | None] | None = None  # a mapping's items looked up by key

    @property
    def items(self) -> list:
        """map: [(key Node, value Node)], seq: [Node]."""
        if self._tree is not None:
            self._tree.expand(self)
        return self._items

    @property
    def merge(self) -> bool:
        """A mapping with a merge key (``<<``)."""
        merge = self._merge
        if merge is None:
            merge = self._merge = self._tree is not None and self._tree.has_merge(self)
        return merge

    def last_end(self) -> int:
        """Where the node's text ends: a block collection ends with its last descendant."""
        if self.kind in ("map", "seq") and not self.flow and self.items:
            last = self.items[-1]
            return (last[1] if self.kind == "map" else last).last_end()
        return self.end


class _Tree:
    """A stream's events and where each collection ends: the nodes, made when asked for.
    (Nodes refer to it, it refers to no node: no reference cycle.)"""

    __slots__ = ("events", "ends")

    def __init__(self, events: list, ends: dict[int, int]) -> None:
        self.events = events
        self.ends = ends  # a collection's start event's index -> its end event's index

    def node(self, i: int) -> Node:
        """The node that event ``i`` starts."""
        E = yamlevents
        ev = self.events[i]
        cls = ev.__class__
        a = ev.args
        if cls is E.ScalarEvent:
            mark = a[E.SCALAR_START]
            n = Node("scalar", mark.index, mark.column, a[E.ANCHOR])
            n.end = a[E.SCALAR_END].index
            n.value = a[E.VALUE]
            n.style = a[E.STYLE] or None
        elif cls is E.AliasEvent:
            mark = a[E.ALIAS_START]
            n = Node("alias", mark.index, mark.column, None)
            n.end = a[E.ALIAS_END].index
            n.value = a[E.ANCHOR]
        else:
            mark = a[E.COLLECTION_START]
            is_map = cls is E.MappingStartEvent
            n = Node("map" if is_map else "seq", mark.index, mark.column, a[E.ANCHOR])
            n.flow = bool(a[E.FLOW])
            n.end = self.events[self.ends[i]].args[E.END].index
            n._tree, n._at = self, i
            if is_map:
                n._merge = None
        return n

    def expand(self, n: Node) -> None:
        """Read collection ``n``'s items (and, for a mapping, whether it has a merge key). Items
        looked up by key before are the same nodes."""
        ends = self.ends
        end = ends[n._at]
        j = n._at + 1
        items: list = []
        if n.kind == "map":
            found = {pair[0].start: pair for pair in (n._found or {}).values() if pair is not None}
            merge = False
            while j < end:
                kj = j
                j = ends[j] + 1 if j in ends else j + 1
                vj = j
                j = ends[j] + 1 if j in ends else j + 1
                k = self.node(kj)
                pair = found.get(k.start) or (k, self.node(vj))
                items.append(pair)
                if k.kind == "scalar" and k.value == "<<" and k.style is None:
                    merge = True
            n._merge = merge
        else:
            while j < end:
                items.append(self.node(j))
                j = ends[j] + 1 if j in ends else j + 1
        n._items = items
        n._tree = None

    def find(self, n: Node, want: str) -> tuple[Node, Node] | None:
        """The first item of mapping ``n`` whose key is the scalar ``want``, made alone (the others
        are skipped over in the events)."""
        E = yamlevents
        events, ends = self.events, self.ends
        end = ends[n._at]
        j = n._at + 1
        scalar_event, value = E.ScalarEvent, E.VALUE
        while j < end:
            ev = events[j]
            kj = j
            j = ends[j] + 1 if j in ends else j + 1
            if ev.__class__ is scalar_event and ev.args[value] == want:
                return self.node(kj), self.node(j)
            j = ends[j] + 1 if j in ends else j + 1
        return None

    def has_merge(self, n: Node) -> bool:
        """Whether mapping ``n`` has a merge key (a plain ``<<``), read from its keys' events."""
        E = yamlevents
        events, ends = self.events, self.ends
        end = ends[n._at]
        j = n._at + 1
        scalar_event, value, style = E.ScalarEvent, E.VALUE, E.STYLE
        while j < end:
            a = events[j]
            if a.__class__ is scalar_event and a.args[value] == "<<" and not a.args[style]:
                return True
            j = ends[j] + 1 if j in ends else j + 1
            j = ends[j] + 1 if j in ends else j + 1
        return False


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
        text = data[self.bom :].decode("utf-8")
        self.ascii = len(text) == len(data) - self.bom
        self.nl = "\r\n" if "\r\n" in text else "\n"
        if "\r" in text:
            # A CR without an LF after it ends a line too (YAML, and LSP's positions). The text is
            # read with each such CR as an LF, one character for one, so every offset stays; the
            # lines a fix inserts end as most of the file's lines do.
            crlf = text.count("\r\n")
            cr = text.count("\r") - crlf
            if cr:
                lf = text.count("\n") - crlf
                self.nl = max((lf, "\n"), (crlf, "\r\n"), (cr, "\r"))[1]
                text = _LONE_CR.sub("\n", text)
        self.text = text
        self.docs: list[Doc] = []
        self.broken_from: int | None = None  # documents from this index on did not parse
        broken = False
        # the indentation counts (see style), when every mapping key is a scalar: as the loader's
        # event reader keeps them (it leaves any other key to the composing loader)
        self._counts: tuple[Counter[int], Counter[int]] | None = (Counter(), Counter()) if events else None
        if events is None:
            events = []
            try:
                events.extend(yamlevents.parse(data, _Loader))  # up to a parse error, the events before it
            except yaml.YAMLError:
                broken = True
        self._stop = 0  # the events of the whole documents: events[:_stop]
        self._tree = self._index(events)
        if broken:
            self.broken_from = len(self.docs)
        self._style: tuple[int, int] | None = None

    # ------------------------------------------------------------------ parsing

    def _index(self, events: list) -> _Tree:
        """One pass over the events: where each collection ends, and each whole document (its
        root, the anchors its aliases name, its span, whether it holds a Helm directive); with
        ``_counts``, how far each block collection that is a mapping's value is indented from its key."""
        E = yamlevents
        scalar_event, alias_event = E.ScalarEvent, E.AliasEvent
        map_start, seq_start = E.MappingStartEvent, E.SequenceStartEvent
        map_end, seq_end = E.MappingEndEvent, E.SequenceEndEvent
        doc_start_event, doc_end_event = E.DocumentStartEvent, E.DocumentEndEvent
        ends: dict[int, int] = {}
        tree = _Tree(events, ends)
        open_: list[int] = []
        push, pop = open_.append, open_.pop
        aliased: set[str] = set()
        doc_start = root = 0
        counts = self._counts
        steps, seqs = counts or (Counter(), Counter())
        flow, collection_start, scalar_start = E.FLOW, E.COLLECTION_START, E.SCALAR_START
        for i, ev in enumerate(events):
            cls = ev.__class__
            if cls is scalar_event:
                continue
            if cls is map_start or cls is seq_start:
                if counts is not None and open_ and events[open_[-1]].__class__ is map_start:
                    key = events[i - 1]
                    if key.__class__ is not scalar_event:
                        counts = self._counts = None  # a collection as a key: counted by _indents
                    else:
                        a = ev.args
                        after = events[i + 1].__class__
                        if not a[flow] and after is not map_end and after is not seq_end:  # it has items
                            step = a[collection_start].column - key.args[scalar_start].column
                            if cls is map_start:
                                if step > 0:
                                    steps[step] += 1
                            elif step >= 0:
                                seqs[step] += 1
                push(i)
            elif cls is map_end or cls is seq_end:
                ends[pop()] = i
            elif cls is alias_event:
                aliased.add(ev.args[E.ANCHOR])
            elif cls is doc_start_event:
                aliased, doc_start, root = set(), ev.args[E.START].index, i + 1
                del open_[:]
            elif cls is doc_end_event:
                end = ev.args[E.END].index
                helm = self.text.find("{{", doc_start, end) >= 0
                self.docs.append(Doc(tree.node(root), aliased, doc_start, end, helm))
                self._stop = i + 1
        return tree

    def doc(self, index: int) -> Doc:
        if self.broken_from is not None and index >= self.broken_from:
            raise Refused("the file has a parse error at or before this document")
        if index >= len(self.docs) or self.docs[index].root is None:
            raise Refused("the document was not found")
        d = self.docs[index]
        if d.helm and not _own_braces(d.root):
            raise Refused("the document holds a Helm/Go template directive ({{ ... }})")
        return d

    # ------------------------------------------------------------------ style

    def style(self) -> tuple[int, int]:
        """(indentation step, offset of a block sequence's dash under its key) as the file writes them."""
        if self._style is None:
            steps, seqs = self._counts or self._indents()
            step, offset = _most_common(steps), _most_common(seqs)
            if step is _TIED or offset is _TIED:
                steps, seqs = self._indents_by_walk()
                step = steps.most_common(1)[0][0] if steps else None
                offset = seqs.most_common(1)[0][0] if seqs else None
            step = 2 if step is None else step
            self._style = (step, step if offset is None else offset)
        return self._style

    def _indents(self) -> tuple[Counter[int], Counter[int]]:
        """How far each block mapping (``steps``) and block sequence (``seqs``) that is a mapping's
        value is indented from its key, counted from the events."""
        E = yamlevents
        scalar_event, alias_event = E.ScalarEvent, E.AliasEvent
        map_start, seq_start = E.MappingStartEvent, E.SequenceStartEvent
        map_end, seq_end = E.MappingEndEvent, E.SequenceEndEvent
        steps: Counter[int] = Counter()
        seqs: Counter[int] = Counter()
        events = self._tree.events
        outer: list = []
        top: list | None = None  # the open collection: [a mapping?, its nodes so far, its last key's column]
        for i in range(self._stop):
            ev = events[i]
            cls = ev.__class__
            if cls is scalar_event or cls is alias_event:
                if top is not None and top[0]:
                    if not top[1] & 1:
                        top[2] = ev.args[E.SCALAR_START if cls is scalar_event else E.ALIAS_START].column
                    top[1] += 1
            elif cls is map_start or cls is seq_start:
                a = ev.args
                col = a[E.COLLECTION_START].column
                if top is not None and top[0]:
                    if not top[1] & 1:
                        top[2] = col  # a collection as a key
                    elif not a[E.FLOW]:
                        after = events[i + 1].__class__
                        if after is not map_end and after is not seq_end:  # it has items
                            if cls is map_start:
                                if col > top[2]:
                                    steps[col - top[2]] += 1
                            elif col >= top[2]:
                                seqs[col - top[2]] += 1
                outer.append(top)
                top = [cls is map_start, 0, 0]
            elif cls is map_end or cls is seq_end:
                top = outer.pop()
                if top is not None and top[0]:
                    top[1] += 1
        return steps, seqs

    def _indents_by_walk(self) -> tuple[Counter[int], Counter[int]]:
        """The same counts, in the order a walk of the trees meets them (the order that breaks a tie)."""
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
        return steps, seqs

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

    def past_nested_comments(self, at: int, lead: str, col: int) -> tuple[int, str]:
        """``at`` (a line start) moved past the comment lines there indented deeper than ``col``, and
        the blank lines among them: they belong to the block that ends above (a commented-out entry
        of the nested mapping, a note on the last item), and lines inserted at ``col`` must not come
        between it and them. Blank lines after the last such comment stay after the insertion."""
        t = self.text
        pos = end = at
        while pos < len(t):
            nl = t.find("\n", pos)
            stop = len(t) if nl < 0 else nl + 1
            line = t[pos:stop]
            body = line.lstrip(" ")
            if body.startswith("#") and len(line) - len(body) > col:
                end = stop
            elif body.strip():
                break
            pos = stop
        if end == at:
            return at, lead
        return end, "" if t[end - 1] == "\n" else self.nl

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
        at, lead = self.past_nested_comments(*self.after_line(node.last_end()), col)
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
        at, lead = self.past_nested_comments(*self.after_line(node.last_end()), dash)
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
            if prev.endswith(("\n", "\r")) and not e[2].startswith(("\r", "\n")):
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


_LONE_CR = LazyPattern(r"\r(?!\n)")
_TIED = object()


def _most_common(counts: Counter[int]) -> Any:
    """The most frequent count's key; None for none; _TIED when two share the top."""
    if not counts:
        return None
    best = max(counts.values())
    keys = [k for k, n in counts.items() if n == best]
    return keys[0] if len(keys) == 1 else _TIED


def _child(node: Node, key: Any) -> tuple[Node, Node] | None:
    want = str(key)
    tree = node._tree
    if tree is not None:  # items not read yet: the one asked for, alone (kept for the next fix)
        found = node._found
        if found is None:
            found = node._found = {}
        elif want in found:
            return found[want]
        pair = found[want] = tree.find(node, want)
        return pair
    for k, v in node.items:
        if k.kind == "scalar" and k.value == want:
            return k, v
    return None


def _own_braces(root: Node) -> bool:
    """An Argo object (``argoproj.io``): Argo substitutes ``{{...}}`` itself (its parameters and
    variables), and in a document read as YAML they are text of the workflow's, not a template's."""
    if root.kind != "map":
        return False
    pair = _child(root, "apiVersion")
    return pair is not None and pair[1].kind == "scalar" and str(pair[1].value).startswith("argoproj.io/")


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
