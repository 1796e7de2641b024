"""What the command line prints for people: concise lines, statistics, the summary, init's
starter config, pseudo-rules as documented rules, and the JSON and SARIF envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "fixtures/examples/pytorchjob-gpu.yaml"


def run(args: list[str], **kw):
    return CliRunner().invoke(main, args, catch_exceptions=False, **kw)


def test_concise_is_one_line_per_finding(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    r = run(["check", EXAMPLE, "--format", "concise"])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert lines[:3] == [
        f"{EXAMPLE}:17:9: missing-priority-class no priorityClassName ('training-high' is set on the PodGroup only)",
        f"{EXAMPLE}:21:15: shm-too-small-for-workers container 'pytorch' runs 8 processes (--nproc_per_node=8) "
        "on the default 64Mi /dev/shm",
        f"{EXAMPLE}:26:27: invalid-quantity container 'pytorch' limits.memory '64GB' is not a valid quantity "
        "(write 64G for 10^9 bytes or 64Gi for 2^30)",
    ]
    assert len(lines) == 8  # no summary line
    assert f"{EXAMPLE}:42:27: gpu-memory-share-mismatch 2 of 8 GPUs but 66.2% of p4d.24xlarge memory (700Gi)" in lines


def test_text_groups_by_file_and_object_and_counts_files_with_findings(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(ROOT)
    clean = tmp_path / "clean.yaml"
    clean.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    r = run(["check", EXAMPLE, str(clean), "--no-color"])
    lines = r.output.splitlines()
    assert lines[0] == EXAMPLE
    assert lines[1] == "  PyTorchJob research/llama-finetune"
    assert lines[2].startswith("    17:9   warning  missing-priority-class             no priorityClassName")
    assert lines[-1] == "1 error, 6 warnings, 1 info in 1 of 2 files"
    verbose = run(["check", EXAMPLE, "-v", "--no-color"]).output.splitlines()
    at = verbose.index(next(ln for ln in verbose if "26:27" in ln))
    assert "is not a valid quantity: " in verbose[at + 1]  # the detail: the parser's own words
    assert verbose[at + 2].strip().startswith("Write the quantity")  # the rule's remediation


def test_statistics(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/qos/family1.yaml", "--statistics"])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert lines[0].split() == ["count", "rule", "severity", "files", "title"]
    table = lines[1:-2]
    assert lines[-2] == ""
    counts = {ln.split()[1]: int(ln.split()[0]) for ln in table}
    data = json.loads(run(["check", "fixtures/qos/family1.yaml", "--format", "json"]).output)
    expected: dict[str, dict[str, int]] = {}
    for f in data["findings"]:
        by = expected.setdefault(f["rule"], {})
        by[f["severity"]] = by.get(f["severity"], 0) + 1
    assert counts == {rule: sum(by.values()) for rule, by in expected.items()}
    assert list(counts.values()) == sorted(counts.values(), reverse=True)
    for ln in table:  # one severity by name; several with their counts
        by = expected[ln.split()[1]]
        shown = ", ".join(
            f"{s} {n}" for s, n in sorted(by.items(), key=lambda kv: ["error", "warning", "info"].index(kv[0]))
        )
        assert (shown if len(by) > 1 else next(iter(by))) in ln
    assert lines[-1] == "4 errors, 6 warnings, 2 info in 1 of 1 file (1 suppressed)"


def test_init_leaves_the_profile_commented_out(tmp_path, monkeypatch) -> None:
    from kubelint_ml.run.config import load_config

    monkeypatch.chdir(tmp_path)
    assert run(["init"]).exit_code == 0
    text = Path(".kubelint-ml.yaml").read_text()
    config = load_config(".kubelint-ml.yaml")
    assert config.profile.kubernetes_version is None and config.profile.cgroup_version is None
    assert not config.profile.node_pools and not config.profile.priority_classes
    assert "profile" not in yaml.safe_load(text)
    # Every profile field says what it changes; uncommented, the block is a valid profile.
    block = text[text.index("# profile:") : text.index("\n\n", text.index("# profile:"))].splitlines()
    for field in ("kubernetesVersion", "os", "cgroupVersion", "kubeletConfig", "nodePools", "priorityClasses"):
        at = next(i for i, ln in enumerate(block) if ln.startswith(f"#   {field}:"))
        assert block[at - 1].startswith("#   # "), field  # the explanation just above it
    uncommented = "\n".join(ln[2:] for ln in block) + "\n"
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "kubelet-config.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
    )
    (tmp_path / "nodes" / "h100-kubelet.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
    )
    Path("with-profile.yaml").write_text(uncommented)
    profile = load_config("with-profile.yaml").profile
    assert (profile.kubernetes_version, profile.os, profile.cgroup_version) == ("1.33", "linux", 2)
    assert [p.name for p in profile.node_pools] == ["a100", "h100-onprem"]
    assert set(profile.priority_classes) == {"training-high", "training-low"}


def test_pseudo_rules_are_documented_rules() -> None:
    from kubelint_ml.engine.api import PSEUDO_RULES

    ids = {
        "parse-error",
        "render-error",
        "schema-invalid",
        "schema-unavailable",
        "cel-evaluation-error",
        "unknown-ignore-rule",
        "rule-error",
    }
    assert set(PSEUDO_RULES) == ids
    listing = json.loads(run(["rules", "list", "--format", "json"]).output)
    listed = {r["id"]: r for r in listing}
    for rid in ids:
        assert listed[rid]["family"] == "input" and listed[rid]["enabled"], rid
        shown = run(["rules", "show", rid])
        assert shown.exit_code == 0, rid
        assert shown.output.startswith(f"{rid}  [{PSEUDO_RULES[rid].severity}]  family: input")
        assert "Reported by the tool itself" in shown.output
    docs = (ROOT / "docs" / "rules.md").read_text()
    for rid in ids:
        assert f"### {rid}\n" in docs and f"[`{rid}`](#{rid})" in docs
    assert run(["rules", "show", "no-such-rule"]).exit_code == 2


def test_pseudo_rules_in_sarif_metadata(monkeypatch, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: p\n")
    r = run(["check", str(bad), "--format", "sarif"])
    doc = json.loads(r.output)
    rules = {d["id"]: d for d in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert {"parse-error", "schema-unavailable", "unknown-ignore-rule"} <= set(rules)
    assert rules["parse-error"]["shortDescription"]["text"] == "File or document is not a usable manifest"
    assert "**Remediation:**" in rules["parse-error"]["help"]["markdown"]
    result = doc["runs"][0]["results"][0]
    assert result["ruleId"] == "parse-error"
    assert doc["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "parse-error"


def test_schema_unavailable_has_its_own_id(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/schema/tfjob-valid.yaml", "--schema", "--format", "json"])
    found = [
        (f["rule"], f["severity"], f["line"])
        for f in json.loads(r.output)["findings"]
        if f["rule"].startswith("schema-")
    ]
    assert found == [("schema-unavailable", "info", 2)]


def test_json_envelope_and_detail(monkeypatch) -> None:
    from kubelint_ml import __version__

    monkeypatch.chdir(ROOT)
    doc = json.loads(run(["check", EXAMPLE, "--format", "json"]).output)
    assert list(doc)[:2] == ["schemaVersion", "tool"]
    assert doc["schemaVersion"] == 1 and doc["tool"] == {"name": "kubelint-ml", "version": __version__}
    assert doc["summary"]["files_with_findings"] == 1
    gpu = next(f for f in doc["findings"] if f["rule"] == "gpu-memory-share-mismatch")
    assert gpu["message"] == "2 of 8 GPUs but 66.2% of p4d.24xlarge memory (700Gi)"
    assert gpu["detail"].startswith(
        "PyTorchJob/research/llama-finetune (Worker): uses 2 of 8 GPUs (25%) on p4d.24xlarge"
    )
    assert "Request at most about 264Gi memory (its GPU share)" in gpu["detail"]
    documented = (ROOT / "docs" / "output.md").read_text()
    for key in (
        "schemaVersion",
        "tool",
        "findings",
        "suppressed",
        "summary",
        "rule",
        "severity",
        "message",
        "detail",
        "remediation",
        "file",
        "line",
        "column",
        "object",
        "path",
        "container",
        "data",
        "files_with_findings",
        "by_severity",
        "baselined",
        "fail_level",
        "failed",
    ):
        assert f"`{key}`" in documented, key


def test_sarif_has_no_local_path_and_ends_regions(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    r = run(["check", EXAMPLE, "--format", "sarif"])
    assert str(ROOT) not in r.output and "file://" not in r.output
    doc = json.loads(r.output)
    run0 = doc["runs"][0]
    assert "uri" not in run0["originalUriBaseIds"]["%SRCROOT%"]
    lines = (ROOT / EXAMPLE).read_text().splitlines()
    regions = {
        (x["ruleId"], x["locations"][0]["physicalLocation"]["region"]["startLine"]): x["locations"][0][
            "physicalLocation"
        ]["region"]
        for x in run0["results"]
    }
    quantity = regions[("invalid-quantity", 26)]
    assert lines[25][quantity["startColumn"] - 1 : quantity["endColumn"] - 1] == "64GB"
    share = regions[("gpu-memory-share-mismatch", 42)]
    assert lines[41][share["startColumn"] - 1 : share["endColumn"] - 1] == "700Gi"
    emptydir = regions[("emptydir-no-size-limit", 51)]
    assert lines[50][emptydir["startColumn"] - 1 : emptydir["endColumn"] - 1] == "emptyDir"
    assert all(r["endLine"] == r["startLine"] for r in regions.values())
    gpu = next(x for x in run0["results"] if x["ruleId"] == "gpu-memory-share-mismatch")
    assert "its GPU share" in gpu["message"]["text"] and gpu["properties"]["detail"] in gpu["message"]["text"]


def test_sarif_end_column_of_quoted_and_commented_scalars() -> None:
    from kubelint_ml.report.sarif import _token_end

    line = '    name: "a \\" b"  # note'
    assert line[10 : _token_end(line, 10)] == '"a \\" b"'
    assert line[4 : _token_end(line, 4)] == "name"
    quoted = "x: 'it''s' # c"
    assert quoted[3 : _token_end(quoted, 3)] == "'it''s'"
    assert _token_end("    limits: {memory: 1Gi}", 12) is None  # a flow mapping: no end given
    flow = "    resources: {limits: {memory: 1Gi, cpu: 2}}"
    assert flow[flow.index("1Gi") : _token_end(flow, flow.index("1Gi"))] == "1Gi"
    assert flow[flow.index("cpu") : _token_end(flow, flow.index("cpu"))] == "cpu"
    assert flow[flow.index("2}") : _token_end(flow, flow.index("2}"))] == "2"
    items = '    command: ["torchrun", --nproc_per_node=8, t.py]'
    assert items[items.index("--") : _token_end(items, items.index("--"))] == "--nproc_per_node=8"
    assert "memory: 64Gi # a"[8 : _token_end("memory: 64Gi # a", 8)] == "64Gi"


def test_markdown_summary_carries_the_detail() -> None:
    from factories import make_finding

    from kubelint_ml.findings import RunResult
    from kubelint_ml.report.markdown import render

    f = make_finding(
        message="container 'trainer' has no memory limit (GPU pod)",
        detail="Job/ml/train: it can use all of the node's memory | <b>64Gi</b>",
    )
    out = render(RunResult(findings=[f], suppressed=[], rules={}, files=1))
    row = next(ln for ln in out.splitlines() if "trainer" in ln)
    assert (
        "container 'trainer' has no memory limit (GPU pod)<br>Job/ml/train: it can use all of the node's "
        "memory \\| &lt;b&gt;64Gi&lt;/b&gt; |"
    ) in row


GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
  annotations: {kubelint-ml.io/ignore: "OBJ"}
spec:
  template:
    metadata:
      annotations: {kubelint-ml.io/ignore: "TPL"}
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: x
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _job(name: str, obj: str = "", tpl: str = "") -> str:
    return GPU_JOB.replace("NAME", name).replace("OBJ", obj).replace("TPL", tpl)


def test_ignore_all_annotation(tmp_path) -> None:
    m = tmp_path / "jobs.yaml"
    m.write_text(
        "---\n".join(
            [
                _job("all", obj="*=legacy job replaced in Q3"),
                _job("tpl", tpl="*"),
                _job("plain"),
                _job("typo", obj="besteffort-qso"),
            ]
        )
    )
    doc = json.loads(run(["check", str(m), "--format", "json", "--show-suppressed"]).output)
    active = {(f["object"]["name"], f["rule"]) for f in doc["findings"]}
    suppressed = {(f["object"]["name"], f["rule"], f["suppressed"]) for f in doc["suppressed"]}
    rules = {"besteffort-qos", "missing-priority-class", "missing-memory-request", "missing-memory-limit"}
    assert {r for n, r in active if n == "plain"} == rules
    assert {(n, r) for n, r in active if n in ("all", "tpl")} == set()
    assert {(r, why) for n, r, why in suppressed if n == "all"} == {(r, "legacy job replaced in Q3") for r in rules}
    assert {(r, why) for n, r, why in suppressed if n == "tpl"} == {
        (r, "kubelint-ml.io/ignore annotation") for r in rules
    }
    unknown = [f for f in doc["findings"] if f["rule"] == "unknown-ignore-rule"]
    assert [(f["object"]["name"], f["message"]) for f in unknown] == [
        ("typo", "kubelint-ml.io/ignore names unknown rule 'besteffort-qso' (did you mean 'besteffort-qos'?)")
    ]


def test_config_errors_name_the_line_and_the_likely_key(tmp_path) -> None:
    m = tmp_path / "m.yaml"
    m.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    cases = {
        "failLevel: error\nprofle: {}\n": "c.yaml:2: profle: unknown key 'profle' (did you mean 'profile'?)",
        "profile:\n  os: linux\n  cgroupVersoin: 2\n": "c.yaml:3: profile.cgroupVersoin: unknown key 'cgroupVersoin' (did you mean 'cgroupVersion'?)",
        "failLevel: eror\n": "c.yaml:1: failLevel: 'eror' is not one of ['error', 'warning', 'info']",
        "enable:\n  - missing-memory-limit\n  - missing-memory-limt\n": "c.yaml:3: unknown rule id 'missing-memory-limt' (did you mean 'missing-memory-limit'?)",
        "overrides:\n  memory-overcommit-ratio: {severity: info}\n  besteffort-qso: {severity: info}\n": "c.yaml:3: unknown rule id 'besteffort-qso' (did you mean 'besteffort-qos'?)",
    }
    for text, expected in cases.items():
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text)
        r = run(["check", str(m), "-c", str(cfg)])
        assert r.exit_code == 2, text
        assert f"kubelint-ml: error: {tmp_path}/{expected}" in r.output, (text, r.output)
    r = run(["check", str(m), "--disable", "besteffort-qso"])
    assert (
        r.exit_code == 2
        and "command line: unknown rule id 'besteffort-qso' (did you mean 'besteffort-qos'?)" in r.output
    )


def test_verify_a_directory_without_rules_exits_2(tmp_path) -> None:
    (tmp_path / "README.md").write_text("not a rule")
    r = run(["rules", "verify", str(tmp_path)])
    assert r.exit_code == 2
    assert f"{tmp_path}: no rules or policies to verify" in r.output


def _cel() -> bool:
    from kubelint_ml.engine.cel import available

    return available()


@pytest.mark.skipif(not _cel(), reason="CEL runtime needs Python >= 3.11")
def test_cel_rule_naming_a_variable_its_unit_lacks(tmp_path) -> None:
    (tmp_path / "r.yaml").write_text(
        "id: c-rule\nseverity: warning\ntitle: t\ndescription: d\nremediation: r\nscope: {unit: object}\n"
        'check:\n  cel: "has(container.resources)"\n'
        'examples:\n  fail: [{manifest: "kind: Pod", findings: [{line: 1}]}]\n  pass: [{manifest: "kind: Pod"}]\n'
    )
    r = run(["rules", "verify", str(tmp_path)])
    assert r.exit_code == 2
    assert (
        "check.cel: variable 'container' is not available for unit 'object' "
        "(it has object, objects, profile; 'container' is there for unit 'container')"
    ) in r.output
