"""Never a wrong edit: ``kubelint-ml lsp`` driven over stdio with raw JSON-RPC, for each position
encoding a client may negotiate (UTF-8, UTF-16, UTF-32) and each line-ending mix (LF, CRLF, CR alone,
mixed), on a manifest with non-ASCII and astral characters on the fixed lines and U+2028, NEL and
U+2029 (not line breaks to an editor) before them. Each quick fix and fix all, applied the way an
editor applies them (positions counted here with the codecs, independently of the server), give the
bytes `check --fix` gives for the same bytes; incremental changes keep the server's copy of the
buffer the editor's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsp_raw import RawClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIX_ALL = "source.fixAll.kubelint-ml"
BREAK = re.compile(r"\r\n|\r|\n")
CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def manifest() -> str:
    text = (ROOT / "fixtures" / "lsp" / "job.yaml").read_text()
    text = text.replace(
        "  namespace: research\n",
        '  namespace: research\n  annotations:\n    note: "ünï 𝔘 a\u2028b\x85c\u2029d"\n',
        1,
    )
    text = text.replace("memory: 64GB\n", "memory: 64GB   # mémoire 𝔘𝔘\n", 1)
    return text.replace('cpu: "24"\n', 'cpu: "24" # ☃ 𝔘\n', 1)


def with_endings(text: str, eol: str) -> str:
    lines = text.split("\n")
    if eol == "mixed":
        return "".join(line + ("\r\n", "\n", "\r")[i % 3] for i, line in enumerate(lines[:-1])) + lines[-1]
    return {"lf": "\n", "crlf": "\r\n", "cr": "\r"}[eol].join(lines)


# -- an editor's view of positions ---------------------------------------------------------


def offset(text: str, line: int, character: int, encoding: str) -> int:
    starts = [0] + [m.end() for m in BREAK.finditer(text)]
    if line >= len(starts):
        return len(text)
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = text[starts[line] : end].rstrip("\r\n")
    codec, unit = CODEC[encoding]
    head = content.encode(codec, "surrogatepass")[: character * unit]
    return starts[line] + len(head.decode(codec, "surrogatepass"))


def apply(text: str, edits: list[dict], encoding: str) -> str:
    spans = [
        (
            offset(text, e["range"]["start"]["line"], e["range"]["start"]["character"], encoding),
            offset(text, e["range"]["end"]["line"], e["range"]["end"]["character"], encoding),
            e["newText"],
        )
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: dict, uri: str, version: int) -> list[dict]:
    (change,) = action["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": version}
    return change["edits"]


def range_text(text: str, rng: dict, encoding: str) -> str:
    start = offset(text, rng["start"]["line"], rng["start"]["character"], encoding)
    end = offset(text, rng["end"]["line"], rng["end"]["character"], encoding)
    return text[start:end]


# -- what check --fix writes ---------------------------------------------------------------

_FIXED: dict[tuple, bytes] = {}


def check_fix(tmp: Path, data: bytes, *select: str, unsafe: bool = True) -> bytes:
    key = (data, select, unsafe)
    if key not in _FIXED:
        path = tmp / f"check-{len(_FIXED)}.yaml"
        path.write_bytes(data)
        args = [sys.executable, "-m", "kubelint_ml", "check", str(path), "--fix", "-q"]
        args += ["--unsafe-fixes"] if unsafe else []
        for rule in select:
            args += ["--select", rule]
        subprocess.run(args, capture_output=True, cwd=tmp, timeout=60)
        _FIXED[key] = path.read_bytes()
    return _FIXED[key]


def _matrix(encodings: list[str], eols: list[str], quick: set[tuple[str, str]]) -> list:
    """Every (encoding, eol) pair; those not in ``quick`` run in the full suite only (each pair
    starts a server: the quick loop keeps a diagonal that still covers every encoding and ending)."""
    return [
        pytest.param(enc, eol, marks=() if (enc, eol) in quick else pytest.mark.slow)
        for enc in encodings
        for eol in eols
    ]


@pytest.mark.parametrize(
    ("encoding", "eol"),
    _matrix(
        ["utf-8", "utf-16", "utf-32"],
        ["lf", "crlf", "cr", "mixed"],
        {("utf-8", "lf"), ("utf-16", "crlf"), ("utf-32", "cr"), ("utf-8", "mixed")},
    ),
)
def test_quick_fixes_and_fix_all_equal_check_fix(tmp_path: Path, encoding: str, eol: str) -> None:
    text = with_endings(manifest(), eol)
    data = text.encode()
    path = tmp_path / "job.yaml"
    path.write_bytes(data)
    uri = path.as_uri()
    client = RawClient(cwd=tmp_path)
    try:
        caps = client.initialize(tmp_path, [encoding], options=None)["result"]["capabilities"]
        assert caps["positionEncoding"] == encoding
        client.open(uri, text)
        diags = client.diagnostics(uri, 1)
        by_rule: dict[str, list[dict]] = {}
        for d in diags:
            by_rule.setdefault(d["code"], []).append(d)
        # the range of invalid-quantity is the bad value, whatever precedes it on its line
        (bad,) = by_rule["invalid-quantity"]
        assert range_text(text, bad["range"], encoding) == "64GB"
        # fix all (unsafeFixes off): what check --fix writes, offered only when it changes something
        found = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "context": {"diagnostics": [], "only": [FIX_ALL]},
            },
            timeout=60,
        )["result"]
        safe = check_fix(tmp_path, data, unsafe=False)
        if safe == data:
            assert found == []
        else:
            (fix_all,) = found
            assert apply(text, edits_of(fix_all, uri, 1), encoding).encode() == safe
        tried = 0
        for rule, found_here in sorted(by_rule.items()):
            # every finding of the rule: its quick fix; applied together (they do not overlap), the
            # edits `check --fix --select <rule>` makes
            fixes, suppress = [], []
            for d in found_here:
                actions = client.call(
                    "textDocument/codeAction",
                    {
                        "textDocument": {"uri": uri},
                        "range": d["range"],
                        "context": {"diagnostics": [d], "only": ["quickfix"]},
                    },
                    timeout=60,
                )["result"]
                mine = [a for a in actions if a["diagnostics"] == [d]]
                fixes += [a for a in mine if a["title"].endswith(f"[{rule}]")]
                suppress += [a for a in mine if a["title"].startswith(f"Suppress {rule} ")]
            want = check_fix(tmp_path, data, rule)
            if want == data:  # check --fix makes no edit (or undoes one that would not parse)
                assert fixes == [], rule
                continue
            assert len(fixes) == len(found_here), rule
            edits = []  # an edit two fixes both make is made once (as check --fix takes it)
            for e in (e for fix in fixes for e in edits_of(fix, uri, 1)):
                if e not in edits:
                    edits.append(e)
            assert apply(text, edits, encoding).encode() == want, rule
            tried += 1
            # the suppression: the annotation added, nothing else changed (on CR-only text the fix
            # engine's insertion would not parse, and it is not offered, as check --fix would undo it)
            assert suppress or eol in ("cr", "mixed")
            for action in suppress:
                suppressed = apply(text, edits_of(action, uri, 1), encoding)
                assert f"{rule}=reason" in suppressed and suppressed.count("apiVersion") == text.count("apiVersion")
        assert tried >= (2 if eol in ("cr", "mixed") else 3)
    finally:
        assert client.stop() == 0
        client.kill()


@pytest.mark.parametrize(
    ("encoding", "eol"), _matrix(["utf-8", "utf-16"], ["crlf", "cr", "mixed"], {("utf-16", "mixed")})
)
def test_fix_all_with_unsafe_fixes_equals_check_fix(tmp_path: Path, encoding: str, eol: str) -> None:
    """Fix all on CR-only and mixed endings: the document once, as `check --fix --unsafe-fixes` writes it."""
    text = with_endings(manifest(), eol)
    data = text.encode()
    path = tmp_path / "job.yaml"
    path.write_bytes(data)
    uri = path.as_uri()
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize(tmp_path, [encoding], options={"unsafeFixes": True})
        client.open(uri, text)
        client.diagnostics(uri, 1)
        found = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
                "context": {"diagnostics": [], "only": [FIX_ALL]},
            },
            timeout=60,
        )["result"]
        (fix_all,) = found
        after = apply(text, edits_of(fix_all, uri, 1), encoding)
        assert after.encode() == check_fix(tmp_path, data)
        assert after.count("apiVersion") == 1
    finally:
        assert client.stop() == 0
        client.kill()


@pytest.mark.parametrize(
    "encoding",
    ["utf-8", pytest.param("utf-16", marks=pytest.mark.slow), pytest.param("utf-32", marks=pytest.mark.slow)],
)
def test_incremental_changes_after_unicode_separators_keep_the_buffer(tmp_path: Path, encoding: str) -> None:
    """U+2028, NEL and U+2029 in a quoted value, CR-only endings: incremental edits (ranges counted in
    the negotiated encoding) land where the editor made them, so a later fix all is check --fix of the
    editor's text."""
    text = with_endings(manifest(), "cr")
    path = tmp_path / "job.yaml"
    path.write_bytes(text.encode())
    uri = path.as_uri()
    client = RawClient(cwd=tmp_path)

    def edit(version: int, old: str, new: str) -> None:
        """``old`` (its first occurrence, up to a line break) replaced by ``new``."""
        nonlocal text
        start = text.index(old)
        old = old.rstrip("\r")
        lines = BREAK.split(text[:start])
        line = len(lines) - 1
        codec, unit = CODEC[encoding]
        col = len(lines[-1].encode(codec, "surrogatepass")) // unit
        end_col = col + len(old.encode(codec, "surrogatepass")) // unit
        rng = {"start": {"line": line, "character": col}, "end": {"line": line, "character": end_col}}
        client.change(uri, version, [{"range": rng, "text": new}])
        text = text[:start] + new + text[start + len(old) :]

    try:
        client.initialize(tmp_path, [encoding], options={"unsafeFixes": True})
        client.open(uri, text)
        client.diagnostics(uri, 1)
        edit(2, "memory: 700Gi\r", "memory: 7ö0GB")  # an invalid quantity below the separators
        edit(3, "7ö0GB", "700GB")
        edit(4, "replicas: 3", "replicas: 𝔘3")
        edit(5, "replicas: 𝔘3", "replicas: 3")
        diags = client.diagnostics(uri, 5)
        bad = [d for d in diags if d["code"] == "invalid-quantity"]
        assert sorted(range_text(text, d["range"], encoding) for d in bad) == ["64GB", "700GB"]
        (fix_all,) = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "context": {"diagnostics": [], "only": [FIX_ALL]},
            },
            timeout=60,
        )["result"]
        after = apply(text, edits_of(fix_all, uri, 5), encoding)
        assert after.encode() == check_fix(tmp_path, text.encode())
    finally:
        assert client.stop() == 0
        client.kill()


