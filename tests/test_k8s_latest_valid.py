"""Valid manifests written from the Kubernetes 1.34-1.37 API (k/k staging/src/k8s.io/api core/v1, batch/v1 and
resource/v1 types, their validation, and the KEPs: 4816 prioritized list, 5018 admin access, 5055 device
taints, 5075 consumable capacity, 5004 DRA extended resources, 2837 pod-level resources, 1287 in-place
resize, 3850/3998/4368/3939 Job fields, 753 sidecars, 5307 container restart rules, 4444 hostnameOverride,
3721 file env, 4317 pod certificates, 5532 RestartAllContainers): `check` finds nothing in them at 1.34-1.37,
with and without --schema (and --strict), and `audit` of the same objects as a cluster returns them finds
nothing either. They are valid on 1.37; an older version drops or refuses a few fields: 1.34 drops the
container restart rules (ContainerRestartRules is alpha and off), which is said as a warning (and not in an
audit, where a stored object that kept them shows the gate on); RestartAllContainers, which 1.35 refuses
(container-restart-rules-invalid), is checked from 1.36."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.k8s.schema import bundled_versions

DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: prioritized, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: req-0
        firstAvailable:
        - name: large
          deviceClassName: gpu.example.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].size == "large"'}
        - name: small
          deviceClassName: gpu.example.com
          allocationMode: ExactCount
          count: 2
          tolerations:
          - {key: example.com/unhealthy, operator: Exists, effect: NoSchedule}
      - name: mem
        exactly:
          deviceClassName: gpu.nvidia.com
          capacity:
            requests: {memory: 10Gi}
      constraints:
      - requests: [req-0]
        matchAttribute: gpu.example.com/model
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: admin-gpus, namespace: monitoring}
spec:
  devices:
    requests:
    - name: all-gpus
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, adminAccess: true}
---
apiVersion: v1
kind: Pod
metadata: {name: prioritized, namespace: ml}
spec:
  priorityClassName: training
  restartPolicy: Never
  initContainers:
  - name: warm
    image: busybox
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
      claims: [{name: gpu, request: mem}]
  - name: proxy
    image: envoyproxy/envoy
    restartPolicy: Always
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {cpu: "4", memory: 16Gi}
      limits: {cpu: "4", memory: 16Gi}
      claims: [{name: gpu, request: req-0}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: prioritized}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm, namespace: monitoring}
spec:
  selector: {matchLabels: {app: dcgm}}
  template:
    metadata: {labels: {app: dcgm}}
    spec:
      priorityClassName: system-node-critical
      containers:
      - name: dcgm
        image: nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3
        resources:
          requests: {cpu: 100m, memory: 256Mi}
          limits: {memory: 256Mi}
          claims: [{name: gpus}]
      resourceClaims:
      - {name: gpus, resourceClaimName: admin-gpus}
"""

POD_LEVEL_AND_RESIZE = """\
apiVersion: v1
kind: Pod
metadata: {name: pod-level}
spec:
  priorityClassName: training
  restartPolicy: Never
  resources:
    requests: {cpu: "4", memory: 8Gi}
    limits: {cpu: "4", memory: 8Gi}
  initContainers:
  - name: setup
    image: busybox
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    resources:
      requests: {cpu: "3", memory: 6Gi}
      limits: {cpu: "4", memory: 8Gi}
  - name: log
    image: busybox
    restartPolicy: Always
    resizePolicy:
    - {resourceName: memory, restartPolicy: NotRequired}
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      limits: {cpu: "1", memory: 2Gi}
  containers:
  - name: main
    image: pytorch/pytorch
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    - {resourceName: memory, restartPolicy: NotRequired}
    resources:
      requests: {cpu: "3", memory: 6Gi}
      limits: {cpu: "4", memory: 7Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: pod-level-only}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      priorityClassName: serving
      resources:
        requests: {cpu: "2", memory: 4Gi}
        limits: {cpu: "2", memory: 4Gi}
      containers:
      - name: a
        image: nginx
        resizePolicy:
        - {resourceName: memory, restartPolicy: RestartContainer}
      - name: b
        image: nginx
"""

