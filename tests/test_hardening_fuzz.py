"""Fuzzing: random and mutated input through the loader and the whole engine.

Properties, for every input:

* nothing raises: whatever is wrong becomes a finding;
* every finding names the file, a rule that exists, a severity, a message,
  and a position inside the file (line and column >= 1);
* the loader only ever produces JSON-shaped values with a position for every
  key and item;
* one broken document does not change the findings of the documents around it.

How long hostile input takes is measured by bench/bounds.py, not here.

The quick ``ci`` profile runs a few hundred cases; ``HYPOTHESIS_PROFILE=long``
runs more than 100,000 (see SECURITY.md).
"""

from __future__ import annotations

import os
import random
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelint_ml.engine.api import PARSE_ERROR, UNKNOWN_IGNORE
from kubelint_ml.engine.context import may_hold_context
from kubelint_ml.engine.rulefile import build_rule, load_builtin_rules
from kubelint_ml.findings import SEVERITIES, Finding
from kubelint_ml.input.loader import PosDict, PosList, load
from kubelint_ml.run.lint import lint_text

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LONG = os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci"


# What YAML counts as a line break (LibYAML's line numbers follow it).
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # lines as editors and GitHub count them (not NEL, LS, PS)


def examples(ci: int) -> settings:
    """``ci`` examples in the quick profile; the profile's count otherwise."""
    return settings(max_examples=settings.default.max_examples if LONG else ci)


# ----------------------------------------------------------------------------
# Rules: every built-in rule switched on, plus CEL rules on every unit


_CEL_RULES = [
    {
        "id": "fuzz-cel-container",
        "severity": "warning",
        "title": "fuzz: container limits",
        "description": "d",
        "remediation": "r",
        "scope": {"unit": "container"},
        "check": {
            "cel": "!has(container.resources) || !has(container.resources.limits) || "
            "container.resources.limits.all(k, string(container.resources.limits[k]).size() < 100)",
            "messageExpression": "'container ' + string(container.name) + ' has odd limits'",
            "path": "resources.limits",
        },
    },
    {
        "id": "fuzz-cel-pod",
        "severity": "info",
        "title": "fuzz: pod spec",
        "description": "d",
        "remediation": "r",
        "scope": {"unit": "podTemplate"},
        "check": {
            "cel": "!has(podSpec.containers) || podSpec.containers.all(c, has(c.name) && "
            "(!has(c.resources) || !has(c.resources.requests) || !has(c.resources.requests.memory) || "
            "quantity(string(c.resources.requests.memory)).isGreaterThan(quantity('1Mi'))))",
        },
    },
    {
        "id": "fuzz-cel-object",
        "severity": "info",
        "title": "fuzz: object",
        "description": "d",
        "remediation": "r",
        "scope": {"unit": "object"},
        "check": {"cel": "object.metadata.name.size() < 64 && [1, 2, 3].map(x, x * 2).size() == 3"},
    },
]


@lru_cache(maxsize=1)
def all_rules() -> list:
    rules = load_builtin_rules()
    for r in rules:
        r.enabled = True
    from kubelint_ml.engine.cel import available

    for i, data in enumerate(_CEL_RULES if available() else []):  # CEL needs Python >= 3.11
        rules.append(build_rule({**data, "examples": {"fail": [], "pass": []}}, f"<fuzz-cel-{i}>", validate=False))
    return rules


@lru_cache(maxsize=1)
def rule_ids() -> frozenset[str]:
    return frozenset({r.id for r in all_rules()} | {PARSE_ERROR, UNKNOWN_IGNORE, "cel-evaluation-error"})


# ----------------------------------------------------------------------------
# Checks shared by every test


def lint(data: bytes, display: str = "fuzz.yaml") -> list[Finding]:
    findings = lint_text(data, all_rules(), display=display)
    lines = len(_LINE_BREAK.findall(data)) + 1
    for f in findings:
        assert f.file == display, f
        assert f.rule in rule_ids(), f
        assert f.severity in SEVERITIES, f
        assert isinstance(f.message, str) and f.message.strip(), f
        assert len(f.message) < 20_000, f"{f.rule}: {len(f.message)}-character message"
        assert isinstance(f.line, int) and 1 <= f.line <= lines, f
        assert isinstance(f.column, int) and f.column >= 1, f
    return findings


_JSON_SCALARS = (str, int, float, bool, type(None))


def check_shape(value: Any, depth: int = 0) -> None:
    """JSON-shaped, with a 1-based position for every key and item."""
    assert depth <= 210
    if isinstance(value, dict):
        assert type(value) is PosDict
        assert value.start[0] >= 1 and value.start[1] >= 1
        assert set(value.lc) == set(value)
        for k, v in value.items():
            assert isinstance(k, _JSON_SCALARS), type(k)
            assert min(value.lc[k]) >= 1
            check_shape(v, depth + 1)
    elif isinstance(value, list):
        assert type(value) is PosList
        assert len(value.lc) == len(value)
        for item, pos in zip(value, value.lc):
            assert min(pos) >= 1
            check_shape(item, depth + 1)
    else:
        assert isinstance(value, _JSON_SCALARS), type(value)


