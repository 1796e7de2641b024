"""Kyverno CEL policies, ValidatingAdmissionPolicies and Kyverno CLI tests: exact findings on ML
pods, autogen settings, verification, the CEL libraries, bad input, the library's suites."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine import cel

pytestmark = pytest.mark.skipif(
    not cel.available(), reason="Kyverno CEL policies need the CEL runtime (Python >= 3.11 and cel-expr-python)"
)

ROOT = Path(__file__).resolve().parent.parent
KY = ROOT / "fixtures" / "policies" / "kyverno"
ML = KY / "manifests" / "ml.yaml"
LIBRARY = ROOT.parent / "shared" / "policy-suites" / "kyverno-policies"


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def findings(*args: str) -> list[tuple]:
    r = cli("check", *args, "-f", "json", "-q", "--jobs", "1")
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.output)
    return sorted(
        (f["rule"], f["severity"], Path(f["file"]).name, f["line"], f["column"], f["message"])
        for f in data["findings"]
        if "/" in f["rule"] or f["rule"] == "rule-error"
    )


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


MEMORY = "ValidatingPolicy/require-memory-limit"
VAP_WARN = "ValidatingAdmissionPolicy/gpu-pods-name-priority/gpu-pods-name-priority-warn"


def test_ml_pods_reached_at_their_templates():
    """A Pod policy reaches the templates of a PyTorchJob, a JobSet and a RayJob (one finding per
    offending template, at its spec, naming the owner), none on the compliant Job; a VAP bound with
    Warn gives a warning, its matchCondition leaves the sandbox namespace alone; a pattern rule is
    said once, not evaluated."""
    assert findings("--policy", str(KY / "policies"), str(ML)) == [
        (
            "ClusterPolicy/pod-rules/no-latest",
            "info",
            "ml.yaml",
            20,
            9,
            "images must not use the latest tag (pod template of PyTorchJob/ml/bert (Worker))",
        ),
        (
            VAP_WARN,
            "warning",
            "ml.yaml",
            85,
            1,
            "Jobs must name a PriorityClass",
        ),
        (
            MEMORY,
            "error",
            "ml.yaml",
            20,
            9,
            "container pytorch has no memory limit (pod template of PyTorchJob/ml/bert (Worker))",
        ),
        (
            MEMORY,
            "error",
            "ml.yaml",
            39,
            13,
            "container trainer has no memory limit (pod template of JobSet/ml/llama (workers))",
        ),
        (
            MEMORY,
            "error",
            "ml.yaml",
            64,
            11,
            "container ray-worker has no memory limit (pod template of RayJob/ml/tune (gpu))",
        ),
        (
            "rule-error",
            "warning",
            "legacy.yaml",
            1,
            1,
            "ClusterPolicy pod-rules rule require-labels is not evaluated: a validate.pattern rule "
            "(only validate.cel rules are evaluated)",
        ),
    ]


def test_exit_code_and_rules_list():
    r = cli("check", "--policy", str(KY / "policies" / "memory-limit.yaml"), str(ML), "-q")
    assert r.exit_code == 1
    r = cli("rules", "list", "--rules", str(KY / "policies"))
    assert MEMORY in r.output and VAP_WARN in r.output and "ClusterPolicy/pod-rules/require-labels" in r.output


def test_disable_and_severity_override(tmp_path: Path):
    cfg = write(tmp_path, "c.yaml", f"disable: [{MEMORY}]\noverrides:\n  {VAP_WARN}:\n    severity: error\n")
    got = findings("--config", str(cfg), "--policy", str(KY / "policies"), str(ML))
    assert [g[0] for g in got].count(MEMORY) == 0
    assert ("error" in {g[1] for g in got if g[0] == VAP_WARN}) is True


AUTOGEN = """\
apiVersion: policies.kyverno.io/v1beta1
kind: ValidatingPolicy
metadata:
  name: mem
spec:
  validationActions: [Warn]
  autogen:
    podControllers:
      controllers: [{controllers}]
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [pods]
  validations:
    - expression: "object.spec.containers.all(c, has(c.resources))"
      message: resources missing
