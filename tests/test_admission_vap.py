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
        "accelerator-request-limit-mismatch",
        "besteffort-qos",
        "besteffort-qos-accelerators",
        "container-memory-cap",
        "emptydir-memory-exceeds-limit",
        "emptydir-memory-unbounded",
        "emptydir-no-size-limit",
        "image-tag-pinned",
        "missing-memory-limit",
        "missing-memory-limit-accelerators",
        "missing-memory-request",
        "missing-priority-class",
        "node-selector-pool",
        "request-exceeds-limit",
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
        "kubelint-ml-accelerator-request-limit-mismatch": ["Deny"],
        "kubelint-ml-besteffort-qos": ["Warn"],
        "kubelint-ml-besteffort-qos-accelerators": ["Deny"],
        "kubelint-ml-container-memory-cap": ["Deny"],
        "kubelint-ml-emptydir-memory-exceeds-limit": ["Warn"],
        "kubelint-ml-emptydir-memory-unbounded": ["Deny"],
        "kubelint-ml-emptydir-no-size-limit": ["Warn"],
        "kubelint-ml-image-tag-pinned": ["Audit"],
        "kubelint-ml-missing-memory-limit": ["Warn"],
        "kubelint-ml-missing-memory-limit-accelerators": ["Deny"],
        "kubelint-ml-missing-memory-request": ["Warn"],
        "kubelint-ml-missing-priority-class": ["Warn"],
        "kubelint-ml-node-selector-pool": ["Warn"],
        "kubelint-ml-request-exceeds-limit": ["Deny"],
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
        ("batch.volcano.sh", "cronjobs"),
        ("", "pods"),
        ("ray.io", "rayclusters"),
        ("jobset.x-k8s.io", "jobsets"),
    } <= resources
    assert len(cap["spec"]["validations"]) == 26  # one per kind with pod templates
    # the rules not exported, with the reason
    assert "#   priority-class-known: reads `objects`" in out
    assert "#   shm-too-small-for-workers: process counts read from command lines" in out
    assert "#   parse-error: the API server decodes the object itself" in out  # the pseudo-rules too
    from kubelint_ml.admission.review import load_policy
    from kubelint_ml.engine.api import PSEUDO_RULES

    enabled = len(load_policy(str(CONFIG)).engine.rules)
    # the usage rules, not run without a usage source, are listed too
    assert f"15 rule(s) exported as 17 policies; {enabled - 15 + 4 + len(PSEUDO_RULES)} not exported" in err
    restart = next(
        d
        for d in docs
        if d["metadata"]["name"] == "kubelint-ml-restart-policy-invalid" and d["kind"] == "ValidatingAdmissionPolicy"
    )
    assert len(restart["spec"]["validations"]) == 5  # Job, CronJob, JobSet and the two Trainer runtimes


def test_every_builtin_template_has_a_reason():
    from kubelint_ml.admission.vap import BUILTIN_EXPORTS, BUILTIN_REASONS, TRANSLATED
    from kubelint_ml.engine.rulefile import available_templates

    assert set(available_templates()) <= set(BUILTIN_REASONS) | set(BUILTIN_EXPORTS) | set(TRANSLATED)
    assert not set(BUILTIN_REASONS) & (set(BUILTIN_EXPORTS) | set(TRANSLATED))


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
    assert "kubelint-ml-restart-policy-invalid" in [d["metadata"]["name"] for d in docs]
    listed = dict(line[4:].split(": ", 1) for line in out.splitlines() if line.startswith("#   "))
    for rid in ("main.deny", "main.warn", "gpu.deny_too_many_gpus", "gpu.warn_latest", "gpu.deny_cost_center"):
        assert listed[rid].startswith("a Rego rule: the API server evaluates CEL only")
    assert listed["K8sGpuJobDeadline/gpu-jobs-end"].startswith("a Gatekeeper constraint with a Rego template")
    assert "generateVAP" in listed["K8sTeamLabel/known-team"]
    usage_rules = (
        "memory-limit-below-peak",
        "memory-request-above-usage",
        "memory-request-below-median",
        "gpu-memory-underused",
    )
    for rid in usage_rules:
        assert listed[rid].startswith("observed usage")
    # the built-ins, 4 usage rules, 5 Rego rules, 2 constraints, 7 pseudo-rules
    assert "10 rule(s) exported as 12 policies; 51 not exported" in err
    # Without a usage source, the usage rules are not run, but the export still lists all four.
    config.write_text(yaml.safe_dump({}))
    code, _, out, err = _export(config)
    listed = dict(line[4:].split(": ", 1) for line in out.splitlines() if line.startswith("#   "))
    assert code == 0 and {rid for rid in usage_rules if listed.get(rid, "").startswith("observed usage")} == set(
        usage_rules
    )


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
    assert code == 0 and len(docs) == 34 and "Kubernetes 1.30 (no profile.kubernetesVersion" in out


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
    # the built-ins translated with spec.variables: test_builtin_policies_give_serves_verdict
    policies = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and not d["spec"].get("variables")]
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