# ----------------------------------------------------------------------------
# The corpus


@lru_cache(maxsize=1)
def corpus_files(corpus: Path) -> list[tuple[str, bytes]]:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return [(str(p.relative_to(corpus)), p.read_bytes()) for p in files]


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def field_paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(field_paths(v, path + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(field_paths(v, path + (i,)))
    return out


@lru_cache(maxsize=1)
def corpus_documents(corpus: Path) -> list[tuple[str, Any, list[tuple]]]:
    out = []
    for name, data in corpus_files(corpus):
        for doc in load(data).documents:
            if isinstance(doc.data, dict) and doc.data.get("kind"):
                value = plain(doc.data)
                out.append((f"{name}#{doc.index}", value, field_paths(value)))
    return out


# ----------------------------------------------------------------------------
# Hostile values

_DEEP = "__kubelint_fuzz_deep__"
_SPECIAL_STRINGS = [
    "",
    "\x00",
    "a\x00b",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "\x1b[2J\x1b[H",
    "::error file=x::owned",
    "%0A::warning::x",
    "line\nbreak",
    "cr\rreturn",
    "|a|b|",
    "`code`",
    "<script>alert(1)</script>",
    "&amp;",
    "{{ .Values.image }}",
    "1e400",
    "-1e400",
    "1e-400",
    "9" * 400,
    "0." + "0" * 30 + "1",
    "-5Gi",
    "1Ei",
    "8Ei",
    "0.0000000001m",
    "NaN",
    "Infinity",
    ".inf",
    "+1",
    "1e3",
    "100Mi",
    "1.5",
    "0",
    "-0",
    "2Gi ",
    " 2Gi",
    "\ufeffbom",
    "\u202eevil\u202c",
    "\u2028sep",
    "é",
    "😀" * 10,
    "x" * 5000,
    "nvidia.com/gpu",
    "Always",
    "system-node-critical",
    "kubelint-ml.io/ignore",
    "*",
    "&anchor",
    "!!python/object:os.system",
    "<<",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, -(2**63) - 1, 10**30, 10**400, -(10**400), 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(_SPECIAL_STRINGS),
)
keys = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.booleans(),
    st.none(),
    st.sampled_from(
        ["name", "resources", "limits", "requests", "memory", "cpu", "nvidia.com/gpu", "containers", "spec", "<<"]
    ),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=12,
)
# Nesting is spliced into the dumped text (the YAML emitter would recurse
# past Python's limit); some of it is deeper than the 200-level limit.
deep_values = st.builds(lambda n, flow: f"{_DEEP}{n}:{flow}", st.integers(1, 400), st.sampled_from(["[", "{"]))
hostile = st.one_of(values, deep_values)


def _splice_deep(text: str) -> str:
    while _DEEP in text:
        start = text.index(_DEEP)
        end = start + len(_DEEP)
        n_text, _, rest = text[end:].partition(":")
        n = int(n_text)
        flow, rest = rest[0], rest[1:]
        nested = "[" * n + "]" * n if flow == "[" else "{a: " * n + "x" + "}" * n
        # The marker is a plain scalar; the dumper may have quoted it.
        quote = text[start - 1] if start and text[start - 1] in "'\"" else ""
        if quote and rest.startswith(quote):
            text = text[: start - 1] + nested + rest[1:]
        else:
            text = text[:start] + nested + rest
    return text


def dump(value: Any) -> bytes:
    text = yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=1_000_000)
    return _splice_deep(text).encode("utf-8")


