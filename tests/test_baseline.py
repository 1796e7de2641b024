"""Baselines: identity matching with multiplicity, round trip, bad files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from factories import make_finding

from kubelint_ml.findings import Finding, ObjectRef
from kubelint_ml.run.baseline import Baseline, BaselineError, load_baseline, write_baseline


def finding(line: int = 12, **kw) -> Finding:
    return make_finding(line=line, **{"path": "spec.containers[0].resources", **kw})


def test_round_trip_and_line_changes_ignored(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    old = [finding(12), finding(40, rule="emptydir-no-size-limit", path="spec.volumes[0]")]
    write_baseline(str(path), old)
    baseline = load_baseline(str(path))
    assert len(baseline) == 2
    moved = [finding(99, message="reworded"), finding(3, rule="emptydir-no-size-limit", path="spec.volumes[0]")]
    new, matched = baseline.filter(moved)
    assert (new, matched) == ([], 2)


def test_identity_parts_each_matter(tmp_path: Path) -> None:
    baseline = Baseline.from_findings([finding()])
    variants = [
        finding(rule="other"),
        finding(file="jobs/other.yaml"),
        finding(object=ObjectRef("batch/v1", "Job", "ml", "train2")),
        finding(object=ObjectRef("batch/v1", "Job", "prod", "train")),
        finding(object=ObjectRef("kubeflow.org/v1", "Job", "ml", "train")),
        finding(object=ObjectRef("batch/v1", "CronJob", "ml", "train")),
        finding(path="spec.containers[1].resources"),
        finding(object=None),
    ]
    for v in variants:
        assert baseline.filter([v]) == ([v], 0)


def test_multiplicity(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write_baseline(str(path), [finding(10), finding(20)])
    doc = json.loads(path.read_text())
    assert doc["findings"][0]["count"] == 2
    run = [finding(30), finding(5), finding(15)]
    new, matched = load_baseline(str(path)).filter(run)
    assert matched == 2
    assert new == [finding(30)]  # the last one in file order is the new one
    assert load_baseline(str(path)).filter(run[:1]) == ([], 1)


def test_filter_keeps_caller_order() -> None:
    baseline = Baseline.from_findings([finding(1, rule="a")])
    run = [finding(9, rule="z"), finding(1, rule="a"), finding(2, rule="b")]
    assert baseline.filter(run) == ([run[0], run[2]], 1)


def test_file_path_normalised(tmp_path: Path) -> None:
    baseline = Baseline.from_findings([finding(file="./jobs/train.yaml")])
    assert baseline.filter([finding(file="jobs/train.yaml")]) == ([], 1)


def test_file_format_is_exact_and_sorted(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write_baseline(str(path), [finding(rule="z-rule"), finding(rule="a-rule", object=None, path="")])
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "version": 1,
        "tool": "kubelint-ml",
        "findings": [
            {
                "rule": "a-rule",
                "file": "jobs/train.yaml",
                "apiVersion": "",
                "kind": "",
                "namespace": "",
                "name": "",
                "path": "",
                "count": 1,
                "message": "container trainer: no GPU limit",
            },
            {
                "rule": "z-rule",
                "file": "jobs/train.yaml",
                "apiVersion": "batch/v1",
                "kind": "Job",
                "namespace": "ml",
                "name": "train",
                "path": "spec.containers[0].resources",
                "count": 1,
                "message": "container trainer: no GPU limit",
            },
        ],
    }
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]  # no temporary file left


def test_non_ascii_and_surrogates_round_trip(tmp_path: Path) -> None:
    odd = finding(file=os.fsdecode(b"caf\xc3\xa9-\xff.yaml"), object=ObjectRef(name="n\ud800"))
    path = tmp_path / "b.json"
    write_baseline(str(path), [odd])
    assert load_baseline(str(path)).filter([odd]) == ([], 1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"b\.json:1:2: baseline is not valid JSON"),
        ("[]", r'not a kubelint-ml baseline \(expected an object with a "findings" list\)'),
        ('{"findings": {}}', "not a kubelint-ml baseline"),
        ('{"version": 2, "findings": []}', r"unsupported baseline version 2 \(expected 1\)"),
        ('{"findings": []}', "unsupported baseline version None"),
        ('{"version": 1, "findings": [3]}', r"findings\[0\] is not an object"),
        ('{"version": 1, "findings": [{"rule": "r", "file": 7}]}', r"findings\[0\]\.file must be a string"),
        ('{"version": 1, "findings": [{"file": "a"}]}', r"findings\[0\]\.rule is missing"),
        ('{"version": 1, "findings": [{"rule": "r", "count": 0}]}', r"findings\[0\]\.count must be a positive integer"),
        ('{"version": 1, "findings": [{"rule": "r", "count": true}]}', "count must be a positive integer"),
        ("[" * 100000, "nested too deeply|not valid JSON"),
    ],
)
def test_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError, match=message):
        load_baseline(str(path))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="baseline file not found: .*nope.json"):
        load_baseline(str(tmp_path / "nope.json"))
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(BaselineError, match="baseline is not UTF-8 text"):
        load_baseline(str(tmp_path / "bin.json"))
    with pytest.raises(BaselineError, match="cannot read baseline"):
        load_baseline(str(tmp_path))  # a directory


def test_write_error(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="cannot write baseline"):
        write_baseline(str(tmp_path / "missing-dir" / "b.json"), [finding()])


def test_count_defaults_to_one(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    entry = {
        "rule": "gpu-limit-missing",
        "file": "jobs/train.yaml",
        "apiVersion": "batch/v1",
        "kind": "Job",
        "namespace": "ml",
        "name": "train",
        "path": "spec.containers[0].resources",
    }
    path.write_text(json.dumps({"version": 1, "findings": [entry]}), encoding="utf-8")
    assert load_baseline(str(path)).filter([finding(), finding(20)]) == ([finding(20)], 1)
