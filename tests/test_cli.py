"""The command line as a user meets it: formats, exit codes, config, custom rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml import __version__
from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
FAMILY1 = str(ROOT / "fixtures" / "qos" / "family1.yaml")
GOOD = """apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  priorityClassName: system-cluster-critical
  containers:
    - name: c
      image: busybox
      resources:
        limits: {cpu: "1", memory: 1Gi}
"""


def run(args, input=None, cwd=None, env=None):
    runner = CliRunner()
    if cwd is not None:
        with runner.isolated_filesystem(temp_dir=cwd):
            return runner.invoke(main, args, input=input, env=env)
    return runner.invoke(main, args, input=input, env=env, catch_exceptions=False)


def findings(result):
    return [(f["rule"], f["line"], f["column"]) for f in json.loads(result.output)["findings"]]


def test_version():
    r = run(["--version"])
    assert r.exit_code == 0 and __version__ in r.output


def test_family1_fixture_json_exact(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/qos/family1.yaml", "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.output)
    got = [
        (f["rule"], f["line"], f["column"], f["path"])
        for f in data["findings"]
        if f["rule"]
        in {
            "besteffort-qos",
            "missing-memory-request",
            "missing-memory-limit",
            "suspicious-quantity",
            "request-exceeds-limit",
            "invalid-quantity",
            "unknown-ignore-rule",
            "memory-overcommit-ratio",
        }
    ]
    assert got == [
        ("besteffort-qos", 8, 5, "spec.template.spec"),
        ("missing-memory-request", 13, 11, "spec.template.spec.containers[0].resources"),
        ("missing-memory-limit", 14, 13, "spec.template.spec.containers[0].resources.limits"),
        ("suspicious-quantity", 42, 20, "spec.template.spec.containers[0].resources.requests.cpu"),
        ("request-exceeds-limit", 43, 23, "spec.template.spec.containers[0].resources.requests.memory"),
        ("invalid-quantity", 46, 34, "spec.template.spec.containers[0].resources.limits.ephemeral-storage"),
        ("unknown-ignore-rule", 53, 28, 'metadata.annotations["kubelint-ml.io/ignore"]'),
        ("missing-memory-limit", 56, 7, "spec.initContainers[0]"),
        ("memory-overcommit-ratio", 66, 11, "spec.containers[0].resources.limits.memory"),
    ]
    f0 = data["findings"][0]
    assert f0["object"] == {"apiVersion": "batch/v1", "kind": "Job", "namespace": "", "name": "gpu-only"}
    assert f0["severity"] == "error"  # accelerator pod escalation
    assert f0["file"] == "fixtures/qos/family1.yaml"
    assert f0["remediation"]
    assert data["summary"]["suppressed"] == 1
    assert data["suppressed"] == []


def test_text_format_and_summary(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/qos/family1.yaml", "--no-color"])
    lines = r.output.splitlines()
    assert lines[:3] == [
        "fixtures/qos/family1.yaml",
        "  Job gpu-only",
        "    8:5    error    besteffort-qos           BestEffort QoS: no cpu or memory requests or limits (GPU pod)",
    ]
    assert lines[-1] == "4 errors, 6 warnings, 2 info in 1 of 1 file (1 suppressed)"
    assert "\x1b[" not in r.output


def test_show_suppressed_lists_them_with_reason(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/qos/family1.yaml", "--show-suppressed", "--format", "json"])
    sup = json.loads(r.output)["suppressed"]
    assert [(f["rule"], f["line"], f["suppressed"]) for f in sup] == [
        ("missing-memory-request", 56, "scratch pod reviewed by infra")
    ]


def test_fail_levels_and_exit_codes(tmp_path):
    warn_only = tmp_path / "w.yaml"
    warn_only.write_text(GOOD.replace('limits: {cpu: "1", memory: 1Gi}', "requests: {memory: 1Gi}"))
    assert run(["check", str(warn_only)]).exit_code == 0
    assert run(["check", str(warn_only), "--fail-level", "warning"]).exit_code == 1
    good = tmp_path / "g.yaml"
    good.write_text(GOOD)
    r = run(["check", str(good), "--fail-level", "info"])
    assert r.exit_code == 0, r.output
    assert r.output.strip().endswith("no findings in 1 file")


def test_usage_errors_exit_2(tmp_path):
    assert run(["check", str(tmp_path / "missing.yaml")]).exit_code == 2
    assert run(["check", ".", "--format", "xml"]).exit_code == 2
    assert run(["check", ".", "--disable", "no-such-rule"]).exit_code == 2


def test_parse_errors_exit_1_and_other_documents_still_linted(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        GOOD + "---\n- not a mapping\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: 3\n"
    )
    other = tmp_path / "other.yaml"
    other.write_text("a: [1\n")
    third = tmp_path / "third.yaml"
    third.write_text(GOOD.replace("limits", "requests"))
    r = run(["check", str(tmp_path), "--format", "json"])
    assert r.exit_code == 1
    got = [
        (Path(f["file"]).name, f["rule"], f["line"])
        for f in json.loads(r.output)["findings"]
        if f["rule"] in ("parse-error", "missing-memory-limit")
    ]
    assert got == [
        ("bad.yaml", "parse-error", 12),
        ("bad.yaml", "parse-error", 18),
        ("other.yaml", "parse-error", 2),
        ("third.yaml", "missing-memory-limit", 9),
    ]


def test_stdin(tmp_path):
    r = run(["check", "-", "--format", "json"], input=GOOD.replace("limits", "requests"))
    assert [
        (f["file"], f["rule"], f["line"])
        for f in json.loads(r.output)["findings"]
        if f["rule"].startswith("missing-memory")
    ] == [("<stdin>", "missing-memory-limit", 9)]


def test_stdin_over_the_size_limit_is_reported_not_read_again(tmp_path, monkeypatch):
    (tmp_path / ".kubelint-ml.yaml").write_text("limits:\n  maxFileBytes: 1024\n")
    monkeypatch.chdir(tmp_path)
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n" + "".join(
        f"  key{i}: value-{i:04d}\n" for i in range(80)
    )
    assert 1024 < len(big) < 2048
    r = run(["check", "-", "--format", "json"], input=big)
    found = [(f["file"], f["rule"], f["line"], f["message"]) for f in json.loads(r.output)["findings"]]
    assert found == [
        ("<stdin>", "parse-error", 1, "file is over the 1024-byte limit (limits.maxFileBytes); not linted")
    ]


def test_helm_template_is_a_parse_error(tmp_path):
    f = tmp_path / "deployment.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    r = run(["check", str(f), "--format", "json"])
    (finding,) = json.loads(r.output)["findings"]
    assert finding["rule"] == "parse-error" and finding["line"] == 4
    assert "helm template" in finding["message"]


def test_config_overrides_excludes_and_profile(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text(Path(FAMILY1).read_text())
    (tmp_path / ".kubelint-ml.yaml").write_text(
        "overrides:\n  suspicious-quantity: {severity: error}\n  memory-overcommit-ratio: {params: {ratio: 20}}\n"
        "disable: [missing-memory-request]\n"
        "exclude:\n  - {kind: Job, rule: besteffort-qos, reason: batch team}\n"
    )
    monkeypatch.chdir(tmp_path)
    r = run(["check", "m.yaml", "--format", "json", "--show-suppressed"])
    data = json.loads(r.output)
    rules = [(f["rule"], f["severity"]) for f in data["findings"]]
    assert ("suspicious-quantity", "error") in rules
    assert not any(rule == "memory-overcommit-ratio" for rule, _ in rules)
    assert not any(rule == "missing-memory-request" for rule, _ in rules)
    assert [(f["rule"], f["suppressed"]) for f in data["suppressed"]] == [("besteffort-qos", "batch team")]


@pytest.mark.parametrize(
    "config, message",
    [
        ("failLevel: fatal\n", "failLevel: 'fatal' is not one of"),
        ("profile: {kubernetesVersion: 1.30}\n", "profile.kubernetesVersion: 1.3 is not of type 'string'"),
        ("overrides: {memory-overcommit-ratio: {params: {ratio: 0.5}}}\n", "ratio: 0.5 is less than or equal"),
        ("enable: [no-such-rule]\n", "unknown rule id 'no-such-rule'"),
        ("exclude: [{}]\n", "exclude.0"),
        ("a: [1\n", "invalid YAML"),
        ("profile: {nodePools: [{name: a, memory: banana}]}\n", "nodePools[a].memory: 'banana' is not a quantity"),
        (
            "profile: {nodePools: [{name: p4, instanceType: p4d.24xlarge, memory: banana}]}\n",
            "nodePools[p4].memory: 'banana' is not a quantity",
        ),
    ],
)
def test_invalid_config_is_a_clear_error(tmp_path, monkeypatch, config, message):
    (tmp_path / ".kubelint-ml.yaml").write_text(config)
    (tmp_path / "m.yaml").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    r = run(["check", "m.yaml"])
    assert r.exit_code == 2
    assert message in r.output
    assert ".kubelint-ml.yaml" in r.output
    assert "Traceback" not in r.output


CEL_RULE = """id: require-team-label
severity: warning
title: Training jobs carry a team label
description: Cost reports group GPU hours by the team label.
remediation: Add metadata.labels.team.
scope:
  unit: object
  kinds: [Job]
