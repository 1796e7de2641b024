"""Pod, Job and DRA API fields of Kubernetes 1.33-1.37 that the rules could misread, written from the
sources: k/k pkg/apis/core/validation/validation.go (validateInitContainers, validateContainerCommon,
validateResizePolicy, validatePodResourceConsistency), pkg/api/pod/util.go (dropContainerRestartRules),
pkg/features/kube_features.go (ContainerStopSignals alpha and off in every release here,
ContainerRestartRules beta from 1.35, DRADeviceTaints beta from 1.36, DRAExtendedResource beta from
1.36), pkg/kubelet/cm/dra/claiminfo.go (cdiDevicesAsList), and the KEPs: 753 sidecars, 1287 in-place
resize, 2837 pod-level resources, 4960 stop signals, 3721 file env, 4444 hostnameOverride, 4368 Job
managedBy, 3939 podReplacementPolicy, 3998 successPolicy, 3850 backoffLimitPerIndex, 5307 container
restart rules, 5055 device taints, 4815 partitionable devices, 5007 binding conditions, 5004 DRA
extended resources."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.k8s.schema import bundled_versions

# A sidecar (resize and pod-level resources), hugepages in pod-level and container resources, a user
# namespace, an OS, scheduling gates and a stop signal (ContainerStopSignals is off by default through
# 1.36, so the API server drops lifecycle.stopSignal: accepted without spec.os too, and pod-field-dropped
# says the signal is not used).
SIDECAR_HUGEPAGES = """\
apiVersion: v1
kind: Pod
metadata: {name: sidecar-hugepages}
spec:
  priorityClassName: training
  restartPolicy: Never
  hostUsers: false
  os: {name: linux}
  schedulingGates:
  - name: example.com/quota
  resources:
    requests: {cpu: "2", memory: 4Gi, hugepages-2Mi: 1Gi}
    limits: {cpu: "2", memory: 4Gi, hugepages-2Mi: 1Gi}
  initContainers:
  - name: proxy
    image: envoyproxy/envoy
    restartPolicy: Always
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    - {resourceName: memory, restartPolicy: NotRequired}
    resources:
      requests: {cpu: 500m, memory: 512Mi}
      limits: {cpu: 500m, memory: 512Mi}
  containers:
  - name: main
    image: pytorch/pytorch
    lifecycle:
      stopSignal: SIGUSR1
    resources:
      requests: {cpu: "1", memory: 2Gi, hugepages-2Mi: 512Mi}
      limits: {cpu: "1", memory: 2Gi, hugepages-2Mi: 512Mi}
    volumeMounts: [{name: hp, mountPath: /hugepages}]
  volumes:
  - name: hp
    emptyDir: {medium: HugePages}
---
apiVersion: v1
kind: Pod
metadata: {name: stop-no-os}
spec:
  priorityClassName: training
  containers:
  - name: main
    image: python
    lifecycle:
      stopSignal: SIGUSR1
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
---
apiVersion: v1
kind: Pod
metadata: {name: windows}
spec:
  priorityClassName: serving
  os: {name: windows}
  containers:
  - name: main
    image: mcr.microsoft.com/windows/servercore
    lifecycle:
      stopSignal: SIGKILL
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
---
apiVersion: v1
kind: Pod
metadata: {name: env-file}
spec:
  priorityClassName: serving
  hostnameOverride: node-a
  setHostnameAsFQDN: false
  initContainers:
  - name: gen
    image: busybox
    resources:
      requests: {cpu: 100m, memory: 64Mi, ephemeral-storage: 10Mi}
      limits: {cpu: 100m, memory: 64Mi}
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  containers:
  - name: main
    image: busybox
    env:
    - name: TOKEN
      valueFrom:
        fileKeyRef: {path: env/vars.env, volumeName: cfg, key: TOKEN, optional: true}
    resources:
      requests: {cpu: "1", memory: 1Gi, ephemeral-storage: 10Mi}
      limits: {cpu: "1", memory: 1Gi}
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  volumes:
  - name: cfg
    emptyDir: {sizeLimit: 10Mi}
