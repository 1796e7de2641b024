"""SARIF reporter: schema validity, rules, results, URIs, fingerprints."""

from __future__ import annotations

import copy
import json
import os
from functools import partial
from pathlib import Path

import jsonschema
import pytest
from factories import make_finding
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelint_ml.findings import ObjectRef, RuleInfo, RunResult
from kubelint_ml.report.sarif import FINGERPRINT_KEY, render

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)

RULES = {
    "gpu-limit-missing": RuleInfo(
        id="gpu-limit-missing",
        severity="error",
        title="GPU requested without a limit",
        description="Extended resources must be set in limits.",
        remediation="Set limits for nvidia.com/gpu.",
        family="accelerators",
        help_uri="https://example.org/rules/gpu-limit-missing",
    ),
    "emptydir-no-size-limit": RuleInfo(
        id="emptydir-no-size-limit",
        severity="warning",
        title="emptyDir without sizeLimit",
        description="An unbounded emptyDir can evict the pod.",
        remediation="Set sizeLimit.",
        family="emptydir",
    ),
    "priorityclass-missing": RuleInfo(
        id="priorityclass-missing", severity="info", title="No PriorityClass", description="d", remediation="r"
    ),
}


finding = partial(
    make_finding,
    message="container trainer requests nvidia.com/gpu without a limit",
    remediation="add limits",
    path="spec.template.spec.containers[0].resources",
)


def sarif(findings, suppressed=(), root: str = ".", rules=RULES) -> dict:
    r = RunResult(
        findings=list(findings), suppressed=list(suppressed), rules=dict(rules), root=root, tool_version="9.8.7"
    )
    doc = json.loads(render(r))
    VALIDATOR.validate(doc)
    return doc


def test_log_and_driver(tmp_path: Path) -> None:
    doc = sarif([finding()], root=str(tmp_path))
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-schema-2.1.0.json")
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "kubelint-ml"
    assert driver["version"] == "9.8.7"
    assert driver["informationUri"] == "https://github.com/kubelint-ml/kubelint-ml"
    assert run["invocations"] == [{"executionSuccessful": True}]
    # The local directory stays out of the log; a viewer resolves %SRCROOT% to its checkout.
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {"description": {"text": "The root of the repository that was linted."}}
    }
    assert str(tmp_path) not in json.dumps(doc)


def test_rules_descriptors() -> None:
    rules = sarif([])["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["emptydir-no-size-limit", "gpu-limit-missing", "priorityclass-missing"]
    gpu = rules[1]
    assert gpu == {
        "id": "gpu-limit-missing",
        "name": "GpuLimitMissing",
        "shortDescription": {"text": "GPU requested without a limit"},
        "fullDescription": {"text": "Extended resources must be set in limits."},
        "help": {
            "text": "Extended resources must be set in limits.\n\nRemediation: Set limits for nvidia.com/gpu.",
            "markdown": "Extended resources must be set in limits.\n\n**Remediation:** Set limits for nvidia.com/gpu."
            "\n\n[Documentation](https://example.org/rules/gpu-limit-missing)",
        },
        "helpUri": "https://example.org/rules/gpu-limit-missing",
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["accelerators"]},
    }
    assert "helpUri" not in rules[0]
    assert [r["defaultConfiguration"]["level"] for r in rules] == ["warning", "error", "note"]
    assert rules[2]["properties"] == {"tags": []}


