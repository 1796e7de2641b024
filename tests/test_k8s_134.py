"""The 1.34-1.37 pod and Job API: pod-level resources by version, and the specs the API server rejects."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.resources import pod_level_gates, qos_class
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()


def findings(manifest: str, version: str | None = None, rules: tuple[str, ...] = ()) -> list[tuple]:
    cfg = Config()
    if version:
        cfg.profile = Profile.from_dict({"kubernetesVersion": version}, ROOT)
    found = lint_text(textwrap.dedent(manifest).encode(), RULES, cfg)
    return sorted((f.line, f.column, f.rule, f.severity) for f in found if not rules or f.rule in rules)


POD_LEVEL_ONLY = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  priorityClassName: training
  resources:
    requests: {cpu: "4", memory: 16Gi}
    limits: {cpu: "4", memory: 16Gi}
  containers:
  - name: train
    image: pytorch/pytorch
"""


def test_pod_level_resources_by_version():
    qos = ("besteffort-qos", "missing-memory-limit", "missing-memory-request", "pod-level-resources-invalid")
    # from 1.34 (and with no version: the newest) the pod is Guaranteed
    assert findings(POD_LEVEL_ONLY, rules=qos) == []
    assert findings(POD_LEVEL_ONLY, "1.34", qos) == []
    # on 1.33 the API server drops spec.resources: BestEffort, no memory limit
    assert findings(POD_LEVEL_ONLY, "1.33", qos) == [
        (5, 1, "besteffort-qos", "warning"),
        (7, 3, "pod-level-resources-invalid", "warning"),
        (11, 5, "missing-memory-limit", "warning"),
        (11, 5, "missing-memory-request", "warning"),
    ]


def test_gates():
    assert pod_level_gates(None) == (True, True, True)
    assert pod_level_gates((1, 33)) == (False, False, False)
    assert pod_level_gates((1, 35)) == (True, False, False)
    assert pod_level_gates((1, 36)) == (True, True, True)


def test_the_1_36_qos_and_defaulting_fixes():
    empty = {"resources": {}, "containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}
    assert qos_class(empty, pod_level_qos_fix=False) == "BestEffort"  # k/k #135082, before 1.36
    assert qos_class(empty) == "Guaranteed"
    # pod requests only, every container limited: pod limits default from theirs only from 1.36
    spec = {
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
    }
    assert qos_class(spec) == "Guaranteed"
    assert qos_class(spec, pod_level_limit_defaulting=False) == "Burstable"
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {}\n  containers:\n"
        "  - name: a\n    image: x\n    resources: {limits: {cpu: '1', memory: 1Gi}}\n"
    )
    assert findings(pod, "1.35", ("besteffort-qos",)) == [(4, 1, "besteffort-qos", "warning")]
    assert findings(pod, "1.36", ("besteffort-qos",)) == []


REJECTED_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  selector: {matchLabels: {app: serve}}
  template:
    metadata: {labels: {app: serve}}
    spec:
      resources:
        requests: {cpu: "1", memory: 4Gi}
        limits: {cpu: "2", memory: 8Gi, nvidia.com/gpu: 1}
      containers:
      - name: server
        image: vllm/vllm-openai
        resources:
          requests: {cpu: "1", memory: 3Gi}
          limits: {memory: 10Gi}
      - name: proxy
        image: envoy
        resources:
          requests: {cpu: 500m, memory: 512Mi}