def replace_at(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


def copy(value: Any) -> Any:
    return plain(value)


# A known-good neighbour for the "other documents still linted" property.
NEIGHBOUR = b"""apiVersion: batch/v1
kind: Job
metadata:
  name: neighbour
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: trainer:1
        resources:
          requests: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 1}
          limits: {memory: 32Gi, nvidia.com/gpu: 1}
"""


def _signature(findings: list[Finding], document: int, line_offset: int) -> list[tuple]:
    return sorted(
        (f.rule, f.severity, f.message, f.path, f.line - line_offset, f.column, f.suppressed)
        for f in findings
        if f.document == document
    )


@lru_cache(maxsize=1)
def neighbour_alone() -> list[tuple]:
    findings = lint_text(NEIGHBOUR, all_rules(), display="fuzz.yaml")
    assert findings, "the neighbour must have findings for the property to mean anything"
    return _signature(findings, 0, 0)


def sandwich(middle: bytes) -> None:
    """NEIGHBOUR, the hostile document, NEIGHBOUR: the neighbours' findings do not change."""
    data = NEIGHBOUR + b"---\n" + middle + (b"" if middle.endswith(b"\n") else b"\n") + b"---\n" + NEIGHBOUR
    findings = lint(data)
    if may_hold_context(middle):
        return  # a PriorityClass or KubeletConfiguration legitimately informs the others
    second = len(_LINE_BREAK.findall(data, 0, len(data) - len(NEIGHBOUR)))
    assert _signature(findings, 0, 0) == neighbour_alone()
    assert _signature(findings, 2, second) == neighbour_alone()


# ----------------------------------------------------------------------------
# (a) bytes


@examples(150)
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    result = load(data)
    for doc in result.documents:
        check_shape(doc.data)
    for p in result.problems:
        assert p.line >= 1 and p.column >= 1 and p.message
    lint(data)


_YAML_PIECES = list("abcxyz019 :-,[]{}&*!|>'\"#?%@`\\.\t\n<=~") + [
    "---\n",
    "...\n",
    "\n  ",
    "\n- ",
    ": ",
    "{{ ",
    " }}",
    "<<: ",
    "<<: *a",
    "&a ",
    "*a",
    "!!binary ",
    "!!set ",
    "!!omap ",
    "!!python/object:os.system ",
    "!!int ",
    "!!float ",
    "!!bool ",
    "!!map ",
    "!!seq ",
    "!foo ",
    "%YAML 1.1\n",
    "%TAG ! tag:yaml.org,2002:\n",
    "\ufeff",
    "\x00",
    "\x1b[31m",
    "\u2028",
    "\x85",
    "\r",
    "kind: Pod\n",
    "apiVersion: v1\n",
    "metadata:\n  name: x\n",
    "spec:\n  containers:\n  - name: c\n",
    "    resources:\n      limits:\n        memory: ",
    "1e400",
    "nvidia.com/gpu: ",
    "99999999999999999999",
]


@examples(150)
@given(st.lists(st.sampled_from(_YAML_PIECES), max_size=120))
def test_yaml_shaped_text(pieces: list[str]) -> None:
    data = "".join(pieces).encode("utf-8")
    result = load(data)
    for doc in result.documents:
        check_shape(doc.data)
    lint(data)


_MUTATION_PAYLOADS = [
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\x1b[2J",
    b"\t",
    b"\r",
    b"\n",
    b"- ",
    b": ",
    b"[",
    b"{",
    b"]",
    b"}",
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"!!python/object:os.system ",
    b"!!int ",
    b"{{ x }}",
    b"---\n",
    b"'",
    b'"',
    b"#",
    b"\n  " * 3,
    b"1e400",
    b"-1",
    b"\xef\xbb\xbf",
]


@examples(150)
@given(st.data())
def test_mutated_corpus_bytes(corpus, data: st.DataObject) -> None:
    name, original = data.draw(st.sampled_from(corpus_files(corpus)), label="file")
    buf = bytearray(original)
    for _ in range(data.draw(st.integers(1, 8), label="mutations")):
        pos = data.draw(st.integers(0, len(buf)), label="pos")
        op = data.draw(st.sampled_from(["insert", "delete", "replace", "duplicate", "flip"]), label="op")
        if op == "insert":
            buf[pos:pos] = data.draw(st.sampled_from(_MUTATION_PAYLOADS) | st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del buf[pos : pos + data.draw(st.integers(1, 64))]
        elif op == "replace":
            payload = data.draw(st.sampled_from(_MUTATION_PAYLOADS))
            buf[pos : pos + len(payload)] = payload
        elif op == "duplicate":
            buf[pos:pos] = buf[pos : pos + data.draw(st.integers(1, 200))]
        elif pos < len(buf):
            buf[pos] ^= 1 << data.draw(st.integers(0, 7))
    lint(bytes(buf), display=name)


# ----------------------------------------------------------------------------
# (b) wrong types at every field path of real documents


@examples(200)
@given(st.data())
def test_wrong_type_at_a_field_path(corpus, data: st.DataObject) -> None:
    label, doc, paths = data.draw(st.sampled_from(corpus_documents(corpus)), label="document")
    path = data.draw(st.sampled_from(paths), label="path")
    value = data.draw(hostile, label="value")
    mutated = dump(replace_at(copy(doc), path, value))
    sandwich(mutated)


@examples(60)
@given(st.data())
def test_wrong_types_at_several_paths(corpus, data: st.DataObject) -> None:
    label, doc, _ = data.draw(st.sampled_from(corpus_documents(corpus)), label="document")
    doc = copy(doc)
    for _ in range(data.draw(st.integers(2, 6), label="count")):
        path = data.draw(st.sampled_from(field_paths(doc)), label="path")
        doc = replace_at(doc, path, data.draw(values, label="value"))
    sandwich(dump(doc))


def test_every_field_path_of_every_corpus_document(corpus) -> None:
    """Deterministic sweep: each field of each document, once, with a value of another type."""
    rng = random.Random(1)
    wrong = [None, 3, "big", [1], {"a": 1}, 10**400, float("nan"), True, "\x1b[31m\x00"]
    checked = 0
    for label, doc, paths in corpus_documents(corpus)[:: 1 if LONG else 7]:
        for path in paths[:: 1 if LONG else 5]:
            value = rng.choice(wrong)
            lint(dump(replace_at(copy(doc), path, value)), display=label)
            checked += 1
    assert checked > 500
