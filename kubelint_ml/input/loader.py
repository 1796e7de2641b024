"""YAML/JSON documents with a position for every key and item.

Parsing is the hot path. A plain manifest (mappings, sequences, untagged
scalars) is built straight from LibYAML's events (:func:`_load_events`),
recording each key's and item's mark in a ``PosDict``/``PosList`` as it is
created; anything else (anchors, aliases, tags, merge keys, errors) is read
from the start by LibYAML's composer and one recursive walk over its nodes,
which gives the same values and positions. Implicit tags are resolved from a
precomputed table, so reading with positions costs about half of PyYAML's
own ``safe_load`` of the same bytes. Nothing is walked twice, except input
whose size or bracket count and indentation allow nesting or node counts
beyond the limits: its event stream is scanned first (constant memory).
Where PyYAML has no LibYAML, or LibYAML refuses a file's nesting by itself
(PyYAML 6.0.4, see ``_libyaml_nesting``), the same loader runs on PyYAML's
pure-Python parser (``PurePositionLoader``): slower, same results.

Safety: only the safe YAML tags are constructed, and only into JSON-shaped
values (``PosDict``, ``PosList``, ``str``, ``int``, ``float``, ``bool``,
``None``): ``!!binary`` stays a string, ``!!set`` is a mapping, ``!!omap`` and
``!!pairs`` are sequences, and any other tag (``!!python/object`` among them)
is a parse problem, never constructed. Input is bounded in size, nesting
depth and node count (checked on the event stream before LibYAML composes
deep or huge input), documents per file, and alias expansion (a "billion
laughs" document is refused, not expanded). ``load`` never raises: whatever
goes wrong becomes a :class:`LoadProblem` with a line.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from kubelint_ml.input import yamlevents
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Frozen, Record

try:  # pragma: no cover - depends on how PyYAML was built
    from yaml import CSafeLoader as _CLoader
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover
    _CLoader = _CParser = None


class Limits(Frozen):
    max_file_bytes: int
    max_depth: int
    max_documents: int
    # Nodes a document may expand to when aliases are followed.
    max_expanded_nodes: int
    # YAML nodes (scalars, mappings, sequences, aliases) in one file, as
    # written: bounds the memory a file can make the loader use.
    max_nodes: int
    __slots__ = _fields = ("max_file_bytes", "max_depth", "max_documents", "max_expanded_nodes", "max_nodes")

    def __init__(
        self,
        max_file_bytes: int = 20 * 1024 * 1024,
        max_depth: int = 200,
        max_documents: int = 100_000,
        max_expanded_nodes: int = 1_000_000,
        max_nodes: int = 200_000,
    ) -> None:
        object.__setattr__(self, "max_file_bytes", max_file_bytes)
        object.__setattr__(self, "max_depth", max_depth)
        object.__setattr__(self, "max_documents", max_documents)
        object.__setattr__(self, "max_expanded_nodes", max_expanded_nodes)
        object.__setattr__(self, "max_nodes", max_nodes)


DEFAULT_LIMITS = Limits()


class _Placed:
    """What PosDict and PosList share: ``lc``, made from LibYAML's marks (``_marks``) the first
    time it is read when the node was read from events (most positions are never asked for, and
    :func:`locate` reads the marks themselves); pickle and copy carry the positions, not the marks."""

    __slots__ = ()
    _lc: Any  # the positions, or None until lc is first read
    _marks: Any  # the marks, or None

    def _from_marks(self, marks: Any) -> Any:  # pragma: no cover - each class has its own
        raise NotImplementedError

    @property
    def lc(self) -> Any:
        lc = self._lc
        if lc is None:
            lc = self._lc = self._from_marks(self._marks)
            self._marks = None
        return lc

    @lc.setter
    def lc(self, value: Any) -> None:
        self._lc, self._marks = value, None

    def __getstate__(self) -> tuple:
        state: dict = {"_marks": None}
        if getattr(self, "_lc", None) is not None or getattr(self, "_marks", None) is not None:
            state["_lc"] = self.lc
        if hasattr(self, "start"):
            state["start"] = self.start  # type: ignore[attr-defined]
        return None, state


class PosDict(_Placed, dict):
    """A mapping that knows where each of its keys and values starts.

    ``lc[key] = (key_line, key_col, value_line, value_col)``, 1-based.
    ``start = (line, col)`` of the mapping itself. Read from events: ``_marks`` = [key mark, value
    mark, ...], 0-based, in the order of the keys, until ``lc`` is read.
    """

    __slots__ = ("_lc", "start", "_marks")
    start: tuple[int, int]

    def _from_marks(self, marks: list) -> dict:
        return {
            k: (km.line + 1, km.column + 1, vm.line + 1, vm.column + 1)
            for k, km, vm in zip(self, marks[::2], marks[1::2])
        }

    # The marks follow the keys' order: taking a key out first turns them into positions by key.
    def _by_key(self) -> None:
        if getattr(self, "_marks", None) is not None:
            self._lc, self._marks = self._from_marks(self._marks), None

    def __delitem__(self, key: Any) -> None:
        self._by_key()
        dict.__delitem__(self, key)

    def pop(self, *args: Any) -> Any:
        self._by_key()
        return dict.pop(self, *args)

    def popitem(self) -> tuple:
        self._by_key()
        return dict.popitem(self)

    def clear(self) -> None:
        self._by_key()
        dict.clear(self)


class PosList(_Placed, list):
    """A sequence that knows where each of its items starts (1-based); read from events,
    ``_marks[i]`` is the item's mark until ``lc`` is read."""

    __slots__ = ("_lc", "start", "_marks")
    start: tuple[int, int]

    def _from_marks(self, marks: list) -> list:
        return [(m.line + 1, m.column + 1) for m in marks]


_YAML_TAG = "tag:yaml.org,2002:"
_MERGE_TAG = _YAML_TAG + "merge"


class _DuplicateKey(ConstructorError):
    pass


class _LimitError(ConstructorError):
    """A safety limit, not a syntax error: reported without "invalid YAML"."""


_STR_TAG = _YAML_TAG + "str"
_NULL_TAG = _YAML_TAG + "null"
_INT_TAG = _YAML_TAG + "int"
_TIMESTAMP_TAG = _YAML_TAG + "timestamp"
_MAP_TAGS = frozenset((_YAML_TAG + "map", _YAML_TAG + "set"))
_SEQ_TAGS = frozenset((_YAML_TAG + "seq", _YAML_TAG + "omap", _YAML_TAG + "pairs"))
_ScalarNode, _MappingNode, _SequenceNode = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode


def _implicit_table(resolver: Any) -> dict[str, tuple]:
    """First character -> the implicit (tag, regexp) pairs tried, as ``BaseResolver.resolve`` orders them."""
    table = resolver.yaml_implicit_resolvers
    wildcard = list(table.get(None, []))
    return {ch: tuple(list(pairs) + wildcard) for ch, pairs in table.items() if ch is not None}


# Plain scalar text -> its implicit tag (see PositionLoader.resolve); bounded.
_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX_LENGTH = 64
_RESOLVED_MAX_ENTRIES = 4096


