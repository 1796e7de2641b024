"""CI formats end to end: SARIF of the real corpus, injection-proof annotations."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.mark.slow
def test_corpus_sarif_is_valid_and_every_result_has_a_real_line(corpus, tmp_path):
    out = tmp_path / "corpus.sarif"
    r = CliRunner().invoke(
        main, ["check", str(corpus), "--format", "sarif", "--output", str(out)], catch_exceptions=False
    )
    assert r.exit_code == 1
    doc = json.loads(out.read_text())
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "kubelint-ml"
    rule_ids = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert {"besteffort-qos", "missing-priority-class", "parse-error"} <= rule_ids
    assert len(run["results"]) > 1000
    fingerprints = set()
    for res in run["results"]:
        assert res["ruleId"] in rule_ids
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        fp = tuple(sorted(res["partialFingerprints"].items()))
        assert fp not in fingerprints
        fingerprints.add(fp)


HOSTILE_NAME = "x::error file=evil.yaml::pwned%0A::warning::injected,title=a:b"


def test_github_annotations_cannot_be_injected(tmp_path, monkeypatch):
    evil_dir = tmp_path / "we,ird:dir"
    evil_dir.mkdir()
    manifest = evil_dir / "job%0A::error::x.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n"
        f'  name: "{HOSTILE_NAME}\\n::error::second line\\r::notice::cr"\n'
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
        '      containers:\n        - name: "c\\n::error::in-container"\n          image: x\n'
    )
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(
        main,
        ["check", str(manifest), "--format", "github", "--fail-level", "warning"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
        catch_exceptions=False,
    )
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert lines, r.output
    for line in lines:
        assert line.startswith(("::error ", "::warning ", "::notice ")), line
        head, _, message = line.partition("::")[2].partition("::")
        # the properties part holds no raw separators from input, the message no raw newlines
        props = head.split(" ", 1)[1]
        for prop in props.split(","):
            key, _, value = prop.partition("=")
            assert key in ("file", "line", "col", "title", "endLine", "endColumn"), prop
            assert ":" not in value and "\n" not in value
    assert all("%0A" in line or "\n" not in line for line in lines)
    table = summary.read_text()
    assert "|" in table and "<script" not in table


def test_step_summary_is_written_for_every_format(tmp_path, monkeypatch):
    """GITHUB_STEP_SUMMARY set means a job summary, whatever --format says (docs/ci.md)."""
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n")
    monkeypatch.chdir(tmp_path)
    for fmt in ("text", "json", "sarif"):
        summary = tmp_path / f"summary-{fmt}.md"
        r = CliRunner().invoke(
            main,
            ["check", "pod.yaml", "--format", fmt],
            env={"GITHUB_STEP_SUMMARY": str(summary)},
            catch_exceptions=False,
        )
        assert r.exit_code == 0
        text = summary.read_text()
        assert text.startswith("## kubelint-ml") and "pod.yaml" in text