check:
  cel: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  messageExpression: "'Job ' + object.metadata.name + ' has no team label'"
  path: metadata
examples:
  fail:
    - manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
        spec: {}
      findings:
        - line: 3
          message: "Job train has no team label"
  pass:
    - manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
          labels: {team: nlp}
"""


def _cel_available():
    from kubelint_ml.engine.cel import available

    return available()


@pytest.mark.skipif(not _cel_available(), reason="CEL runtime needs Python >= 3.11")
def test_custom_cel_rule_fires_with_line(tmp_path):
    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "require-team-label.yaml").write_text(CEL_RULE)
    m = tmp_path / "jobs.yaml"
    m.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\nspec: {}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: b\n  labels: {team: x}\nspec: {}\n"
    )
    r = run(["check", str(m), "--rules", str(rules), "--format", "json"])
    got = [
        (f["rule"], f["line"], f["message"])
        for f in json.loads(r.output)["findings"]
        if f["rule"] == "require-team-label"
    ]
    assert got == [("require-team-label", 3, "Job a has no team label")]
    v = run(["rules", "verify", str(rules)])
    assert v.exit_code == 0 and "1 passed, 0 failed" in v.output


@pytest.mark.skipif(not _cel_available(), reason="CEL runtime needs Python >= 3.11")
def test_broken_cel_rule_is_a_one_line_error(tmp_path):
    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "bad.yaml").write_text(CEL_RULE.replace("'team' in object.metadata.labels", "object.metadata.(labels"))
    (tmp_path / "m.yaml").write_text(GOOD)
    r = run(["check", str(tmp_path / "m.yaml"), "--rules", str(rules)])
    assert r.exit_code == 2
    (line,) = r.output.strip().splitlines()
    assert "bad.yaml" in line and "require-team-label" in line and "check.cel" in line


def test_malformed_rule_file_names_file_and_field(tmp_path):
    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "x.yaml").write_text(CEL_RULE.replace("severity: warning", "severity: fatal"))
    (tmp_path / "m.yaml").write_text(GOOD)
    r = run(["check", str(tmp_path / "m.yaml"), "--rules", str(rules)])
    assert r.exit_code == 2
    assert "x.yaml: severity: 'fatal' is not one of" in r.output


def test_rules_list_show_and_verify():
    r = run(["rules", "list"])
    assert r.exit_code == 0
    assert any(line.startswith("besteffort-qos ") for line in r.output.splitlines())
    j = json.loads(run(["rules", "list", "--format", "json"]).output)
    assert {"id": "invalid-quantity", "severity": "error"}.items() <= next(
        x for x in j if x["id"] == "invalid-quantity"
    ).items()
    md = run(["rules", "list", "--format", "markdown"]).output
    assert md.startswith("| id | severity | family | what it finds |")
    show = run(["rules", "show", "suspicious-quantity"])
    assert "memory: 500m" in show.output and "Fails" in show.output and "Passes" in show.output
    assert run(["rules", "show", "nope"]).exit_code == 2
    v = run(["rules", "verify"])
    assert v.exit_code == 0, v.output
    assert " 0 failed" in v.output


def test_init_writes_a_valid_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(["init"])
    assert r.exit_code == 0
    assert Path(".kubelint-ml.yaml").exists()
    assert run(["init"]).exit_code == 2
    Path("m.yaml").write_text(GOOD)
    assert run(["check", "m.yaml"]).exit_code == 0


def test_several_outputs_in_one_run(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    sarif = tmp_path / "out.sarif"
    r = run(
        [
            "check",
            "fixtures/qos/family1.yaml",
            "--format",
            "text",
            "--output",
            "-",
            "--format",
            "sarif",
            "--output",
            str(sarif),
        ]
    )
    assert r.exit_code == 1
    assert "besteffort-qos" in r.output
    doc = json.loads(sarif.read_text())
    assert doc["version"] == "2.1.0"
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 8


def test_baseline_adopts_existing_findings_and_blocks_new_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    manifest = Path("m.yaml")
    manifest.write_text(Path(FAMILY1).read_text())
    r = run(["check", "m.yaml", "--write-baseline", "baseline.json"])
    assert r.exit_code == 0
    again = run(["check", "m.yaml", "--baseline", "baseline.json", "--format", "json"])
    assert again.exit_code == 0
    data = json.loads(again.output)
    assert data["findings"] == [] and data["summary"]["baselined"] > 0
    # unrelated edit: lines shift, nothing new
    manifest.write_text("# a comment\n# another\n" + manifest.read_text())
    assert (
        json.loads(run(["check", "m.yaml", "--baseline", "baseline.json", "--format", "json"]).output)["findings"] == []
    )
    # one new bad field: exactly one new finding
    manifest.write_text(manifest.read_text().replace("memory: 100Mi", "memory: 100MB"))
    new = json.loads(run(["check", "m.yaml", "--baseline", "baseline.json", "--format", "json"]).output)["findings"]
    assert [(f["rule"], f["line"]) for f in new] == [("invalid-quantity", 66)]
    bad = Path("bad.json")
    bad.write_text("{")
    assert run(["check", "m.yaml", "--baseline", "bad.json"]).exit_code == 2


def test_bundled_example_of_the_readme(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run(["check", "fixtures/examples/", "--format", "json"])
    assert r.exit_code == 1
    got = [(f["line"], f["rule"]) for f in json.loads(r.output)["findings"]]
    assert got == [
        (17, "missing-priority-class"),
        (21, "shm-too-small-for-workers"),
        (26, "invalid-quantity"),
        (32, "missing-priority-class"),
        (40, "missing-ephemeral-storage-request"),
        (42, "gpu-memory-share-mismatch"),
        (46, "shm-too-small-for-workers"),
        (51, "emptydir-no-size-limit"),
    ]


def test_schema_validation_through_the_cli(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run(
        [
            "check",
            "fixtures/schema/tfjob-invalid.yaml",
            "--schema",
            "--crd",
            "fixtures/schema/",
            "--strict",
            "--format",
            "json",
        ]
    )
    got = [(f["line"], f["path"]) for f in json.loads(r.output)["findings"] if f["rule"] == "schema-invalid"]
    assert got == [
        (6, "metadata.labels.version"),
        (9, "spec.runPolicy.backoffLimit"),
        (10, "spec.runPolicy.cleanPodPolicy"),
        (13, "spec.runPolicy.schedulingPolicy.minResources.cpu"),
        (14, "spec.runPolicy.schedulingPolicy.minResources.memory"),
        (17, "spec.tfReplicaSpecs.Chief.replicas"),
        (24, "spec.tfReplicaSpecs.Workers"),
    ]
    no_crd = run(["check", "fixtures/schema/tfjob-valid.yaml", "--schema", "--format", "json"])
    assert [f for f in json.loads(no_crd.output)["findings"] if f["rule"] == "schema-invalid"] == []
    notes = [f for f in json.loads(no_crd.output)["findings"] if f["rule"] == "schema-unavailable"]
    assert [(n["severity"], n["line"]) for n in notes] == [("info", 2)]
    assert "no schema for kubeflow.org/v1 TFJob" in notes[0]["message"]
    bad = run(["check", "fixtures/schema/tfjob-valid.yaml", "--schema", "--kubernetes-version", "1.99"])
    from kubelint_ml.k8s.schema import bundled_versions

    # Which versions are bundled is the installed kubernetes-validate's: the message lists them all.
    assert bad.exit_code == 2 and f"bundled: {', '.join(bundled_versions())}\n" in bad.output


def test_unusable_crd_and_baseline_paths_exit_2(tmp_path):
    fixture = str(Path(__file__).resolve().parent.parent / "fixtures" / "examples")
    for args, message in [
        (["--schema", "--crd", "-"], "--crd: give a file or directory"),
        (["--write-baseline", str(tmp_path / "missing" / "b.json")], "cannot write baseline"),
    ]:
        r = run(["check", fixture, *args])
        assert r.exit_code == 2, r.output
        assert message in r.stderr


def test_rules_list_marks_rules_off_by_default():
    rules = {r["id"]: r for r in json.loads(run(["rules", "list", "--format", "json"]).output)}
    assert rules["gpu-node-unresolved"]["enabled"] is False
    assert rules["missing-memory-limit"]["enabled"] is True


POD_LEVEL_ONLY = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {cpu: "1", memory: 1Gi}
  containers:
  - name: c
    image: busybox
"""