def _plain_tag(value: str) -> str:
    """The implicit tag of a plain scalar's text, as ``BaseResolver.resolve`` finds it (remembered)."""
    tag = _STR_TAG
    for implicit_tag, regexp in _IMPLICIT.get(value[:1], ()):
        if regexp.match(value):
            tag = implicit_tag
            break
    if len(value) <= _RESOLVED_MAX_LENGTH:
        if len(_RESOLVED) >= _RESOLVED_MAX_ENTRIES:
            _RESOLVED.clear()
        _RESOLVED[value] = tag
    return tag


class _Positions(SafeConstructor):  # type: ignore[misc]
    """Safe construction whose mappings and sequences carry positions.

    LibYAML (or PyYAML's pure-Python parser, see :class:`PurePositionLoader`)
    composes the node graph; :meth:`construct_document` then builds the
    values in one recursive walk. Plain strings, the bulk of every manifest,
    are taken straight from their nodes, and collections are built in place;
    everything unusual (other tags, merge keys, tag/node mismatches) goes
    through PyYAML's own constructor machinery below, unchanged.
    """

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        """``BaseResolver.resolve`` for a loader without path resolvers, with the lookups precomputed.

        A plain scalar's tag depends on its text alone, and manifests repeat the
        same keys and values over and over: short ones are remembered.
        """
        if kind is _ScalarNode:
            if implicit[0]:
                tag = _RESOLVED.get(value)
                return _plain_tag(value) if tag is None else tag
            return _STR_TAG
        return _YAML_TAG + "seq" if kind is _SequenceNode else _YAML_TAG + "map"

    # LibYAML's composer calls these two for every node; they only matter with path
    # resolvers, which this loader has none of. C builtins that accept the same
    # arguments and do nothing observable are much cheaper calls than Python methods.
    descend_resolver = staticmethod(slice)  # descend_resolver(parent, index)
    ascend_resolver = staticmethod(tuple)  # ascend_resolver()

    def construct_document(self, node: yaml.Node) -> Any:
        self._memo: dict[yaml.Node, Any] = {}
        # Merge bookkeeping, per document. id(mapping node) -> how many of its pairs came
        # from merge keys: a node is flattened once (in place), and may be constructed
        # again later through an alias; this keeps its merged pairs apart from its own.
        self._merged = 0
        self._merged_prefix: dict[int, int] = {}
        # Set when a collection is reached a second time (an alias, or a shared merge value):
        # only then can the document expand past its text, and its expanded size is checked.
        self.shared = False
        try:
            return self._build(node)
        finally:
            self._memo = {}
            self.constructed_objects: dict = {}
            self.recursive_objects: dict = {}
            self.state_generators: list = []
            self.deep_construct = False

    def _build(self, node: yaml.Node) -> Any:
        cls = node.__class__
        tag = node.tag
        if cls is _ScalarNode:
            if tag == _STR_TAG:
                return node.value
            if tag == _NULL_TAG:
                return None
            if tag == _INT_TAG:
                text = node.value
                # Plain decimal (no sign, underscore, base prefix or leading zero): int() is exact.
                if len(text) < 19 and text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
                    return int(text)
        else:
            found = self._memo.get(node)
            if found is not None:
                self.shared = True
                return found
            if cls is _MappingNode and tag in _MAP_TAGS:
                return self._build_map(node)
            if cls is _SequenceNode and tag in _SEQ_TAGS:
                return self._build_seq(node)
        return self.construct_object(node, deep=True)

    def _build_map(self, node: yaml.MappingNode) -> PosDict:
        data = PosDict()
        mark = node.start_mark
        data.start = (mark.line + 1, mark.column + 1)
        self._memo[node] = data  # before the children: a recursive alias gets this same object
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                self.flatten_mapping(node)
                break
        first_explicit = self._merged_prefix.get(id(node), 0)
        seen: set[Any] | None = set() if first_explicit else None
        lc: dict[Any, tuple[int, int, int, int]] = {}
        build = self._build
        for i, (key_node, value_node) in enumerate(node.value):
            if key_node.__class__ is _ScalarNode and key_node.tag == _STR_TAG:
                key = key_node.value
            else:
                key = build(key_node)
                if key is None or key.__class__ is bool or key.__class__ is int:
                    # As Kubernetes' YAML-to-JSON conversion names them: `1` and `true` are the keys
                    # "1" and "true" (two keys; in Python 1 == True would make them one).
                    key = "null" if key is None else ("true" if key else "false") if key.__class__ is bool else str(key)
                try:
                    hash(key)
                except TypeError:
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark, "found an unhashable key", key_node.start_mark
                    ) from None
            if i >= first_explicit:
                if (key in seen) if seen is not None else (key in data):
                    raise _DuplicateKey(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
                if seen is not None:
                    seen.add(key)
            if value_node.__class__ is _ScalarNode and value_node.tag == _STR_TAG:
                data[key] = value_node.value
            else:
                data[key] = build(value_node)
            km = key_node.start_mark
            vm = value_node.start_mark
            lc[key] = (km.line + 1, km.column + 1, vm.line + 1, vm.column + 1)
        data.lc = lc
        return data

    def _build_seq(self, node: yaml.SequenceNode) -> PosList:
        data = PosList()
        mark = node.start_mark
        data.start = (mark.line + 1, mark.column + 1)
        self._memo[node] = data
        build = self._build
        lc = []
        for child in node.value:
            data.append(child.value if child.__class__ is _ScalarNode and child.tag == _STR_TAG else build(child))
            m = child.start_mark
            lc.append((m.line + 1, m.column + 1))
        data.lc = lc
        return data

    # PyYAML's generic path (construct_object): other scalar tags, unknown tags, and mismatches.

    def construct_mismatch(self, node: yaml.Node) -> Any:
        """A collection tag on the wrong kind of node (``!!map`` on a scalar): the right ones never get here."""
        want = "mapping" if node.tag in _MAP_TAGS else "sequence"
        raise ConstructorError(
            None, None, f"tag {_short_tag(node.tag)} needs a {want}, found a {node.id}", node.start_mark
        )

    max_merged = 1_000_000

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """Resolve ``<<`` merge keys, as PyYAML does, without exponential blow-up.

        PyYAML copies every merged pair into the merging mapping, so chains of
        anchors that merge a list of the previous anchor grow exponentially.
        Here a pair merged more than once (the same node, reached along
        several aliases) is kept once -- its last occurrence, which is the one
        that decides the value -- and the pairs merged in one document are
        counted against ``max_merged``.
        """
        merge: list[tuple[Any, Any]] = []
        index = 0
        while index < len(node.value):
            key_node, value_node = node.value[index]
            if key_node.tag != _MERGE_TAG:
                index += 1
                continue
            del node.value[index]
            if isinstance(value_node, yaml.MappingNode):
                self.flatten_mapping(value_node)
                merge.extend(value_node.value)
            elif isinstance(value_node, yaml.SequenceNode):
                submerge = []
                for subnode in value_node.value:
                    if not isinstance(subnode, yaml.MappingNode):
                        raise ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"expected a mapping for merging, but found {subnode.id}",
                            subnode.start_mark,
                        )
                    self.flatten_mapping(subnode)
                    submerge.append(subnode.value)
                for value in reversed(submerge):
                    merge.extend(value)
            else:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                    value_node.start_mark,
                )
        if not merge:
            return
        self._merged += len(merge)
        if self._merged > self.max_merged:
            raise _LimitError(
                None,
                None,
                f"merge keys (<<) expand to more than {self.max_merged} entries "
                "(limits.maxExpandedNodes); refusing to load",
                node.start_mark,
            )
        seen: set[int] = set()
        unique = []
        for pair in reversed(merge):
            if id(pair) not in seen:
                seen.add(id(pair))
                unique.append(pair)
        unique.reverse()
        node.value = unique + node.value
        self._merged_prefix[id(node)] = len(unique)

    def construct_checked_scalar(self, node: yaml.Node) -> Any:
        """``!!int``/``!!float``/``!!bool`` whose text does not parse is a problem, not a crash."""
        builder = _SCALARS[node.tag]
        try:
            return builder(self, node)
        except ConstructorError:
            raise
        except (ValueError, KeyError, TypeError, OverflowError) as e:
            what = node.tag.rsplit(":", 1)[-1]
            text = node.value if isinstance(node.value, str) else ""
            shown = text if len(text) <= 40 else text[:37] + "..."
            why = "more digits than Python allows (4300)" if "digits" in str(e) else "not a valid " + what
            raise ConstructorError(None, None, f"{what} value {shown!r}: {why}", node.start_mark) from None


