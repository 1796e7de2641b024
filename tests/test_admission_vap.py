"""``kubelint-ml export vap``: the policies, and the equivalence of every exported expression with the linter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "fixtures" / "admission" / "kubelint-ml.yaml"

needs_cel = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11"
)


def _export(config: Path) -> tuple[int, list[dict], str, str]:
    r = CliRunner().invoke(main, ["export", "vap", "--config", str(config)])
    docs = [d for d in yaml.safe_load_all(r.stdout)] if r.exit_code == 0 else []
    return r.exit_code, [d for d in docs if d], r.stdout, r.stderr


@needs_cel
def test_export_writes_a_policy_and_binding_per_exportable_rule():
    code, docs, out, err = _export(CONFIG)
    assert code == 0, err
    kinds = [(d["kind"], d["metadata"]["name"]) for d in docs]
    names = [
        "container-memory-cap",
        "image-tag-pinned",
        "node-selector-pool",
        "restart-policy-invalid",
        "shm-size-limit",
        "team-label",
    ]
    assert kinds == [
        (k, f"kubelint-ml-{n}")
        for n in names
        for k in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
    ]
    assert all(d["apiVersion"] == "admissionregistration.k8s.io/v1" for d in docs)
    actions = {
        d["metadata"]["name"]: d["spec"]["validationActions"]
        for d in docs
        if d["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    assert actions == {
        "kubelint-ml-container-memory-cap": ["Deny"],
        "kubelint-ml-image-tag-pinned": ["Audit"],
        "kubelint-ml-node-selector-pool": ["Warn"],
        "kubelint-ml-restart-policy-invalid": ["Deny"],
        "kubelint-ml-shm-size-limit": ["Warn"],
        "kubelint-ml-team-label": ["Warn"],
    }
    team = next(
        d
        for d in docs
        if d["metadata"]["name"] == "kubelint-ml-team-label" and d["kind"] == "ValidatingAdmissionPolicy"
    )
    assert team["spec"]["failurePolicy"] == "Fail"
    assert team["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    cap = next(
        d
        for d in docs
        if d["metadata"]["name"] == "kubelint-ml-container-memory-cap" and d["kind"] == "ValidatingAdmissionPolicy"
    )
    resources = {
        (g, r)
        for rr in cap["spec"]["matchConstraints"]["resourceRules"]
        for g in rr["apiGroups"]
        for r in rr["resources"]
    }
    assert {
        ("batch", "jobs"),
        ("kubeflow.org", "pytorchjobs"),
        ("batch.volcano.sh", "jobs"),
        ("", "pods"),
        ("ray.io", "rayclusters"),
        ("jobset.x-k8s.io", "jobsets"),
    } <= resources
    assert len(cap["spec"]["validations"]) == 25  # one per kind with pod templates
    # the rules not exported, with the reason
    assert "#   priority-class-known: reads `objects`" in out
    assert "#   besteffort-qos: the QoS class after Pod defaulting" in out
    from kubelint_ml.admission.review import load_policy

    enabled = len(load_policy(str(CONFIG)).engine.rules)
    assert f"6 rule(s) exported; {enabled - 6} not exported" in err
    restart = next(
        d
        for d in docs
        if d["metadata"]["name"] == "kubelint-ml-restart-policy-invalid" and d["kind"] == "ValidatingAdmissionPolicy"
    )
    assert len(restart["spec"]["validations"]) == 5  # Job, CronJob, JobSet and the two Trainer runtimes


def test_every_builtin_template_has_a_reason():
    from kubelint_ml.admission.vap import BUILTIN_EXPORTS, BUILTIN_REASONS
    from kubelint_ml.engine.rulefile import available_templates

    assert set(available_templates()) <= set(BUILTIN_REASONS) | set(BUILTIN_EXPORTS)


@needs_cel
def test_policies_and_usage_rules_are_listed_with_the_reason(tmp_path):
    policies = ROOT / "fixtures" / "policies"
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "rules": [str(policies / "conftest"), str(policies / "gatekeeper")],
                "usage": {"snapshot": str(ROOT / "fixtures" / "fix-usage" / "snapshot.json")},
            }
        )
    )
    code, docs, out, err = _export(config)
    assert code == 0, err
    assert [d["metadata"]["name"] for d in docs] == ["kubelint-ml-restart-policy-invalid"] * 2
    listed = dict(line[4:].split(": ", 1) for line in out.splitlines() if line.startswith("#   "))
    for rid in ("main.deny", "main.warn", "gpu.deny_too_many_gpus", "gpu.warn_latest", "gpu.deny_cost_center"):
        assert listed[rid].startswith("a Rego rule: the API server evaluates CEL only")
    assert listed["K8sGpuJobDeadline/gpu-jobs-end"].startswith("a Gatekeeper constraint with a Rego template")
    assert "generateVAP" in listed["K8sTeamLabel/known-team"]
    for rid in ("memory-limit-below-peak", "memory-request-below-median", "gpu-memory-underused"):
        assert listed[rid].startswith("observed usage")
    assert "1 rule(s) exported; 35 not exported" in err  # 24 built-ins, 4 usage rules, 5 Rego rules, 2 constraints


@needs_cel
def test_profile_version_gates_the_export(tmp_path):
    (tmp_path / "rules").symlink_to(CONFIG.parent / "rules")
    old = tmp_path / "old.yaml"
    old.write_text("rules: [rules/]\nprofile: {kubernetesVersion: '1.29'}\n")
    code, docs, out, _ = _export(old)
    assert code == 0 and docs == [] and "needs Kubernetes 1.30; the profile says 1.29" in out
    none = tmp_path / "none.yaml"
    none.write_text("rules: [rules/]\n")
    code, docs, out, _ = _export(none)
    assert code == 0 and len(docs) == 12 and "Kubernetes 1.30 (no profile.kubernetesVersion" in out


@needs_cel
def test_excludes_become_match_conditions_and_selectors(tmp_path):
    (tmp_path / "rules").symlink_to(CONFIG.parent / "rules")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "rules": ["rules/"],
                "profile": {"kubernetesVersion": "1.31"},
                "exclude": [
                    {"namespace": "kube-system"},
                    {"kind": "Pod", "name": "smoke-*", "rule": "team-label"},
                    {"path": "charts/**"},
                    {"kind": "Job", "rule": "shm-size-limit"},
                ],
                "admission": {"excludeNamespaces": ["sandbox"], "excludeLabels": {"skip": "*", "tier": "dev"}},
                "overrides": {"image-tag-pinned": {"severity": "warning"}},
            }
        )
    )
    code, docs, _, err = _export(cfg)
    assert code == 0, err
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    team = by[("ValidatingAdmissionPolicy", "kubelint-ml-team-label")]["spec"]["matchConditions"]
    assert [c["expression"] for c in team] == [
        '!(request.namespace == "kube-system")',
        '!(object.kind == "Pod" && has(object.metadata.name) && object.metadata.name.matches("^smoke\\\\-.*$"))',
    ]
    shm = by[("ValidatingAdmissionPolicy", "kubelint-ml-shm-size-limit")]["spec"]["matchConditions"]
    assert [c["expression"] for c in shm] == ['!(request.namespace == "kube-system")', '!(object.kind == "Job")']
    binding = by[("ValidatingAdmissionPolicyBinding", "kubelint-ml-team-label")]["spec"]
    assert binding["matchResources"] == {
        "namespaceSelector": {
            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["sandbox"]}]
        },
        "objectSelector": {
            "matchExpressions": [
                {"key": "skip", "operator": "DoesNotExist"},
                {"key": "tier", "operator": "NotIn", "values": ["dev"]},
            ]
        },
    }
    assert by[("ValidatingAdmissionPolicyBinding", "kubelint-ml-image-tag-pinned")]["spec"]["validationActions"] == [
        "Warn"
    ]
    # every match condition compiles
    from kubelint_ml.engine.cel import compile_expression

    for cond in team + shm:
        prog = compile_expression(cond["expression"], ("object", "request"))
        assert prog.evaluate(
            {"object": {"kind": "Job", "metadata": {"name": "smoke-1"}}, "request": {"namespace": "ml"}}
        ) in (True, False)


# ----------------------------------------------------------------------------
# Equivalence


def _as_served(value):
    """As the API server hands an object to admission: JSON with null fields dropped (decoding drops them)."""
    if isinstance(value, dict):
        return {k: _as_served(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_as_served(v) for v in value if v is not None]
    return value


def _samples(corpus: Path) -> list[tuple[str, dict]]:
    """Every rule's examples (built-in and custom), the fixtures and the corpus, as the API server sends them."""
    from kubelint_ml.engine.rulefile import load_builtin_rules, load_rules_dir

    out: list[tuple[str, dict]] = []

    def add(where: str, text: str | bytes) -> None:
        try:
            docs = list(yaml.safe_load_all(text))
        except (yaml.YAMLError, ValueError):
            return
        for i, doc in enumerate(docs):
            if isinstance(doc, dict) and isinstance(doc.get("kind"), str):
                out.append((f"{where}#{i}", _as_served(json.loads(json.dumps(doc, default=str)))))

    for rule in load_builtin_rules() + load_rules_dir(CONFIG.parent / "rules"):
        for verdict in ("fail", "pass"):
            for n, ex in enumerate(rule.examples.get(verdict, [])):
                add(f"{rule.id}:{verdict}[{n}]", ex["manifest"])
    for path in sorted((ROOT / "fixtures").rglob("*.yaml")) + sorted(corpus.rglob("*.yaml")):
        add(str(path.relative_to(path.parents[2])), path.read_bytes())
    # suppressions and roles the fixtures do not show
    add(
        "ignore",
        """
apiVersion: batch/v1
kind: Job
metadata: {name: ignored, annotations: {kubelint-ml.io/ignore: "team-label=owned by infra, image-tag-pinned"}}
spec:
  template:
    metadata: {annotations: {kubelint-ml.io/ignore: "container-memory-cap"}}
    spec:
      initContainers: [{name: side, image: "envoy", restartPolicy: Always}, {name: init, image: busybox}]
      containers: [{name: c, image: "x:latest", resources: {limits: {memory: 2Ti}}}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
""",
    )
    return out


