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


def _profile(version: str) -> Config:
    cfg = Config()
    cfg.profile = Profile.from_dict({"kubernetesVersion": version}, ROOT)
    return cfg


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
    # at the empty block, saying why: the containers alone make the pod Guaranteed; no fix (memory in the
    # containers would not change the class)
    assert findings(pod, "1.35", ("besteffort-qos",)) == [(5, 3, "besteffort-qos", "warning")]
    [found] = [f for f in lint_text(pod.encode(), RULES, _profile("1.35")) if f.rule == "besteffort-qos"]
    assert found.message == "BestEffort QoS: the empty spec.resources decides it before Kubernetes 1.36"
    assert "though its containers make it Guaranteed (k/k issue 135082)" in found.detail
    assert found.fix is None
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
        (12, "spec.containers[0].resizePolicy[1]", "error"),  # no restartPolicy: nothing defaults it
        (12, "spec.containers[0].resizePolicy[1].resourceName", "error"),
    ]
    # validateResizePolicy's own words (pkg/apis/core/validation/validation.go)
    assert (
        "Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'" in found[0].detail
    )
    assert 'Unsupported value: "ephemeral-storage": supported values: "cpu", "memory"' in found[2].detail
    # the field is dropped before 1.33
    assert findings(pod, "1.32", ("resize-policy-invalid",)) == []


def test_restart_container_on_a_regular_init_container_is_rejected_from_1_36():
    """k/k PR 137458 (1.36): a non-sidecar init container runs to completion and is never resized, so
    RestartContainer on it is rejected, in any pod; NotRequired stays valid, and so does a sidecar's
    RestartContainer in a pod that may restart it. One finding for the entry, also in a Never pod."""
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      restartPolicy: OnFailure
      initContainers:
      - name: setup
        image: busybox
        resizePolicy:
        - {resourceName: cpu, restartPolicy: NotRequired}
        - {resourceName: memory, restartPolicy: RestartContainer}
      - name: proxy
        image: envoy
        restartPolicy: Always
        resizePolicy:
        - {resourceName: memory, restartPolicy: RestartContainer}
      containers:
      - {name: c, image: x}
    """
    rule = ("resize-policy-invalid",)
    assert findings(pod, "1.35", rule) == []
    assert findings(pod, "1.36", rule) == findings(pod, None, rule) == [(11, 45, "resize-policy-invalid", "error")]
    found = [f for f in lint_text(textwrap.dedent(pod).encode(), RULES, Config()) if f.rule == rule[0]]
    assert str(found[0].path) == "spec.initContainers[0].resizePolicy[1].restartPolicy"
    assert found[0].message == (
        "init container 'setup' resizePolicy RestartContainer: an init container that is not a sidecar is never resized"
    )
    never = pod.replace("restartPolicy: OnFailure", "restartPolicy: Never")
    assert findings(never, "1.37", rule) == [
        (11, 45, "resize-policy-invalid", "error"),
        (16, 45, "resize-policy-invalid", "error"),
    ]
    assert findings(never, "1.35", rule) == [
        (11, 45, "resize-policy-invalid", "error"),
        (16, 45, "resize-policy-invalid", "error"),
    ]


def test_pod_level_sums_as_the_api_server_does():
    """Sidecars add to the sum, an init container counts by its maximum, a limit alone is the
    container's request, and a sidecar's limit is not held to the pod's (only spec.containers are)."""
    manifest = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: sidecar-sum}
    spec:
      resources:
        requests: {cpu: "2", memory: 4Gi}
      initContainers:
      - name: log
        image: x
        restartPolicy: Always
        resources: {requests: {cpu: "1", memory: 1Gi}}
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: 1500m, memory: 2Gi}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: init-max}
    spec:
      resources:
        requests: {cpu: "2", memory: 4Gi}
      initContainers:
      - name: setup
        image: x
        resources: {requests: {cpu: "3"}}
      containers:
      - name: c
        image: x
        resources: {limits: {cpu: "1", memory: 1Gi}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: limits-only}
    spec:
      resources:
        limits: {cpu: "4", memory: 8Gi}
      initContainers:
      - name: log
        image: x
        restartPolicy: Always
        resources: {limits: {cpu: "8"}}
      containers:
      - name: c
        image: x
        resources: {limits: {cpu: "3", memory: 1Gi, nvidia.com/gpu: 1}}
    """
    found = [
        f
        for f in lint_text(textwrap.dedent(manifest).encode(), RULES, Config())
        if f.rule == "pod-level-resources-invalid"
    ]
    assert [(f.line, str(f.path), f.message) for f in found] == [
        (6, "spec.resources.requests.cpu", "pod cpu request 2 < the containers' 2500m"),
        (22, "spec.resources.requests.cpu", "pod cpu request 2 < the containers' 3"),
        # limits-only: the pod's cpu request defaults to the containers' (3 + the sidecar's 8) and
        # its cpu limit 4 is below that; the sidecar's own limit above the pod's is not judged
        (37, "spec.resources.limits.cpu", "pod cpu limit 4 < the containers' requests 11"),
    ]
    assert (
        'spec.resources.requests: Invalid value: "11": must be less than or equal to cpu limit of 4' in found[2].detail
    )


def test_a_pod_request_defaulted_above_the_pod_limit_is_rejected():
    """defaultPodRequests fills a pod-level request left out from the containers' (when pod-level
    limits are set); validateResourceRequirements then holds it to the pod-level limit."""
    manifest = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      resources:
        limits: {memory: 4Gi, cpu: "4"}
      containers:
      - name: c
        image: x
        resources: {requests: {memory: 6Gi, cpu: "2"}}
    """
    found = [
        f
        for f in lint_text(textwrap.dedent(manifest).encode(), RULES, Config())
        if f.rule == "pod-level-resources-invalid"
    ]
    assert [(f.line, f.column, str(f.path), f.severity) for f in found] == [
        (6, 22, "spec.resources.limits.memory", "error")
    ]
    assert 'Invalid value: "6Gi": must be less than or equal to memory limit of 4Gi' in found[0].detail
    # a written request above the limit is request-exceeds-limit's, not reported twice
    written = manifest.replace("limits: {memory: 4Gi", "requests: {memory: 8Gi}\n        limits: {memory: 4Gi")
    assert findings(written, rules=("pod-level-resources-invalid", "request-exceeds-limit")) == [
        (6, 24, "request-exceeds-limit", "error")
    ]