_SCALARS = {
    "tag:yaml.org,2002:int": SafeConstructor.construct_yaml_int,
    "tag:yaml.org,2002:float": SafeConstructor.construct_yaml_float,
    "tag:yaml.org,2002:bool": SafeConstructor.construct_yaml_bool,
}


class PurePositionLoader(_Positions, yaml.SafeLoader):  # type: ignore[misc]
    """The same loader on PyYAML's pure-Python parser: used where PyYAML was
    built without LibYAML, and for a file whose nesting LibYAML refuses by
    itself (see :func:`load`). Slower; same values, positions and problems."""


if _CLoader is not None:

    class PositionLoader(_Positions, _CLoader):  # type: ignore[misc]
        """The loader on LibYAML's parser and composer: the fast path."""

else:  # pragma: no cover - PyYAML without LibYAML
    PositionLoader = PurePositionLoader  # type: ignore[misc]


def _safe_tags_only(cls: Any) -> None:
    """A fresh table: only these tags are ever constructed. Everything else,
    including every python/* tag, has no constructor and is a parse problem."""
    cls.yaml_constructors = {}
    cls.yaml_multi_constructors = {}
    cls.add_constructor(None, SafeConstructor.construct_undefined)
    cls.add_constructor("tag:yaml.org,2002:null", SafeConstructor.construct_yaml_null)
    cls.add_constructor("tag:yaml.org,2002:str", SafeConstructor.construct_yaml_str)
    for tag in _SCALARS:
        cls.add_constructor(tag, _Positions.construct_checked_scalar)
    for tag in sorted(_MAP_TAGS | _SEQ_TAGS):
        cls.add_constructor(tag, _Positions.construct_mismatch)
    # Kubernetes reads YAML through JSON: timestamps and binary stay strings, their text.
    cls.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    cls.add_constructor("tag:yaml.org,2002:binary", SafeConstructor.construct_yaml_str)


for _cls in {PositionLoader, PurePositionLoader}:
    _safe_tags_only(_cls)
_IMPLICIT = _implicit_table(PurePositionLoader)


# ---------------------------------------------------------------------------
# The common case, straight from LibYAML's events

_ScalarEvent = yamlevents.ScalarEvent
_MappingStart, _MappingEnd = yamlevents.MappingStartEvent, yamlevents.MappingEndEvent
_SequenceStart, _SequenceEnd = yamlevents.SequenceStartEvent, yamlevents.SequenceEndEvent
_DocumentStart = yamlevents.DocumentStartEvent
_SCALAR_BUILDER = _Positions.__new__(_Positions)  # for construct_checked_scalar: no state is used


class _Unusual(Exception):
    """Something :func:`_load_events` leaves to the composing loader."""


