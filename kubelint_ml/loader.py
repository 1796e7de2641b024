"""YAML/JSON documents with a position for every key and item.

Parsing is the hot path. LibYAML's ``CSafeLoader`` does the scanning and
composing; the only Python we add is in the two constructors that build
mappings and sequences, where each key's and item's mark is recorded in a
``PosDict``/``PosList`` as it is created. Nothing is walked twice.

Safety: only the safe YAML tags are constructed; input is bounded in size,
nesting depth (checked before LibYAML sees deep input, which it would
otherwise recurse into until the process crashes), documents per file, and
alias expansion (a "billion laughs" document is refused, not expanded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

import yaml

try:  # pragma: no cover - depends on how PyYAML was built
    from yaml import CSafeLoader as _BaseLoader

    LIBYAML = True
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    LIBYAML = False

from yaml.constructor import ConstructorError, SafeConstructor


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = 20 * 1024 * 1024
    max_depth: int = 200
    max_documents: int = 100_000
    # Nodes a document may expand to when aliases are followed.
    max_expanded_nodes: int = 1_000_000


DEFAULT_LIMITS = Limits()


class PosDict(dict):
    """A mapping that knows where each of its keys and values starts.

    ``lc[key] = (key_line, key_col, value_line, value_col)``, 1-based.
    ``start = (line, col)`` of the mapping itself.
    """

    __slots__ = ("lc", "start")


class PosList(list):
    """A sequence that knows where each of its items starts (1-based)."""

    __slots__ = ("lc", "start")


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKey(ConstructorError):
    pass


class PositionLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader whose mappings and sequences carry positions."""

    def construct_pos_map(self, node: yaml.MappingNode) -> Iterator[PosDict]:
        data = PosDict()
        mark = node.start_mark
        data.start = (mark.line + 1, mark.column + 1)
        yield data
        value = node.value
        explicit = len(value)
        has_merge = False
        for key_node, _ in value:
            if key_node.tag == _MERGE_TAG:
                has_merge = True
                break
        if has_merge:
            explicit = sum(1 for k, _ in value if k.tag != _MERGE_TAG)
            self.flatten_mapping(node)
            value = node.value
        first_explicit = len(value) - explicit
        seen: set[Any] | None = set() if has_merge else None
        lc: dict[Any, tuple[int, int, int, int]] = {}
        construct = self.construct_object
        for i, (key_node, value_node) in enumerate(value):
            key = construct(key_node, deep=False)
            try:
                hash(key)
            except TypeError:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found an unhashable key",
                    key_node.start_mark,
                ) from None
            if i >= first_explicit:
                dup = (key in seen) if seen is not None else (key in data)
                if dup:
                    raise _DuplicateKey(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
                if seen is not None:
                    seen.add(key)
            data[key] = construct(value_node, deep=False)
            km = key_node.start_mark
            vm = value_node.start_mark
            lc[key] = (km.line + 1, km.column + 1, vm.line + 1, vm.column + 1)
        data.lc = lc

    def construct_pos_seq(self, node: yaml.SequenceNode) -> Iterator[PosList]:
        data = PosList()
        mark = node.start_mark
        data.start = (mark.line + 1, mark.column + 1)
        yield data
        construct = self.construct_object
        lc = []
        for child in node.value:
            data.append(construct(child, deep=False))
            m = child.start_mark
            lc.append((m.line + 1, m.column + 1))
        data.lc = lc


PositionLoader.add_constructor("tag:yaml.org,2002:map", PositionLoader.construct_pos_map)
PositionLoader.add_constructor("tag:yaml.org,2002:seq", PositionLoader.construct_pos_seq)
# Kubernetes reads YAML through JSON: timestamps stay strings.
PositionLoader.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


@dataclass(slots=True)
class Document:
    index: int
    data: Any  # PosDict for a normal manifest
    line: int  # first line of the document (1-based)


@dataclass(slots=True)
class LoadProblem:
    message: str
    line: int
    column: int = 1
    document: int = 0


@dataclass(slots=True)
class LoadResult:
    documents: list[Document]
    problems: list[LoadProblem]


# ----------------------------------------------------------------------------
# Cheap pre-checks on raw bytes


_TEMPLATE_LINE = re.compile(rb"^[ \t]*(?:- )?\{\{|:[ \t]+\{\{", re.M)
_MAYBE_ALIAS = re.compile(rb"[\s\[{,:-]\*[^\s*,\]}]")


def looks_like_template(data: bytes) -> int:
    """Line number of the first Helm/Go template directive, or 0."""
    if b"{{" not in data:
        return 0
    m = _TEMPLATE_LINE.search(data)
    if not m:
        return 0
    return data.count(b"\n", 0, m.start()) + 1


def decode_problem(data: bytes) -> LoadProblem | None:
    """Binary or non-UTF-8 input, reported instead of decoded as garbage."""
    head = data[:8192]
    if b"\x00" in head and not (head.startswith((b"\xff\xfe", b"\xfe\xff"))):
        return LoadProblem("binary file (contains NUL bytes); not a manifest", 1)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with BOM: LibYAML decodes it
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return LoadProblem(
            f"file is not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})", line
        )
    return None


def _depth_bound(data: bytes) -> int:
    """A cheap upper bound on nesting depth (flow brackets, or line length)."""
    flow = data.count(b"[") + data.count(b"{")
    longest = max(map(len, data.split(b"\n"))) if data else 0
    return max(flow, longest)


def _deep_nesting(data: bytes, limit: int) -> LoadProblem | None:
    """Exact depth check from the event stream, for input that might be deep."""
    depth = 0
    try:
        for event in yaml.parse(data, Loader=_BaseLoader):
            cls = type(event)
            if cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                depth += 1
                if depth > limit:
                    m = event.start_mark
                    return LoadProblem(
                        f"nesting deeper than {limit} levels; refusing to load",
                        m.line + 1,
                        m.column + 1,
                    )
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                depth -= 1
    except yaml.YAMLError:
        return None  # the real load reports the syntax error
    return None


def _expanded_size(root: Any, limit: int, depth_limit: int) -> str | None:
    """Follow aliases as a consumer would; refuse documents that explode.

    Memoised by object identity, so a shared subtree is measured once and the
    walk is linear in the number of distinct nodes.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in active:
            raise _Recursive
        if depth > depth_limit:
            raise _TooDeep
        active.add(key)
        total = 1
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            total += size(child, depth + 1)
            if total > limit:
                raise _TooLarge
        active.discard(key)
        sizes[key] = total
        return total

    try:
        size(root, 0)
    except _Recursive:
        return "recursive alias (a node contains itself); refusing to load"
    except _TooLarge:
        return f"aliases expand to more than {limit} nodes (alias bomb?); refusing to load"
    except _TooDeep:
        return f"nesting deeper than {depth_limit} levels; refusing to load"
    return None


class _Recursive(Exception):
    pass


class _TooLarge(Exception):
    pass


class _TooDeep(Exception):
    pass


def _mark_of(err: yaml.YAMLError) -> tuple[int, int]:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return 1, 1
    return mark.line + 1, mark.column + 1


def _describe(err: yaml.YAMLError) -> str:
    if isinstance(err, _DuplicateKey):
        return f"duplicate key: {err.problem[len('found duplicate key '):]} (each key may appear once in a mapping)"
    problem = getattr(err, "problem", None)
    context = getattr(err, "context", None)
    if problem:
        text = f"{context}: {problem}" if context else str(problem)
    else:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return "invalid YAML: " + text.replace("\n", " ")


def load(data: bytes, limits: Limits = DEFAULT_LIMITS) -> LoadResult:
    """Parse every document of one file.

    A broken document is reported and the ones before it are kept. LibYAML
    cannot resynchronise after a syntax error, so the documents after the
    first broken one are lost; the problem says where it stopped.
    """
    docs: list[Document] = []
    problems: list[LoadProblem] = []
    if len(data) > limits.max_file_bytes:
        problems.append(
            LoadProblem(
                f"file is {len(data)} bytes, over the {limits.max_file_bytes}-byte limit; not linted",
                1,
            )
        )
        return LoadResult(docs, problems)
    bad = decode_problem(data)
    if bad:
        problems.append(bad)
        return LoadResult(docs, problems)
    if _depth_bound(data) > limits.max_depth:
        deep = _deep_nesting(data, limits.max_depth)
        if deep:
            problems.append(deep)
            return LoadResult(docs, problems)
    check_aliases = _MAYBE_ALIAS.search(data) is not None

    loader = PositionLoader(data)
    index = 0
    try:
        while loader.check_node():
            if index >= limits.max_documents:
                problems.append(
                    LoadProblem(
                        f"more than {limits.max_documents} documents in one file; the rest are not linted",
                        docs[-1].line if docs else 1,
                        document=index,
                    )
                )
                break
            node = loader.get_node()
            line = node.start_mark.line + 1 if node is not None else 1
            try:
                value = loader.construct_document(node)
            except ConstructorError as e:
                line_, col = _mark_of(e)
                problems.append(LoadProblem(_describe(e), line_, col, index))
                # Constructor state may hold half-built objects; reset it.
                loader.constructed_objects = {}
                loader.state_generators = []
                loader.recursive_objects = {}
                index += 1
                continue
            if check_aliases and isinstance(value, (dict, list)):
                why = _expanded_size(value, limits.max_expanded_nodes, limits.max_depth)
                if why:
                    problems.append(LoadProblem(why, line, 1, index))
                    index += 1
                    continue
            docs.append(Document(index, value, line))
            index += 1
    except yaml.YAMLError as e:
        line, col = _mark_of(e)
        problems.append(LoadProblem(_describe(e), line, col, index))
    except RecursionError:
        problems.append(LoadProblem("nesting too deep to load", 1, 1, index))
    finally:
        loader.dispose()
    return LoadResult(docs, problems)


# ----------------------------------------------------------------------------
# Positions


def render_path(path: tuple) -> str:
    """``("spec", "containers", 0, "resources")`` -> ``spec.containers[0].resources``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            text = str(part)
            if not text or any(c in text for c in ".[]\" \t\n"):
                out.append('["' + text.replace("\\", "\\\\").replace('"', '\\"') + '"]')
            else:
                out.append(("." if out else "") + text)
    return "".join(out)


def locate(root: Any, path: tuple) -> tuple[int, int, tuple]:
    """Line, column and path of the deepest existing node along ``path``.

    A key found in a mapping points at the key; an item of a sequence at the
    item. When the path runs out (a missing field), the answer is the
    nearest existing parent.
    """
    line, col = getattr(root, "start", (1, 1))
    node = root
    found: list = []
    for part in path:
        if isinstance(node, PosDict):
            if part not in node:
                break
            kl, kc, _, _ = node.lc[part]
            line, col = kl, kc
            node = node[part]
        elif isinstance(node, PosList):
            if not isinstance(part, int) or not 0 <= part < len(node):
                break
            line, col = node.lc[part]
            node = node[part]
        else:
            break
        found.append(part)
    return line, col, tuple(found)


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
    if isinstance(parent, PosDict) and last in parent:
        _, _, vl, vc = parent.lc[last]
        return vl, vc, path
    if isinstance(parent, PosList) and isinstance(last, int) and 0 <= last < len(parent):
        vl, vc = parent.lc[last]
        return vl, vc, path
    return line, col, found