JOBSET_PER_INDEX = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: sweep
spec:
  successPolicy:
    operator: All
    targetReplicatedJobs: [trials]
  replicatedJobs:
  - name: trials
    replicas: 1
    template:
      spec:
        completions: 8
        parallelism: 8
        backoffLimitPerIndex: 1
        successPolicy:
          rules:
          - succeededCount: 4
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: trial
              image: python:3.12
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            backoffLimitPerIndex: 2
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch
"""


def test_a_jobsets_jobs_are_indexed_unless_they_say_otherwise():
    """JobSet's defaulting webhook sets completionMode: Indexed on every replicated Job that does
    not set it (a training runtime becomes a JobSet): per-index limits and a Job successPolicy are
    then valid. The JobSet's own successPolicy is not the Job's."""
    assert findings(JOBSET_PER_INDEX, rules=("job-spec-invalid",)) == []
    explicit = JOBSET_PER_INDEX.replace(
        "        completions: 8\n", "        completionMode: NonIndexed\n        completions: 8\n"
    )
    found = [f for f in lint_text(explicit.encode(), RULES, Config()) if f.rule == "job-spec-invalid"]
    assert [(f.line, str(f.path), f.message) for f in found] == [
        (
            17,
            "spec.replicatedJobs[0].template.spec.backoffLimitPerIndex",
            "backoffLimitPerIndex needs completionMode: Indexed, not NonIndexed",
        ),
        (
            18,
            "spec.replicatedJobs[0].template.spec.successPolicy",
            "successPolicy needs completionMode: Indexed, not NonIndexed",
        ),
    ]


def test_claims_at_pod_level_are_rejected():
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      resources:
        claims:
        - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimName: shared-gpu
      containers:
      - name: c
        image: x
    """
    found = [
        f for f in lint_text(textwrap.dedent(pod).encode(), RULES, Config()) if f.rule == "pod-level-resources-invalid"
    ]
    assert [(f.line, str(f.path), f.severity) for f in found] == [(6, "spec.resources.claims", "error")]
    assert "Forbidden: claims cannot be set for Resources at pod-level" in found[0].detail
    # the gate is off before 1.34: dropped with the rest of spec.resources (nothing else to say)
    assert findings(pod, "1.33", ("pod-level-resources-invalid",)) == []