JOBS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completionMode: Indexed
  completions: 10
  parallelism: 5
  backoffLimitPerIndex: 1
  maxFailedIndexes: 5
  managedBy: kueue.x-k8s.io/multikueue
  podReplacementPolicy: Failed
  successPolicy:
    rules:
    - {succeededIndexes: "0,2-3", succeededCount: 1}
    - succeededCount: 5
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {containerName: main, operator: In, values: [42]}
    - action: Ignore
      onPodConditions:
      - type: DisruptionTarget
    - action: Count
      onExitCodes: {containerName: sidecar, operator: NotIn, values: [0, 2]}
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      initContainers:
      - name: sidecar
        image: fluent/fluent-bit
        restartPolicy: Always
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      containers:
      - name: main
        image: python
        restartPolicy: Never
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [137, 143]}
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      completionMode: Indexed
      backoffLimitPerIndex: 2
      podReplacementPolicy: TerminatingOrFailed
      successPolicy:
        rules: [{succeededIndexes: "0"}]
      template:
        spec:
          priorityClassName: training
          restartPolicy: OnFailure
          containers:
          - name: main
            image: python
            resources:
              requests: {cpu: "1", memory: 1Gi}
              limits: {cpu: "1", memory: 1Gi}
"""

POD_FIELDS = """\
apiVersion: v1
kind: Pod
metadata: {name: fields}
spec:
  priorityClassName: training
  hostnameOverride: my-host.example
  restartPolicy: Never
  initContainers:
  - name: setup
    image: busybox
    command: ["sh", "-c", "echo CONFIG_VAR=x > /data/config.env"]
    resources:
      requests: {cpu: 100m, memory: 64Mi, ephemeral-storage: 10Mi}
      limits: {cpu: 100m, memory: 64Mi}
    volumeMounts: [{name: config, mountPath: /data}]
  containers:
  - name: main
    image: busybox
    env:
    - name: CONFIG_VAR
      valueFrom:
        fileKeyRef: {path: config.env, volumeName: config, key: CONFIG_VAR, optional: false}
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
    volumeMounts: [{name: certs, mountPath: /var/run/certs}]
  volumes:
  - name: config
    emptyDir: {sizeLimit: 1Mi}
  - name: certs
    projected:
      sources:
      - podCertificate:
          signerName: coolcert.example.com/foo
          keyType: ED25519
          credentialBundlePath: credentialbundle.pem
          maxExpirationSeconds: 86400
"""

# Pod-level budgets shared with containers that set nothing, a Guaranteed sidecar inside one, and resize
# policies that restart the container in a pod that may restart it.
SHARED_BUDGETS = """\
apiVersion: v1
kind: Pod
metadata: {name: shared-budget}
spec:
  priorityClassName: serving
  resources:
    requests: {cpu: 400m, memory: 400Mi}
    limits: {cpu: 400m, memory: 400Mi}
  initContainers:
  - name: agent
    image: registry.k8s.io/pause:3.10
    restartPolicy: Always
    resources:
      requests: {cpu: 200m, memory: 200Mi}
      limits: {cpu: 200m, memory: 200Mi}
  containers:
  - name: web
    image: registry.k8s.io/pause:3.10
    resizePolicy:
    - {resourceName: cpu, restartPolicy: RestartContainer}
    - {resourceName: memory, restartPolicy: RestartContainer}
  - name: helper
    image: registry.k8s.io/pause:3.10
    resizePolicy:
    - {resourceName: memory, restartPolicy: RestartContainer}
    resources:
      requests: {cpu: 100m, memory: 100Mi}