# ----------------------------------------------------------------------------
# Built-in rules translated to CEL (kubelint_ml/admission/vapbuiltin.py)

BUILTIN_POLICIES = {
    "accelerator-request-limit-mismatch": "Deny",
    "besteffort-qos": "Warn",
    "besteffort-qos-accelerators": "Deny",
    "emptydir-memory-exceeds-limit": "Warn",
    "emptydir-memory-unbounded": "Deny",
    "emptydir-no-size-limit": "Warn",
    "missing-memory-limit": "Warn",
    "missing-memory-limit-accelerators": "Deny",
    "missing-memory-request": "Warn",
    "missing-priority-class": "Warn",
    "request-exceeds-limit": "Deny",
}


class _Compiled:
    """One exported policy, compiled as the API server would: variables, then the validation."""

    def __init__(self, doc: dict) -> None:
        from kubelint_ml.engine.cel import compile_expression

        names = ("object", "request", "variables")
        self.name = doc["metadata"]["name"]
        self.rule = doc["metadata"]["labels"]["kubelint-ml.io/rule"]
        self.severity = doc["metadata"]["annotations"]["kubelint-ml.io/severity"]
        self.variables = [(v["name"], compile_expression(v["expression"], names)) for v in doc["spec"]["variables"]]
        (validation,) = doc["spec"]["validations"]
        self.expression = compile_expression(validation["expression"], names)
        self.message = compile_expression(validation["messageExpression"], names)

    def evaluate(self, obj: dict) -> tuple[object, str]:
        """(True, "") when admitted, (False, message) when not, ("error", text) when an expression fails."""
        from kubelint_ml.engine.cel import CelEvalError

        values: dict = {}
        activation = {"object": obj, "request": {}, "variables": values}
        try:
            for name, program in self.variables:
                values[name] = program.evaluate(activation)
            if self.expression.evaluate(activation) is True:
                return True, ""
            return False, str(self.message.evaluate(activation))
        except CelEvalError as e:
            return "error", str(e)


def _builtin_policies(config: Path | None = None) -> tuple[object, list[_Compiled]]:
    from kubelint_ml.admission.review import load_policy
    from kubelint_ml.admission.vap import policy_documents

    policy = load_policy(str(config) if config else None)
    docs, _, _, _ = policy_documents(policy)
    return policy, [
        _Compiled(d) for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and d["spec"].get("variables")
    ]


def _serve_verdicts(policy, obj: dict) -> tuple[dict[str, set[str]], dict[str, set[str]]] | None:
    """(rule id -> severities of serve's unsuppressed findings, rule id -> the containers they name); None
    for an object the API server's schema refuses."""
    from kubelint_ml.admission.review import lint_object

    findings, _ = lint_object(policy, obj)
    if any(f.rule == "parse-error" for f in findings):
        return None
    out: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    for f in findings:
        if f.suppressed is None:
            out.setdefault(f.rule, set()).add(f.severity)
            if f.container:
                names.setdefault(f.rule, set()).add(f.container)
    return out, names


def _compare(policy, compiled: list[_Compiled], obj: dict, where: str, counts: dict) -> None:
    served = _serve_verdicts(policy, obj)
    if served is None:
        return
    want, names = served
    got: dict[str, set[str]] = {}
    messages: dict[str, str] = {}
    for c in compiled:
        result, message = c.evaluate(obj)
        assert result != "error", f"{c.name} on {where}: {message}"
        counts.setdefault(c.name, {True: 0, False: 0})[result] += 1
        if result is False:
            got.setdefault(c.rule, set()).add(c.severity)
            assert message.startswith(c.rule + ": "), (c.name, message)
            messages[c.rule] = messages.get(c.rule, "") + message
    for rule, message in messages.items():  # the denial names every container serve names
        for name in names.get(rule, ()):
            assert f"'{name}'" in message, (rule, where, name, message)
    for rule in {c.rule for c in compiled}:
        assert got.get(rule, set()) == want.get(rule, set()), (
            f"{rule} on {where}: policies {got.get(rule)}, serve {want.get(rule)}: {json.dumps(obj)[:2000]}"
        )


