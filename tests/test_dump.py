"""The streaming reader of `kubectl get -o json` dumps: the same objects and positions whatever the chunk
size (a chunk boundary inside a string, an escape, a multi-byte character, between two items), and a
clear error, with its position, for input that is cut short or is not JSON."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from clusterdump import container, kubectl_list, pod  # noqa: E402

from kubelint_ml.input import dump  # noqa: E402
from kubelint_ml.input.dump import DumpError, read_json  # noqa: E402


def _items() -> list[dict]:
    out = []
    for i in range(12):
        c = container(
            "c",
            "img:1",
            {"limits": {"memory": f"{i + 1}Gi"}},
            [{"name": "NOTE", "value": 'a "quoted" } ] , 名前 ✓ \\ end'}],
        )
        out.append(pod(f"p-{i}", "ns", [c], token=f"{i:05d}"))
    out.insert(5, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": '[{"}"]}'}})
    return out


def _read(text: str, chunk: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    monkeypatch.setattr(dump, "CHUNK", chunk)
    return [(i.data, i.line, i.column) for i in read_json(io.BufferedReader(io.BytesIO(text.encode())), "d.json")]


def _starts(text: str) -> list[tuple[int, int]]:
    """Line and column of each item's opening brace, found independently: the lines kubectl starts an item on."""
    lines = text.split("\n")
    return [(n + 1, 9) for n, line in enumerate(lines) if line == "        {"]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 1 << 22])
def test_the_same_items_and_positions_whatever_the_chunk(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items()
    text = kubectl_list(items)
    got = _read(text, chunk, monkeypatch)
    assert [d for d, _, _ in got] == items
    assert [(line, col) for _, line, col in got] == _starts(text)


def test_kept_text_is_the_item_from_the_start_of_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    text = kubectl_list(_items())
    monkeypatch.setattr(dump, "CHUNK", 50)
    for item in read_json(io.BufferedReader(io.BytesIO(text.encode())), "d.json"):
        item.keep()
        assert item.text is not None and item.text.startswith("        {")
        assert json.loads(item.text) == item.data
        assert text.split("\n")[item.line - 1] == "        {"


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 1 << 22])
def test_compact_json_on_one_line_whatever_the_chunk(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`jq -c` or an API client's output: every item on line 1, at the column of its opening brace; the
    reader forgets what it has read within the line (it does not hold the whole dump), and an item's
    kept text is the item alone, shifted by its column."""
    items = _items()
    compact = json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {}})
    starts, at = [], compact.index("[") + 1
    for item in items:
        at = compact.index("{", at)
        starts.append((1, at + 1))
        at += len(json.dumps(item))
    monkeypatch.setattr(dump, "CHUNK", chunk)
    stream = dump._JsonStream(io.BufferedReader(io.BytesIO(compact.encode())), "d.json")
    longest = 0
    got = []
    for item in stream.documents():
        longest = max(longest, len(stream.buf))
        item.keep()
        got.append((item.data, item.line, item.column, item.text, item.shift))
    assert [(d, line, col) for d, line, col, _, _ in got] == [(d, *p) for d, p in zip(items, starts)]
    for d, _, col, text, shift in got:
        assert json.loads(text) == d and shift == col - 1
    if chunk < 1000:
        assert longest < len(compact) // 2  # not the whole dump in memory


def test_single_objects_and_concatenated_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    one = json.dumps(_items()[0], indent=4)
    text = one + "\n" + kubectl_list(_items()[:2]) + json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []})
    got = _read(text, 16, monkeypatch)
    assert [d["metadata"]["name"] for d, _, _ in got] == ["p-0", "p-0", "p-1"]
    assert got[0][1:] == (1, 1)


@pytest.mark.parametrize("chunk", [5, 1 << 22])
@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda t: t[: t.index('"name": "p-3"') + 5], "truncated"),
        (lambda t: t[: t.rindex("]")], "truncated"),
        (lambda t: t.replace('"name": "p-2"', '"name": p-2', 1), "not valid JSON"),
        (lambda t: t.replace('"restartPolicy"', "'restartPolicy'", 1), "not valid JSON"),
    ],
)
def test_cut_or_broken_input_says_where(chunk: int, cut, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = cut(kubectl_list(_items()))
    with pytest.raises(DumpError) as e:
        _read(text, chunk, monkeypatch)
    assert message in e.value.message
    assert e.value.file == "d.json" and e.value.line > 1 and e.value.column >= 1


def test_not_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dump, "CHUNK", 8)
    data = kubectl_list(_items()[:1]).encode().replace(b'"p-0"', b'"p-\xff"')
    with pytest.raises(DumpError) as e:
        list(read_json(io.BufferedReader(io.BytesIO(data)), "d.json"))
    assert "not UTF-8" in e.value.message