def _load_events(data: bytes, limits: Limits, keep_events: bool = False) -> LoadResult | None:
    """The documents built from LibYAML's events, without composing nodes first; None when the
    file holds anything but plain mappings, sequences and untagged scalars (an anchor, an alias,
    a tag, a merge key, a key that is not a scalar, a duplicate key, a value that does not
    construct, a syntax error, more documents than the limit, nesting deeper than the limit):
    the composing loader then reads it from the start, with the same values and positions and
    its own problems.

    Composing costs LibYAML a Python node, two marks and a resolver call for every node, about a
    third of the reading; a manifest rarely holds anything else. The building recurses once per
    level, up to ``limits.max_depth`` levels (the recursion limit is raised to fit). The events are
    :mod:`kubelint_ml.input.yamlevents`' (their fields by index in ``args``).

    With ``keep_events`` the events are kept in the result (``events``): a fix's edits are resolved
    from them, so a file with fixes is parsed once, not again to find the spans a fix edits.
    """
    if sys.getrecursionlimit() < 2 * limits.max_depth + 1000:
        sys.setrecursionlimit(2 * limits.max_depth + 1000)
    parser = _CParser(data)
    get_event: Callable[[], Any] = parser.get_event
    if not yamlevents.ACTIVE:  # pragma: no cover - a binding that builds PyYAML's own classes
        raw_event = get_event
        get_event = lambda: yamlevents.fast(raw_event())  # noqa: E731
    if len(data) > limits.max_nodes:
        # A file of fewer bytes than the node limit cannot hold more nodes. A longer one is counted as it
        # is read: past as many events (each node is one, or two) as the limit allows nodes, the composing
        # loader reads it, counting its nodes exactly before it builds any (_prescan).
        counted_event = get_event
        left = [limits.max_nodes]

        def get_event() -> Any:
            left[0] -= 1
            if left[0] < 0:
                raise _Unusual
            return counted_event()

    events: list[Any] | None = [] if keep_events else None
    # `id`: a builtin that takes the event and keeps nothing, as cheap a call as the append
    keep = events.append if events is not None else id
    str_tag, null_tag, int_tag, resolved = _STR_TAG, _NULL_TAG, _INT_TAG, _RESOLVED
    max_depth = limits.max_depth

    def scalar(a: tuple) -> Any:
        """A scalar event's value, from its ``args`` (anchor, tag, implicit, value, start, end, style)."""
        tag = a[1]
        if a[0] is not None or (tag is not None and tag != "!"):
            raise _Unusual
        text = a[3]
        if not a[2][0]:
            return text  # quoted, block, or the non-specific tag "!": a string
        tag = resolved.get(text) or _plain_tag(text)
        if tag == str_tag:
            return text
        if tag == null_tag:
            return None
        if tag == int_tag and len(text) < 19 and text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
            return int(text)
        if tag in _SCALARS:  # booleans, floats, other ints: PyYAML's own constructors, checked
            node = _ScalarNode(tag, text, a[4], a[5], a[6])
            try:
                return _SCALAR_BUILDER.construct_checked_scalar(node)
            except ConstructorError:
                raise _Unusual from None
        if tag == _TIMESTAMP_TAG:
            return text  # Kubernetes reads YAML through JSON: a timestamp is its text
        raise _Unusual  # a merge key where a value goes, `=`: the composing loader says what is wrong

    def value(ev: Any, level: int) -> Any:
        """The node that ``ev`` starts, ``level`` collections deep (1: the root's)."""
        cls = ev.__class__
        a = ev.args
        if cls is _ScalarEvent:
            return scalar(a)
        if a[0] is not None or (a[1] is not None and a[1] != "!"):
            raise _Unusual  # an anchor or a tag (an alias: its anchor)
        if level > max_depth:
            raise _Unusual  # nested deeper than the limit: the composing loader reports it
        mark = a[3]
        if cls is _MappingStart:
            mapping = PosDict()
            mapping.start = (mark.line + 1, mark.column + 1)
            marks: list[Any] = []  # each key's mark and its value's, in the keys' order
            while True:
                kev = get_event()
                keep(kev)
                if kev.__class__ is not _ScalarEvent:
                    if kev.__class__ is _MappingEnd:
                        break
                    raise _Unusual  # an alias, or a mapping or sequence as a key
                ka = kev.args
                # Inline below, what scalar() gives for the common scalar: an untagged string
                # (quoted, or plain text that resolves to a string); anything else goes through it.
                if ka[0] is None and ka[1] is None and (not ka[2][0] or resolved.get(ka[3]) == str_tag):
                    key = ka[3]
                else:
                    key = scalar(ka)
                    if key is None or key.__class__ is bool or key.__class__ is int:
                        # as the composing loader names them (see _Positions._build_map)
                        key = (
                            "null"
                            if key is None
                            else ("true" if key else "false")
                            if key.__class__ is bool
                            else str(key)
                        )
                if key in mapping:
                    raise _Unusual  # a duplicate key: reported by the composing loader
                vev = get_event()
                keep(vev)
                va = vev.args
                if vev.__class__ is not _ScalarEvent:
                    mapping[key] = value(vev, level + 1)
                    vm = va[3]  # a collection's start (an alias was refused)
                elif va[0] is None and va[1] is None and (not va[2][0] or resolved.get(va[3]) == str_tag):
                    mapping[key] = va[3]
                    vm = va[4]
                else:
                    mapping[key] = scalar(va)
                    vm = va[4]
                marks.append(ka[4])
                marks.append(vm)
            mapping._lc = None
            mapping._marks = marks
            return mapping
        if cls is _SequenceStart:
            items = PosList()
            items.start = (mark.line + 1, mark.column + 1)
            positions = []
            while True:
                iev = get_event()
                keep(iev)
                if iev.__class__ is _SequenceEnd:
                    break
                ia = iev.args
                if iev.__class__ is not _ScalarEvent:
                    items.append(value(iev, level + 1))
                    m = ia[3]
                elif ia[0] is None and ia[1] is None and (not ia[2][0] or resolved.get(ia[3]) == str_tag):
                    items.append(ia[3])
                    m = ia[4]
                else:
                    items.append(scalar(ia))
                    m = ia[4]
                positions.append(m)
            items._lc = None
            items._marks = positions
            return items
        raise _Unusual  # an alias

    docs: list[Document] = []
    try:
        keep(get_event())  # the stream's start
        while True:
            ev = get_event()
            keep(ev)
            if ev.__class__ is not _DocumentStart:
                break  # the stream's end
            if len(docs) >= limits.max_documents:
                return None
            first = get_event()
            keep(first)
            docs.append(Document(len(docs), value(first, 1), first.start_mark.line + 1))
            keep(get_event())  # the document's end
    except (_Unusual, yaml.YAMLError):
        return None
    except Exception:  # pragma: no cover - whatever it is, the composing loader reports it
        return None
    finally:
        parser.dispose()
        # `value` calls itself through this function's cell: a cycle that would keep the
        # parser (and its buffers) alive until the collector runs, file after file
        value = None  # type: ignore[assignment]
    if _has_unicode_breaks(data):
        _remap_lines(data, docs, [])
    return LoadResult(docs, [], events)


class Document(Record):
    index: int
    data: Any  # PosDict for a normal manifest
    line: int  # first line of the document (1-based)
    __slots__ = _fields = ("index", "data", "line")

    def __init__(self, index: int, data: Any, line: int) -> None:
        self.index = index
        self.data = data
        self.line = line


class LoadProblem(Record):
    message: str
    line: int
    column: int
    document: int
    # The document is a mapping with neither apiVersion nor kind: another tool's file whose YAML tags
    # are not read (a CloudFormation template's !Sub, mkdocs' !!python/name), not a bad manifest.
    foreign: bool
    __slots__ = _fields = ("message", "line", "column", "document", "foreign")

    def __init__(self, message: str, line: int, column: int = 1, document: int = 0, foreign: bool = False) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.document = document
        self.foreign = foreign


class LoadResult(Record):
    documents: list[Document]
    problems: list[LoadProblem]
    # LibYAML's events of the whole stream, when the documents were built from them: what a fix's
    # edits are resolved from (kubelint_ml.fix.yamltext) without parsing the file again. Not a field.
    events: list | None
    # The line the parser gave up on after a syntax error (where the reading may start again), or 0.
    stopped: int
    # Each document's objects, when the first pass unpacked them already (kubelint_ml.run.facts): the
    # second pass lints those instead of unpacking the documents again. Not a field.
    unpacked: list | None
    __slots__ = ("documents", "problems", "events", "stopped", "unpacked")
    _fields = ("documents", "problems")

    def __init__(self, documents: list[Document], problems: list[LoadProblem], events: list | None = None) -> None:
        self.documents = documents
        self.problems = problems
        self.events = events
        self.stopped = 0
        self.unpacked = None


# ----------------------------------------------------------------------------
# Cheap pre-checks on raw bytes


_TEMPLATE_LINE = LazyPattern(rb"^[ \t]*(?:- )?\{\{|:[ \t]+\{\{", re.M)


def looks_like_template(data: bytes) -> int:
    """Line number of the first line shaped like a Helm/Go template directive, or 0.

    Argo, Tekton and workflow placeholders look the same and are valid YAML where they sit in
    a block or quoted scalar: the runner calls a file a template only when it does not read as
    YAML from that line on (a directive where a value should be is an unhashable flow mapping
    or a syntax error to YAML)."""
    if b"{{" not in data:
        return 0
    m = _TEMPLATE_LINE.search(data)
    if not m:
        return 0
    return data.count(b"\n", 0, m.start()) + 1


_DOCUMENT_START = LazyPattern(rb"^---(?:[ \t]|$)", re.M)


def document_start_before(data: bytes, line: int) -> int:
    """Line number of the last ``---`` document marker above ``line``, or 0: where the document
    holding that line starts when a marker opens it."""
    head = data[: _line_offset(data, line)]
    found = 0
    for m in _DOCUMENT_START.finditer(head):
        found = m.start()
    return head.count(b"\n", 0, found) + 1 if found or head.startswith(b"---") else 0


def _line_offset(data: bytes, line: int) -> int:
    """The offset where 1-based ``line`` starts (the length of ``data`` past its last line)."""
    at = 0
    for _ in range(line - 1):
        at = data.find(b"\n", at) + 1
        if at == 0:
            return len(data)
    return at


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)