"""

# Jobs: managedBy with suspend and the mutable scheduling directives of a suspended Job, per-index
# backoff with FailIndex, podReplacementPolicy Failed beside a podFailurePolicy, an elastic Indexed Job
# (completions == parallelism), successPolicy with a sidecar, and container restart rules beside a
# podFailurePolicy (KEP-5307: the Job controller judges the pod once it has finished).
JOBS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: managed}
spec:
  managedBy: kueue.x-k8s.io/multikueue
  suspend: true
  completionMode: Indexed
  completions: 4
  parallelism: 4
  backoffLimitPerIndex: 0
  maxFailedIndexes: 1
  podReplacementPolicy: Failed
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {operator: In, values: [3]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  successPolicy:
    rules:
    - succeededIndexes: "0"
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      schedulingGates: [{name: kueue.x-k8s.io/admission}]
      initContainers:
      - name: log-shipper
        image: fluent/fluent-bit
        restartPolicy: Always
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 100m, memory: 128Mi}
      containers:
      - name: main
        image: python
        restartPolicy: Never
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: NotIn, values: [0, 1]}
        lifecycle:
          stopSignal: SIGTERM
          preStop: {sleep: {seconds: 5}}
        resources:
          requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
          limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
---
apiVersion: batch/v1
kind: Job
metadata: {name: elastic}
spec:
  completionMode: Indexed
  completions: 8
  parallelism: 8
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [1]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget, status: "True"}]
  podReplacementPolicy: Failed
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      containers:
      - name: main
        image: python
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
---
apiVersion: batch/v1
kind: Job
metadata: {name: sidecar-success}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  successPolicy:
    rules:
    - succeededIndexes: "0-1"
      succeededCount: 1
  template:
    spec:
      priorityClassName: training
      restartPolicy: OnFailure
      initContainers:
      - name: side
        image: busybox
        restartPolicy: Always
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      containers:
      - name: main
        image: python
        restartPolicy: OnFailure
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
"""

# DRA: request tolerations of device taints (dropped before 1.36, when DRADeviceTaints is off: the
# claim then cannot use tainted devices, nothing is rejected), a DeviceTaintRule, a ResourceSlice with
# shared counters and binding conditions, an allocated claim with binding conditions and device status
# shared by containers naming its requests (one of them for administrative access).
DRA = """\
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector:
    driver: gpu.nvidia.com
    pool: node-1
  taint:
    key: example.com/maintenance
    value: planned
    effect: NoExecute
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tolerant, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          tolerations:
          - {key: example.com/maintenance, operator: Equal, value: planned, effect: NoExecute, tolerationSeconds: 300}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory: {value: 80Gi}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory: {value: 80Gi}
    bindsToNode: true
    bindingConditions: [example.com/attached]
    bindingFailureConditions: [example.com/failed]
    taints:
    - {key: example.com/unhealthy, effect: NoSchedule}
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant, namespace: ml}
spec:
  priorityClassName: training
  restartPolicy: Never
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {cpu: "4", memory: 32Gi}
      limits: {cpu: "4", memory: 32Gi}
      claims: [{name: gpu, request: gpu}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: tolerant}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: big, deviceClassName: gpu.nvidia.com, count: 2}
      - {name: small, deviceClassName: gpu.nvidia.com, count: 1}
    - name: admin
      exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true, allocationMode: All}
status:
  allocation:
    devices:
      results:
      - {request: gpu/small, driver: gpu.nvidia.com, pool: node-1, device: gpu-0, bindingConditions: [example.com/ready]}
      - {request: admin, driver: gpu.nvidia.com, pool: node-1, device: gpu-0, adminAccess: true}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node-1]}]
    allocationTimestamp: "2026-01-01T00:00:00Z"
  reservedFor:
  - {resource: pods, name: user, uid: abc}
  devices:
  - driver: gpu.nvidia.com
    pool: node-1
    device: gpu-0
    conditions:
    - {type: Ready, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", reason: Ok, message: ok}
---
apiVersion: v1
kind: Pod
metadata: {name: user, namespace: ml}
spec:
  priorityClassName: training
  restartPolicy: Never
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {cpu: "4", memory: 32Gi}
      limits: {cpu: "4", memory: 32Gi}
      claims: [{name: gpu, request: gpu}]
  - name: monitor
    image: nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3
    resources:
      requests: {cpu: 100m, memory: 128Mi}
      limits: {cpu: 100m, memory: 128Mi}
      claims: [{name: gpu, request: admin}]
  resourceClaims:
  - {name: gpu, resourceClaimName: shared-gpu}
"""