def test_builtin_policies_name_the_pod_templates_once(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("profile: {kubernetesVersion: '1.30'}\n")
    r = CliRunner().invoke(main, ["export", "vap", "--config", str(config), "--audit"])
    assert r.exit_code == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    policies = {
        d["metadata"]["name"][len("kubelint-ml-") :]: d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"
    }
    bindings = {
        d["metadata"]["name"][len("kubelint-ml-") :]: d for d in docs if d["kind"] != "ValidatingAdmissionPolicy"
    }
    for name, action in BUILTIN_POLICIES.items():
        assert bindings[name]["spec"]["validationActions"] == [action, "Audit"]
        spec = policies[name]["spec"]
        names = [v["name"] for v in spec["variables"]]
        assert names == (
            ["templates", "training", "judged", "failures"]
            if name == "missing-priority-class"
            else ["templates", "judged", "failures"]
        )
        templates = spec["variables"][0]["expression"].splitlines()
        assert (
            '  "batch/Job": (has(object.spec) && has(object.spec.template) ? [object.spec.template] : []),' in templates
        )
        assert '  "/Pod": [object],' in templates
        assert len(templates) == 2 + 26  # one line per kind with pod templates
        assert spec["validations"] == [
            {
                "expression": "size(variables.failures) == 0",
                "messageExpression": f"\"{policies[name]['metadata']['labels']['kubelint-ml.io/rule']}: \" + variables.failures.join('; ')",
                "message": spec["validations"][0]["message"],
                "reason": "Invalid",
            }
        ]
    # the multi-line expressions are written as literal blocks, for people to read
    assert "  - name: templates\n    expression: |-\n      {\n" in r.stdout
    assert policies["besteffort-qos-accelerators"]["metadata"]["annotations"]["kubelint-ml.io/pods"] == (
        "pod templates that use accelerators"
    )
    # an override of the severity: one policy, whatever the pods use
    config.write_text("overrides: {besteffort-qos: {severity: info}}\n")
    code, docs, out, err = _export(config)
    assert code == 0, err
    names = [d["metadata"]["name"] for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert "kubelint-ml-besteffort-qos" in names and "kubelint-ml-besteffort-qos-accelerators" not in names
    actions = {
        d["metadata"]["name"]: d["spec"]["validationActions"] for d in docs if d["kind"] != "ValidatingAdmissionPolicy"
    }
    assert actions["kubelint-ml-besteffort-qos"] == ["Audit"]


GPU_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - {name: fetch, image: busybox, resources: {limits: {memory: 1Gi}}}
      containers:
        - name: trainer
          image: pytorch
          resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 1}}
          volumeMounts: [{name: shm, mountPath: /dev/shm}, {name: scratch, mountPath: /scratch}]
      volumes:
        - {name: shm, emptyDir: {medium: Memory}}
        - {name: scratch, emptyDir: {}}
"""


@needs_cel
def test_builtin_policies_judge_a_gpu_job_as_serve_does():
    policy, compiled = _builtin_policies()
    obj = yaml.safe_load(GPU_JOB)
    results = {c.name[len("kubelint-ml-") :]: c.evaluate(obj) for c in compiled}
    failed = {name: message for name, (ok, message) in results.items() if ok is False}
    assert failed == {
        "accelerator-request-limit-mismatch": "accelerator-request-limit-mismatch: container 'trainer' requests 2 "
        "nvidia.com/gpu != limit 1",
        "emptydir-memory-unbounded": "emptydir-memory-unbounded: Memory emptyDir 'shm' has no sizeLimit and 'trainer' "
        "no memory limit",
        "emptydir-no-size-limit": "emptydir-no-size-limit: disk emptyDir 'scratch' has no sizeLimit and no "
        "ephemeral-storage limit",
        "missing-memory-limit-accelerators": "missing-memory-limit: container 'trainer' has no memory limit",
        "missing-memory-request": "missing-memory-request: container 'trainer' has no memory request or limit",
        "missing-priority-class": "missing-priority-class: pod template of containers 'fetch', 'trainer': no "
        "priorityClassName: pods run at the default priority",
    }
    _compare(policy, compiled, obj, "gpu job", {})
    # suppressed on the template: the policy admits it, as serve does
    obj["spec"]["template"]["metadata"] = {
        "annotations": {"kubelint-ml.io/ignore": "missing-memory-limit=sized by the runtime"}
    }
    assert {c.name: c.evaluate(obj)[0] for c in compiled}["kubelint-ml-missing-memory-limit-accelerators"] is True
    _compare(policy, compiled, obj, "gpu job, suppressed", {})


HAMI_POD = """
apiVersion: v1
kind: Pod
metadata: {name: npu}
spec:
  containers:
    - name: main
      image: img
      resources: {limits: RESOURCES}