def _wide_encoding(head: bytes) -> str:
    """ "UTF-16LE (with a byte order mark)" and the like for UTF-16/32 text, else ""."""
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return f"{name} (with a byte order mark)"
    # Without a mark: text that is mostly ASCII has a NUL in every other byte.
    sample = head[:1024] if len(head) % 2 == 0 else head[: min(1024, len(head) - 1)]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) == len(odd) and even.count(0) == 0:
            return "UTF-16LE (without a byte order mark)"
        if even.count(0) == len(even) and odd.count(0) == 0:
            return "UTF-16BE (without a byte order mark)"
    return ""


def decode_problem(data: bytes) -> LoadProblem | None:
    """Binary or non-UTF-8 input, reported instead of decoded as garbage."""
    head = data[:8192]
    if data.isascii() and b"\x00" not in head:
        return None  # no byte order mark, no UTF-16 without one, valid UTF-8: what the checks below find
    wide = _wide_encoding(head)
    if wide:
        return LoadProblem(
            f"file is {wide}; the API server reads manifests as UTF-8 only: save it as UTF-8; not linted", 1
        )
    if b"\x00" in head:
        return LoadProblem("binary file (contains NUL bytes); not a manifest", 1)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return LoadProblem(f"file is not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})", line)
    return None


@lru_cache(maxsize=64)
def _lead_at_least(n: int) -> re.Pattern[bytes]:
    return re.compile(rb"\n[ \t?:-]{%d}" % n)


def _may_nest_deeper(data: bytes, limit: int) -> bool:
    """False when the text cannot nest deeper than ``limit`` (a cheap, safe test).

    Flow nesting needs one bracket per level. Block nesting needs, on some
    line, indentation or indicators before the content: a nested mapping is
    indented further, and a sequence nested in a mapping at the same
    indentation is followed by a ``- `` before its own children, so the
    levels are at most twice the longest run of leading spaces and ``-?:``,
    plus two. A document can mix both, so the bound is their sum. With
    unusual line breaks, the longest line stands in for the leading run.
    """
    flow = data.count(b"[") + data.count(b"{")
    if flow + 2 > limit:
        return True
    # Line breaks other than LF (CR, NEL, LS, PS), or UTF-16: lines are not what LF splits.
    if b"\r" in data or b"\x00" in data or _has_unicode_breaks(data):
        return flow + max(map(len, data.split(b"\n"))) > limit
    # A leading run of n characters makes the bound flow + 2n + 2.
    n = (limit - flow - 2) // 2 + 1
    return _lead_at_least(n).search(b"\n" + data[:n]) is not None or _lead_at_least(n).search(data) is not None


_START_EVENTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_END_EVENTS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)
# LibYAML's composer recurses in C: far deeper input crashes the process
# (50,000 levels do). A document deeper than the limit but below this is
# skipped (its events read, nothing composed); deeper than this, the whole
# file is refused.
COMPOSE_SAFE_DEPTH = 5_000

# The LibYAML that PyYAML 6.0.4 builds in refuses, in its scanner, nesting deeper than
# 1,000 levels ("exceeded maximum nesting depth"): the whole rest of the file would be
# lost, and limits.maxDepth up to 1000 would not hold. Its setter (private in 6.0.4;
# absent, with no limit, before) lifts that ceiling to the one the prescan enforces,
# for the time the loader reads, and puts it back after. A LibYAML that still refuses
# (a ceiling with no setter) gets the file read again with the pure-Python parser,
# which has no such ceiling.
try:  # pragma: no cover - depends on how PyYAML was built
    from yaml._yaml import _get_max_nest_level, _set_max_nest_level  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _get_max_nest_level = _set_max_nest_level = None
_LIBYAML_NESTING = "exceeded maximum nesting depth"
_nesting_lock = threading.Lock()
_nesting_state = [0, 0]  # [loads reading now, the ceiling to put back]


@contextmanager
def _libyaml_nesting(levels: int) -> Iterator[None]:
    """LibYAML's own nesting ceiling at least ``levels`` while a load reads."""
    if _set_max_nest_level is None:
        yield
        return
    with _nesting_lock:
        if _nesting_state[0] == 0:
            _nesting_state[1] = _get_max_nest_level()
        _nesting_state[0] += 1
        if _get_max_nest_level() < levels:
            _set_max_nest_level(levels)
    try:
        yield
    finally:
        with _nesting_lock:
            _nesting_state[0] -= 1
            if _nesting_state[0] == 0:
                _set_max_nest_level(_nesting_state[1])


class _NestingRefused(Exception):
    """LibYAML refused nesting by itself: the file is read again without it."""


class _Scan(Record):
    refused: LoadProblem | None  # the whole file
    too_deep: dict[int, LoadProblem]  # document index -> problem
    __slots__ = _fields = ("refused", "too_deep")

    def __init__(self, refused: LoadProblem | None = None, too_deep: dict[int, LoadProblem] | None = None) -> None:
        self.refused = refused
        self.too_deep = {} if too_deep is None else too_deep


def _prescan(data: bytes, limits: Limits, parser: Any) -> _Scan:
    """Depth and node count from the event stream, before anything is composed.

    The event stream costs constant memory, so input that is too deep (which
    LibYAML's composer would recurse into) or too big (whose node objects
    would not fit in memory) is found cheaply.
    """
    out = _Scan()
    depth = 0
    nodes = 0
    document = -1
    hard_limit = max(COMPOSE_SAFE_DEPTH, limits.max_depth)
    try:
        for event in yaml.parse(data, Loader=parser):
            if isinstance(event, _NODE_EVENTS):
                nodes += 1
                if nodes > limits.max_nodes:
                    m = event.start_mark
                    out.refused = LoadProblem(
                        f"more than {limits.max_nodes} YAML nodes in one file (limits.maxNodes); not linted",
                        m.line + 1,
                        m.column + 1,
                        max(document, 0),
                    )
                    return out
                if isinstance(event, _START_EVENTS):
                    depth += 1
                    if depth > limits.max_depth and document not in out.too_deep:
                        m = event.start_mark
                        out.too_deep[document] = LoadProblem(
                            f"nesting deeper than {limits.max_depth} levels (limits.maxDepth); document not linted",
                            m.line + 1,
                            m.column + 1,
                            document,
                        )
                    if depth > hard_limit:
                        m = event.start_mark
                        out.refused = LoadProblem(
                            f"nesting deeper than {hard_limit} levels; refusing to load the file",
                            m.line + 1,
                            m.column + 1,
                            document,
                        )
                        return out
            elif isinstance(event, _END_EVENTS):
                depth -= 1
            elif isinstance(event, yaml.DocumentStartEvent):
                document += 1
                depth = 0
    except yaml.YAMLError as e:
        if _LIBYAML_NESTING in str(getattr(e, "problem", "")) and parser is not PurePositionLoader:
            raise _NestingRefused from None
        # Otherwise the real load reports the syntax error, with the documents before it.
    return out