# The container restart rules blog post's three examples (kubernetes/website, 1.34): a rule restarting on
# one exit code, a try-once init container (restartPolicy Never: not a sidecar) in an Always pod, and two
# containers with their own restart policies, here beside pod-level resources and resize policies.
RESTART_RULES = """\
apiVersion: v1
kind: Pod
metadata: {name: restart-on-exit-codes}
spec:
  priorityClassName: batch
  restartPolicy: Never
  containers:
  - name: restart-on-exit-codes
    image: docker.io/library/busybox:1.28
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [42]}
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
---
apiVersion: v1
kind: Pod
metadata: {name: fail-pod-if-init-fails}
spec:
  priorityClassName: batch
  restartPolicy: Always
  initContainers:
  - name: init-once
    image: docker.io/library/busybox:1.28
    restartPolicy: Never
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    resources:
      requests: {cpu: "2", memory: 2Gi}
      limits: {cpu: "2", memory: 2Gi}
  containers:
  - name: main-container
    image: docker.io/library/busybox:1.28
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
---
apiVersion: v1
kind: Pod
metadata: {name: on-failure-pod}
spec:
  priorityClassName: batch
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {cpu: "1", memory: 1Gi}
  containers:
  - name: restart-on-failure
    image: docker.io/library/busybox:1.28
    restartPolicy: OnFailure
    resources:
      requests: {cpu: 500m, memory: 512Mi}
  - name: restart-always
    image: docker.io/library/busybox:1.28
    restartPolicy: Always
    resizePolicy:
    - {resourceName: memory, restartPolicy: RestartContainer}
"""

# A sidecar and a container asking for a restart on resize in an OnFailure Job pod: allowed (only a
# restartPolicy: Never pod holds every entry to NotRequired).
RESIZE_ONFAILURE = """\
apiVersion: batch/v1
kind: Job
metadata: {name: onfail}
spec:
  template:
    spec:
      priorityClassName: training
      restartPolicy: OnFailure
      initContainers:
      - name: side
        image: busybox
        restartPolicy: Always
        resizePolicy:
        - {resourceName: memory, restartPolicy: RestartContainer}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      containers:
      - name: main
        image: python
        resizePolicy:
        - {resourceName: cpu, restartPolicy: RestartContainer}
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
"""

CASES = {
    "sidecar-hugepages": SIDECAR_HUGEPAGES,
    "jobs": JOBS,
    "dra": DRA,
    "restart-rules": RESTART_RULES,
    "resize-onfailure": RESIZE_ONFAILURE,
}
VERSIONS = [v for v in ("1.34", "1.35", "1.36", "1.37") if v in bundled_versions()]
_DROPPED = "restartPolicyRules are dropped unless the ContainerRestartRules gate is on (alpha, off by default in 1.34)"


def _stop_signals(version: str) -> list[tuple]:
    """The sidecar-hugepages pods' stop signals, dropped while ContainerStopSignals is alpha (1.33-1.36)."""
    gate = f"is dropped unless the ContainerStopSignals gate is on (alpha, off by default in {version})"
    return [
        (
            "sidecar-hugepages.yaml",
            line,
            19,
            "pod-field-dropped",
            "warning",
            f"container 'main' stopSignal {sig} {gate}",
        )
        for line, sig in ((28, "SIGUSR1"), (46, "SIGUSR1"), (61, "SIGKILL"))
    ]


# what a version drops, said as a warning: the container restart rules on 1.34 (ContainerRestartRules off),
# the stop signals before 1.37 (ContainerStopSignals alpha)
DROPPED = {
    "1.34": [
        ("jobs.yaml", 40, 9, "container-restart-rules-invalid", "warning", f"container 'main': {_DROPPED}"),
        (
            "restart-rules.yaml",
            11,
            5,
            "container-restart-rules-invalid",
            "warning",
            f"container 'restart-on-exit-codes': {_DROPPED}",
        ),
        *_stop_signals("1.34"),
    ],
    "1.35": _stop_signals("1.35"),
    "1.36": _stop_signals("1.36"),
}


def _findings(args: list[str]) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, [*args, "-f", "json"], catch_exceptions=False)
    out = r.stdout
    found = json.loads(out[: out.rindex("}") + 1])["findings"]
    return r.exit_code, [
        (f["file"].rsplit("/", 1)[-1], f["line"], f["column"], f["rule"], f["severity"], f["message"]) for f in found
    ]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("schema", [[], ["--schema"]], ids=["rules", "schema"])