"""


@pytest.mark.parametrize(
    ("controllers", "owners"),
    [
        ("", []),
        ("deployments", []),
        ("pytorchjobs, jobsets", ["JobSet/ml/llama"]),  # the PyTorchJob's containers have resources
        ("rayjobs", ["RayJob/ml/tune"]),
    ],
)
def test_autogen_controllers_honoured(tmp_path: Path, controllers: str, owners: list[str]):
    pol = write(tmp_path, "p/mem.yaml", AUTOGEN.format(controllers=controllers))
    got = findings("--policy", str(pol.parent), str(ML))
    assert sorted({g[5].split("pod template of ")[1].split(" (")[0] for g in got}) == sorted(owners)


def test_clusterpolicy_autogen_annotation_none(tmp_path: Path):
    text = (KY / "policies" / "legacy.yaml").read_text()
    text = text.replace(
        "  name: pod-rules\n",
        "  name: pod-rules\n  annotations:\n    pod-policies.kyverno.io/autogen-controllers: none\n",
    )
    pol = write(tmp_path, "p/legacy.yaml", text)
    got = findings("--policy", str(pol.parent), str(ML))
    assert [g for g in got if g[0] != "rule-error"] == []


def test_unbound_vap_params_and_namespace_selector(tmp_path: Path):
    """A VAP without a binding applies to everything it matches (kyverno apply); paramKind read
    from the run's objects through a binding's paramRef; a namespaceSelector judged against a
    Namespace among the inputs."""
    pol = write(
        tmp_path,
        "p/vap.yaml",
        """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    namespaceSelector:
      matchLabels: {tier: training}
    resourceRules:
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [deployments]
  validations:
    - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
      messageExpression: "'replicas ' + string(object.spec.replicas) + ' > ' + params.data.maxReplicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-binding}
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef: {name: limits, namespace: platform, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: named}
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [deployments]
  validations:
    - expression: "object.metadata.name.startsWith('ml-')"
      message: deployments are named ml-*
""",
    )
    manifests = write(
        tmp_path,
        "m.yaml",
        """\
apiVersion: v1
kind: Namespace
metadata: {name: train, labels: {tier: training}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other, labels: {tier: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: platform}
data: {maxReplicas: "4"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ml-big, namespace: train}
spec:
  replicas: 8
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: other}
spec:
  replicas: 8
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: x}]}
""",
    )
    assert findings("--policy", str(pol.parent), str(manifests)) == [
        ("ValidatingAdmissionPolicy/max-replicas/max-replicas-binding", "error", "m.yaml", 14, 1, "replicas 8 > 4"),
        ("ValidatingAdmissionPolicy/named", "error", "m.yaml", 24, 1, "deployments are named ml-*"),
    ]


def test_expression_error_is_a_rule_error_for_that_object_only(tmp_path: Path):
    pol = write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: prio}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
      - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
  validations:
    - expression: "object.spec.template.spec.priorityClassName != 'low'"
      message: low priority
""",
    )
    m = write(
        tmp_path,
        "m.yaml",
        """\
apiVersion: batch/v1
kind: Job
metadata: {name: a}
spec: {template: {spec: {priorityClassName: low, containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: b}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: c}
spec: {template: {spec: {priorityClassName: high, containers: [{name: c, image: x}]}}}
""",
    )
    got = findings("--policy", str(pol.parent), str(m))
    assert [(g[0], g[3]) for g in got] == [("ValidatingPolicy/prio", 1), ("rule-error", 6)]
    assert "policy ValidatingPolicy/prio failed here" in got[1][5] and "priorityClassName" in got[1][5]


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: bad}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  validations:
    - expression: "object.spec.("
""",
            ":8:7:",
            "Syntax error",
        ),
        (
            """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: bad}
spec:
  validations:
    - expression: "true"
""",
            ":4:1:",
            "no resourceRules",
        ),
        (
            """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: bad}
spec:
  rules:
    - name: r
      match: {any: [{resources: {kinds: [Pod]}}]}
      validate:
        cel:
          expressions:
            - expression: "nosuch.field == 1"