def _expanded_size(root: Any, limit: int, depth_limit: int) -> str | None:
    """Follow aliases as a consumer would; refuse documents that explode.

    Iterative, and memoised by object identity: a shared subtree is measured
    once (its size and height), so the walk is linear in the number of
    distinct nodes however often aliases repeat it.
    """
    if not isinstance(root, (dict, list)):
        return None
    measured: dict[int, tuple[int, int]] = {}  # id -> (expanded nodes, height)
    on_path: set[int] = set()
    # Frames: [id, children iterator, expanded nodes so far, height so far].
    stack: list[list[Any]] = []

    def push(node: Any) -> None:
        on_path.add(id(node))
        stack.append([id(node), iter(node.values() if isinstance(node, dict) else node), 1, 1])

    too_large = f"aliases expand to more than {limit} nodes (limits.maxExpandedNodes; an alias bomb?); refusing to load"
    too_deep = f"aliases expand to nesting deeper than {depth_limit} levels (limits.maxDepth); refusing to load"
    push(root)
    while stack:
        frame = stack[-1]
        child = next(frame[1], _END)
        if child is _END:
            stack.pop()
            on_path.discard(frame[0])
            measured[frame[0]] = (frame[2], frame[3])
            if stack:
                parent = stack[-1]
                parent[2] += frame[2]
                parent[3] = max(parent[3], frame[3] + 1)
                if parent[2] > limit:
                    return too_large
            continue
        if not isinstance(child, (dict, list)):
            frame[2] += 1
            if frame[2] > limit:
                return too_large
            continue
        known = measured.get(id(child))
        if known is not None:
            frame[2] += known[0]
            frame[3] = max(frame[3], known[1] + 1)
            if frame[2] > limit:
                return too_large
            if len(stack) + known[1] > depth_limit:
                return too_deep
            continue
        if id(child) in on_path:
            return "recursive alias (a node contains itself); refusing to load"
        if len(stack) >= depth_limit:
            return too_deep
        push(child)
    return None


_END = object()


def _mark_of(err: yaml.YAMLError) -> tuple[int, int]:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return 1, 1
    return mark.line + 1, mark.column + 1


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else tag


_NO_CONSTRUCTOR = "could not determine a constructor for the tag"


def _describe(err: yaml.YAMLError) -> str:
    if isinstance(err, _LimitError):
        return str(err.problem)
    if isinstance(err, _DuplicateKey):
        return f"duplicate key: {err.problem[len('found duplicate key ') :]} (each key may appear once in a mapping)"
    if isinstance(err, yaml.reader.ReaderError):
        # LibYAML's words; PyYAML's pure-Python reader says "special characters".
        return "invalid YAML: " + str(err).splitlines()[0].replace("special characters", "control characters")
    problem = getattr(err, "problem", None)
    context = getattr(err, "context", None)
    if isinstance(problem, str) and problem.startswith(_NO_CONSTRUCTOR):
        tag = problem.rsplit(" ", 1)[-1].strip("'")
        return (
            f"unsupported YAML tag {_short_tag(tag)[:100]}: only the standard tags are read "
            "(str, int, float, bool, null, map, seq); no tag is ever executed"
        )
    if problem:
        text = f"{context}: {problem}" if context else str(problem)
    else:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return "invalid YAML: " + text.replace("\n", " ")


def load(data: bytes, limits: Limits = DEFAULT_LIMITS, keep_events: bool = False) -> LoadResult:
    """Parse every document of one file; never raises.

    A broken document is reported and the others are kept. The parser (LibYAML's or the
    pure-Python one) cannot go on after a syntax error by itself: the reading starts again at
    the next document marker (``---`` at the start of a line) after the line where the parser
    gave up, so every later document is read too (see :func:`_resume_at`). The problem points
    at the first line the parser could not read (the line a key without its ``:`` started on,
    a git conflict marker). A document whose values cannot be constructed (a bad tag, a
    duplicate key, an alias bomb) is reported and the following documents are still loaded.

    ``keep_events``: keep LibYAML's events in the result when the documents are built from them
    (``LoadResult.events``; None otherwise), for resolving fix edits without a second parse.
    """
    result = _read(data, limits, keep_events)
    after = 0
    while result.stopped:
        offset = _resume_at(data, result.stopped, after)
        index = result.problems[-1].document + 1 if result.problems else len(result.documents)
        if offset < 0 or index >= limits.max_documents:
            break
        result.stopped = 0
        # The rest, after as many empty lines as the text before it has: LibYAML's lines (and
        # so every position) are the file's, and a reader counts them the same way.
        rest = _read(
            b"\n" * len(_LINE_BREAK.findall(data, 0, offset)) + data[offset:],
            Limits(
                limits.max_file_bytes,
                limits.max_depth,
                limits.max_documents - index,
                limits.max_expanded_nodes,
                limits.max_nodes,
            ),
            False,
        )
        for d in rest.documents:
            d.index += index
            result.documents.append(d)
        for p in rest.problems:
            p.document += index
            result.problems.append(p)
        result.stopped = rest.stopped
        after = offset
    return result


_DOCUMENT_MARKER = LazyPattern(rb"^---(?=[ \t\r\n]|$)", re.M)
# What keeps a file from being cut into its documents at their markers: a document end marker
# (`...`: a document may follow it without `---`) or a directive (`%YAML`, `%TAG`).
_UNCUTTABLE = LazyPattern(rb"^(?:\.\.\.(?=[ \t\r\n]|$)|%)", re.M)
# A line that is blank or a comment (the text before a file's first `---` is no document if only these).
_NOTHING = LazyPattern(rb"(?:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n|$))*")


def load_matching(data: bytes, limits: Limits, wanted: Callable[[bytes], bool]) -> LoadResult | None:
    """The documents of ``data`` whose text ``wanted`` accepts, with the index and positions
    :func:`load` gives them; the others are not built (for reading a few objects out of a long file:
    the first pass's facts). The file is read once, each unwanted document blanked to an empty one
    of as many lines. None when the file does not cut at its ``---`` markers for certain (a ``...``
    marker, a directive, a reading that disagrees): :func:`load` it whole then.
    """
    starts = [m.start() for m in _DOCUMENT_MARKER.finditer(data)]
    if not starts or len(starts) >= limits.max_documents or _UNCUTTABLE.search(data) is not None:
        return None
    # The text before the first marker is a document when it holds more than comments.
    implicit = starts[0] != 0 and _NOTHING.fullmatch(data, 0, starts[0]) is None
    if implicit:
        starts.insert(0, 0)
    elif starts[0] != 0:
        starts.insert(0, 0)  # comments only: kept as they are, no document
    ends = starts[1:] + [len(data)]
    pieces: list[bytes] = []
    keep: set[int] = set()
    index = 0
    for start, end in zip(starts, ends):
        part = data[start:end]
        if start == 0 and not implicit and not part.startswith(b"---"):
            pieces.append(part)  # the comments above the first marker
            continue
        if wanted(part):
            keep.add(index)
            pieces.append(part)
        else:  # an empty document on as many lines: `~` where no marker starts it
            marker = b"---" if part.startswith(b"---") else b"~"
            pieces.append(marker + b"\n" * len(_LINE_BREAK.findall(part)))
        index += 1
    if not keep:
        return LoadResult([], [])
    result = _read(b"".join(pieces), limits, False)
    if result.problems or result.stopped or [d.index for d in result.documents] != list(range(index)):
        return None
    result.documents = [d for d in result.documents if d.index in keep]
    return result