def test_check_finds_nothing_in_valid_manifests(tmp_path, version, schema):
    for name, text in CASES.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version, *schema])
    assert found == (0, DROPPED.get(version, []))


@pytest.mark.parametrize("version", VERSIONS)
def test_audit_finds_nothing_in_the_same_objects_as_a_cluster_returns_them(tmp_path, version):
    items = []
    for text in CASES.values():
        for doc in yaml.safe_load_all(text):
            if doc["kind"] not in ("DeviceTaintRule", "ResourceSlice"):
                doc["metadata"].setdefault("namespace", "default")
            doc["metadata"]["uid"] = f"uid-{len(items)}"
            items.append(doc)
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    config = tmp_path / "c.yaml"
    config.write_text(f"profile: {{kubernetesVersion: '{version}'}}\n")
    assert _findings(["audit", str(dump), "-c", str(config)]) == (0, [])


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11")
@pytest.mark.parametrize("version", VERSIONS)
def test_serve_and_the_exported_policies_admit_them(tmp_path, version):
    """serve (one object at a time, the DRA objects as the config's context) and the exported
    ValidatingAdmissionPolicies find nothing in them either, at 1.34 too: the API server drops the restart
    rules with ContainerRestartRules off before validating webhooks see the object, so one that reaches
    serve with them shows the gate on."""
    from kubelint_ml.admission.review import lint_object

    sys.path.insert(0, str(Path(__file__).parent))
    from test_admission_vap import _builtin_policies, _compare

    docs = [d for text in CASES.values() for d in yaml.safe_load_all(text)]
    dra = [d for d in docs if d["apiVersion"].startswith("resource")]
    (tmp_path / "dra.yaml").write_text(yaml.safe_dump_all(dra))
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


def test_a_sidecar_asking_for_restart_on_resize_in_a_never_pod_is_rejected(tmp_path):
    """validateContainerCommon passes the pod's restartPolicy to validateResizePolicy for init containers
    too: a sidecar (restartPolicy: Always) is held to 'NotRequired' in a restartPolicy: Never pod, from
    1.33 (InPlacePodVerticalScaling on) on."""
    (tmp_path / "p.yaml").write_text(
        SIDECAR_HUGEPAGES.split("---")[0].replace(
            "- {resourceName: memory, restartPolicy: NotRequired}\n    resources:\n      requests: {cpu: 500m",
            "- {resourceName: memory, restartPolicy: RestartContainer}\n    resources:\n      requests: {cpu: 500m",
        )
    )
    for version in ("1.33", *VERSIONS):
        _, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version])
        assert [f[1:5] for f in found if f[3] not in ("pod-level-resources-invalid", "pod-field-dropped")] == [
            (20, 45, "resize-policy-invalid", "error")
        ], version
        resize = [f for f in found if f[3] == "resize-policy-invalid"]
        assert "sidecar 'proxy' resizePolicy RestartContainer in a restartPolicy: Never pod" in resize[-1][5]


TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - {name: large, deviceClassName: gpu.nvidia.com, count: 2}
        - {name: small, deviceClassName: gpu.nvidia.com}
      - name: nic
        exactly: {deviceClassName: rdma.example.com}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: trainer}}
spec:
  priorityClassName: training
  restartPolicy: Never
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {{cpu: "4", memory: 32Gi}}
      limits: {{cpu: "4", memory: 32Gi}}
      claims: [{uses}]
  resourceClaims:
  - {{name: gpu, {source}}}
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_a_container_naming_a_request_its_claim_lacks_gets_none_of_the_devices(tmp_path, version):
    """The API server knows only the pod's claim names; the scheduler allocates the claim as usual; the
    kubelet gives a container only the devices allocated for the request it names
    (cdiDevicesAsList), so the container runs without them. An error where the template is in the
    pod's file, a warning where only another input defines it."""
    (tmp_path / "a.yaml").write_text(
        TEMPLATE + POD.format(uses="{name: gpu, request: gpus}", source="resourceClaimTemplateName: one-gpu")
    )
    code, found = _findings(["check", str(tmp_path / "a.yaml"), "-j1", "--kubernetes-version", version])
    assert code == 1
    assert found == [
        (
            "a.yaml",
            27,
            37,
            "unknown-resource-claim",
            "error",
            "container 'main' uses request 'gpus' of claim 'gpu', which ResourceClaimTemplate 'one-gpu' does not "
            "have (requests gpu, nic)",
        )
    ]
    # the template in another input: the cluster's object of the name may differ
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "p.yaml").write_text(
        POD.format(uses="{name: gpu, request: small}", source="resourceClaimTemplateName: one-gpu")
    )
    _, found = _findings(["check", str(tmp_path / "t.yaml"), str(tmp_path / "p.yaml"), "-j1"])
    assert [f[:5] for f in found] == [("p.yaml", 13, 37, "unknown-resource-claim", "warning")]
    # a subrequest's name is not a request's
    assert "'small' of claim 'gpu', a firstAvailable alternative of request 'gpu'" in found[0][5]


