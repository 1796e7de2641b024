"""LibYAML's events built in C (kubelint_ml.input.yamlevents): the same fields as PyYAML's own
classes, in use wherever LibYAML is, and the same documents and fix spans when they are not."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from kubelint_ml.fix.yamltext import Text
from kubelint_ml.input import loader, yamlevents
from kubelint_ml.input.loader import load

ROOT = Path(__file__).resolve().parent.parent
LIBYAML = getattr(yaml, "CSafeLoader", None) is not None
needs_libyaml = pytest.mark.skipif(not LIBYAML, reason="PyYAML without LibYAML: no binding to build events")

STREAMS = [
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {x: 'y'}}\nspec:\n  containers:\n  - name: c\n"
    b'    image: i\n    args: ["--a", 1, null, 2.5, true]\n',
    b"%YAML 1.1\n%TAG !e! tag:example.com,2000:\n--- !e!thing\na: &x [1, 2]\nb: *x\nc: |\n  text\n...\n--- >-\n"
    b"  folded\n",
    b'- !!str 1\n- ? complex\n  : key\n- "quoted\\ttext"\n',
    "clé: 'é'\nn: \u2028\n".encode(),
    b"\xef\xbb\xbfa: 1\r\nb: 2\r\n",
]


def _fields(ev) -> tuple:
    """An event's class name and fields, marks as (index, line, column)."""
    out = []
    for name in yamlevents.FIELDS[type(ev).__name__]:
        v = getattr(ev, name)
        out.append((v.index, v.line, v.column) if name.endswith("_mark") else v)
    return (type(ev).__name__, tuple(out))


def test_fields_are_pyyamls() -> None:
    """FIELDS names each event's constructor arguments in PyYAML's order: the binding passes them so."""
    for name, fields in yamlevents.FIELDS.items():
        original = getattr(yaml.events, name)
        assert tuple(inspect.signature(original.__init__).parameters)[1:] == fields, name
        cls = getattr(yamlevents, name)
        assert issubclass(cls, original) and cls.__name__ == name


@needs_libyaml
def test_libyaml_builds_them() -> None:
    assert yamlevents.ACTIVE
    events = list(yaml.parse(STREAMS[1], Loader=yaml.CSafeLoader))
    assert {type(e) for e in events} <= {getattr(yamlevents, name) for name in yamlevents.FIELDS}
    scalar = next(e for e in events if isinstance(e, yaml.ScalarEvent))
    assert scalar.args[yamlevents.VALUE] == scalar.value == "a"
    assert repr(scalar) == "ScalarEvent(anchor=None, tag=None, implicit=(True, False), value='a')"


@needs_libyaml
@pytest.mark.parametrize("data", STREAMS)
def test_same_fields_as_pyyamls_classes(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the binding gives with these classes is what it gives with PyYAML's, field by field."""
    from yaml import _yaml

    ours = [_fields(e) for e in yaml.parse(data, Loader=yaml.CSafeLoader)]
    for name in yamlevents.FIELDS:
        monkeypatch.setattr(_yaml, name, getattr(yaml.events, name))
    theirs = list(yaml.parse(data, Loader=yaml.CSafeLoader))
    assert all(type(e).__module__ == "yaml.events" for e in theirs)
    assert ours == [_fields(e) for e in theirs]
    # and converted, PyYAML's become these
    assert [_fields(e) for e in map(yamlevents.fast, theirs)] == ours


def test_pure_python_parser_events_are_converted() -> None:
    events = list(yamlevents.parse(STREAMS[0], yaml.SafeLoader))
    assert all(type(e).__module__ == yamlevents.__name__ for e in events)
    values = [e.args[yamlevents.VALUE] for e in events if isinstance(e, yaml.ScalarEvent)]
    assert values[:4] == ["apiVersion", "v1", "kind", "Pod"]


def _sample(corpus: Path) -> list[bytes]:
    files = sorted(p for p in corpus.glob("*/*.yaml"))[::12] + sorted((ROOT / "fixtures").rglob("*.yaml"))[:40]
    return [p.read_bytes() for p in files] + STREAMS


def _positions(node) -> list:
    """Every position the loader recorded under ``node``."""
    if isinstance(node, loader.PosDict):
        return [node.start, node.lc] + [_positions(v) for v in node.values()]
    if isinstance(node, loader.PosList):
        return [node.start, node.lc] + [_positions(v) for v in node]
    return []


def _text(data: bytes) -> Text | None:
    try:
        return Text(data)
    except UnicodeDecodeError:  # not UTF-8: no fix is made there
        return None


def _spans(text: Text | None) -> list | None:
    if text is None:
        return None

    def walk(n):
        items = [(walk(k), walk(v)) for k, v in n.items] if n.kind == "map" else [walk(i) for i in n.items]
        return (n.kind, n.start, n.end, n.col, n.anchor, n.flow, n.style, n.value, items)

    return [(d.start, d.end, walk(d.root) if d.root else None) for d in text.docs] + [text.broken_from]


@needs_libyaml
def test_a_binding_that_builds_pyyamls_classes_reads_the_same(monkeypatch: pytest.MonkeyPatch, corpus: Path) -> None:
    """Should a PyYAML not build events by these names, they are converted: the same documents,
    positions, kept events and fix spans."""
    from yaml import _yaml

    data = _sample(corpus)
    before = [(load(d, keep_events=True), _text(d)) for d in data]
    for name in yamlevents.FIELDS:
        monkeypatch.setattr(_yaml, name, getattr(yaml.events, name))
    monkeypatch.setattr(yamlevents, "ACTIVE", False)
    assert sum(loaded.events is not None for loaded, _ in before) > 30  # most are read from events
    for d, (loaded, text) in zip(data, before):
        again = load(d, keep_events=True)
        assert [(x.index, x.line, x.data) for x in again.documents] == [
            (x.index, x.line, x.data) for x in loaded.documents
        ]
        assert [(p.message, p.line) for p in again.problems] == [(p.message, p.line) for p in loaded.problems]
        assert [_positions(x.data) for x in again.documents] == [_positions(x.data) for x in loaded.documents]
        assert (again.events is None) == (loaded.events is None)
        if again.events is not None:
            assert [_fields(e) for e in again.events] == [_fields(e) for e in loaded.events]
            assert _spans(Text(d, again.events)) == _spans(text)
        assert _spans(_text(d)) == _spans(text)


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


@pytest.mark.parametrize("data", STREAMS[:1] + STREAMS[3:], ids=["manifest", "unicode", "bom-crlf"])
def test_positions_from_marks_pickle_and_copy_as_numbers(data: bytes) -> None:
    """Read from events, a mapping keeps LibYAML's marks until its positions are asked for:
    locate reads the same from the marks as from the numbers, and pickle and copy carry the
    numbers (a mark is not carried)."""
    import copy
    import pickle

    marks = load(data, keep_events=True).documents[0].data
    numbers = load(data).documents[0].data
    expected = _positions(numbers)  # makes every lc
    paths = list(_paths(numbers))
    assert len(paths) > 2
    every = paths + [path + ("missing",) for path in paths]
    for path in every:
        assert loader.locate(marks, path) == loader.locate(numbers, path), path
    if "\u2028" not in data.decode("utf-8-sig"):  # (a file with such breaks has its positions remapped)
        assert marks._lc is None  # read from the marks
    for path in every:
        assert loader.value_position(marks, path) == loader.value_position(numbers, path), path
    assert _positions(pickle.loads(pickle.dumps(marks, pickle.HIGHEST_PROTOCOL))) == expected
    assert _positions(copy.deepcopy(marks)) == expected == _positions(marks)