""",
            ":11:15:",
            "spec.rules[0].validate.cel.expressions[0].expression: 1:7: undeclared reference to 'nosuch.field'",
        ),
    ],
)
def test_malformed_policy_is_exit_2_at_its_line(tmp_path: Path, text: str, where: str, what: str):
    pol = write(tmp_path, "p/bad.yaml", text)
    r = CliRunner().invoke(main, ["check", "--policy", str(pol.parent), str(ML)])
    assert r.exit_code == 2
    assert f"bad.yaml{where}" in r.output and what in r.output, r.output


def test_offline_libraries_refused_once_per_rule(tmp_path: Path):
    pol = write(
        tmp_path,
        "p/net.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: net}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  validations:
    - expression: "http.Get('https://example.com').ok == true"
---
apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata: {name: sigs}
spec: {}
---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: js}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  validations:
    - expression: "json.unmarshal(object.metadata.annotations['x']).a == 1"
""",
    )
    got = findings("--policy", str(pol.parent), str(ML))
    assert [(g[0], g[1], g[3], g[5]) for g in got] == [
        (
            "rule-error",
            "warning",
            1,
            "ValidatingPolicy net is not evaluated: calls http.*, a Kyverno library that needs the cluster or the network",
        ),
        (
            "rule-error",
            "warning",
            10,
            "ImageValidatingPolicy sigs is not evaluated: ImageValidatingPolicy is not evaluated offline "
            "(image verification needs registries)",
        ),
        (
            "rule-error",
            "warning",
            15,
            "ValidatingPolicy js is not evaluated: uses json, a Kyverno CEL library kubelint-ml does not have",
        ),
    ]


def test_resource_library_reads_the_run(tmp_path: Path):
    pol = write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: pc-exists}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  variables:
    - name: classes
      expression: "resource.List('scheduling.k8s.io/v1', 'priorityclasses', '').items.map(p, p.metadata.name)"
  validations:
    - expression: "!has(object.spec.priorityClassName) || object.spec.priorityClassName in variables.classes"
      messageExpression: "'PriorityClass ' + object.spec.priorityClassName + ' is not defined'"
""",
    )
    m = write(
        tmp_path,
        "m.yaml",
        """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: batch/v1