def test_result_fields() -> None:
    doc = sarif([finding(container="trainer")])
    res = doc["runs"][0]["results"][0]
    assert res["ruleId"] == "gpu-limit-missing"
    assert res["ruleIndex"] == 1
    assert res["level"] == "error"
    assert res["message"] == {
        "text": "container trainer requests nvidia.com/gpu without a limit\n\nRemediation: add limits"
    }
    loc = res["locations"][0]
    assert loc["physicalLocation"] == {
        "artifactLocation": {"uri": "jobs/train.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 12, "startColumn": 9},
    }
    assert loc["logicalLocations"] == [
        {
            "name": "train",
            "fullyQualifiedName": "Job/ml/train",
            "kind": "resource",
            "properties": {"apiVersion": "batch/v1", "kind": "Job", "namespace": "ml"},
        },
        {
            "name": "spec.template.spec.containers[0].resources",
            "fullyQualifiedName": "Job/ml/train:spec.template.spec.containers[0].resources",
            "kind": "member",
        },
    ]
    assert res["properties"] == {"severity": "error", "container": "trainer", "document": 0}
    assert "suppressions" not in res


def test_levels_and_unknown_rule_gets_descriptor() -> None:
    doc = sarif(
        [
            finding(rule="emptydir-no-size-limit", severity="warning"),
            finding(rule="priorityclass-missing", severity="info", line=20),
            finding(rule="parse-error", severity="error", line=0, column=0, object=None, path=""),
        ]
    )
    run = doc["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "parse-error" in ids
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["emptydir-no-size-limit"]["level"] == "warning"
    assert by_rule["priorityclass-missing"]["level"] == "note"
    parse = by_rule["parse-error"]
    assert ids[parse["ruleIndex"]] == "parse-error"
    assert "region" not in parse["locations"][0]["physicalLocation"]
    assert "logicalLocations" not in parse["locations"][0]


def test_uri_encoding_and_relative_to_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    odd = str(root / "k8s" / "my job #1%?:,ü.yaml")
    outside = str(tmp_path / "other" / "x y.yaml")
    findings = [finding(file=odd), finding(file=outside, line=40), finding(file="./rel/a.yaml", line=50)]
    doc = sarif(findings, root=str(root))
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in doc["runs"][0]["results"]]
    assert {"uri": "k8s/my%20job%20%231%25%3F%3A%2C%C3%BC.yaml", "uriBaseId": "%SRCROOT%"} in locs
    assert {"uri": (tmp_path / "other").as_uri() + "/x%20y.yaml"} in locs
    # a relative path is taken from the working directory: outside this root
    assert {"uri": Path(os.path.abspath("rel/a.yaml")).as_uri()} in locs
    assert len(locs) == 3


def test_relative_file_with_default_root() -> None:
    doc = sarif([finding(file="./rel/sub/a.yaml")])
    art = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "rel/sub/a.yaml", "uriBaseId": "%SRCROOT%"}


def test_undecodable_file_name_uses_original_bytes() -> None:
    name = os.fsdecode(b"bad-\xff.yaml")
    doc = sarif([finding(file=name)])
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad-%FF.yaml"


def _fingerprints(doc: dict) -> list[str]:
    return [r["partialFingerprints"][FINGERPRINT_KEY] for r in doc["runs"][0]["results"]]


def test_fingerprints_ignore_lines_and_count_duplicates(tmp_path: Path) -> None:
    a = finding(line=12)
    b = finding(line=30, column=3)  # same identity, second occurrence
    c = finding(line=31, path="spec.template.spec.volumes[0]")
    before = _fingerprints(sarif([a, b, c]))
    moved = [copy.copy(x) for x in (a, b, c)]
    for x in moved:
        x.line += 7
        x.message = "reworded"
    after = _fingerprints(sarif(moved))
    assert before == after
    assert before[0].split(":")[0] == before[1].split(":")[0]
    assert [fp.split(":")[1] for fp in before] == ["1", "2", "1"]
    assert before[2].split(":")[0] != before[0].split(":")[0]
    assert len(before[0].split(":")[0]) == 32


def test_fingerprint_independent_of_checkout_location(tmp_path: Path) -> None:
    one = sarif([finding(file=str(tmp_path / "a" / "jobs" / "train.yaml"))], root=str(tmp_path / "a"))
    two = sarif([finding(file=str(tmp_path / "b" / "jobs" / "train.yaml"))], root=str(tmp_path / "b"))
    assert _fingerprints(one) == _fingerprints(two)


def test_suppressed_results() -> None:
    sup = finding(rule="emptydir-no-size-limit", severity="warning", line=40, suppressed="scratch only")
    doc = sarif([finding()], [sup])
    results = doc["runs"][0]["results"]
    assert len(results) == 2
    assert [r.get("suppressions") for r in results] == [None, [{"kind": "inSource", "justification": "scratch only"}]]


def test_lone_surrogates_and_control_chars_still_valid(tmp_path: Path) -> None:
    f = finding(message="bad \ud800 \x1b[31m text", file="x\udcfe\x01.yaml", object=ObjectRef(name="\udfff"))
    r = RunResult(findings=[f], suppressed=[], rules=RULES, root=".")
    out = render(r)
    doc = json.loads(out.encode("utf-8"))
    VALIDATOR.validate(doc)
    assert doc["runs"][0]["results"][0]["message"]["text"].startswith("bad \ufffd \x1b[31m text")


@settings(max_examples=30, deadline=None)
@given(st.text(), st.text(), st.text(min_size=1), st.integers(min_value=0, max_value=10**6))
def test_any_input_validates(message: str, name: str, file: str, line: int) -> None:
    f = finding(message=message, object=ObjectRef(name=name), file=file, line=line)
    r = RunResult(findings=[f], suppressed=[], rules=RULES)
    VALIDATOR.validate(json.loads(render(r).encode("utf-8")))


@pytest.mark.parametrize("version", ["", "1.2.3"])
def test_version_fallback(version: str) -> None:
    from kubelint_ml import __version__

    r = RunResult(findings=[], suppressed=[], rules={}, tool_version=version)
    assert json.loads(render(r))["runs"][0]["tool"]["driver"]["version"] == (version or __version__)
