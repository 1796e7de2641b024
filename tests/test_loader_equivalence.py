"""The position loader reads the same values PyYAML's safe loader reads, with each node's mark.

Differential: every corpus and fixture file, and generated documents in every
scalar and collection style, are loaded both ways and compared value for
value (timestamps and ``!!binary`` stay text here, as Kubernetes' JSON sees
them), and every recorded position is checked against the node LibYAML
composed.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kubelint_ml.fix.yamltext import Text
from kubelint_ml.input.loader import PosDict, PosList, load

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# PyYAML's own safe loader: LibYAML's, or the pure-Python one where PyYAML was built without it.
REFERENCE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _reference(data: bytes) -> list | None:
    """PyYAML's safe reading, with timestamps as their text; None when it fails."""
    try:
        docs = list(yaml.load_all(data, Loader=REFERENCE))
        nodes = list(yaml.compose_all(data, Loader=REFERENCE))
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return [_texts(d, n) for d, n in zip(docs, nodes)]


def _kube_key(key):
    """A null, bool or int key as the loader names it (as Kubernetes' YAML-to-JSON conversion does)."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key) if isinstance(key, int) else key


def _collides(value) -> bool:
    """Two keys of one mapping that are one key once named that way (`1` and `'1'`): a duplicate."""
    if isinstance(value, dict):
        return len({_kube_key(k) for k in value}) < len(value) or any(map(_collides, value.values()))
    return isinstance(value, list) and any(map(_collides, value))


_UNICODE_BREAKS = ("\x85", "\u2028", "\u2029")


def _texts(value, node):
    """Timestamps and binary back to the text they were written as (what our loader keeps)."""
    if isinstance(value, (datetime.date, bytes)):
        return node.value
    if isinstance(value, dict) and isinstance(node, yaml.MappingNode):
        by_key = {}
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                by_key.setdefault(k.value, v)
        return {_kube_key(k): _texts(v, by_key.get(k if isinstance(k, str) else str(k), v)) for k, v in value.items()}
    if isinstance(value, list) and isinstance(node, yaml.SequenceNode) and len(node.value) == len(value):
        return [_texts(v, n) for v, n in zip(value, node.value)]
    return value


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _check_positions(value, node) -> int:
    """Every key and item position equals its node's start mark; returns how many were checked."""
    checked = 0
    if isinstance(value, PosDict):
        assert value.start == (node.start_mark.line + 1, node.start_mark.column + 1)
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = key_node.value
            if key not in value.lc or not isinstance(key, str) or key_node.tag != "tag:yaml.org,2002:str":
                continue
            kl, kc, vl, vc = value.lc[key]
            assert (kl, kc) == (key_node.start_mark.line + 1, key_node.start_mark.column + 1), key
            assert (vl, vc) == (value_node.start_mark.line + 1, value_node.start_mark.column + 1), key
            checked += 1 + _check_positions(value[key], value_node)
    elif isinstance(value, PosList):
        assert value.start == (node.start_mark.line + 1, node.start_mark.column + 1)
        for i, child in enumerate(node.value):
            assert value.lc[i] == (child.start_mark.line + 1, child.start_mark.column + 1)
            checked += 1 + _check_positions(value[i], child)
    return checked