kind: Job
metadata: {name: ok}
spec: {template: {spec: {priorityClassName: high, containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: typo}
spec: {template: {spec: {priorityClassName: hihg, containers: [{name: c, image: x}]}}}
""",
    )
    got = findings("--policy", str(pol.parent), str(m))
    assert [(g[0], g[3], g[5]) for g in got] == [
        ("ValidatingPolicy/pc-exists", 14, "PriorityClass hihg is not defined (pod template of Job/typo)")
    ]


# ----------------------------------------------------------------------------
# CEL libraries


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("'abc123def45'.find('[0-9]+')", "123"),
        ("'abc123def45'.findAll('[0-9]+')", ["123", "45"]),
        ("'a1b2c3'.findAll('[0-9]', 2)", ["1", "2"]),
        ("url('https://user@example.com:8443/a%20b?x=1&x=2').getHost()", "example.com:8443"),
        ("url('https://example.com:8443/p').getHostname()", "example.com"),
        ("url('https://[::1]:80/p').getHostname()", "::1"),
        ("url('https://example.com:8443/p').getPort()", "8443"),
        ("url('https://example.com/p?x=1&x=2').getQuery()", {"x": ["1", "2"]}),
        ("url('/relative/path').getScheme()", ""),
        ("isURL('not a url')", False),
        ("isIP('10.0.0.1') && !isIP('10.0.0.1/8') && !isIP('fe80::1%eth0')", True),
        ("ip('10.0.0.1').family() == 4 && ip('::1').family() == 6", True),
        ("ip('127.0.0.1').isLoopback() && ip('0.0.0.0').isUnspecified()", True),
        ("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')", True),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", True),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
        ("cidr('10.1.2.3/8').masked().prefixLength()", 8),
        ("isCIDR('10.0.0.0/33')", False),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
        ("semver('1.0.0-rc.1').compareTo(semver('1.0.0'))", -1),
        ("isSemver('v1.2.3') || isSemver('1.2')", False),
        ("semver('v1.2', true).minor()", 2),
        ("sets.contains([1, 2, 3], [2, 3]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])", True),
        ("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", True),
        ("math.greatest([1, 5, 3]) == 5 && cel.bind(x, 3, x * x) == 9", True),
        ("base64.encode(b'gpu')", "Z3B1"),
        ("'%s has %d GPUs'.format(['node', 8])", "node has 8 GPUs"),
    ],
)
def test_kubernetes_cel_libraries(expr: str, value):
    assert cel.compile_expression(expr, ("object",)).evaluate({}) == value


@pytest.mark.parametrize(
    "expr",
    ["url('http://a b')", "ip('300.1.1.1')", "cidr('10.0.0.0')", "semver('1.2')", "ip('::ffff:10.0.0.1')"],
)
def test_kubernetes_cel_libraries_errors(expr: str):
    with pytest.raises(cel.CelEvalError):
        cel.compile_expression(expr, ("object",)).evaluate({})


def test_or_value_on_a_field_that_is_not_optional():
    """Kyverno's ValidatingPolicy reads ``x.field.orValue(d)`` on a plain field as the field, or
    ``d`` when it is missing (pkg/cel/compiler/env.go, OrValueCompatEnvOptions)."""
    from kubelint_ml.policy.kyverno import or_value_compat

    assert or_value_compat("c.volumeMounts.orValue([])") == "c.?volumeMounts.orValue([])"
    assert or_value_compat("object.spec.?x.orValue('a.b.orValue(')") == "object.?spec.?x.orValue('a.b.orValue(')"
    assert or_value_compat("m[?'k'].orValue(1)") == "m[?'k'].orValue(1)"


# ----------------------------------------------------------------------------
# rules verify: kyverno-test.yaml


def test_verify_kyverno_test_cases():
    r = cli("rules", "verify", str(KY / "suite"), "--format", "json")
    assert r.exit_code == 1
    cases = [c for c in json.loads(r.output) if c["name"].startswith("gpu-suite/")]
    assert [(c["name"], c["passed"], c.get("reason")) for c in cases] == [
        ("gpu-suite/gpu-requests-memory/Pod/gpu-ok", True, None),
        ("gpu-suite/gpu-requests-memory/Pod/research/gpu-bad", True, None),
        ("gpu-suite/gpu-requests-memory/Pod/cpu-only", True, None),
        ("gpu-suite/gpu-requests-memory/Deployment/gpu-deploy", True, None),
        ("gpu-suite/team-label/check-team/Pod/gpu-ok", True, None),
        ("gpu-suite/team-label/check-team/Pod/cpu-only", True, None),
        ("gpu-suite/team-label/check-team/Pod/gpu-bad", True, None),
        ("gpu-suite/team-label/autogen-check-team/Deployment/gpu-deploy", True, None),
        ("gpu-suite/team-label/check-team/Pod/gpu-ok", False, "expected fail, got pass"),
    ]
    text = cli("rules", "verify", str(KY / "suite"))
    assert "FAIL gpu-suite/team-label/check-team/Pod/gpu-ok: expected fail, got pass" in text.output


# ----------------------------------------------------------------------------
# The library's ValidatingPolicy and validate.cel suites


@pytest.fixture(scope="module")
def kyverno_library():
    if not LIBRARY.is_dir():
        pytest.skip("../shared/policy-suites/kyverno-policies is not beside the project")
    from kubelint_ml.policy.kyvernotest import verify
    from kubelint_ml.policy.load import find

    tests = sorted(LIBRARY.glob("*/**/.kyverno-test/kyverno-test.yaml"))
    dirs = [t.parent.parent for t in tests if t.relative_to(LIBRARY).parts[0].endswith(("-vpol", "-cel"))]
    cases = []
    for d in dirs:
        cases.extend(verify(find([str(d)], tests=True).kyverno_tests))
    return len(dirs), cases


@pytest.mark.slow
def test_kyverno_library_conformance(kyverno_library):
    """Every ValidatingPolicy and validate.cel ClusterPolicy suite; the cases that fail, each
    examined (docs/policies.md, "Kyverno conformance"): policies that read image registries
    (image.GetMetadata) or the clock (time.now()), not evaluated offline, and one test whose
    expectation rests on cel-go before v0.28 (orValue on a plain list in a ClusterPolicy)."""
    suites, cases = kyverno_library
    assert suites == 227
    failed = [c for c in cases if not c.passed]
    assert len(cases) == 2915
    assert len(cases) - len(failed) == 2890
    assert sorted({c.name.split("/")[0] for c in failed if c.reason.startswith("not evaluated")}) == [
        "allowed-base-images",
        "block-images-with-volumes",
        "block-stale-images",
        "check-nvidia-gpus",
    ]
    reasons = {c.reason.split(":")[0] for c in failed}
    assert reasons == {"not evaluated", "expected pass, got fail"}
    assert [c.name for c in failed if not c.reason.startswith("not evaluated")] == [
        "ensure-readonly-hostpath/ensure-readonly-hostpath/ensure-hostpaths-readonly/Pod/good-pod-01"
    ]


def test_policy_key_of_the_config(tmp_path: Path):
    cfg = write(tmp_path, "c.yaml", f"policy: [{KY / 'policies' / 'memory-limit.yaml'}]\n")
    got = findings("--config", str(cfg), str(ML))
    assert [(g[0], g[3]) for g in got] == [(MEMORY, 20), (MEMORY, 39), (MEMORY, 64)]


@pytest.mark.skipif(
    not hasattr(os, "fork") or os.environ.get("KUBELINT_ML_CEL_IN_PROCESS") == "1",
    reason="the budget is the helper process's (needs fork)",
)
def test_runaway_expression_is_bounded_per_object(tmp_path: Path):
    """An expression that grows tenfold per call is ended by the helper's budget: a rule-error for
    the object it ran on; the same rule still judges the next object, and the other rules ran."""
    bomb = ".replace('a', 'aaaaaaaaaa')" * 9
    pol = write(
        tmp_path,
        "p/v.yaml",
        f"""\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {{name: bomb}}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}]
  validations:
    - expression: "!has(object.data.grow) || size(object.data.grow{bomb}) > 0"
      message: never
    - expression: "object.metadata.name != 'bad'"
      message: bad name
