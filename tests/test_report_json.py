"""JSON reporter: structure, key order, determinism, valid JSON for any text."""

from __future__ import annotations

import json
from functools import partial

import pytest
from factories import make_finding
from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml import __version__
from kubelint_ml.findings import ObjectRef, RunResult
from kubelint_ml.fix import Edit, Fix
from kubelint_ml.report.json_ import render

finding = partial(
    make_finding,
    remediation='set resources.limits["nvidia.com/gpu"]',
    path="spec.template.spec.containers[0].resources",
)


def run(findings, suppressed=(), show_suppressed=True) -> RunResult:
    return RunResult(
        findings=list(findings),
        suppressed=list(suppressed),
        rules={},
        files=2,
        documents=3,
        objects=4,
        baselined=1,
        show_suppressed=show_suppressed,
    )


def test_exact_document() -> None:
    sup = finding(rule="emptydir-no-limit", severity="warning", line=30, suppressed="scratch is tiny", container="c")
    out = render(run([finding()], [sup]))
    doc = json.loads(out)
    assert list(doc) == ["schemaVersion", "tool", "findings", "suppressed", "summary"]
    assert doc["schemaVersion"] == 1
    assert doc["tool"] == {"name": "kubelint-ml", "version": __version__}
    assert doc["findings"] == [
        {
            "rule": "gpu-limit-missing",
            "severity": "error",
            "message": "container trainer: no GPU limit",
            "remediation": 'set resources.limits["nvidia.com/gpu"]',
            "file": "jobs/train.yaml",
            "line": 12,
            "column": 9,
            "object": {"apiVersion": "batch/v1", "kind": "Job", "namespace": "ml", "name": "train"},
            "path": "spec.template.spec.containers[0].resources",
        }
    ]
    assert json.loads(render(run([finding()], [sup], show_suppressed=False)))["suppressed"] == []
    assert doc["suppressed"][0]["suppressed"] == "scratch is tiny"
    assert doc["suppressed"][0]["container"] == "c"
    assert doc["summary"] == {
        "files": 2,
        "documents": 3,
        "objects": 4,
        "findings": 1,
        "files_with_findings": 1,
        "by_severity": {"error": 1, "warning": 0, "info": 0},
        "suppressed": 1,
        "baselined": 1,
        "fail_level": "error",
        "failed": True,
    }
    keys = ["rule", "severity", "message", "remediation", "file", "line", "column", "object", "path"]
    assert list(doc["findings"][0]) == keys
    assert out.startswith('{\n  "schemaVersion": 1,\n  "tool": {\n    "name": "kubelint-ml",\n')
    assert '\n  "findings": [\n    {\n      "rule": "gpu-limit-missing",' in out
    assert out.endswith("}\n")


def test_deterministic() -> None:
    r = run([finding(), finding(line=40, data={"b": 1, "a": [1, 2]})])
    assert render(r) == render(r)


def test_lone_surrogates_and_odd_data_give_valid_utf8_json() -> None:
    f = finding(
        file="bad-\udcff-name.yaml",
        message="lone \ud800 high",
        object=ObjectRef(name="n\udfff"),
        data={"t": (1, 2), "nan": float("nan"), "inf": float("inf"), 3: "int key", "s": {"x"}, "o": object},
    )
    out = render(run([f]))
    raw = out.encode("utf-8")  # would raise on a lone surrogate
    doc = json.loads(raw.decode("utf-8"))
    got = doc["findings"][0]
    assert got["file"] == "bad-\ufffd-name.yaml"
    assert got["message"] == "lone \ufffd high"
    assert got["object"]["name"] == "n\ufffd"
    assert got["data"] == {"t": [1, 2], "nan": "nan", "inf": "inf", "3": "int key", "s": ["x"], "o": "<class 'object'>"}


def test_non_ascii_kept_readable() -> None:
    out = render(run([finding(message="café — ünïcode")]))
    assert "café — ünïcode" in out


@given(st.text(), st.text(), st.dictionaries(st.text(), st.text() | st.integers() | st.floats()))
def test_any_text_is_valid_json(message: str, file: str, data: dict) -> None:
    out = render(run([finding(message=message, file=file, data=data)]))
    doc = json.loads(out.encode("utf-8"))
    assert len(doc["findings"]) == 1


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


def _make_fix(description: str, applicability: str, source: str, state: tuple) -> Fix:
    """A fix as the engine leaves it: not resolved, unfixable, or with its edits."""
    fix = Fix(description, applicability, source)
    resolved, unfixable, edits = state
    if resolved:
        fix.resolved, fix.unfixable, fix.edits = True, unfixable, tuple(Edit(a, a + b, t) for a, b, t in edits)
    return fix


_fixes = st.builds(
    _make_fix,
    _text,
    st.sampled_from(["safe", "unsafe"]),
    _text,
    st.tuples(
        st.booleans(),
        st.none() | _text,
        st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 99), _text), max_size=3),
    ),
)
_findings = st.lists(
    st.builds(
        make_finding,
        rule=_text,
        severity=st.sampled_from(["error", "warning", "info"]),
        message=_text,
        remediation=_text,
        file=st.sampled_from(["a.yaml", "dir/b.yaml"]) | _text,
        line=st.integers(1, 10**6),
        column=st.integers(1, 999),
        path=_text,
        object=st.none() | st.builds(ObjectRef, _text, _text, _text, _text),
        container=st.none() | _text,
        suppressed=st.none() | _text,
        detail=st.none() | _text,
        data=st.dictionaries(_text, _text | st.integers() | st.lists(st.integers(), max_size=3), max_size=3),
        fix=st.none() | _fixes,
    ),
    max_size=4,
)


@given(_findings, _findings)
def test_every_field_of_every_finding_as_json_dumps_writes_it(findings: list, suppressed: list) -> None:
    """The writer builds each finding's text by hand (fast); it must stay what json.dumps gives for to_dict()."""
    result = run(findings, suppressed)
    expected = (
        json.dumps(
            {
                "schemaVersion": 1,
                "tool": {"name": "kubelint-ml", "version": __version__},
                "findings": [f.to_dict() for f in findings],
                "suppressed": [f.to_dict() for f in suppressed],
                "summary": result.summary(),
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    assert render(result) == expected


def test_a_findings_data_renders_as_json_dumps_renders_it() -> None:
    """`data` (flat mappings, lists, floats: the overcommit ratio, an unknown field's parent path) is
    written out by hand: byte for byte json.dumps(indent=2) at every depth, NaN refused as there."""
    from hypothesis import settings

    from kubelint_ml.report.json_ import _value

    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
    values = st.recursive(
        scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=12
    )

    @settings(max_examples=500, deadline=None)
    @given(values, st.sampled_from(["", "      "]))
    def same(value, pad: str) -> None:
        expected = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + pad)
        assert _value(value, pad) == expected

    same()
    for bad in (float("nan"), float("inf"), {"ratio": float("nan")}, [float("-inf")]):
        with pytest.raises(ValueError):
            _value(bad, "")
