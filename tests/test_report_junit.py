"""JUnit XML reporter: suites per file, cases per object x rule, hostile input."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import partial

from factories import make_finding
from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.findings import ObjectRef, RunResult
from kubelint_ml.report.junit import render

finding = partial(make_finding, path="spec.containers[0]")


def parse(findings, suppressed=(), files=3) -> ET.Element:
    out = render(RunResult(findings=list(findings), suppressed=list(suppressed), rules={}, files=files))
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(out.encode("utf-8"))


def test_structure() -> None:
    root = parse(
        [
            finding(),
            finding(line=20, path="spec.containers[1]", message="container b: no GPU limit"),
            finding(rule="emptydir-no-size-limit", severity="warning", line=30, message="unbounded emptyDir"),
            finding(file="a.yaml", line=1, object=None, rule="parse-error", message="bad YAML", remediation=""),
        ],
        [finding(rule="priorityclass-missing", severity="info", suppressed="batch tier", line=2)],
    )
    assert root.tag == "testsuites"
    assert root.attrib == {"name": "kubelint-ml", "tests": "4", "failures": "3", "errors": "0", "skipped": "1"}
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["a.yaml", "jobs/train.yaml"]
    assert suites[1].attrib == {"name": "jobs/train.yaml", "tests": "3", "failures": "2", "errors": "0", "skipped": "1"}
    cases = suites[1].findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("jobs/train.yaml", "Job/ml/train emptydir-no-size-limit"),
        ("jobs/train.yaml", "Job/ml/train gpu-limit-missing"),
        ("jobs/train.yaml", "Job/ml/train priorityclass-missing"),
    ]
    gpu = cases[1].find("failure")
    assert gpu.attrib == {"message": "error: container trainer: no GPU limit (and 1 more)", "type": "gpu-limit-missing"}
    assert gpu.text == (
        "jobs/train.yaml:12:9: error gpu-limit-missing container trainer: no GPU limit\n"
        "  field: spec.containers[0]\n"
        "  remediation: set limits\n"
        "\n"
        "jobs/train.yaml:20:9: error gpu-limit-missing container b: no GPU limit\n"
        "  field: spec.containers[1]\n"
        "  remediation: set limits"
    )
    skipped = cases[2].find("skipped")
    assert skipped.get("message") == "suppressed: batch tier"
    assert cases[2].find("failure") is None
    parse_case = suites[0].find("testcase")
    assert parse_case.get("name") == "(file) parse-error"
    assert parse_case.find("failure").get("message") == "error: bad YAML"


def test_no_findings_one_passing_case() -> None:
    root = parse([], files=7)
    assert root.attrib == {"name": "kubelint-ml", "tests": "1", "failures": "0", "errors": "0", "skipped": "0"}
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "kubelint-ml"
    (case,) = suite.findall("testcase")
    assert case.get("name") == "7 files checked"
    assert list(case) == []


def test_hostile_input_parses_back() -> None:
    evil = "a<b>&\"'\x00\x01\x0b\x1b[31m\ud800\udfff\ufffe\uffff]]><!--x-->\r\nz"
    obj = ObjectRef(kind="Pod", name=evil)
    f = finding(file=f"f{evil}.yaml", message=evil, remediation=evil, object=obj, path=evil)
    root = parse([f], [finding(suppressed=evil, line=99, rule="other")])
    failure = root.find("testsuite/testcase/failure")
    assert failure.get("message") == "error: a<b>&\"']]><!--x-->\r\nz"
    assert root.find("testsuite").get("name") == "fa<b>&\"']]><!--x-->\r\nz.yaml"
    assert "a<b>&\"']]><!--x-->" in failure.text


@given(st.text(), st.text(), st.text())
def test_any_text_is_well_formed(file: str, message: str, name: str) -> None:
    root = parse([finding(file=file, message=message, object=ObjectRef(name=name))])
    assert root.get("failures") == "1"