""",
    )
    m = write(
        tmp_path,
        "m.yaml",
        """\
apiVersion: v1
kind: ConfigMap
metadata: {name: bad}
data: {grow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: bad}
data: {other: x}
""",
    )
    got = findings("--policy", str(pol.parent), str(m))
    assert [(g[0], g[3]) for g in got] == [("ValidatingPolicy/bomb", 6), ("rule-error", 1)]
    assert "budget exceeded" in got[1][5]


def test_verify_exceptions_operations_and_param_resources(tmp_path: Path):
    """A Test's PolicyExceptions (the objects they match are skipped), a result's ``operation``
    (DELETE: the policy sees ``oldObject``), and ``paramResources`` for a VAP's params."""
    write(
        tmp_path,
        "s/policy.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: labels}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
    - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: protect}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}]
  validations:
    - expression: "object == null && !('protected' in oldObject.metadata.?labels.orValue({}))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-gpus}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
    - expression: "object.spec.containers.all(c, int(c.?resources.?limits[?'nvidia.com/gpu'].orValue('0')) <= int(params.data.max))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-gpus}
spec:
  policyName: max-gpus
  validationActions: [Deny]
  paramRef: {name: gpu-limits, parameterNotFoundAction: Deny}
""",
    )
    write(
        tmp_path,
        "s/exception.yaml",
        """\
apiVersion: policies.kyverno.io/v1alpha1
kind: PolicyException
metadata: {name: sandbox}
spec:
  policyRefs: [{name: labels, kind: ValidatingPolicy}]
  matchConditions:
    - {name: ns, expression: "object.metadata.namespace == 'sandbox'"}
""",
    )
    write(tmp_path, "s/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gpu-limits}\ndata: {max: '4'}\n")
    write(
        tmp_path,
        "s/pods.yaml",
        """\
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: sandbox, labels: {protected: "true"}}
spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, labels: {team: nlp}}
spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]}
""",
    )
    write(
        tmp_path,
        "s/.kyverno-test/kyverno-test.yaml",
        """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: t}
policies: [../policy.yaml]
exceptions: [../exception.yaml]
paramResources: [../cm.yaml]
resources: [../pods.yaml]
results:
  - {policy: labels, kind: Pod, resources: [sandbox/a], result: skip}
  - {policy: labels, kind: Pod, resources: [b], result: pass}
  - {policy: protect, kind: Pod, resources: [a], result: fail, operation: DELETE}
  - {policy: protect, kind: Pod, resources: [b], result: pass, operation: DELETE}
  - {policy: max-gpus, kind: Pod, resources: [a], result: fail}
  - {policy: max-gpus, kind: Pod, resources: [b], result: pass}