"""


@needs_cel
@pytest.mark.parametrize(
    ("resources", "accelerator"),
    [
        ("{huawei.com/Ascend910B: 1, huawei.com/Ascend910B-memory: 4096}", True),
        ("{hygon.com/dcunum: 1, hygon.com/dcumem: 2000, hygon.com/dcucores: 60}", True),
        ("{enflame.com/vgcu: 1, enflame.com/vgcu-percentage: 22}", True),
        ("{iluvatar.ai/BI-V150-vgpu: 1, iluvatar.ai/BI-V150.vMem: 64}", True),
        ("{huawei.com/Ascend910B-memory: 4096}", False),  # an amount of a device's memory only
        # HAMi's webhook adds the device: nvidia.com/gpu for NVIDIA amounts in the limits, one Enflame slice
        ("{nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30}", True),
        ("{nvidia.com/gpumem-percentage: 50}", True),
        ("{nvidia.com/gpumem: '0.5'}", False),  # not a whole number: the API server rejects it, no device
        ("{enflame.com/gcu-core: 40}", True),
        ("{hygon.com/dcumem: 2000}", False),
        ("{gpu.intel.com/millicores: 100}", False),
    ],
)
def test_builtin_policies_judge_hami_devices_as_serve_does(resources, accelerator):
    policy, compiled = _builtin_policies()
    obj = yaml.safe_load(HAMI_POD.replace("RESOURCES", resources))
    results = {c.name[len("kubelint-ml-") :]: c.evaluate(obj)[0] for c in compiled}
    assert results["missing-memory-limit-accelerators"] is (not accelerator)
    _compare(policy, compiled, obj, resources, {})


def _random_objects(seed: int, count: int) -> list[dict]:
    """Objects of the kinds with pod templates, with resources, volumes and priorities drawn at random:
    pod-level resources, sidecars, hugepages, numbers where strings usually are, zeros, DRA claims."""
    import random

    rnd = random.Random(seed)
    values = ["0", "1", "2", "500m", "1Gi", "2Gi", "0.5", 1, 2, 0, 0.5, "1.5", "100Mi", "4", 8, "3Gi", "8Gi", "1e3"]
    resources = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "amd.com/gpu",
        "example.com/foo",
        "hugepages-2Mi",
    ]
    volumes = ["shm", "scratch", "data"]

    def rlist(names=resources):
        return {r: rnd.choice(values) for r in rnd.sample(names, rnd.randint(0, 3 if len(names) > 2 else 2))}

    def container(name, init=False):
        c: dict = {"name": name, "image": "img"}
        if rnd.random() < 0.8:
            c["resources"] = {part: rlist() for part in ("requests", "limits") if rnd.random() < 0.6}
            if rnd.random() < 0.05:
                c["resources"]["claims"] = [{"name": "gpu"}]
        if rnd.random() < 0.5:
            c["volumeMounts"] = [{"name": v, "mountPath": "/" + v} for v in rnd.sample(volumes, rnd.randint(1, 2))]
        if init and rnd.random() < 0.5:
            c["restartPolicy"] = "Always"
        return c

    def volume(name):
        ed: dict = {}
        if rnd.random() < 0.5:
            ed["medium"] = rnd.choice(["Memory", "", "Memory"])
        if rnd.random() < 0.5:
            ed["sizeLimit"] = rnd.choice(["0", "1Gi", "4Gi", "500Mi", "64Gi", 0])
        return {"name": name, "emptyDir": ed}

    def meta(name):
        m: dict = {"name": name}
        if rnd.random() < 0.15:
            m["labels"] = {
                rnd.choice(["kueue.x-k8s.io/priority-class", "priorityClassName", "ray.io/priority-class-name"]): "p"
            }
        if rnd.random() < 0.1:
            m["annotations"] = {
                "kubelint-ml.io/ignore": rnd.choice(
                    ["*", "besteffort-qos", "missing-memory-limit=x, emptydir-no-size-limit"]
                )
            }
        return m

    def spec():
        ps: dict = {"containers": [container(f"c{i}") for i in range(rnd.randint(1, 3))]}
        if rnd.random() < 0.3:
            ps["initContainers"] = [container(f"i{i}", True) for i in range(rnd.randint(1, 2))]
        if rnd.random() < 0.25:
            ps["resources"] = {part: rlist(["cpu", "memory"]) for part in ("requests", "limits") if rnd.random() < 0.7}
        if rnd.random() < 0.6:
            ps["volumes"] = [volume(v) for v in rnd.sample(volumes, rnd.randint(1, 3))]
        if rnd.random() < 0.3:
            ps["priorityClassName"] = rnd.choice(["high", " ", ""])
        if rnd.random() < 0.1:
            ps["schedulerName"] = "kai-scheduler"
        if rnd.random() < 0.05:
            ps["resourceClaims"] = [{"name": "x"}]
        return ps

    def tpl():
        return {"metadata": meta("t"), "spec": spec()}

    def obj():
        kind = rnd.choice(
            [
                "Pod",
                "Job",
                "CronJob",
                "Deployment",
                "PyTorchJob",
                "JobSet",
                "RayJob",
                "Volcano",
                "VolcanoCron",
                "Runtime",
                "LWS",
            ]
        )
        if kind == "Pod":
            return {"apiVersion": "v1", "kind": "Pod", "metadata": meta("p"), "spec": spec()}
        if kind == "Job":
            return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("j"), "spec": {"template": tpl()}}
        if kind == "CronJob":
            job = {"metadata": meta("jt"), "spec": {"template": tpl()}}
            return {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": meta("cj"),
                "spec": {"schedule": "@daily", "jobTemplate": job},
            }
        if kind == "Deployment":
            return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"), "spec": {"template": tpl()}}
        if kind == "PyTorchJob":
            specs = {"Master": {"replicas": 1, "template": tpl()}, "Worker": {"replicas": 2, "template": tpl()}}
            return {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "metadata": meta("pj"),
                "spec": {"pytorchReplicaSpecs": specs},
            }
        if kind == "JobSet":
            jobs = [{"name": "w", "template": {"spec": {"template": tpl()}}}]
            return {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "metadata": meta("js"),
                "spec": {"replicatedJobs": jobs},
            }
        if kind == "Runtime":
            jobs = [{"name": n, "template": {"spec": {"template": tpl()}}} for n in ("node", "initializer")]
            return {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainingRuntime",
                "metadata": meta("tr"),
                "spec": {"template": {"spec": {"replicatedJobs": jobs}}},
            }
        if kind == "RayJob":
            cluster = {
                "headGroupSpec": {"template": tpl()},
                "workerGroupSpecs": [{"groupName": "g", "template": tpl()}],
            }
            return {
                "apiVersion": "ray.io/v1",
                "kind": "RayJob",
                "metadata": meta("rj"),
                "spec": {"rayClusterSpec": cluster, "submitterPodTemplate": tpl()},
            }
        if kind == "Volcano":
            o = {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": meta("vj"),
                "spec": {"tasks": [{"name": "t", "template": tpl()}]},
            }
            if rnd.random() < 0.3:
                o["spec"]["priorityClassName"] = "p"
            return o
        if kind == "VolcanoCron":
            job = {"tasks": [{"name": "t", "template": tpl()}, {"name": "u", "template": tpl()}]}
            if rnd.random() < 0.3:
                job["priorityClassName"] = "p"
            return {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "CronJob",
                "metadata": meta("vc"),
                "spec": {"schedule": "@daily", "jobTemplate": {"spec": job}},
            }
        lwt = {"leaderTemplate": tpl(), "workerTemplate": tpl()}
        return {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": meta("l"),
            "spec": {"leaderWorkerTemplate": lwt},
        }

    return [obj() for _ in range(count)]


@needs_cel
@pytest.mark.slow
def test_builtin_policies_give_serves_verdict(corpus):
    """Every translated built-in's policies against serve's findings for that rule, with the severity (a
    warning is the Warn policy failing, an error the Deny one): the rule examples, the fixtures and the
    corpus, and objects drawn at random around the semantics (pod-level resources, sidecars, hugepages...)."""
    from kubelint_ml.admission.vap import TEMPLATE_KINDS

    policy, compiled = _builtin_policies()
    assert sorted(c.name[len("kubelint-ml-") :] for c in compiled) == sorted(BUILTIN_POLICIES)
    counts: dict = {}
    judged = 0
    for where, obj in _samples(corpus):
        if (str(obj.get("apiVersion", "")).rpartition("/")[0], obj["kind"]) in TEMPLATE_KINDS:
            judged += 1
            _compare(policy, compiled, obj, where, counts)
    for n, obj in enumerate(_random_objects(20261125, 600)):
        _compare(policy, compiled, obj, f"random object {n}", counts)
    assert judged > 500
    for name, c in counts.items():  # every policy is seen admitting and refusing
        assert c[True] > 20 and c[False] > 3, (name, c)


CRD_TEAM_RULE = """id: team-label
severity: error
title: Training jobs carry a team label
description: Cost reports group GPU hours by the team label.
remediation: Add metadata.labels.team.
scope: {unit: object, kinds: [KINDS]}
check:
  cel: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  message: no team label