def test_edits_name_the_version_they_were_made_for(tmp_path: Path) -> None:
    """A code action asked right after a change answers for that version (its edits name it), never
    with edits made for the text before."""
    text = manifest()
    path = tmp_path / "job.yaml"
    path.write_text(text)
    uri = path.as_uri()
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize(tmp_path, ["utf-16"], options={"unsafeFixes": True})
        client.open(uri, text)
        client.diagnostics(uri, 1)
        changed = text.replace("memory: 64GB", "memory: 65GB", 1)
        client.change(uri, 2, [{"text": changed}])
        found = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 80, "character": 0}},
                "context": {"diagnostics": []},
            },
            timeout=60,
        )["result"]
        assert found
        for action in found:
            if "edit" in action:
                assert action["edit"]["documentChanges"][0]["textDocument"]["version"] == 2
        quick = next(a for a in found if a["title"].endswith("[invalid-quantity]"))
        assert "memory: 65G" in apply(changed, edits_of(quick, uri, 2), "utf-16")
    finally:
        assert client.stop() == 0
        client.kill()


def test_fix_all_in_a_lightbulb_is_made_when_resolved(tmp_path: Path) -> None:
    """A client that resolves code actions gets fix all without its edit on a cursor move (no fix run
    per move), and the edit, equal to check --fix, when it resolves it."""
    text = with_endings(manifest(), "crlf")
    path = tmp_path / "job.yaml"
    path.write_bytes(text.encode())
    uri = path.as_uri()
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize(
            tmp_path,
            ["utf-8"],
            options={"unsafeFixes": True},
            textDocument={"codeAction": {"resolveSupport": {"properties": ["edit"]}}},
        )
        client.open(uri, text)
        client.diagnostics(uri, 1)
        found = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
                "context": {"diagnostics": []},
            },
        )["result"]
        (lazy,) = [a for a in found if a.get("kind") == FIX_ALL]
        assert "edit" not in lazy
        resolved = client.call("codeAction/resolve", lazy, timeout=60)["result"]
        after = apply(text, edits_of(resolved, uri, 1), "utf-8")
        assert after.encode() == check_fix(tmp_path, text.encode())
    finally:
        assert client.stop() == 0
        client.kill()