""",
    )
    r = cli("rules", "verify", str(tmp_path / "s"), "--format", "json")
    cases = json.loads(r.output)
    assert [(c["name"], c["passed"]) for c in cases] == [
        ("t/labels/Pod/sandbox/a", True),
        ("t/labels/Pod/b", True),
        ("t/protect/Pod/a", True),
        ("t/protect/Pod/b", True),
        ("t/max-gpus/Pod/a", True),
        ("t/max-gpus/Pod/b", True),
    ], cases
    assert r.exit_code == 0


def test_unset_variable_error_says_why(tmp_path: Path):
    pol = write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: cm}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  variables:
    - {name: cm, expression: "resource.Get('v1', 'configmaps', 'platform', 'allowed')"}
    - {name: allowed, expression: "variables.cm.data.images.split(',')"}
  validations:
    - expression: "object.spec.containers.all(c, c.image in variables.allowed)"
""",
    )
    got = findings("--policy", str(pol.parent), str(ML))
    assert {g[5] for g in got if g[0] == "rule-error"} == {
        'policy ValidatingPolicy/cm failed here (evaluation failed: variables.cm: configmaps "allowed" not found '
        f"among the objects of the run) (pod template of {owner}); the other rules still ran"
        for owner in (
            "PyTorchJob/ml/bert (Master)",
            "PyTorchJob/ml/bert (Worker)",
            "JobSet/ml/llama (workers)",
            "RayJob/ml/tune (head)",
            "RayJob/ml/tune (gpu)",
            "Job/ml/compliant",
            "Job/ml/no-priority",
            "Job/sandbox/sandboxed",
        )
    }


def test_namespaced_policy_applies_in_its_namespace(tmp_path: Path):
    pol = write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata: {name: only-ml, namespace: ml}
spec:
  validationActions: [Warn]
  matchConstraints:
    resourceRules: [{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}]
  validations:
    - {expression: "false", message: seen}
""",
    )
    got = findings("--policy", str(pol.parent), str(ML))
    assert [(g[0], g[1], g[3]) for g in got] == [
        ("NamespacedValidatingPolicy/only-ml", "warning", 69),
        ("NamespacedValidatingPolicy/only-ml", "warning", 85),
    ]


def test_namespace_selector_on_a_namespace_the_run_does_not_hold(tmp_path: Path):
    """Its labels live in the cluster: the policy is applied (never silently skipped); a Namespace
    among the inputs decides."""
    pol = write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: prod-only}
spec:
  validationActions: [Deny]
  matchConstraints:
    namespaceSelector: {matchLabels: {env: prod}}
    resourceRules: [{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}]
  validations:
    - {expression: "has(object.spec.template.spec.priorityClassName)", message: no priority}
""",
    )
    got = findings("--policy", str(pol.parent), str(ML))
    assert [(g[0], g[3]) for g in got] == [("ValidatingPolicy/prod-only", 85), ("ValidatingPolicy/prod-only", 100)]
    ns = write(tmp_path, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml, labels: {env: dev}}\n")
    got = findings("--policy", str(pol.parent), str(ML), str(ns))
    assert [(g[0], g[3]) for g in got] == [("ValidatingPolicy/prod-only", 100)]


def test_admission_review_gives_its_operation_user_and_old_object(tmp_path: Path):
    """In ``serve``, a policy sees the review's operation, user and old object."""
    from kubelint_ml.admission.review import lint_object, load_policy

    write(
        tmp_path,
        "p/v.yaml",
        """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: no-shrink}
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [deployments]}]
  validations:
    - expression: "object.spec.replicas >= oldObject.spec.replicas || request.userInfo.username == 'admin'"
      messageExpression: "request.userInfo.username + ' may not scale down'"
""",
    )
    cfg = write(tmp_path, "c.yaml", "policy: [p]\n")
    policy = load_policy(str(cfg))
    new = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ml"},
        "spec": {"replicas": 1},
    }
    old = dict(new, spec={"replicas": 3})

    def rules(request):
        found, _ = lint_object(policy, new, request)
        return [(f.rule, f.message) for f in found if f.rule.startswith("ValidatingPolicy/")]

    assert rules({"operation": "CREATE", "object": new}) == []
    assert rules({"operation": "UPDATE", "object": new, "oldObject": old, "userInfo": {"username": "bob"}}) == [
        ("ValidatingPolicy/no-shrink", "bob may not scale down")
    ]
    assert rules({"operation": "UPDATE", "object": new, "oldObject": old, "userInfo": {"username": "admin"}}) == []


def test_serve_lists_the_rules_it_does_not_evaluate(tmp_path: Path):
    from kubelint_ml.admission.review import load_policy

    write(tmp_path, "p/legacy.yaml", (KY / "policies" / "legacy.yaml").read_text())
    cfg = write(tmp_path, "c.yaml", "policy: [p]\n")
    assert load_policy(str(cfg)).not_run == [
        "ClusterPolicy pod-rules rule require-labels is not evaluated: a validate.pattern rule "
        "(only validate.cel rules are evaluated)"
    ]