def test_every_corpus_and_fixture_file_reads_as_pyyaml_reads_it(corpus) -> None:
    compared = positions = 0
    files = sorted(
        p
        for base in (corpus, ROOT / "fixtures")
        for p in base.rglob("*")
        if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
    )
    for path in files:
        data = path.read_bytes()
        expected = _reference(data)
        got = load(data)
        if expected is None or got.problems:
            continue  # broken or hostile input: covered by the hardening tests
        assert [_plain(d.data) for d in got.documents] == expected, path
        nodes = list(yaml.compose_all(data, Loader=REFERENCE))
        for doc, node in zip(got.documents, [n for n in nodes if n is not None]):
            positions += _check_positions(doc.data, node)
        compared += 1
    assert compared > 350
    assert positions > 20_000


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(
        [
            "0",
            "007",
            "0x1F",
            "0o17",
            "1_000",
            "+12",
            "-0",
            "1:30",
            "yes",
            "No",
            "~",
            "null",
            "=",
            "",
            "2024-01-02",
            "1e3",
            ".inf",
            "-.Inf",
            "12Gi",
            "500m",
            "0b101",
            "١٢",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([None, '"', "'", "|", ">"]), st.booleans())
def test_generated_documents_read_as_pyyaml_reads_them(value, style, flow) -> None:
    assume(not _collides(value))  # `{1: a, '1': b}` is a duplicate key, as Kubernetes reads it
    text = yaml.safe_dump({"v": value}, default_style=style, default_flow_style=flow, allow_unicode=True)
    data = text.encode("utf-8")
    expected = _reference(data)
    got = load(data)
    assert expected is not None and not got.problems, (text, got.problems)
    assert [_plain(d.data) for d in got.documents] == expected
    if not any(c in text for c in _UNICODE_BREAKS):  # LibYAML's marks count them as line breaks; we do not
        _check_positions(got.documents[0].data, yaml.compose(data, Loader=REFERENCE))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a: &x {b: 1}\nc: *x\nd: {<<: *x, e: 2}\n", {"a": {"b": 1}, "c": {"b": 1}, "d": {"b": 1, "e": 2}}),
        (
            "base: &b {x: 1, y: 2}\nover:\n  <<: [*b, {z: 3}]\n  x: 9\n",
            {"base": {"x": 1, "y": 2}, "over": {"x": 9, "y": 2, "z": 3}},
        ),
        # Explicit tags; a set is a mapping of nulls, as JSON would carry it.
        (
            "a: !!int '12'\nb: !!str 12\nc: !!float 1\nd: !!bool 'true'\ne: !!null ''\nf: !!set {p, q}\n",
            {"a": 12, "b": "12", "c": 1.0, "d": True, "e": None, "f": {"p": None, "q": None}},
        ),
        # Ordered maps and pairs stay sequences of one-key mappings.
        ("a: !!omap [x: 1, y: 2]\nb: !!pairs [x: 1, x: 2]\n", {"a": [{"x": 1}, {"y": 2}], "b": [{"x": 1}, {"x": 2}]}),
        # YAML 1.1 integers: octal, underscores, sexagesimal.
        (
            "list: &l [1, 2]\nagain: *l\nn: 0012\nm: 1_2\nt: 1:30\nh: 0x1f\nz: 0\n",
            {"list": [1, 2], "again": [1, 2], "n": 10, "m": 12, "t": 90, "h": 31, "z": 0},
        ),
        (
            "big: 123456789012345678901234567890\nneg: -5\nplus: +7\n",
            {"big": 123456789012345678901234567890, "neg": -5, "plus": 7},
        ),
    ],
)
def test_tags_merges_and_aliases(text: str, expected: dict) -> None:
    got = load(text.encode())
    assert not got.problems
    assert [_plain(d.data) for d in got.documents] == [expected]


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