@pytest.mark.parametrize("uses", ["gpu/large", "small"])
def test_a_container_naming_a_first_available_alternative_gets_none_and_the_fix_names_its_request(tmp_path, uses):
    """KEP-4816: "In the PodSpec, however, the subrequest names are not valid. Only the main request name
    may be used." The kubelet plugin helper reports a prepared device under its request's name
    (stripSubrequestNames), so a container naming ``gpu/large`` (or ``small``) gets no device whichever
    alternative is allocated. The finding names the request; the fix (unsafe: the container then gets
    the devices) writes it, byte for byte, and a second run changes nothing."""
    text = TEMPLATE + POD.format(uses=f"{{name: gpu, request: {uses}}}", source="resourceClaimTemplateName: one-gpu")
    path = tmp_path / "a.yaml"
    path.write_text(text)
    code, found = _findings(["check", str(path), "-j1"])
    assert code == 1
    assert found == [
        (
            "a.yaml",
            27,
            37,
            "unknown-resource-claim",
            "error",
            f"container 'main' uses '{uses}' of claim 'gpu', a firstAvailable alternative of request 'gpu'; "
            "containers name the request",
        )
    ]
    r = CliRunner().invoke(main, ["check", str(path), "--fix"], catch_exceptions=False)
    assert path.read_text() == text  # unsafe: not applied without --unsafe-fixes
    r = CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    assert r.exit_code == 0, r.stdout
    assert path.read_bytes() == text.replace(f"request: {uses}}}", "request: gpu}").encode()
    assert _findings(["check", str(path), "-j1"]) == (0, [])
    # beside another entry of the claim the request's name could repeat one: no fix
    path.write_text(
        TEMPLATE
        + POD.format(
            uses=f"{{name: gpu, request: {uses}}}, {{name: gpu, request: nic}}",
            source="resourceClaimTemplateName: one-gpu",
        )
    )
    before = path.read_bytes()
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    assert path.read_bytes() == before
    assert [f[1:5] for f in _findings(["check", str(path), "-j1"])[1]] == [(27, 37, "unknown-resource-claim", "error")]


def test_a_first_available_alternative_named_by_a_container_in_serve_and_the_editor(tmp_path):
    """serve, with the template as context, and the editor's linter say what check says."""
    from kubelint_ml.admission.review import lint_object, load_policy

    (tmp_path / "claims.yaml").write_text(TEMPLATE)
    pod = POD.format(uses="{name: gpu, request: gpu/small}", source="resourceClaimTemplateName: one-gpu")
    (tmp_path / "pod.yaml").write_text(pod)
    _, found = _findings(["check", str(tmp_path / "pod.yaml"), "--context", str(tmp_path / "claims.yaml"), "-j1"])
    assert [f[1:5] for f in found] == [(13, 37, "unknown-resource-claim", "error")]
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\n")
    findings, _ = lint_object(load_policy(str(config)), yaml.safe_load(pod))
    assert [(f.rule, f.severity, f.message) for f in findings if f.suppressed is None] == [
        ("unknown-resource-claim", "error", found[0][5])
    ]


def test_requests_the_claim_has_are_fine_and_a_claim_of_unknown_spec_is_not_judged(tmp_path):
    for uses in ("{name: gpu, request: gpu}", "{name: gpu}"):
        (tmp_path / "a.yaml").write_text(TEMPLATE + POD.format(uses=uses, source="resourceClaimTemplateName: one-gpu"))
        assert _findings(["check", str(tmp_path / "a.yaml"), "-j1"]) == (0, []), uses
    # the NIC request only: the claim's GPU request reaches no container (accelerator-claim-unused)
    (tmp_path / "a.yaml").write_text(
        TEMPLATE + POD.format(uses="{name: gpu, request: nic}", source="resourceClaimTemplateName: one-gpu")
    )
    _, found = _findings(["check", str(tmp_path / "a.yaml"), "-j1"])
    assert [f[3:5] for f in found] == [("accelerator-claim-unused", "warning")]
    # a claim defined nowhere: its requests are not known (the missing claim is the finding)
    (tmp_path / "a.yaml").write_text(
        POD.format(uses="{name: gpu, request: gpus}", source="resourceClaimName: elsewhere")
    )
    _, found = _findings(["check", str(tmp_path / "a.yaml"), "-j1"])
    assert [f[1:5] for f in found] == [(15, 36, "unknown-resource-claim", "warning")]
    assert "ResourceClaim 'elsewhere' is not defined" in found[0][5]