def test_success_policy_rules_of_an_indexed_job():
    """validateSuccessPolicy: at least one rule, each with succeededCount or succeededIndexes, and
    no succeededCount above the completions."""
    job = """\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: j}
    spec:
      completionMode: Indexed
      completions: 4
      successPolicy:
        rules:
        - succeededCount: 5
        - {}
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: x
    """
    found = [f for f in lint_text(textwrap.dedent(job).encode(), RULES, Config()) if f.rule == "job-spec-invalid"]
    assert [(f.line, str(f.path), f.message) for f in found] == [
        (9, "spec.successPolicy.rules[0].succeededCount", "succeededCount 5 > completions 4"),
        (10, "spec.successPolicy.rules[1]", "successPolicy rule with neither succeededCount nor succeededIndexes"),
    ]
    assert "must be less than or equal to 4 (the number of specified completions)" in found[0].detail
    assert "at least one of succeededCount or succeededIndexes must be specified" in found[1].detail
    empty = textwrap.dedent(job).replace(
        "  successPolicy:\n    rules:\n    - succeededCount: 5\n    - {}\n", "  successPolicy: {}\n"
    )
    found = [f for f in lint_text(empty.encode(), RULES, Config()) if f.rule == "job-spec-invalid"]
    assert [(f.line, str(f.path)) for f in found] == [(7, "spec.successPolicy")]
    assert "at least one rules must be specified when the successPolicy is specified" in found[0].detail
    # within the completions: valid
    ok = textwrap.dedent(job).replace(
        "    - succeededCount: 5\n    - {}\n", "    - succeededCount: 4\n      succeededIndexes: 0-3\n"
    )
    assert findings(ok, rules=("job-spec-invalid",)) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "completionMode: indexed\ncompletions: 4\nbackoffLimitPerIndex: 1",
            [(6, "spec.completionMode", 'Unsupported value: "indexed": supported values: "NonIndexed", "Indexed"')],
        ),
        (
            "podReplacementPolicy: Terminating",
            [
                (
                    6,
                    "spec.podReplacementPolicy",
                    'Unsupported value: "Terminating": supported values: "Failed", "TerminatingOrFailed"',
                )
            ],
        ),
        ("podReplacementPolicy: TerminatingOrFailed", []),
        ("completionMode: NonIndexed\npodReplacementPolicy: Failed", []),
    ],
)
def test_misspelt_job_modes(spec, expected):
    test_job_rejections(spec, expected)


def test_resize_policy_values_and_duplicates():
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
          restartPolicy: Restart
        - resourceName: cpu
          restartPolicy: RestartContainer
        - resourceName: memory
          restartPolicy: NotRequired
    """
    found = [f for f in lint_text(textwrap.dedent(pod).encode(), RULES, Config()) if f.rule == "resize-policy-invalid"]
    assert [(f.line, str(f.path)) for f in found] == [
        (11, "spec.containers[0].resizePolicy[0].restartPolicy"),
        (12, "spec.containers[0].resizePolicy[1].resourceName"),
        (13, "spec.containers[0].resizePolicy[1].restartPolicy"),
    ]
    assert 'Unsupported value: "Restart": supported values: "NotRequired", "RestartContainer"' in found[0].detail
    assert 'Duplicate value: "cpu"' in found[1].detail
    # a sidecar's resizePolicy is held to the pod's restartPolicy too; an OnFailure pod may restart
    sidecar = textwrap.dedent(pod).replace(
        "  containers:\n",
        "  initContainers:\n  - name: proxy\n    image: envoy\n    restartPolicy: Always\n    resizePolicy:\n    - {resourceName: memory, restartPolicy: RestartContainer}\n  containers:\n",
    )
    assert (11, "spec.initContainers[0].resizePolicy[0].restartPolicy") in [
        (f.line, str(f.path)) for f in lint_text(sidecar.encode(), RULES, Config()) if f.rule == "resize-policy-invalid"
    ]
    on_failure = sidecar.replace("restartPolicy: Never", "restartPolicy: OnFailure")
    assert [
        str(f.path) for f in lint_text(on_failure.encode(), RULES, Config()) if f.rule == "resize-policy-invalid"
    ] == ["spec.containers[0].resizePolicy[0].restartPolicy", "spec.containers[0].resizePolicy[1].resourceName"]