def _line_start(data: bytes, line: int) -> bytes:
    """The text from the start of ``line`` (1-based) on; empty past the end."""
    starts = _LINE_BREAK.finditer(data)
    offset = 0
    for _ in range(line - 1):
        m = next(starts, None)
        if m is None:
            return b""
        offset = m.end()
    return data[offset:]


def _resume_at(data: bytes, line: int, after: int) -> int:
    """Offset of the first document marker on ``line`` (1-based) or below, past ``after``; -1 for none."""
    offset = len(data) - len(_line_start(data, line))
    if offset == len(data):
        return -1
    while True:
        m = _DOCUMENT_MARKER.search(data, offset)
        if m is None:
            return -1
        if m.start() > after:
            return m.start()
        offset = m.end()


def _foreign(node: Any, err: ConstructorError) -> bool:
    """A tag no constructor reads, in a document whose root is a mapping with neither ``apiVersion``
    nor ``kind`` (the composed node: nothing of it was constructed)."""
    if not str(getattr(err, "problem", "")).startswith(_NO_CONSTRUCTOR) or not isinstance(node, yaml.MappingNode):
        return False
    keys = {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return "apiVersion" not in keys and "kind" not in keys


def _read(data: bytes, limits: Limits, keep_events: bool) -> LoadResult:
    docs: list[Document] = []
    problems: list[LoadProblem] = []
    if len(data) > limits.max_file_bytes:
        problems.append(
            LoadProblem(
                f"file is {len(data)} bytes, over the {limits.max_file_bytes}-byte limit (limits.maxFileBytes); "
                "not linted",
                1,
            )
        )
        return LoadResult(docs, problems)
    bad = decode_problem(data)
    if bad:
        problems.append(bad)
        return LoadResult(docs, problems)
    if _CParser is not None:
        fast = _load_events(data, limits, keep_events)  # refuses input nested deeper than the limit
        if fast is not None:
            return fast
    deep = _may_nest_deeper(data, limits.max_depth)
    loader = PositionLoader
    if loader is not PurePositionLoader:
        try:
            if not (
                deep if limits.max_depth <= _UNDER_LIBYAML_CEILING else _may_nest_deeper(data, _UNDER_LIBYAML_CEILING)
            ):
                return _load(data, limits, loader, deep)  # shallow: LibYAML's ceiling cannot matter
            # The scanner runs ahead of the events, by up to a simple key's 1,024 characters.
            with _libyaml_nesting(max(COMPOSE_SAFE_DEPTH, limits.max_depth) + 2048):
                return _load(data, limits, loader, deep)
        except _NestingRefused:
            loader = PurePositionLoader
    return _load(data, limits, loader, deep)


_UNDER_LIBYAML_CEILING = 900  # levels LibYAML 0.2.6 reads with its own ceiling (1,000) in place


def _load(data: bytes, limits: Limits, loader_class: Any, deep: bool) -> LoadResult:
    docs: list[Document] = []
    problems: list[LoadProblem] = []
    too_deep: dict[int, LoadProblem] = {}
    stop: LoadProblem | None = None
    if len(data) > limits.max_nodes or deep:
        scan = _prescan(data, limits, loader_class)
        if scan.refused:
            problems.append(scan.refused)
            return LoadResult(docs, problems)
        too_deep = scan.too_deep

    # Building recurses about two frames per level (and so does the pure-Python composer):
    # room for every depth the limits allow.
    if sys.getrecursionlimit() < 2 * limits.max_depth + 1000:
        sys.setrecursionlimit(2 * limits.max_depth + 1000)
    loader = None
    index = 0
    try:
        loader = loader_class(data)  # the pure-Python reader checks every character here
        loader.max_merged = limits.max_expanded_nodes
        while loader.check_node():
            if index >= limits.max_documents:
                problems.append(
                    LoadProblem(
                        f"more than {limits.max_documents} documents in one file (limits.maxDocuments); "
                        "the rest are not linted",
                        docs[-1].line if docs else 1,
                        document=index,
                    )
                )
                break
            if index in too_deep:
                problems.append(too_deep[index])
                if loader_class is PurePositionLoader:
                    # Composing would recurse in Python, a few frames a level: its events are
                    # read past instead, whatever the depth (below the prescan's hard limit).
                    while not isinstance(loader.get_event(), yaml.DocumentEndEvent):
                        pass
                else:
                    loader.get_node()  # LibYAML composes in C: safe below COMPOSE_SAFE_DEPTH
                index += 1
                continue
            node = loader.get_node()
            line = node.start_mark.line + 1 if node is not None else 1
            try:
                value = loader.construct_document(node)
            except (ConstructorError, RecursionError) as e:
                if isinstance(e, RecursionError):
                    problems.append(LoadProblem("nesting too deep to load", line, 1, index))
                else:
                    line_, col = _mark_of(e)
                    problems.append(LoadProblem(_describe(e), line_, col, index, _foreign(node, e)))
                index += 1
                continue
            if loader.shared and isinstance(value, (dict, list)):
                why = _expanded_size(value, limits.max_expanded_nodes, limits.max_depth)
                if why:
                    problems.append(LoadProblem(why, line, 1, index))
                    index += 1
                    continue
            docs.append(Document(index, value, line))
            index += 1
    except yaml.YAMLError as e:
        if _LIBYAML_NESTING in str(getattr(e, "problem", "")) and loader_class is not PurePositionLoader:
            raise _NestingRefused from None
        if isinstance(e, yaml.MarkedYAMLError) and not isinstance(e, ConstructorError) and e.problem_mark:
            # A syntax error: the reading may start again below the line the parser gave up on.
            stop = LoadProblem("", e.problem_mark.line + 1, e.problem_mark.column + 1)
            problems.append(_syntax_problem(data, e, index))
        else:
            line, col = _mark_of(e)
            problems.append(LoadProblem(_describe(e), line, col, index))
    except RecursionError:
        problems.append(LoadProblem("nesting too deep to load", 1, 1, index))
    except Exception as e:  # pragma: no cover - a loader bug must not take the run down
        problems.append(LoadProblem(f"could not load the file ({type(e).__name__}: {e})"[:300], 1, 1, index))
    finally:
        if loader is not None:
            loader.dispose()
    if _has_unicode_breaks(data):
        _remap_lines(data, docs, problems if stop is None else [*problems, stop])
    if problems:
        _clamp_lines(data, problems)
    result = LoadResult(docs, problems)
    if stop is not None:
        result.stopped = stop.line
    return result


_CONFLICT_MARKER = LazyPattern(rb"^(?:<{7}|={7}|>{7}|\|{7})(?=[ \t\r\n]|$)", re.M)


def _syntax_problem(data: bytes, err: yaml.MarkedYAMLError, index: int) -> LoadProblem:
    """The problem at the first line the parser could not read.

    A git conflict marker at or above the line the parser gave up on is named as one. A
    key without its ``:`` (``could not find expected ':'``) is reported where the key starts
    (LibYAML's context mark), not at the next token, which may be lines below, past comments;
    so is a quoted string or flow collection still open at the next document or the end.
    """
    line, col = _mark_of(err)
    m = _CONFLICT_MARKER.search(data)
    if m is not None:
        at = data.count(b"\n", 0, m.start()) + 1
        if at <= line:
            marker = data[m.start() : m.start() + 7].decode()
            return LoadProblem(
                f"invalid YAML: git merge conflict marker ({marker}): resolve the conflict", at, 1, index
            )
    if err.context_mark is not None and (
        err.context == "while scanning a simple key"
        or _RAN_PAST.search(str(err.problem or ""))
        or (err.problem_mark.column == 0 and _line_start(data, line)[:3] in (b"---", b"..."))
    ):
        line, col = err.context_mark.line + 1, err.context_mark.column + 1
    return LoadProblem(_describe(err), line, col, index)


# The parser ran into the next document or the end of the input: what it could not read is the
# construct that was still open (a quoted string, a flow collection), where it started.
_RAN_PAST = LazyPattern(r"document (?:start|indicator|separator)|stream end|end of stream")


_LINE_BREAK = LazyPattern(rb"\r\n|\r|\n")
# NEL, LS, PS: line breaks to LibYAML (YAML 1.1), not to YAML 1.2, Kubernetes, editors or GitHub.
_UNICODE_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _has_unicode_breaks(data: bytes) -> bool:
    """NEL, LS or PS in the text (ASCII text, checked at once, has none: three searches for
    multi-byte needles cost more than the rest of a small file's checks)."""
    return not data.isascii() and any(b in data for b in _UNICODE_BREAKS)


_YAML11_BREAK = LazyPattern("\r\n|[\r\n\x85\u2028\u2029]")
_TEXT_BREAK = LazyPattern("\r\n|[\r\n]")


def _remap_lines(data: bytes, docs: list[Document], problems: list[LoadProblem]) -> None:
    """Positions as a reader counts lines, where LibYAML also broke lines at NEL, LS and PS.

    LibYAML's (line, column) is turned back into a character offset with its own
    line starts, and that offset into a line and column with CR/LF breaks only.
    Runs only for files that contain one of those characters.
    """
    from bisect import bisect_right

    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]  # LibYAML does not count the byte order mark
    libyaml = [0] + [m.end() for m in _YAML11_BREAK.finditer(text)]
    real = [0] + [m.end() for m in _TEXT_BREAK.finditer(text)]

    def at(line: int, col: int) -> tuple[int, int]:
        if not 1 <= line <= len(libyaml):
            return line, col
        offset = libyaml[line - 1] + col - 1
        n = bisect_right(real, offset)
        return n, offset - real[n - 1] + 1

    for p in problems:
        p.line, p.column = at(p.line, p.column)
    seen: set[int] = set()
    stack: list[Any] = [d.data for d in docs]
    for d in docs:
        d.line = at(d.line, 1)[0]
    while stack:
        node = stack.pop()
        if not isinstance(node, (PosDict, PosList)) or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "start"):
            node.start = at(*node.start)
        if isinstance(node, PosDict):
            node.lc = {k: at(kl, kc) + at(vl, vc) for k, (kl, kc, vl, vc) in node.lc.items()}
            stack.extend(node.values())
        else:
            node.lc = [at(line, col) for line, col in node.lc]
            stack.extend(node)