def _linter_verdict(findings: list, rule_id: str) -> tuple[str, set]:
    mine = [
        f
        for f in findings
        if f.suppressed is None
        and (f.rule == rule_id or (f.rule == "cel-evaluation-error" and f"rule {rule_id}:" in f.message))
    ]
    failed = [f for f in mine if f.rule == rule_id]
    names = {f.container for f in failed if f.container}
    if failed:
        return "fail", names
    return ("error", names) if mine else ("pass", names)


@needs_cel
@pytest.mark.slow
def test_every_exported_expression_gives_the_linters_verdict(corpus):
    from kubelint_ml.admission.review import load_policy
    from kubelint_ml.admission.vap import TEMPLATE_KINDS, policy_documents
    from kubelint_ml.engine.cel import CelEvalError, compile_expression
    from kubelint_ml.run.lint import lint_text

    policy = load_policy(str(CONFIG))
    docs, _, _, _ = policy_documents(policy)
    policies = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"]
    rules = {r.id: r for r in policy.engine.rules}
    compiled = {}
    for p in policies:
        rid = p["metadata"]["labels"]["kubelint-ml.io/rule"]
        compiled[rid] = [
            (
                compile_expression(v["expression"], ("object", "request")),
                compile_expression(v["messageExpression"], ("object", "request")),
                v["message"],
            )
            for v in p["spec"]["validations"]
        ]
    assert sorted(compiled) == [
        "container-memory-cap",
        "image-tag-pinned",
        "node-selector-pool",
        "restart-policy-invalid",
        "shm-size-limit",
        "team-label",
    ]
    samples = _samples(corpus)
    assert len(samples) > 600
    counts = {rid: {"pass": 0, "fail": 0, "error": 0} for rid in compiled}
    judged = 0
    for where, obj in samples:
        text = yaml.safe_dump(obj, sort_keys=False).encode()
        findings = lint_text(text, [rules[rid] for rid in compiled])
        if any(f.rule == "parse-error" for f in findings):
            continue  # shape errors (`containers: 3`): the API server's schema rejects them first
        judged += 1
        api = str(obj.get("apiVersion", ""))
        in_table = (api.rpartition("/")[0], obj["kind"]) in TEMPLATE_KINDS
        for rid, programs in compiled.items():
            if rules[rid].unit != "object" and not in_table:
                continue  # a kind `check` finds templates in by their shape: no policy matches it
            want, names = _linter_verdict(findings, rid)
            results = []
            for prog, _, _ in programs:
                try:
                    results.append(prog.evaluate({"object": obj, "request": {}}))
                except CelEvalError:
                    results.append("error")
            got = "fail" if False in results else ("error" if "error" in results else "pass")
            counts[rid][got] += 1
            if want == "fail" and got == "error":
                got = "fail"  # cannot happen here (one unit fails, another errors): CEL may answer either
            assert got == want, f"{rid} on {where}: policy {got}, linter {want}"
            if got == "fail":
                for (_prog, msg, static), result in zip(programs, results):
                    if result is False:
                        try:
                            message = msg.evaluate({"object": obj, "request": {}})
                        except CelEvalError:  # the API server then uses the static message, as check does
                            assert static.startswith(f"{rid}: ")
                            continue
                        assert message.startswith(f"{rid}: ")
                        for name in names:
                            assert f"'{name}'" in message or f" {name}:" in message, (rid, where, message)
    assert judged > 600
    for rid, c in counts.items():  # every rule is seen passing and failing
        assert c["pass"] > 10 and c["fail"] > 0, (rid, c)
    assert counts["node-selector-pool"]["error"] > 100
