"""A misspelt key where the rules read: reported at the key with the closest known one, and
the findings that follow from it say so."""

from __future__ import annotations

from pathlib import Path

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s import fields
from kubelint_ml.run.lint import lint_text

RULES = [r for r in load_builtin_rules() if r.id != "gpu-node-unresolved"]  # off by default

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: training
      containers:
        - name: trainer
          image: pytorch/pytorch
          resouces:
            requests: {memory: 64Gi, nvidia.com/gpu: 1}
            limits: {memory: 64Gi, nvidia.com/gpu: 1}
"""


def found(text: str) -> list[tuple[str, int, int, str, str]]:
    return [(f.rule, f.line, f.column, f.severity, f.message) for f in lint_text(text.encode(), RULES)]


def test_misspelt_resources_is_an_error_at_the_key_and_its_consequences_say_so() -> None:
    assert found(JOB) == [
        (
            "besteffort-qos",
            7,
            5,
            "warning",  # no GPU request is seen either: not an accelerator pod
            "BestEffort QoS: no cpu or memory requests or limits (may follow from the unknown field 'resouces')",
        ),
        (
            "missing-memory-limit",
            11,
            11,
            "warning",
            "container 'trainer' has no memory limit (may follow from the unknown field 'resouces')",
        ),
        (
            "missing-memory-request",
            11,
            11,
            "warning",
            "container 'trainer' has no memory request or limit (may follow from the unknown field 'resouces')",
        ),
        (
            "unknown-field",
            13,
            11,
            "error",
            "unknown field 'resouces' in container 'trainer' (did you mean 'resources'?)",
        ),
    ]
    # Spelt right, none of it.
    assert found(JOB.replace("resouces", "resources")) == []


def test_other_findings_are_left_alone() -> None:
    text = JOB.replace("      priorityClassName: training\n", "").replace("resouces", "resources")
    text = text.replace("image: pytorch/pytorch", "image: pytorch/pytorch\n          imagePullPolicys: Always")
    got = found(text)
    assert [(r, line) for r, line, *_ in got] == [("missing-priority-class", 7), ("unknown-field", 12)]
    assert "may follow" not in got[0][4]  # the typo is not about priority
    assert got[1][4] == "unknown field 'imagePullPolicys' in container 'trainer' (did you mean 'imagePullPolicy'?)"


def test_custom_resources_are_warnings_and_controller_built_pods_are_skipped() -> None:
    pytorch = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          priorityClassName: training
          containers:
            - name: pytorch
              image: pytorch/pytorch
              resources:
                limits: {memory: 32Gi}
                request: {memory: 32Gi}
"""
    assert [(r, line, sev) for r, line, _, sev, _ in found(pytorch) if r == "unknown-field"] == [
        ("unknown-field", 16, "warning")
    ]
    # KServe builds the predictor's pod from fields that are not a pod spec's.
    isvc = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    minReplicas: 1
    model:
      modelFormat: {name: huggingface}
      resources:
        limits: {memory: 32Gi, nvidia.com/gpu: 1}
        requests: {memory: 32Gi, nvidia.com/gpu: 1}
"""
    assert [r for r, *_ in found(isvc) if r == "unknown-field"] == []


def test_pod_level_resources_volumes_and_ephemeral_containers() -> None:
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: x
  resources: {limit: {memory: 1Gi}}
  ephemeralContainers:
    - {name: debug, image: busybox, targetContainerName: c}
  containers:
    - name: c
      image: busybox
      resources: {limits: {memory: 1Gi}}
  volumes:
    - name: scratch
      emptydir: {}
"""
    assert [(r, line, m) for r, line, _, _, m in found(pod) if r == "unknown-field"] == [
        ("unknown-field", 6, "unknown field 'limit' in the pod's resources (did you mean 'limits'?)"),
        ("unknown-field", 15, "unknown field 'emptydir' in volume 'scratch' (did you mean 'emptyDir'?)"),
    ]


def test_the_field_table_is_generated_from_the_bundled_schemas() -> None:
    assert Path(fields.DATA).read_text() == fields.generate(), (
        "regenerate: python -m kubelint_ml.k8s.fields > kubelint_ml/data/pod-fields.json"
    )
    known = fields.known_fields()
    assert {"resources", "resizePolicy", "restartPolicy"} <= known["container"]  # 1.33's and sidecars' fields
    assert "targetContainerName" in known["ephemeralContainer"] and "targetContainerName" not in known["container"]
    assert known["resources"] == {"limits", "requests", "claims"}
    # the versions a field is in, for the profile's version (a field kept to the newest: open-ended)
    assert fields.field_span("container", "restartPolicyRules") == ((1, 34), None)
    assert fields.field_span("podSpec", "workloadRef") == ((1, 35), (1, 35))
    assert fields.field_span("podSpec", "containers") is None
    assert "restartPolicyRules" not in fields.fields_in((1, 33))["container"]
    assert "restartPolicyRules" in fields.fields_in((1, 38))["container"]
    assert "workloadRef" not in fields.fields_in((1, 36))["podSpec"]


SERVING_134 = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  replicas: 2
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      priorityClassName: serving
      hostnameOverride: vllm-head
      containers:
        - name: server
          image: vllm/vllm-openai
          restartPolicy: Never
          restartPolicyRules:
            - action: Restart
              exitCodes: {operator: In, values: [75]}
          resources:
            requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
            limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""


def test_a_field_the_profiles_version_lacks_is_unknown_for_the_built_in_kinds(tmp_path: Path) -> None:
    """With the profile's version, a built-in kind is held to that version's API: hostnameOverride and a
    container's restartPolicyRules are fields from 1.34, so kubectl's strict field validation rejects a
    1.33 Deployment that writes them. Without a version, or from 1.34, they are known; a custom resource's
    pod template follows its CRD, not the cluster's version."""
    from kubelint_ml.run.config import Config, Profile

    def at(version: str | None, text: str = SERVING_134) -> list[tuple]:
        config = Config(profile=Profile(kubernetes_version=version)) if version else None
        return [
            (f.rule, f.line, f.column, f.severity, f.message)
            for f in lint_text(text.encode(), RULES, config)
            if f.rule == "unknown-field"
        ]

    since = "is not a field in Kubernetes 1.33 (from Kubernetes 1.34)"
    assert at("1.33") == [
        ("unknown-field", 12, 7, "error", f"'hostnameOverride' in the pod spec {since}"),
        ("unknown-field", 17, 11, "error", f"'restartPolicyRules' in container 'server' {since}"),
    ]
    assert at(None) == at("1.34") == at("1.37") == []
    pytorchjob = (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n"
        "    Master:\n      replicas: 1\n      template:\n        spec:\n          hostnameOverride: head\n"
        "          containers: [{name: pytorch, image: pytorch/pytorch}]\n"
    )
    assert at("1.33", pytorchjob) == []