nested = st.recursive(
    st.just("x"),
    lambda inner: (
        st.lists(inner, min_size=1, max_size=2)
        | st.dictionaries(st.sampled_from(["k", "key", "a-b"]), inner, min_size=1, max_size=2)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(
    nested,
    st.sampled_from([None, True, False]),
    st.sampled_from([2, 3, 4]),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.integers(min_value=2, max_value=40),
)
def test_depth_pre_check_never_misses_deep_input(value, flow, indent, newline, limit) -> None:
    """The cheap test that decides whether the event pre-scan runs is an upper bound, in every layout."""
    from kubelint_ml.input.loader import _may_nest_deeper

    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent).replace("\n", newline)
    real = _depth(yaml.load(text, Loader=REFERENCE))
    if real > limit:
        assert _may_nest_deeper(text.encode(), limit)


def test_remembered_tags_never_leak_between_styles_or_grow_without_bound() -> None:
    from kubelint_ml.input import loader

    text = (
        "a: [yes, 'yes', \"yes\", yes, 1, '1', 1, 1.5, '1.5', null, 'null', ~, on, 'on', 0x1F, '0x1F', 0x1F]\n"
        "yes: no\n'no': yes\n2: two\n"
        "long: " + "9" * 100 + "\n"
    )
    for _ in range(2):  # the second time every short plain scalar's tag is a remembered one
        assert load(text.encode()).documents[0].data == _reference(text.encode())[0]  # keys named as Kubernetes does
    assert "yes" in loader._RESOLVED and "9" * 100 not in loader._RESOLVED
    many = "".join(f"- v{i}\n" for i in range(loader._RESOLVED_MAX_ENTRIES + 10))
    assert load(many.encode()).documents[0].data == [f"v{i}" for i in range(loader._RESOLVED_MAX_ENTRIES + 10)]
    assert len(loader._RESOLVED) <= loader._RESOLVED_MAX_ENTRIES


def _same(a, b, where: str = "") -> int:
    """Values, their types and every recorded position equal; returns how many nodes were compared."""
    assert type(a) is type(b), where
    if isinstance(a, PosDict):
        assert (a.start, a.lc, list(a)) == (b.start, b.lc, list(b)), where
        return 1 + sum(_same(a[k], b[k], f"{where}.{k}") for k in a)
    if isinstance(a, PosList):
        assert (a.start, a.lc, len(a)) == (b.start, b.lc, len(b)), where
        return 1 + sum(_same(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
    assert a == b or (a != a and b != b), where  # NaN
    return 1


def _event(ev) -> tuple:
    """What an event says, its marks by offset."""
    marks = (ev.start_mark.index, ev.end_mark.index)
    return (
        type(ev).__name__,
        marks,
        *(getattr(ev, a, None) for a in ("anchor", "tag", "value", "style", "flow_style")),
    )


def _spans(text: Text) -> list:
    """Every span tree's nodes, in order, with what the edits read of them."""

    def walk(n) -> list:
        own = [(n.kind, n.start, n.end, n.col, n.anchor, n.flow, n.style, n.value, n.merge)]
        if n.kind == "map":
            return own + [x for k, v in n.items for x in walk(k) + walk(v)]
        if n.kind == "seq":
            return own + [x for i in n.items for x in walk(i)]
        return own

    return [(d.start, d.end, d.helm, sorted(d.aliased), walk(d.root) if d.root else None) for d in text.docs] + [
        text.broken_from
    ]


def _composed(data: bytes, monkeypatch: pytest.MonkeyPatch):
    from kubelint_ml.input import loader

    with monkeypatch.context() as m:
        m.setattr(loader, "_CParser", None)  # the composing loader alone
        return load(data)


def test_events_read_what_the_composing_loader_reads(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """The event-built fast path (most files) gives the composing loader's documents exactly:
    values, types, key order, every position; anything else it leaves to the composing loader."""
    from kubelint_ml.input.loader import DEFAULT_LIMITS, _load_events

    if getattr(yaml, "CSafeLoader", None) is None:
        pytest.skip("PyYAML without LibYAML: the composing loader reads everything")
    files = sorted(
        p
        for base in (corpus, ROOT / "fixtures", ROOT / "tests" / "data")
        for p in base.rglob("*")
        if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
    )
    fast = nodes = 0
    for path in files:
        data = path.read_bytes()
        events = _load_events(data, DEFAULT_LIMITS, keep_events=True)
        if events is None:
            continue
        assert _load_events(data, DEFAULT_LIMITS).events is None
        composed = _composed(data, monkeypatch)
        assert not composed.problems, path
        assert [(d.index, d.line) for d in events.documents] == [(d.index, d.line) for d in composed.documents], path
        for a, b in zip(events.documents, composed.documents):
            nodes += _same(a.data, b.data, str(path))
        # the events kept for a fix's edits are the whole stream, as a parse of the file gives it
        assert [_event(e) for e in events.events] == [_event(e) for e in yaml.parse(data, Loader=yaml.CSafeLoader)]
        assert _spans(Text(data, events.events)) == _spans(Text(data)), path
        fast += 1
    assert fast > 350 and nodes > 20_000
    # what goes to the composing loader
    for text in (
        b"a: &x 1\nb: *x\n",
        b"<<: {a: 1}\nb: 2\n",
        b"a: !!str 1\n",
        b"a: 1\na: 2\n",
        b"? [a]\n: 1\n",
        b"a: [1\n",
        b"a: 0b_\n",
        b"a: =\n",
    ):
        assert _load_events(text, DEFAULT_LIMITS) is None, text


@pytest.mark.skipif(
    getattr(yaml, "CSafeLoader", None) is None, reason="PyYAML without LibYAML: the composing loader reads everything"
)
@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([None, '"', "'", "|", ">"]), st.booleans())
def test_generated_documents_read_alike_both_ways(value, style, flow) -> None:
    from kubelint_ml.input import loader

    text = yaml.safe_dump_all([value, {"k": value}], default_style=style, default_flow_style=flow, allow_unicode=True)
    data = text.encode("utf-8")
    events = loader._load_events(data, loader.DEFAULT_LIMITS)
    saved = loader._CParser
    loader._CParser = None
    try:
        composed = load(data)
    finally:
        loader._CParser = saved
    if events is None:
        return
    assert not composed.problems
    for a, b in zip(events.documents, composed.documents, strict=True):
        _same(a.data, b.data)


def test_positions_hold_after_a_key_is_taken_out() -> None:
    """A mapping read from events keeps its marks in the order of its keys: taking a key out (an
    audit drops a pod's nodeName) leaves every other key where it was."""
    from kubelint_ml.input.loader import locate, value_position

    text = b"spec:\n  a: 1\n  nodeName: n1\n  b: 2\n  c:\n    d: 3\n  e: 4\n"
    for remove in (
        lambda spec: spec.pop("nodeName"),
        lambda spec: spec.__delitem__("nodeName"),
        lambda spec: spec.popitem() and spec.pop("nodeName"),
    ):
        root = load(text).documents[0].data
        remove(root["spec"])
        assert locate(root, ("spec", "b"))[:2] == (4, 3)
        assert value_position(root, ("spec", "c", "d"))[:2] == (6, 8)
        assert locate(root, ("spec", "a"))[:2] == (2, 3)
        if "e" in root["spec"]:
            assert value_position(root, ("spec", "e"))[:2] == (7, 6)
    root = load(text).documents[0].data
    root["spec"].clear()
    assert root["spec"] == {} and locate(root, ("spec", "b"))[:2] == (1, 1)