"""

# A sidecar whose exit restarts every container (RestartAllContainers, KEP-5532): the action and a sidecar's
# rules need RestartAllContainersOnContainerExits, beta and on from 1.36 (1.35 refuses them).
RESTART_ALL = """\
apiVersion: v1
kind: Pod
metadata: {name: restart-everything}
spec:
  priorityClassName: training
  restartPolicy: Never
  initContainers:
  - name: prepare
    image: registry.k8s.io/busybox:1.37
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
  - name: watcher
    image: registry.k8s.io/busybox:1.37
    restartPolicy: Always
    restartPolicyRules:
    - action: RestartAllContainers
      exitCodes: {operator: In, values: [77]}
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
  containers:
  - name: trainer
    image: registry.k8s.io/busybox:1.37
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
"""

CASES = {
    "dra": DRA,
    "pod-level-and-resize": POD_LEVEL_AND_RESIZE,
    "jobs": JOBS,
    "pod-fields": POD_FIELDS,
    "shared-budgets": SHARED_BUDGETS,
    "restart-all": RESTART_ALL,
}
SINCE = {"restart-all": (1, 36)}
VERSIONS = [v for v in ("1.34", "1.35", "1.36", "1.37") if v in bundled_versions()]
RULES_DROPPED = (
    "container-restart-rules-invalid",
    "container 'main': restartPolicyRules are dropped unless the ContainerRestartRules gate is on (alpha, off by "
    "default in 1.34)",
)
# what a version drops, said as a warning: the jobs case's container restart rules on 1.34
DROPPED = {"1.34": [("jobs.yaml", 40, *RULES_DROPPED)]}


def _cases(version: str) -> dict[str, str]:
    """The cases valid at a version (all but the RestartAllContainers pod before 1.36)."""
    v = tuple(int(p) for p in version.split("."))
    return {name: text for name, text in CASES.items() if v >= SINCE.get(name, (0, 0))}


def _findings(args: list[str]) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, [*args, "-f", "json"], catch_exceptions=False)
    out = r.stdout
    found = json.loads(out[: out.rindex("}") + 1])["findings"]
    return r.exit_code, [(f["file"].rsplit("/", 1)[-1], f["line"], f["rule"], f["message"]) for f in found]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("schema", [[], ["--schema"], ["--schema", "--strict"]], ids=["rules", "schema", "strict"])
def test_check_finds_nothing_in_valid_manifests_of_the_newest_api(tmp_path, version, schema):
    for name, text in _cases(version).items():
        (tmp_path / f"{name}.yaml").write_text(text)
    code, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version, *schema])
    assert (code, found) == (0, DROPPED.get(version, [])), version


@pytest.mark.parametrize("version", VERSIONS)
def test_audit_finds_nothing_in_the_same_objects_as_a_cluster_returns_them(tmp_path, version):
    items = []
    for text in _cases(version).values():
        for doc in yaml.safe_load_all(text):
            if doc["kind"] not in ("DeviceClass",):
                doc["metadata"].setdefault("namespace", "default")
            doc["metadata"]["uid"] = f"uid-{len(items)}"
            items.append(doc)
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
    config = tmp_path / "c.yaml"
    config.write_text(f"profile: {{kubernetesVersion: '{version}'}}\n")
    assert _findings(["audit", str(dump), "-c", str(config)]) == (0, [])


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11")
@pytest.mark.parametrize("version", VERSIONS)
def test_serve_and_the_exported_policies_admit_them(tmp_path, version):
    """serve (the webhook's judgement of one object) and the exported ValidatingAdmissionPolicies, with the
    DRA objects as the config's context, find nothing either."""
    from kubelint_ml.admission.review import lint_object

    sys.path.insert(0, str(Path(__file__).parent))
    from test_admission_vap import _builtin_policies, _compare

    docs = [d for text in _cases(version).values() for d in yaml.safe_load_all(text)]
    (tmp_path / "dra.yaml").write_text(yaml.safe_dump_all([d for d in docs if d["apiVersion"].startswith("resource")]))
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text(f"context: [dra.yaml]\nprofile: {{kubernetesVersion: '{version}'}}\n")
    policy, compiled = _builtin_policies(config)
    counts: dict = {}
    for d in docs:
        if d["apiVersion"].startswith("resource"):
            continue
        findings, _ = lint_object(policy, d)
        # (not the 1.34 drops: an object that reaches a validating webhook with the restart rules kept them)
        assert [(f.rule, f.message) for f in findings if f.suppressed is None] == [], d["metadata"]["name"]
        _compare(policy, compiled, d, f"{d['kind']} {d['metadata']['name']} on {version}", counts)
    assert counts and all(c[False] == 0 for c in counts.values())