"""


def test_pod_level_rejections_at_their_fields():
    found = lint_text(REJECTED_POD.encode(), RULES, Config())
    hits = sorted(
        (f.line, f.column, str(f.path), f.severity, f.message) for f in found if f.rule == "pod-level-resources-invalid"
    )
    assert hits == [
        (11, 25, "spec.template.spec.resources.requests.cpu", "error", "pod cpu request 1 < the containers' 1500m"),
        (
            12,
            41,
            'spec.template.spec.resources.limits["nvidia.com/gpu"]',
            "error",
            "pod-level limits cannot hold nvidia.com/gpu: only cpu, memory and hugepages",
        ),
        (
            18,
            28,
            "spec.template.spec.containers[0].resources.limits.memory",
            "error",
            "container 'server' memory limit 10Gi > pod limit 8Gi",
        ),
    ]
    details = [f.detail for f in found if f.rule == "pod-level-resources-invalid"]
    assert any("must be greater than or equal to aggregate container requests of 1500m" in d for d in details)
    assert any("must be less than or equal to pod limits of 8Gi" in d for d in details)
    assert any(
        'Unsupported value: "nvidia.com/gpu": supported values: "cpu", "hugepages-", "memory"' in d for d in details
    )
    # memory: 3Gi + 512Mi is within the pod's 4Gi
    # at 1.33 the field is dropped: no rejection, one warning
    assert findings(REJECTED_POD, "1.33", ("pod-level-resources-invalid",)) == [
        (10, 7, "pod-level-resources-invalid", "warning")
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "podReplacementPolicy: TerminatingOrFailed\n"
            "podFailurePolicy:\n  rules:\n  - action: Ignore\n    onPodConditions: [{type: DisruptionTarget}]",
            [(6, "spec.podReplacementPolicy", 'Unsupported value: "TerminatingOrFailed": supported values: "Failed"')],
        ),
        ("backoffLimitPerIndex: 2", [(6, "spec.backoffLimitPerIndex", "requires indexed completion mode")]),
        (
            "completionMode: NonIndexed\nsuccessPolicy:\n  rules: [{succeededIndexes: '0'}]",
            [(7, "spec.successPolicy", "requires indexed completion mode")],
        ),
        (
            "completionMode: Indexed\ncompletions: 4\n"
            "podFailurePolicy:\n  rules:\n  - action: FailIndex\n    onExitCodes: {operator: In, values: [3]}",
            [(10, "spec.podFailurePolicy.rules[0].action", "requires the backoffLimitPerIndex to be set")],
        ),
    ],
)
def test_job_rejections(spec, expected):
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n"
        + textwrap.indent(spec, "  ")
        + "\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: x\n"
    )
    found = [f for f in lint_text(job.encode(), RULES, Config()) if f.rule == "job-spec-invalid"]
    got = [(f.line, str(f.path), f.severity) for f in found]
    assert got == [(line, path, "error") for line, path, _ in expected]
    for f, (_, _, reason) in zip(found, expected):
        assert reason in f.detail


VALID_JOBS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
spec:
  completionMode: Indexed
  completions: 10
  parallelism: 5
  backoffLimitPerIndex: 1
  maxFailedIndexes: 3
  successPolicy:
    rules:
    - succeededIndexes: "0-4"
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {operator: In, values: [42]}
    - action: Ignore
      onPodConditions:
      - type: DisruptionTarget
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resizePolicy:
        - resourceName: cpu
          restartPolicy: NotRequired
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sidecar
spec:
  podReplacementPolicy: TerminatingOrFailed
  template:
    spec:
      restartPolicy: OnFailure
      initContainers:
      - name: proxy
        image: envoy
        restartPolicy: Always
        resizePolicy:
        - resourceName: memory
          restartPolicy: RestartContainer
      containers:
      - name: c
        image: x
"""


def test_valid_jobs_get_no_rejection():
    assert findings(VALID_JOBS, rules=("job-spec-invalid", "resize-policy-invalid", "restart-policy-invalid")) == []


def test_resize_rejections():
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resizePolicy:
        - resourceName: cpu
          restartPolicy: RestartContainer
        - resourceName: ephemeral-storage
    """
    found = [f for f in lint_text(textwrap.dedent(pod).encode(), RULES, Config()) if f.rule == "resize-policy-invalid"]
    assert [(f.line, str(f.path), f.severity) for f in found] == [
        (11, "spec.containers[0].resizePolicy[0].restartPolicy", "error"),
        (12, "spec.containers[0].resizePolicy[1].resourceName", "error"),
    ]
    assert "must be 'NotRequired' when `restartPolicy` is 'Never'" in found[0].detail
    assert 'Unsupported value: "ephemeral-storage": supported values: "cpu", "memory"' in found[1].detail
    # the field is dropped before 1.33
    assert findings(pod, "1.32", ("resize-policy-invalid",)) == []