def test_the_buffer_model_keeps_its_lines_through_random_edits() -> None:
    """The server's buffer (kept line starts updated edit by edit) against the lines found again
    from scratch, through random edits with CR, LF, CRLF, U+2028, NEL and astral characters."""
    import random

    from kubelint_ml.lsp.documents import Document

    rnd = random.Random(41)
    pieces = ["a", "é", "𝔘", "\n", "\r", "\r\n", "\u2028", "\x85", "  ", "key: value"]
    doc = Document("file:///x", "".join(rnd.choice(pieces) for _ in range(200)))
    for _ in range(3000):
        doc.starts  # noqa: B018 - kept between edits, as the server keeps them
        a = rnd.randrange(len(doc.text) + 1)
        b = min(len(doc.text), a + rnd.randrange(4))
        doc.replace(a, b, "".join(rnd.choice(pieces) for _ in range(rnd.randrange(3))))
        fresh = Document("file:///y", doc.text)
        assert doc.starts == fresh.starts
        line = rnd.randrange(len(fresh.starts) + 1)
        for enc in ("utf-8", "utf-16", "utf-32"):
            assert doc.offset(line, 3, enc) == fresh.offset(line, 3, enc)
            off = rnd.randrange(len(doc.text) + 1)
            assert doc.position(off, enc) == fresh.position(off, enc)
