"""Documents read alone (the first pass's facts: :func:`kubelint_ml.input.loader.load_matching`) read
as the whole file reads them: the same index, values and positions; a file that does not cut at its
``---`` markers for certain is declined and read whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelint_ml.engine.context import may_hold_context
from kubelint_ml.input.loader import Limits, PosDict, PosList, load, load_matching, locate


def _documents(result) -> list:
    """Each document's index, values and every key's position (line, column)."""

    def marks(node, path=()):
        if isinstance(node, PosDict):
            out = []
            for k, v in node.items():
                out.append((path + (k,), locate(node, (k,))))
                out += marks(v, path + (k,))
            return out
        if isinstance(node, PosList):
            return [m for i, v in enumerate(node) for m in marks(v, path + (i,))]
        return []

    return [(d.index, d.data, marks(d.data)) for d in result.documents]


CUT_CASES = [
    b"---\n---\nkind: A\n",  # an empty document first
    b"# a comment\n---\nkind: A\n---\nkind: B\n",  # comments before the first marker: no document
    b"kind: A\n---\n",  # a marker at the end starts an empty document
    b"kind: A\nx: 1\n---\nkind: B\n",  # the text before the first marker is a document
    b"\n\n---\n# only a comment\n---\na: 1\n",
    b"--- {a: 1}\n--- |\n  text\n---\nb: [1,\n 2]\n",  # content on the marker's line
    b"a: 1\r\n---\r\nb: 2\r\n",
]


@pytest.mark.parametrize("data", CUT_CASES)
def test_documents_read_alone_are_read_as_the_whole_file_reads_them(data: bytes) -> None:
    whole = load(data)
    cut = load_matching(data, Limits(), lambda part: True)
    assert cut is not None
    assert _documents(cut) == _documents(whole)


def test_documents_read_alone_in_every_corpus_file(corpus) -> None:
    """load_matching (the first pass's facts) gives each document the index, values and positions
    load gives it, or declines (None) where the file does not cut at its markers for certain."""
    cut_files = 0
    for path in sorted(p for p in Path(corpus).rglob("*") if p.suffix in (".yaml", ".yml", ".json")):
        data = path.read_bytes()
        cut = load_matching(data, Limits(), lambda part: True)
        if cut is None:
            continue
        cut_files += 1
        whole = _documents(load(data))
        assert _documents(cut) == whole, path
        # some documents only (the first pass asks for those that mention a context kind)
        for wanted in (may_hold_context, lambda part: b"Service" not in part, lambda part: False):
            some = load_matching(data, Limits(), wanted)
            assert some is not None, path
            assert _documents(some) == [d for d in whole if any(d[0] == s.index for s in some.documents)], path
            assert len(some.documents) == sum(1 for d in load(data).documents if wanted(_text_of(data, d.index))), path
    assert cut_files > 100


def test_only_the_wanted_documents_are_read() -> None:
    data = b"kind: Service\n---\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Deployment\n"
    cut = load_matching(data, Limits(), lambda part: b"Namespace" in part)
    assert cut is not None
    assert [(d.index, d.data["kind"], d.data.start) for d in cut.documents] == [(1, "Namespace", (3, 1))]
    # a file that does not cut for certain is read whole
    assert load_matching(b"kind: A\n...\n---\nkind: B\n", Limits(), lambda part: True) is None
    assert load_matching(b"%YAML 1.1\n---\nkind: A\n", Limits(), lambda part: True) is None
    assert load_matching(b"kind: A\n", Limits(), lambda part: True) is None


def _text_of(data: bytes, index: int) -> bytes:
    """The text of document ``index`` of a file that starts each document with a marker, or whose
    first document has none (as load_matching cuts it)."""
    import re

    starts = [m.start() for m in re.finditer(rb"^---(?=[ \t\r\n]|$)", data, re.M)]
    head = data[: starts[0]]
    if starts[0] and re.fullmatch(rb"(?:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n|$))*", head) is None:
        starts.insert(0, 0)
    ends = starts[1:] + [len(data)]
    return data[starts[index] : ends[index]]