examples:
  fail:
    - manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
      findings: [{line: 1}]
  pass:
    - manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, labels: {team: a}}
        spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
"""


@needs_cel
def test_custom_rule_scoped_to_kinds_matches_only_their_resources(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    crd = tmp_path / "crd.yaml"
    crd.write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: notebooks.kubeflow.org}\n"
        "spec:\n  group: kubeflow.org\n  names: {kind: Notebook, plural: notebooks, singular: notebook}\n"
        "  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"
    )
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"rules": [str(rules)], "context": [str(crd)]}))

    def exported(kinds: str):
        (rules / "team-label.yaml").write_text(CRD_TEAM_RULE.replace("KINDS", kinds))
        code, docs, out, err = _export(config)
        assert code == 0, err
        policy = next(
            (
                d
                for d in docs
                if d["metadata"]["name"] == "kubelint-ml-team-label" and d["kind"] == "ValidatingAdmissionPolicy"
            ),
            None,
        )
        listed = dict(line[4:].split(": ", 1) for line in out.splitlines() if line.startswith("#   "))
        return policy, listed

    policy, _ = exported("Job, kubeflow.org/PyTorchJob")
    # A bare kind names it in every group the tool knows it in (as `check` reads it): batch and Volcano.
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [
        {"apiGroups": ["batch"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["jobs"]},
        {
            "apiGroups": ["batch.volcano.sh"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["jobs"],
        },
        {
            "apiGroups": ["kubeflow.org"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["pytorchjobs"],
        },
    ]
    assert policy["spec"]["failurePolicy"] == "Fail"
    # The plural of a custom kind comes from its CRD among the context files.
    policy, _ = exported("batch/Job, kubeflow.org/Notebook")
    assert [(r["apiGroups"], r["resources"]) for r in policy["spec"]["matchConstraints"]["resourceRules"]] == [
        (["batch"], ["jobs"]),
        (["kubeflow.org"], ["notebooks"]),
    ]
    # A kind whose plural is unknown is named, never widened to every resource.
    policy, listed = exported("batch/Job, example.com/Widget")
    assert [(r["apiGroups"], r["resources"]) for r in policy["spec"]["matchConstraints"]["resourceRules"]] == [
        (["batch"], ["jobs"])
    ]
    assert listed["team-label (example.com/Widget)"].startswith("no resource (plural) known for example.com/Widget")
    policy, listed = exported("example.com/Widget")
    assert policy is None and listed["team-label"].startswith("no resource (plural) known for example.com/Widget")


DRA_CONTEXT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: train}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: prod}
spec: {spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: rdma.example.com}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-nic}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: rdma.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: big, deviceClassName: gpu.nvidia.com, count: 2}
      - {name: small, deviceClassName: mig.nvidia.com}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fast.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.amd.com'"}
  extendedResourceName: example.com/fast
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'rdma.example.com'"}
  extendedResourceName: example.com/nic
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-scratch.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'csi.example.com'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: scratch}
spec:
  spec:
    devices:
      requests:
      - name: d
        exactly: {deviceClassName: gpu-scratch.example.com}
"""


