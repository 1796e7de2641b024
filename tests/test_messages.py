"""Short messages on the real corpus: the same findings as before the messages were
shortened, text lines and messages people can read, and nothing lost from JSON."""

from __future__ import annotations

import json
import os
import re
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
RECORDED = Path(__file__).parent / "data" / "corpus-findings.tsv"


def _recorded() -> set[tuple[str, int, int, str, str]]:
    rows = set()
    for line in RECORDED.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        file, ln, col, rule, severity = line.split("\t")
        rows.add((file, int(ln), int(col), rule, severity))
    return rows


@pytest.fixture(scope="module")
def runs(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run of ``kubelint-ml check ../shared/corpus`` from the project root, in text and JSON
    (skipped, with the reason, when the corpus is missing)."""
    out = tmp_path_factory.mktemp("corpus") / "findings.json"
    runner = CliRunner()
    cwd = Path.cwd()
    try:
        os.chdir(ROOT)
        r = runner.invoke(
            main,
            [
                "check",
                "../shared/corpus",
                "--no-color",
                "--jobs",
                "1",
                "--format",
                "text",
                "--format",
                "json",
                "--output",
                "-",
                "--output",
                str(out),
            ],
            catch_exceptions=False,
        )
    finally:
        os.chdir(cwd)
    assert r.exit_code in (0, 1), r.output[-2000:]
    return {"text": r.output, "json": json.loads(out.read_text())}


def test_same_findings_as_recorded(runs: dict) -> None:
    """Files, lines, columns, rule ids and severities are those recorded before the change.

    Rules added since (they are not in the recording) may add findings of their own."""
    recorded = _recorded()
    rules = {r[3] for r in recorded}
    prefix = "../shared/corpus/"
    got = {
        (f["file"][len(prefix) :], f["line"], f["column"], f["rule"], f["severity"])
        for f in runs["json"]["findings"]
        if f["rule"] in rules
    }
    assert all(f["file"].startswith(prefix) for f in runs["json"]["findings"])
    # + a Trainer runtime judged with the TrainJobs that use it (five); + GPU counts left to envsubst (six);
    # + the trainer pods of 4 TrainJobs judged with their runtimes (12); + a kustomize patch that adds a GPU (one);
    # + the pods whose only placeholders are EFA and GPU counts (31); - the Kueue priority labels of AWS's
    # HyperPod samples, which Kueue's own WorkloadPriorityClasses in a sibling tree do not speak for (4)
    assert len(recorded) == 1459
    assert got - recorded == set()
    assert recorded - got == set()


def test_median_message_and_text_line(runs: dict) -> None:
    findings = runs["json"]["findings"]
    messages = [len(f["message"]) for f in findings]
    assert statistics.median(messages) <= 80
    assert max(messages) <= 160
    # The finding lines of the text output: under a file and an object header, one per finding.
    lines = [
        ln for ln in runs["text"].splitlines() if ln.startswith("    ") or (ln.startswith("  ") and ln[2:3].isdigit())
    ]
    assert len(lines) == len(findings)
    assert statistics.median(map(len, lines)) <= 160
    assert sum(len(ln) > 160 for ln in lines) < len(lines) // 10
    assert runs["text"].rstrip().splitlines()[-1].endswith("of 384 files")


def test_json_keeps_the_rationale(runs: dict) -> None:
    """Every corpus finding carries the longer explanation and the rule's remediation, and
    the short message does not repeat the object the report already names."""
    for f in runs["json"]["findings"]:
        assert f["detail"] and f["remediation"], f
        assert f"{f['object']['kind']}/{f['object']['name']}" not in f["message"], f
    by_rule = {f["rule"]: f for f in runs["json"]["findings"]}
    qos = by_rule["besteffort-qos"]
    assert qos["message"].startswith("BestEffort QoS: no cpu or memory requests or limits")
    assert "first evicted and OOM-killed under node memory pressure" in qos["detail"]
    for f in runs["json"]["findings"]:
        if f["rule"] == "missing-memory-limit":
            assert re.fullmatch(
                r"(container|init container|sidecar) '[^']+' has no memory limit"
                r"( \((GPU|accelerator) pod\))?",
                f["message"],
            ), f
            assert f["container"] in f["message"]
            assert ("pod)" in f["message"]) == (f["severity"] == "error"), f  # raised for accelerator pods
            assert "OOM-killed or evicted" in f["detail"], f