def test_a_resource_claim_with_the_request_in_context_and_serve(tmp_path):
    """--context supplies the claim (an error: the claims given describe the cluster), and serve's
    judgement of the pod alone, with the claim as context, is the same."""
    from kubelint_ml.admission.review import lint_object, load_policy

    claim = TEMPLATE.replace("kind: ResourceClaimTemplate", "kind: ResourceClaim").replace(
        "spec:\n  spec:\n    devices:\n      requests:",
        "spec:\n  devices:\n    requests:",
    )
    claim = "\n".join(line[2:] if line.startswith("      ") else line for line in claim.splitlines()) + "\n"
    assert yaml.safe_load_all(claim)
    (tmp_path / "claims.yaml").write_text(claim)
    pod = POD.format(uses="{name: gpu, request: gpus}", source="resourceClaimName: one-gpu")
    (tmp_path / "pod.yaml").write_text(pod)
    _, found = _findings(["check", str(tmp_path / "pod.yaml"), "--context", str(tmp_path / "claims.yaml"), "-j1"])
    assert [f[1:5] for f in found] == [(13, 37, "unknown-resource-claim", "error")]
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\n")
    policy = load_policy(str(config))
    findings, _ = lint_object(policy, yaml.safe_load(pod))
    assert [(f.rule, f.severity, f.message) for f in findings if f.suppressed is None] == [
        ("unknown-resource-claim", "error", found[0][5])
    ]


ADMIN = """\
apiVersion: v1
kind: Namespace
metadata:
  name: monitoring
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: all-gpus, namespace: monitoring}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, adminAccess: true}
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
      - {name: gpus, resourceClaimTemplateName: all-gpus}
"""
PRIORITY = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 2000001000\n"


@pytest.mark.parametrize("version", VERSIONS)
def test_admin_access_in_a_namespace_without_the_admin_label_is_rejected(tmp_path, version):
    """AuthorizedForAdmin (pkg/registry/resource, the claim and template strategies): a claim or template
    with adminAccess in a namespace not labelled resource.kubernetes.io/admin-access: "true" is rejected
    (DRAAdminAccess on from 1.34). Said where the Namespace is among the inputs or --context."""
    (tmp_path / "a.yaml").write_text(ADMIN + PRIORITY)
    code, found = _findings(["check", str(tmp_path / "a.yaml"), "-j1", "--kubernetes-version", version])
    assert (code, found) == (
        1,
        [
            (
                "a.yaml",
                33,
                49,
                "unknown-resource-claim",
                "error",
                "ResourceClaimTemplate 'all-gpus' asks for adminAccess in namespace monitoring, which lacks the "
                'label resource.kubernetes.io/admin-access: "true"',
            )
        ],
    )
    # the Namespace given as context only
    namespace, rest = ADMIN.split("---\n", 1)
    (tmp_path / "ns.yaml").write_text(namespace)
    (tmp_path / "b.yaml").write_text(rest + PRIORITY)
    _, found = _findings(["check", str(tmp_path / "b.yaml"), "--context", str(tmp_path / "ns.yaml"), "-j1"])
    assert [f[1:5] for f in found] == [(28, 49, "unknown-resource-claim", "error")]


def test_admin_access_in_a_labelled_or_unknown_namespace_and_in_audit_is_fine(tmp_path):
    labelled = ADMIN.replace(
        "  name: monitoring\n---", '  name: monitoring\n  labels: {resource.kubernetes.io/admin-access: "true"}\n---'
    )
    (tmp_path / "a.yaml").write_text(labelled + PRIORITY)
    assert _findings(["check", str(tmp_path / "a.yaml"), "-j1"]) == (0, [])
    (tmp_path / "a.yaml").write_text(ADMIN.split("---\n", 1)[1] + PRIORITY)  # no Namespace: not known
    assert _findings(["check", str(tmp_path / "a.yaml"), "-j1"]) == (0, [])
    # what a cluster stored it admitted (the label may have been removed since)
    items = [d for d in yaml.safe_load_all(ADMIN + PRIORITY)]
    for i, d in enumerate(items):
        d["metadata"]["uid"] = f"uid-{i}"
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert _findings(["audit", str(dump)]) == (0, [])