def _dra_objects(seed: int, count: int) -> list[dict]:
    """Pods and Jobs with DRA claims and DRA extended resources drawn at random."""
    import random

    rnd = random.Random(seed)
    claims = [
        {"resourceClaimTemplateName": "one-gpu"},
        {"resourceClaimTemplateName": "one-nic"},
        {"resourceClaimTemplateName": "scratch"},
        {"resourceClaimTemplateName": "missing"},
        {"resourceClaimName": "shared-gpu"},
        {"resourceClaimName": "one-gpu"},
        {"source": {"resourceClaimTemplateName": "one-gpu"}},
    ]
    names = [
        "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
        "deviceclass.resource.kubernetes.io/compute-domain-default-channel.nvidia.com",
        "deviceclass.resource.kubernetes.io/gpu.example.com",
        "deviceclass.resource.kubernetes.io/rdma-gpu.example.com",
        "deviceclass.resource.kubernetes.io/mig-2g.gpu.nvidia.com",
        "deviceclass.resource.kubernetes.io/fast.example.com",
        "deviceclass.resource.kubernetes.io/nic.example.com",
        "deviceclass.resource.kubernetes.io/thing.example.com",
        "deviceclass.resource.kubernetes.io/gpu-scratch.example.com",
        "deviceclass.resource.kubernetes.io/data-migration.example.com",
        "deviceclass.resource.kubernetes.io/mig-storage.example.com",
        "deviceclass.resource.kubernetes.io/mig-1g.10gb.example.com",
        "deviceclass.resource.kubernetes.io/gpudirect-rdma.example.com",
        "deviceclass.resource.kubernetes.io/nic.gpu.nvidia.com",
        "example.com/fast",
        "example.com/nic",
        "memory",
        "cpu",
    ]
    values = ["1", "0", 2, "1Gi", "500m"]

    def spec() -> dict:
        resources = {
            part: {n: rnd.choice(values) for n in rnd.sample(names, rnd.randint(0, 2))}
            for part in ("requests", "limits")
            if rnd.random() < 0.6
        }
        ps: dict = {"containers": [{"name": "c", "image": "x", "resources": resources}]}
        if rnd.random() < 0.6:
            ps["resourceClaims"] = [{"name": f"r{i}", **rnd.choice(claims)} for i in range(rnd.randint(1, 2))]
        return ps

    out = []
    for i in range(count):
        meta = {"name": f"o{i}"}
        namespace = rnd.choice([None, "train", "prod", "dev"])
        if namespace:
            meta["namespace"] = namespace
        if rnd.random() < 0.5:
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec()})
        else:
            tpl = {"spec": {**spec(), "restartPolicy": "Never"}}
            out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": tpl}})
    return out