def test_kubernetes_version_flag_sets_the_clusters_version_for_the_rules(tmp_path):
    """`--kubernetes-version 1.33` judges as a 1.33 cluster does: the API server drops pod-level
    resources, so the pod is BestEffort; without the flag (the newest version) it is Guaranteed."""
    f = tmp_path / "pod.yaml"
    f.write_text(POD_LEVEL_ONLY)

    def found(*extra):
        r = run(["check", str(f), "--format", "json", "--disable", "missing-priority-class", *extra])
        assert r.exit_code in (0, 1), r.output
        return sorted((x["rule"], x["line"]) for x in json.loads(r.output)["findings"])

    assert found() == []
    dropped = [
        ("besteffort-qos", 5),
        ("missing-memory-limit", 10),
        ("missing-memory-request", 10),
        ("pod-level-resources-invalid", 6),
    ]
    assert found("--kubernetes-version", "1.33") == dropped
    assert found("--kubernetes-version", "v1.33.4") == dropped
    assert found("--kubernetes-version", "1.34") == []
    bad = run(["check", str(f), "--kubernetes-version", "one.thirty"])
    assert bad.exit_code == 2 and "not a Kubernetes version" in bad.stderr


def test_an_object_without_api_version_is_refused_and_still_linted(tmp_path):
    # kubectl refuses it ("Object 'apiVersion' is missing"): a parse-error at its kind, and what else
    # the object gets wrong is still said; kustomize's own files may leave apiVersion out
    f = tmp_path / "pod.yaml"
    f.write_text("kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n")
    r = run(["check", str(f), "--format", "json"])
    assert r.exit_code == 1, r.output
    found = sorted((x["rule"], x["line"], x["severity"]) for x in json.loads(r.output)["findings"])
    assert found == [
        ("besteffort-qos", 3, "warning"),
        ("missing-memory-limit", 5, "warning"),
        ("missing-memory-request", 5, "warning"),
        ("missing-priority-class", 3, "warning"),
        ("parse-error", 1, "error"),
    ]
    assert "apiVersion is not set (Pod)" in json.loads(r.output)["findings"][0]["message"]
    k = tmp_path / "overlay.yaml"
    k.write_text("kind: Kustomization\nnamePrefix: dev-\n")
    r = run(["check", str(k), "--format", "json"])
    assert [x for x in json.loads(r.output)["findings"] if x["rule"] == "parse-error"] == []