def _clamp_lines(data: bytes, problems: list[LoadProblem]) -> None:
    """LibYAML can put an end-of-input error past the end of the input: keep it in the file."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return  # UTF-16: LibYAML's own line count is the reference
    last = len(_LINE_BREAK.findall(data)) + 1
    for p in problems:
        if p.line > last:
            p.line, p.column = last, 1


class LoadError(Exception):
    """A config or rule file that cannot be loaded; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def load_single(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The one document of a config or rule file, with the same safety as manifests.

    ``None`` for an empty file. Raises :class:`LoadError` for anything
    :func:`load` reports, and for a file with more than one document.
    """
    result = load(data, limits)
    if result.problems:
        p = result.problems[0]
        raise LoadError(p.line, p.message)
    if len(result.documents) > 1:
        raise LoadError(result.documents[1].line, "expected one YAML document, found several")
    return result.documents[0].data if result.documents else None


# ----------------------------------------------------------------------------
# Positions


_NEEDS_BRACKETS = re.compile(r'[.\[\]" \t\n]')  # a key written ["..."] in a rendered path


def render_path(path: tuple) -> str:
    """``("spec", "containers", 0, "resources")`` -> ``spec.containers[0].resources``; remembered
    (findings and messages name the same few field paths over and over)."""
    for part in path:
        if type(part) is not str and type(part) is not int:  # True == 1 == 1.0: not a safe key
            return _render_path(path)
    return _remembered_path(path)


def _render_path(path: tuple) -> str:
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            text = str(part)
            if not text or _NEEDS_BRACKETS.search(text):
                out.append('["' + text.replace("\\", "\\\\").replace('"', '\\"') + '"]')
            else:
                out.append(("." if out else "") + text)
    return "".join(out)


_remembered_path = lru_cache(maxsize=4096)(_render_path)


def locate(root: Any, path: tuple) -> tuple[int, int, tuple]:
    """Line, column and path of the deepest existing node along ``path``.

    A key found in a mapping points at the key; an item of a sequence at the
    item. When the path runs out (a missing field), the answer is the
    nearest existing parent.
    """
    node = root
    found: list = []
    at: Any = None  # the collection that holds the last part found
    for part in path:
        if isinstance(node, PosDict):
            if part not in node:
                break
        elif isinstance(node, PosList):
            if not isinstance(part, int) or not 0 <= part < len(node):
                break
        else:
            break
        at = node
        node = node[part]
        found.append(part)
    if at is None:
        line, col = getattr(root, "start", (1, 1))
    else:  # only the last part's position is read
        line, col = _position(at, found[-1], False)
    return line, col, tuple(found)


def _position(at: PosDict | PosList, part: Any, value: bool) -> tuple[int, int]:
    """Where ``at[part]`` starts: its key's position, or (``value``) its value's, in a mapping."""
    marks = at._marks
    if marks is None or (len(at) > _SCANNED_KEYS and isinstance(at, PosDict)):
        # read already, or a long mapping: its positions made once, rather than its keys scanned for each
        pos = at.lc[part]
        return (pos[2], pos[3]) if value and isinstance(at, PosDict) else (pos[0], pos[1])
    if isinstance(at, PosDict):
        m = marks[2 * tuple(at).index(part) + (1 if value else 0)]
    else:
        m = marks[part]
    return m.line + 1, m.column + 1


_SCANNED_KEYS = 32  # up to this many keys, a key's marks are found by its place among them


def value_position(root: Any, path: tuple) -> tuple[int, int, tuple]:
    """Like :func:`locate`, but a found mapping value points at the value."""
    if not path:
        return locate(root, path)
    line, col, found = locate(root, path[:-1])
    if len(found) != len(path) - 1:
        return line, col, found
    parent = root
    for part in found:
        parent = parent[part]
    last = path[-1]
    if (isinstance(parent, PosDict) and last in parent) or (
        isinstance(parent, PosList) and isinstance(last, int) and 0 <= last < len(parent)
    ):
        return (*_position(parent, last, True), path)
    return line, col, found