@needs_cel
def test_builtin_policies_judge_dra_pods_as_serve_does(tmp_path):
    """With the claims and classes in the config's context, the policies raise the accelerator
    severities exactly where serve (and check) do; the export's header says what it assumes."""
    (tmp_path / "claims.yaml").write_text(DRA_CONTEXT)
    config = tmp_path / ".kubelint-ml.yaml"
    # 1.33: claims dropped; 1.35: claims, no DRA extended resources; 1.36: both (k8s/dra.py gates)
    for version in ("1.33", "1.35", "1.36"):
        config.write_text(f"context: [claims.yaml]\nprofile: {{kubernetesVersion: '{version}'}}\n")
        policy, compiled = _builtin_policies(config)
        counts: dict = {}
        for n, obj in enumerate(_dra_objects(20261127, 200)):
            _compare(policy, compiled, obj, f"DRA object {n} on {version}", counts)
        # both sides of the accelerator split were exercised; on 1.33 no DRA pod is an accelerator pod
        accelerators = counts["kubelint-ml-besteffort-qos-accelerators"][False]
        assert accelerators == 0 if version == "1.33" else accelerators > 5, version
        assert counts["kubelint-ml-besteffort-qos"][False] > 5, version
    code, _, out, err = _export(config)
    assert code == 0, err
    assert "# A pod's resourceClaims make it an accelerator pod only when they name one known at export" in out
    assert "ResourceClaimTemplate one-gpu, ResourceClaim shared-gpu;" in out
    assert "before 1.34" not in out and "before 1.36" not in out
    config.write_text("context: [claims.yaml]\nprofile: {kubernetesVersion: '1.33'}\n")
    code, _, out, err = _export(config)
    assert code == 0, err
    assert "# profile.kubernetesVersion drops claims before 1.34: none makes an accelerator pod." in out
    assert "# profile.kubernetesVersion serves no DRA extended resources before 1.36: none counts." in out


@needs_cel
def test_best_effort_policy_follows_the_clusters_pod_level_resources_gates(tmp_path):
    """On 1.34-1.35 (before the 1.36 fixes) an empty spec.resources decides the QoS class and pod
    limits are not defaulted from the containers': the policy judges as serve with that version."""
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("profile: {kubernetesVersion: '1.35'}\n")
    policy, compiled = _builtin_policies(config)
    compiled = [c for c in compiled if c.rule == "besteffort-qos"]
    empty = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"resources": {}, "containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}}}]},
    }
    zero_requests = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "q"},
        "spec": {
            "resources": {"requests": {"cpu": "0", "memory": "0"}},
            "containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }
    counts: dict = {}
    for obj in (empty, zero_requests):
        _compare(policy, compiled, obj, obj["metadata"]["name"], counts)
        assert {c.name: c.evaluate(obj)[0] for c in compiled}["kubelint-ml-besteffort-qos"] is False
    # the denial says why, as check does: the containers alone would not make the pod BestEffort
    [(_, message)] = [c.evaluate(empty) for c in compiled if c.name == "kubelint-ml-besteffort-qos"]
    assert message.endswith("BestEffort QoS: the empty spec.resources decides it before Kubernetes 1.36"), message
    for n, obj in enumerate(_random_objects(20261128, 300)):
        _compare(policy, compiled, obj, f"random object {n} on 1.35", counts)
    # and with no version, as the newest Kubernetes
    policy, compiled = _builtin_policies()
    compiled = [c for c in compiled if c.rule == "besteffort-qos"]
    for obj in (empty, zero_requests):
        assert {c.name: c.evaluate(obj)[0] for c in compiled}["kubelint-ml-besteffort-qos"] is True


def _gpu_claim_templates(tmp_path: Path, count: int, digits: int) -> Path:
    """A config whose context holds ``count`` one-GPU ResourceClaimTemplates, team-<i>-gpu-claim."""
    templates = "".join(
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: team-{i:0{digits}d}-gpu-claim}}\n"
        "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
        "        exactly: {deviceClassName: gpu.nvidia.com, count: 1}\n"
        for i in range(count)
    )
    (tmp_path / "claims.yaml").write_text(templates)
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\nprofile: {kubernetesVersion: '1.35'}\n")
    return config