def test_a_component_configuration_under_schema_is_not_sent_for_a_crd(tmp_path):
    """kubelet.config.k8s.io (KubeletConfiguration: swap, Memory QoS) is a file the kubelet reads, not an
    API object: no CRD can describe it, so --schema says so instead of asking for one."""
    (tmp_path / "k.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailSwapOn: false\n"
        "memorySwap: {swapBehavior: LimitedSwap}\nmemoryThrottlingFactor: 0.9\nsingleProcessOOMKill: false\n"
    )
    for version in ("1.33", *VERSIONS):
        code, found = _findings(["check", str(tmp_path), "-j1", "--schema", "--kubernetes-version", version])
        assert (code, found) == (
            0,
            [
                (
                    "k.yaml",
                    2,
                    1,
                    "schema-unavailable",
                    "info",
                    "no schema for kubelet.config.k8s.io/v1beta1 KubeletConfiguration: a configuration file the "
                    "kubelet reads, not an object the API server serves",
                )
            ],
        ), version


RULES_POD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      initContainers:
      - name: setup
        image: busybox
        restartPolicy: Never
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [3]}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      containers:
      - name: main
        image: python
        restartPolicyRules:
        - action: Retry
          exitCodes: {operator: Equals, values: [42]}
        - action: Restart
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
"""


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_container_restart_rules_the_api_server_rejects(tmp_path, version):
    """validateContainerRestartPolicy (ContainerRestartRules on from 1.35): rules need the container's own
    restartPolicy; an action other than Restart/RestartAllContainers, an operator other than In/NotIn and
    a rule without exitCodes are rejected. The init container's rule is valid."""
    if version not in bundled_versions():
        pytest.skip(f"no {version} schemas bundled")
    (tmp_path / "j.yaml").write_text(RULES_POD)
    code, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version])
    rule = "container-restart-rules-invalid"
    supported = "Restart" if version == "1.35" else "Restart or RestartAllContainers"
    assert (code, found) == (
        1,
        [
            ("j.yaml", 26, 9, rule, "error", "container 'main' has restartPolicyRules but no restartPolicy of its own"),
            (
                "j.yaml",
                27,
                19,
                rule,
                "error",
                f"container 'main' restartPolicyRules action Retry: only {supported}",
            ),
            (
                "j.yaml",
                28,
                33,
                rule,
                "error",
                "container 'main' restartPolicyRules exitCodes operator Equals: only In or NotIn",
            ),
            ("j.yaml", 29, 11, rule, "error", "container 'main' restartPolicyRules entry without exitCodes"),
        ],
    )


RESTART_ALL_POD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      initContainers:
      - name: setup
        image: busybox
        restartPolicy: Never
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [3]}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      - name: watcher
        image: busybox
        restartPolicy: Always
        restartPolicyRules:
        - action: RestartAllContainers
          exitCodes: {operator: In, values: [88]}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 100m, memory: 64Mi}
      containers:
      - name: main
        image: python
        restartPolicy: Never
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [42]}
        - action: RestartAllContainers
          exitCodes: {operator: NotIn, values: [0, 42]}
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
"""


def test_restart_all_containers_and_sidecar_rules_are_refused_in_1_35(tmp_path):
    """RestartAllContainersOnContainerExits (KEP-5532) is alpha and off in 1.35, and it is a validation
    option (AllowRestartAllContainers, pkg/api/pod/util.go), not a drop: the action is an Unsupported value
    (supported: "Restart") and a sidecar's rules are refused. The regular init container's and the
    container's Restart rules are valid."""
    if "1.35" not in bundled_versions():
        pytest.skip("no 1.35 schemas bundled")
    (tmp_path / "j.yaml").write_text(RESTART_ALL_POD)
    code, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.35"])
    rule = "container-restart-rules-invalid"
    gate = "RestartAllContainersOnContainerExits is off in 1.35"
    assert (code, found) == (
        1,
        [
            (
                "j.yaml",
                22,
                9,
                rule,
                "error",
                f"sidecar 'watcher' has restartPolicyRules, which a sidecar may have only from 1.36 ({gate})",
            ),
            (
                "j.yaml",
                23,
                19,
                rule,
                "error",
                "sidecar 'watcher' restartPolicyRules action RestartAllContainers: only Restart, "
                f"RestartAllContainers from 1.36 ({gate})",
            ),
            (
                "j.yaml",
                35,
                19,
                rule,
                "error",
                "container 'main' restartPolicyRules action RestartAllContainers: only Restart, "
                f"RestartAllContainers from 1.36 ({gate})",
            ),
        ],
    )


