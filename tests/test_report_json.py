"""JSON reporter: structure, key order, determinism, valid JSON for any text."""

from __future__ import annotations

from functools import partial

import json

from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.findings import ObjectRef, RunResult
from factories import make_finding
from kubelint_ml.report.json_ import render


finding = partial(make_finding, remediation='set resources.limits["nvidia.com/gpu"]',
                  path="spec.template.spec.containers[0].resources")


def run(findings, suppressed=(), show_suppressed=True) -> RunResult:
    return RunResult(
        findings=list(findings), suppressed=list(suppressed), rules={}, files=2, documents=3, objects=4, baselined=1,
        show_suppressed=show_suppressed,
    )


def test_exact_document() -> None:
    sup = finding(rule="emptydir-no-limit", severity="warning", line=30, suppressed="scratch is tiny", container="c")
    out = render(run([finding()], [sup]))
    doc = json.loads(out)
    assert list(doc) == ["findings", "suppressed", "summary"]
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
        "by_severity": {"error": 1, "warning": 0, "info": 0},
        "suppressed": 1,
        "baselined": 1,
        "fail_level": "error",
        "failed": True,
    }
    keys = ["rule", "severity", "message", "remediation", "file", "line", "column", "object", "path"]
    assert list(doc["findings"][0]) == keys
    assert out.startswith('{\n  "findings": [\n    {\n      "rule": "gpu-limit-missing",')
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
