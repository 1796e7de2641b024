"""Cases written from the KEPs and the Kubernetes source, run through ``check`` as a user runs it:
with and without a 1.33 profile, and with ``--schema``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main

GPU_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: ExactCount
          count: 1
"""

GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: training
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
      - name: train
        image: pytorch/pytorch
        resources:
          requests: {cpu: "16", memory: 1800Gi}
          limits: {memory: 1800Gi}
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
"""

NIC = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: rdma-nic
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: rdma.mellanox.com
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx
        resources:
          claims:
          - name: nic
      resourceClaims:
      - name: nic
        resourceClaimTemplateName: rdma-nic
"""

IMPLICIT_EXTENDED = """\
apiVersion: v1
kind: Pod
metadata:
  name: ext
spec:
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      limits:
        deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1
"""

CLASS_EXTENDED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: h100
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com'
---
apiVersion: v1
kind: Pod
metadata:
  name: ext2
spec:
  priorityClassName: training
  nodeSelector:
    node.kubernetes.io/instance-type: p5.48xlarge
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      requests: {cpu: "8"}
      limits:
        example.com/gpu: 1
        memory: 1800Gi
"""

MISSING_TEMPLATE = (
    GPU_TEMPLATE
    + "---\n"
    + GPU_JOB.replace("resourceClaimTemplateName: single-gpu", "resourceClaimTemplateName: two-gpus")
)

POD_LEVEL_ONLY = """\
apiVersion: v1
kind: Pod
metadata:
  name: pl
spec:
  priorityClassName: training
  resources:
    requests: {cpu: "2", memory: 4Gi}
    limits: {cpu: "2", memory: 4Gi}
  containers:
  - name: c
    image: x
"""

# content/en/examples/controllers/job-pod-failure-policy-ignore.yaml (kubernetes/website)
POD_FAILURE_POLICY_IGNORE = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: job-pod-failure-policy-ignore
spec:
  completions: 4
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: docker.io/library/bash:5
        command: ["bash"]
        args:
        - -c
        - echo "Hello world! I'm going to exit with 0 (success)." && sleep 90 && exit 0
  backoffLimit: 0
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions:
      - type: DisruptionTarget
"""


def check(tmp_path: Path, text: str, *args: str, version: str | None = None) -> tuple[int, list[tuple]]:
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    argv = ["check", str(path), "--format", "json", *args]
    if version:
        config = tmp_path / "kubelint-ml.yaml"
        config.write_text(f'profile:\n  kubernetesVersion: "{version}"\n')
        argv += ["--config", str(config)]
    r = CliRunner().invoke(main, argv)
    assert r.exit_code in (0, 1), r.output
    found = json.loads(r.output)["findings"]
    return r.exit_code, sorted((f["line"], f["rule"], f["severity"], f["message"]) for f in found)


@pytest.mark.parametrize("version", [None, "1.34", "1.37"])
def test_a_gpu_claimed_through_a_template_counts_for_the_share(tmp_path, version):
    _, found = check(tmp_path, GPU_TEMPLATE + "---\n" + GPU_JOB, version=version)
    assert [f for f in found if f[1] == "gpu-memory-share-mismatch"] == [
        (30, "gpu-memory-share-mismatch", "warning", "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
    ]


def test_a_nic_claim_raises_no_error(tmp_path):
    code, found = check(tmp_path, NIC)
    assert code == 0
    assert {f[2] for f in found} == {"warning"}
    assert ("besteffort-qos", "warning") in {(f[1], f[2]) for f in found}


def test_dra_extended_resources_are_accelerators(tmp_path):
    code, found = check(tmp_path, IMPLICIT_EXTENDED)
    assert code == 1
    assert (5, "besteffort-qos", "error", "BestEffort QoS: no cpu or memory requests or limits (GPU pod)") in found
    _, found = check(tmp_path, CLASS_EXTENDED)
    assert [f for f in found if f[1] == "gpu-memory-share-mismatch"] == [
        (26, "gpu-memory-share-mismatch", "warning", "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
    ]


def test_a_missing_template_is_reported_at_its_name(tmp_path):
    code, found = check(tmp_path, MISSING_TEMPLATE)
    assert code == 1
    assert [f for f in found if f[1] == "unknown-resource-claim"] == [
        (
            36,
            "unknown-resource-claim",
            "error",
            "ResourceClaimTemplate 'two-gpus' is not defined among the inputs or --context",
        )
    ]
    # nothing is known of its devices: not judged as a GPU pod, no GPU share
    assert not [f for f in found if f[1] == "gpu-memory-share-mismatch"]


def test_pod_level_resources_by_the_profiles_version(tmp_path):
    assert check(tmp_path, POD_LEVEL_ONLY) == (0, [])
    code, found = check(tmp_path, POD_LEVEL_ONLY, version="1.33")
    assert code == 0
    assert [(f[0], f[1], f[2]) for f in found] == [
        (5, "besteffort-qos", "warning"),
        (7, "pod-level-resources-invalid", "warning"),
        (11, "missing-memory-limit", "warning"),
        (11, "missing-memory-request", "warning"),
    ]


@pytest.mark.parametrize("version", [None, "1.33"])
def test_the_documented_pod_failure_policy_passes_schema(tmp_path, version):
    code, found = check(tmp_path, POD_FAILURE_POLICY_IGNORE, "--schema", version=version)
    assert code == 0
    assert not [
        f for f in found if f[1].startswith("schema-") or f[1] in ("job-spec-invalid", "restart-policy-invalid")
    ]


def test_an_invalid_on_pod_conditions_status_is_still_a_schema_error(tmp_path):
    bad = POD_FAILURE_POLICY_IGNORE + "        status: Maybe\n"
    bad = bad.replace(
        "      - type: DisruptionTarget\n        status: Maybe\n", "      - type: DisruptionTarget\n        status: 7\n"
    )
    _, found = check(tmp_path, textwrap.dedent(bad), "--schema")
    assert [f[:3] for f in found if f[1] == "schema-invalid"] == [(24, "schema-invalid", "error")]