@pytest.mark.parametrize("version", ["1.36", "1.37", None])
def test_restart_all_containers_and_sidecar_rules_are_valid_from_1_36(tmp_path, version):
    """From 1.36 the gate is beta and on (the kubernetes/website feature-gate page); with no version the
    newest API is assumed."""
    if version is not None and version not in bundled_versions():
        pytest.skip(f"no {version} schemas bundled")
    (tmp_path / "j.yaml").write_text(RESTART_ALL_POD)
    args = ["check", str(tmp_path), "-j1"] + (["--kubernetes-version", version] if version else [])
    assert _findings(args) == (0, [])


def test_container_restart_rules_are_dropped_in_1_34_and_unknown_before(tmp_path):
    """ContainerRestartRules is alpha and off in 1.34 (dropContainerRestartRules): nothing is rejected, but
    the rules are dropped, so a matching exit is not restarted in place (a warning at each container's
    rules). Before 1.34 restartPolicyRules is not a Container field: kubectl's strict field validation
    rejects the Job (unknown-field, by the profile's version). An audit of a stored Job that kept its rules
    takes the gate as on."""
    (tmp_path / "j.yaml").write_text(RULES_POD)
    found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.34"])
    assert found == (
        0,
        [
            ("j.yaml", 17, 9, "container-restart-rules-invalid", "warning", f"init container 'setup': {_DROPPED}"),
            ("j.yaml", 26, 9, "container-restart-rules-invalid", "warning", f"container 'main': {_DROPPED}"),
        ],
    )
    since = "is not a field in Kubernetes 1.33 (from Kubernetes 1.34)"
    assert _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.33"]) == (
        1,
        [
            ("j.yaml", 17, 9, "unknown-field", "error", f"'restartPolicyRules' in initContainer 'setup' {since}"),
            ("j.yaml", 26, 9, "unknown-field", "error", f"'restartPolicyRules' in container 'main' {since}"),
        ],
    )
    (tmp_path / "j.yaml").write_text(RESTART_ALL_POD)
    assert [f[1:5] for f in _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.34"])[1]] == [
        (13, 9, "container-restart-rules-invalid", "warning"),
        (22, 9, "container-restart-rules-invalid", "warning"),
        (32, 9, "container-restart-rules-invalid", "warning"),
    ]
    sys.path.insert(0, str(Path(__file__).parent))
    from clirun import stored_dump

    dump, config = stored_dump(tmp_path, RESTART_ALL_POD, "1.34")
    assert [f[3] for f in _findings(["audit", str(dump), "-c", str(config)])[1]] == []


def test_pod_level_resources_on_a_windows_pod_are_rejected(tmp_path):
    """validatePodResources (k/k PR 133046, 1.34): Windows has no pod-level resources. Before 1.34 the
    field is dropped (a warning); a Linux pod or one without spec.os is fine."""
    pod = """\
apiVersion: v1
kind: Pod
metadata: {name: win}
spec:
  priorityClassName: serving
  os: {name: windows}
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {cpu: "1", memory: 1Gi}
  containers:
  - name: main
    image: mcr.microsoft.com/windows/servercore
"""
    (tmp_path / "w.yaml").write_text(pod)
    for version in VERSIONS:
        code, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version])
        assert (code, found) == (
            1,
            [
                (
                    "w.yaml",
                    7,
                    3,
                    "pod-level-resources-invalid",
                    "error",
                    "pod-level resources on a Windows pod (spec.os.name: windows)",
                )
            ],
        ), version
    _, found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.33"])
    assert [f[3:5] for f in found if f[3] == "pod-level-resources-invalid"] == [
        ("pod-level-resources-invalid", "warning")
    ]
    (tmp_path / "w.yaml").write_text(pod.replace("windows}", "linux}"))
    assert _findings(["check", str(tmp_path), "-j1"]) == (0, [])