@needs_cel
def test_policies_from_a_large_context_compile_and_judge_as_serve_does(tmp_path):
    """A cluster with many GPU claim templates in context makes expressions past 10,000 characters:
    they compile (the API server allows 100,000 code points) and still give serve's verdicts."""
    config = _gpu_claim_templates(tmp_path, 400, 3)
    from kubelint_ml.admission.review import load_policy
    from kubelint_ml.admission.vap import policy_documents

    docs, _, _, _ = policy_documents(load_policy(str(config)))
    longest = max(
        len(v["expression"])
        for d in docs
        if d["kind"] == "ValidatingAdmissionPolicy"
        for v in d["spec"].get("variables", []) + d["spec"]["validations"]
    )
    assert 10_000 < longest < 100_000
    policy, compiled = _builtin_policies(config)
    counts: dict = {}
    for n, claim in enumerate(["team-000-gpu-claim", "team-399-gpu-claim", "team-400-gpu-claim"]):
        obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{n}"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim}],
            },
        }
        _compare(policy, compiled, obj, claim, counts)
    # the two known templates claim a GPU; the third is defined nowhere
    assert counts["kubelint-ml-besteffort-qos-accelerators"][False] == 2


def test_export_refuses_policies_the_api_server_would_refuse(tmp_path):
    """A context of thousands of GPU claim templates makes an expression past the API server's CEL
    parser limit: nothing is written, exit 2 with the policy, the size and what to do."""
    config = _gpu_claim_templates(tmp_path, 4000, 4)
    code, _, out, err = _export(config)
    assert code == 2 and out == ""
    assert (
        "export vap: policy kubelint-ml-besteffort-qos: the expression of its variable 'judged' is 130307 code points "
        "long, more than the 100000 the API server's CEL parser reads; it lists the 4000 ResourceClaimTemplates and "
        "ResourceClaims with accelerators found in the context" in err
    )


@needs_cel
def test_the_header_names_the_serving_kinds_left_to_serve_and_none_is_matched():
    """The serving and platform kinds whose pods `check` builds from a controller's presets or other
    objects are not matched by any exported policy, and the header says so (serve judges them)."""
    code, docs, out, err = _export(CONFIG)
    assert code == 0, err
    header = " ".join(line[2:] for line in out.splitlines() if line.startswith("# "))
    assert (
        "KServe, Argo, Tekton, Seldon, Spark, NVIDIA NIM and Dynamo, KubeAI, AIBrix, OME, vLLM production-stack, TrainJob"
        in header
    )
    assert "are not matched: `kubelint-ml serve` judges them" in header
    groups = {
        (g, r)
        for d in docs
        if d["kind"] == "ValidatingAdmissionPolicy"
        for rule in d["spec"]["matchConstraints"]["resourceRules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    for group in (
        "serving.kserve.io",
        "apps.nvidia.com",
        "nvidia.com",
        "kubeai.org",
        "orchestration.aibrix.ai",
        "ome.io",
        "production-stack.vllm.ai",
    ):
        assert not [r for g, r in groups if g == group], group
    assert ("trainer.kubeflow.org", "trainjobs") not in groups


@needs_cel
def test_pod_level_resources_are_dropped_before_1_34_in_custom_resources_too(tmp_path):
    """A PyTorchJob or JobSet keeps its template's spec.resources at admission (the API server drops
    the field from Pods and built-in templates only), and before 1.34 the pods its controller makes
    lose it: serve judges a GPU pod whose memory is only pod-level as having none, and so do the
    policies; from 1.34 the pod-level limit counts, on both sides."""
    spec = {
        "restartPolicy": "OnFailure",
        "resources": {"limits": {"cpu": "8", "memory": "64Gi"}},
        "containers": [{"name": "train", "image": "t", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    objects = [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "ft", "namespace": "ml"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": spec}}}},
        },
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "ml"},
            "spec": {
                "replicatedJobs": [
                    {"name": "w", "template": {"spec": {"template": {"spec": dict(spec, restartPolicy="Never")}}}}
                ]
            },
        },
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": dict(spec, restartPolicy="Never")},
    ]
    config = tmp_path / ".kubelint-ml.yaml"
    # (profile.featureGates over the version's default: both ways, the same verdicts as serve)
    for version, gates, denied in (
        ("1.33", "", True),
        ("1.35", "", False),
        ("1.33", "PodLevelResources: true", False),
        ("1.35", "PodLevelResources: false", True),
    ):
        config.write_text(
            f"profile: {{kubernetesVersion: '{version}'" + (f", featureGates: {{{gates}}}" if gates else "") + "}\n"
        )
        policy, compiled = _builtin_policies(config)
        counts: dict = {}
        for obj in objects:
            _compare(policy, compiled, obj, f"{obj['kind']} on {version}", counts)
            verdicts = {c.name: c.evaluate(obj)[0] for c in compiled}
            assert (verdicts["kubelint-ml-missing-memory-limit-accelerators"] is False) is denied, (obj, version)
        code, _, out, err = _export(config)
        assert code == 0, err
        assert ("drops pod-level resources (spec.resources) before 1.34" in out) is (denied and not gates)
        assert ("# profile.featureGates turns PodLevelResources off" in out) is (denied and bool(gates))
        if gates:
            listed = gates.replace(": ", "=")
            assert f"# Feature gates (profile.featureGates, over the version's defaults): {listed}." in out
