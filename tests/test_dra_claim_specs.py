"""ResourceClaimTemplates and ResourceClaims whose device requests the API server rejects
(k/k pkg/apis/resource/validation/validation.go: validateDeviceRequest, validateExactDeviceRequest,
validateDeviceAllocationMode, after pkg/apis/resource/v1 SetDefaults_ExactDeviceRequest): the object
is never created, so a pod naming it stays Pending and holds no device."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config
from kubelint_ml.run.lint import lint_text

RULES = load_builtin_rules()

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: x
  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "4", memory: 1800Gi}
      limits: {memory: 1800Gi}
      claims: [{name: gpu}]
"""


def _template(api_version: str, request: str) -> str:
    return (
        f"apiVersion: {api_version}\nkind: ResourceClaimTemplate\nmetadata: {{name: gpu}}\nspec:\n  spec:\n"
        f"    devices:\n      requests:\n      - name: gpu\n{request}---\n"
    )


def _findings(text: str) -> list[tuple[str, int, int, str, str]]:
    return sorted((f.rule, f.line, f.column, f.severity, f.message) for f in lint_text(text.encode(), RULES, Config()))


def test_the_v1beta1_form_under_v1_is_rejected_and_counts_no_gpu():
    """Moving a v1beta1 template to resource.k8s.io/v1 by its apiVersion alone: deviceClassName and count
    on the request are unknown fields there (they sit under `exactly`), so the template is rejected."""
    text = _template("resource.k8s.io/v1", "        deviceClassName: gpu.nvidia.com\n        count: 4\n") + POD
    assert _findings(text) == [
        (
            "unknown-resource-claim",
            20,
            32,
            "error",
            "ResourceClaimTemplate 'gpu' is rejected by the API server: spec.spec.devices.requests[0]: "
            "deviceClassName, count belong under `exactly` in resource.k8s.io/v1",
        )
    ]


def test_the_same_request_in_v1beta1_is_four_gpus():
    text = _template("resource.k8s.io/v1beta1", "        deviceClassName: gpu.nvidia.com\n        count: 4\n") + POD
    assert [f[:4] for f in _findings(text)] == [("gpu-memory-share-mismatch", 25, 36, "warning")]


def test_v1beta2_needs_exactly_too():
    text = _template("resource.k8s.io/v1beta2", "        deviceClassName: gpu.nvidia.com\n") + POD
    assert [f[:4] for f in _findings(text)] == [("unknown-resource-claim", 19, 32, "error")]


def test_allocation_mode_all_with_a_count():
    request = "        exactly:\n          deviceClassName: gpu.nvidia.com\n          allocationMode: All\n          count: 8\n"
    found = _findings(_template("resource.k8s.io/v1", request) + POD)
    assert found == [
        (
            "unknown-resource-claim",
            22,
            32,
            "error",
            "ResourceClaimTemplate 'gpu' is rejected by the API server: spec.spec.devices.requests[0].exactly.count: "
            "Invalid value: 8: must not be specified when allocationMode is 'All'",
        )
    ]


def test_exactly_and_first_available_both_or_neither():
    both = (
        "        exactly: {deviceClassName: gpu.nvidia.com}\n"
        "        firstAvailable:\n        - {name: a, deviceClassName: gpu.nvidia.com}\n"
    )
    found = _findings(_template("resource.k8s.io/v1", both) + POD)
    assert [f[:4] for f in found] == [("unknown-resource-claim", 21, 32, "error")]
    assert found[0][4].endswith("exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
    neither = _findings(_template("resource.k8s.io/v1", "        firstAvailable: []\n") + POD)
    assert [f[:4] for f in neither] == [("unknown-resource-claim", 19, 32, "error")]
    assert neither[0][4].endswith(
        "spec.spec.devices.requests[0]: exactly one of `exactly` or `firstAvailable` is required"
    )


def test_a_negative_count_and_a_subrequest_without_a_class():
    neg = "        exactly: {deviceClassName: gpu.nvidia.com, count: -1}\n"
    found = _findings(_template("resource.k8s.io/v1", neg) + POD)
    assert [f[:4] for f in found] == [("unknown-resource-claim", 19, 32, "error")]
    assert found[0][4].endswith("exactly.count: Invalid value: -1: must be greater than zero")
    sub = (
        "        firstAvailable:\n        - {name: a, deviceClassName: gpu.nvidia.com, count: 2}\n        - {name: b}\n"
    )
    found = _findings(_template("resource.k8s.io/v1", sub) + POD)
    assert found[0][4].endswith("spec.spec.devices.requests[0].firstAvailable[1].deviceClassName: Required value")


def test_a_zero_count_defaults_to_one():
    """SetDefaults_ExactDeviceRequest: ExactCount with count 0 (unset) is 1: valid, one GPU."""
    request = "        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 0}\n"
    found = _findings(_template("resource.k8s.io/v1", request) + POD)
    assert found == [
        ("gpu-memory-share-mismatch", 24, 36, "warning", "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
    ]


def test_a_rejected_resource_claim():
    claim = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared}\nspec:\n  devices:\n"
        "    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: all}\n---\n"
    )
    pod = POD.replace("resourceClaimTemplateName: gpu", "resourceClaimName: shared")
    found = _findings(claim + pod)
    assert found == [
        (
            "unknown-resource-claim",
            18,
            24,
            "error",
            "ResourceClaim 'shared' is rejected by the API server: spec.devices.requests[0].exactly.allocationMode: "
            'Unsupported value: "all": supported values: "All", "ExactCount"',
        )
    ]


CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
"""


def test_a_class_the_files_defining_classes_do_not_define(tmp_path):
    """The scheduler cannot allocate a claim of a DeviceClass that does not exist: a warning where the pod's
    own file or --context defines DeviceClasses, but not this one (a typo); a class a known driver installs
    (gpu.nvidia.com) and classes in another input file (another cluster's, perhaps) say nothing."""
    typo = _template("resource.k8s.io/v1", "        exactly: {deviceClassName: gpu.exmaple.com}\n") + POD
    found = _findings(CLASS + typo)
    assert [f for f in found if f[0] == "unknown-resource-claim"] == [
        (
            "unknown-resource-claim",
            26,
            32,
            "warning",
            "DeviceClass 'gpu.exmaple.com' of ResourceClaimTemplate 'gpu' is not defined (did you mean "
            "'gpu.example.com'?)",
        )
    ]
    nvidia = typo.replace("gpu.exmaple.com", "gpu.nvidia.com")
    assert not [f for f in _findings(CLASS + nvidia) if f[0] == "unknown-resource-claim"]
    # a class like none defined is one the cluster may have from elsewhere (a NIC driver's chart): -v only
    nic = typo.replace("gpu.exmaple.com", "rdma.mellanox.com")
    assert not [f for f in _findings(CLASS + nic) if f[0] == "unknown-resource-claim"]
    (tmp_path / "classes.yaml").write_text(CLASS)
    (tmp_path / "pod.yaml").write_text(typo)

    def claim_findings(*args: str) -> list[tuple[int, str]]:
        out = CliRunner().invoke(main, ["check", "-f", "json", *args]).stdout
        return [
            (f["line"], f["severity"]) for f in json.loads(out)["findings"] if f["rule"] == "unknown-resource-claim"
        ]

    assert claim_findings(str(tmp_path / "pod.yaml"), "--context", str(tmp_path / "classes.yaml")) == [(19, "warning")]
    assert claim_findings(str(tmp_path / "pod.yaml"), str(tmp_path / "classes.yaml")) == []


SHARED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, count: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: inference}
spec:
  replicas: 4
  selector: {matchLabels: {app: inf}}
  template:
    metadata: {labels: {app: inf}}
    spec:
      priorityClassName: x
      nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
      resourceClaims:
      - {name: gpu, resourceClaimName: shared-gpu}
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "4", memory: 200Gi}
          limits: {memory: 200Gi}
          claims: [{name: gpu}]
"""


def test_replicas_sharing_one_resource_claim_share_its_gpus():
    """A ResourceClaim is allocated once, on one node: the 4 replicas naming it run there and share its
    one GPU, so each holds 1/4 of it, and 200Gi each (800Gi for one GPU of eight) is past that share."""
    assert _findings(SHARED) == [
        ("gpu-memory-share-mismatch", 27, 40, "warning", "1/4 of 8 GPUs but 10.6% of p5.48xlarge memory (200Gi)")
    ]
    # One replica holds the whole GPU: 200Gi is within its share (1/8 of 1893Gi allocatable).
    assert _findings(SHARED.replace("replicas: 4", "replicas: 1")) == []
    # A template makes a claim per pod: each replica holds its own GPU.
    per_pod = SHARED.replace("kind: ResourceClaim\n", "kind: ResourceClaimTemplate\n").replace(
        "spec:\n  devices:", "spec:\n  spec:\n   devices:"
    )
    per_pod = per_pod.replace(
        "    requests:\n    - name: gpu\n      exactly", "     requests:\n     - name: gpu\n       exactly"
    )
    per_pod = per_pod.replace("resourceClaimName: shared-gpu", "resourceClaimTemplateName: shared-gpu")
    assert _findings(per_pod) == []


def test_a_template_of_the_pods_own_file_wins_over_another_files_of_its_name(tmp_path):
    """Driver examples reuse names (Intel's GPU and Gaudi examples both define ResourceClaimTemplate
    claim1): each is applied with its own pod, so the pod's claim is its own file's template, whichever
    file the run reads first."""
    gaudi = _template("resource.k8s.io/v1", "        exactly: {deviceClassName: gaudi.intel.com}\n")
    gpu = _template("resource.k8s.io/v1", "        exactly: {deviceClassName: gpu.nvidia.com, count: 4}\n") + POD
    (tmp_path / "a-gaudi.yaml").write_text(gaudi)
    (tmp_path / "b-gpu.yaml").write_text(gpu)
    out = CliRunner().invoke(main, ["check", "-f", "json", str(tmp_path)]).stdout
    found = [(f["rule"], f["line"], f["message"]) for f in json.loads(out)["findings"]]
    assert found == [("gpu-memory-share-mismatch", 24, "4 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")]


AMD_PARTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: parts}
spec:
  spec:
    devices:
      requests:
      - name: p
        exactly:
          deviceClassName: gpu.amd.com
          count: COUNT
          selectors:
          - cel: {expression: 'device.attributes["gpu.amd.com"].type == "amdgpu-partition"'}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: x
  nodeSelector: {node.kubernetes.io/instance-type: Standard_ND96isr_MI300X_v5}
  resourceClaims:
  - {name: p, resourceClaimTemplateName: parts}
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "4", memory: MEMORY}
      limits: {memory: MEMORY}
      claims: [{name: p}]
"""


def test_amd_gpu_partitions_count_at_most_a_whole_gpu_each():
    """AMD's DRA driver publishes pre-partitioned GPUs as devices of type amdgpu-partition (1/2 to 1/8 of
    a GPU by the node's partition mode, ROCm/k8s-gpu-dra-driver docs/driver-attributes.md): 16 of them fit
    an 8-GPU node in CPX mode, so no "never fits"; one holding most of the node's memory is still past
    its share, whatever its size."""
    assert _findings(AMD_PARTS.replace("COUNT", "16").replace("MEMORY", "100Gi")) == []
    found = lint_text(AMD_PARTS.replace("COUNT", "1").replace("MEMORY", "1500Gi").encode(), RULES, Config())
    assert [(f.rule, f.line, f.severity) for f in found] == [("gpu-memory-share-mismatch", 27, "warning")]
    assert "it asks for GPU partitions, so each is counted as the whole GPU it may be" in found[0].detail


def test_a_jobs_parallel_pods_share_its_resource_claim():
    """parallelism: 8 pods of a Job naming one 2-GPU ResourceClaim run at once on its node: 1/4 GPU each."""
    job = (
        SHARED.replace("count: 1}", "count: 2}")
        .replace("apiVersion: apps/v1\nkind: Deployment", "apiVersion: batch/v1\nkind: Job")
        .replace("  replicas: 4\n  selector: {matchLabels: {app: inf}}\n", "  parallelism: 8\n")
        .replace("      priorityClassName: x\n", "      priorityClassName: x\n      restartPolicy: Never\n")
    )
    assert _findings(job) == [
        ("gpu-memory-share-mismatch", 27, 40, "warning", "1/4 of 8 GPUs but 10.6% of p5.48xlarge memory (200Gi)")
    ]
    assert _findings(job.replace("parallelism: 8", "parallelism: 1")) == []


def test_the_memory_fix_sizes_each_replica_from_its_part_of_a_shared_claim(tmp_path):
    """4 replicas sharing a 1-GPU ResourceClaim: each gets the memory of a quarter GPU's share (1893Gi / 32,
    less the 10% headroom), not the whole GPU's (213Gi each, 852Gi for one GPU of eight)."""
    path = tmp_path / "deploy.yaml"
    path.write_text(
        SHARED.replace('          requests: {cpu: "4", memory: 200Gi}\n          limits: {memory: 200Gi}\n', "")
    )
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    assert "           claims: [{name: gpu}]\n+          limits:\n+            memory: 53Gi\n" in r.output, r.output


def test_v1beta1_exact_fields_beside_first_available_or_without_a_class():
    """In v1beta1 any exact field on the request makes it an exact request (the conversion to the internal
    form): beside firstAvailable both are set; without deviceClassName the class is missing."""
    both = "        count: 2\n        firstAvailable:\n        - {name: a, deviceClassName: gpu.nvidia.com}\n"
    found = _findings(_template("resource.k8s.io/v1beta1", both) + POD)
    assert [f[:4] for f in found] == [("unknown-resource-claim", 21, 32, "error")]
    assert found[0][4].endswith("but multiple fields are set")
    found = _findings(_template("resource.k8s.io/v1beta1", "        count: 2\n") + POD)
    assert found[0][4].endswith("spec.spec.devices.requests[0].deviceClassName: Required value")


def test_replicas_sharing_a_claim_of_all_the_nodes_gpus_hold_their_part():
    """allocationMode: All in a shared ResourceClaim: the 4 replicas share the node's 8 GPUs, 2 each."""
    all_gpus = SHARED.replace("count: 1}", "allocationMode: All}").replace("200Gi", "700Gi")
    assert _findings(all_gpus) == [
        ("gpu-memory-share-mismatch", 27, 40, "warning", "2 of 8 GPUs but 37% of p5.48xlarge memory (700Gi)")
    ]
    assert _findings(all_gpus.replace("replicas: 4", "replicas: 1")) == []


def test_a_running_claim_is_shared_by_the_pods_it_is_reserved_for():
    """An allocated ResourceClaim lists its consumers in status.reservedFor (as `audit` reads a cluster): two
    pods share its one GPU, so each holds half of it, whatever workload made them."""
    claim = SHARED[: SHARED.index("---")] + (
        "status:\n  allocation:\n    devices:\n      results:\n"
        "      - {request: gpu, driver: gpu.nvidia.com, pool: node-1, device: gpu-0}\n"
        "  reservedFor:\n  - {resource: pods, name: a, uid: '1'}\n  - {resource: pods, name: b, uid: '2'}\n---\n"
    )
    pod = POD.replace("resourceClaimTemplateName: gpu", "resourceClaimName: shared-gpu").replace("1800Gi", "200Gi")
    found = _findings(claim + pod)
    assert found == [
        ("gpu-memory-share-mismatch", 31, 36, "warning", "1/2 of 8 GPUs but 10.6% of p5.48xlarge memory (200Gi)")
    ]


def test_request_names_are_dns_labels_unique_in_their_list():
    """validateRequestName: a request's (and a subrequest's) name is a DNS label, unique among its siblings."""
    upper = "        exactly: {deviceClassName: gpu.nvidia.com}\n"
    text = _template("resource.k8s.io/v1", upper).replace("- name: gpu\n", "- name: GPU_0\n") + POD
    found = _findings(text)
    assert [f[:4] for f in found] == [("unknown-resource-claim", 19, 32, "error")]
    assert found[0][4].endswith(
        'spec.spec.devices.requests[0].name: Invalid value: "GPU_0": must be a DNS label '
        "(lower-case letters, digits, '-')"
    )
    twice = "        exactly: {deviceClassName: gpu.nvidia.com}\n      - name: gpu\n" + upper
    found = _findings(_template("resource.k8s.io/v1", twice) + POD)
    assert found[0][4].endswith('spec.spec.devices.requests[1].name: Duplicate value: "gpu"')
    subs = "        firstAvailable:\n        - {name: a, deviceClassName: gpu.nvidia.com}\n        - {deviceClassName: x}\n"
    found = _findings(_template("resource.k8s.io/v1", subs) + POD)
    assert found[0][4].endswith("spec.spec.devices.requests[0].firstAvailable[1].name: Required value")


def test_constraints_and_config_name_the_claims_requests():
    """validateDeviceConstraint, validateDeviceClaimConfiguration: `requests` name requests of the claim, or a
    request and its subrequest (`gpu/small`). KEP-4816's own example has `gpu"` (a stray quote)."""
    base = (
        "        firstAvailable:\n        - {name: big, deviceClassName: gpu.nvidia.com, count: 2}\n"
        "        - {name: small, deviceClassName: gpu.nvidia.com}\n"
        "      - name: nic\n        exactly: {deviceClassName: rdma.example.com}\n"
        "      constraints:\n      - {requests: [nic, gpu], matchAttribute: dra.k8s.io/pcieRoot}\n"
        "      config:\n      - requests: [gpu/small]\n        opaque: {driver: gpu.nvidia.com, parameters: {}}\n"
    )
    ok = _findings(_template("resource.k8s.io/v1", base) + POD.replace("1800Gi", "100Gi"))
    assert [f for f in ok if f[0] == "unknown-resource-claim"] == []
    bad = _findings(_template("resource.k8s.io/v1", base.replace("[nic, gpu]", "[nic, 'gpu\"']")) + POD)
    assert [f[:4] for f in bad] == [("unknown-resource-claim", 28, 32, "error")]
    assert bad[0][4].endswith(
        'spec.spec.devices.constraints[0].requests[1]: Invalid value: "gpu"": must be the name of a request in '
        "the claim or the name of a request and a subrequest separated by '/'"
    )
    bad = _findings(_template("resource.k8s.io/v1", base.replace("[gpu/small]", "[gpu/tiny]")) + POD)
    assert bad[0][4].endswith(
        'spec.spec.devices.config[0].requests[0]: Invalid value: "gpu/tiny": must be the name '
        "of a request in the claim or the name of a request and a subrequest separated by '/'"
    )


def test_a_class_of_amd_partitions_counts_its_devices_at_most_whole():
    """A cluster's own DeviceClass selecting AMD partitions (type == "amdgpu-partition") makes its claims'
    devices partitions, as a request's own selector does; a class of full GPUs (type == "amdgpu") does not."""
    text = (Path(__file__).parent / "data" / "dra-amd-partition-class.yaml").read_text()
    assert _findings(text) == []
    full = _findings(text.replace('"amdgpu-partition"', '"amdgpu"'))
    assert full == [
        ("gpu-memory-share-mismatch", 25, 42, "warning", "requests 16 GPUs but Standard_ND96isr_MI300X_v5 has only 8")
    ]


# ROCm/k8s-gpu-dra-driver example/example-partitions-distinct-parents.yaml (at 2622427226d5): two requests
# alike, one partition each, on distinct GPUs.
AMD_TWO_PARTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  namespace: gpu-test
  name: two-partitions-distinct-parents
spec:
  devices:
    requests:
    - name: p0
      exactly:
        deviceClassName: gpu.amd.com
        allocationMode: ExactCount
        count: 1
        selectors:
          - cel:
              expression: 'device.attributes["gpu.amd.com"].type == "amdgpu-partition"'
    - name: p1
      exactly:
        deviceClassName: gpu.amd.com
        allocationMode: ExactCount
        count: 1
        selectors:
          - cel:
              expression: 'device.attributes["gpu.amd.com"].type == "amdgpu-partition"'
    constraints:
    - distinctAttribute: gpu.amd.com/deviceID
      requests: ["p0", "p1"]
---
apiVersion: v1
kind: Pod
metadata:
  namespace: gpu-test
  name: pod-two-partitions-distinct-parents
spec:
  containers:
  - name: ctr0
    image: ubuntu:22.04
    resources:
      claims:
      - name: gpus
  resourceClaims:
  - name: gpus
    resourceClaimName: two-partitions-distinct-parents
"""


def test_requests_alike_are_said_once_with_their_number(tmp_path):
    path = tmp_path / "parts.yaml"
    path.write_text(AMD_TWO_PARTS)
    r = CliRunner().invoke(main, ["check", "-v", str(path)])
    said = [line for line in r.output.splitlines() if "asks for 1 GPU partition" in line]
    assert len(said) == 1
    assert said[0].endswith("counted as 1 whole GPU, the most it can be (2 requests alike, each counted so)")


def _check(tmp_path: Path, text: str, version: str) -> list[tuple[str, int, int, str, str]]:
    (tmp_path / "t.yaml").write_text(text)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "-j1", "--kubernetes-version", version, "-f", "json"])
    found = json.loads(r.stdout[: r.stdout.rindex("}") + 1])["findings"]
    return sorted((f["rule"], f["line"], f["column"], f["severity"], f["message"]) for f in found)


TOLERATIONS = {
    "key: Bad Key!, operator: Exists": 'key: Invalid value: "Bad Key!": must be a label name',
    "key: gpu.example.com/unhealthy, operator: Exists, value: x": (
        'value: Invalid value: "x": must be empty for operator `Exists`'
    ),
    "key: k, value: not a label value": 'value: Invalid value: "not a label value": must be a label value',
    "key: k, operator: In, value: x": 'operator: Unsupported value: "In": supported values: "Equal", "Exists"',
    "key: k, operator: Exists, effect: PreferNoSchedule": (
        'effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'
    ),
}


def test_device_tolerations_the_api_server_rejects_from_1_36(tmp_path):
    """validateDeviceToleration (KEP-5055): a key is a label name, Exists takes no value, Equal's value is a
    label value, the operator is Equal or Exists and the effect NoSchedule, NoExecute or None. DRADeviceTaints
    is beta and on from 1.36, so the template is rejected there: one error at the pod's claim, no GPU."""
    for version in ("1.36", "1.37"):
        for toleration, reason in TOLERATIONS.items():
            request = f"        exactly:\n          deviceClassName: gpu.nvidia.com\n          tolerations: [{{{toleration}}}]\n"
            found = _check(tmp_path, _template("resource.k8s.io/v1", request) + POD, version)
            assert [f[:4] for f in found] == [("unknown-resource-claim", 21, 32, "error")], (version, toleration)
            message = found[0][4]
            assert message.startswith(
                "ResourceClaimTemplate 'gpu' is rejected by the API server: "
                "spec.spec.devices.requests[0].exactly.tolerations[0]."
            ), message
            assert reason in message, (toleration, message)


def test_device_tolerations_in_subrequests_and_v1beta1(tmp_path):
    """The same check on a firstAvailable subrequest and on v1beta1's flat request."""
    subs = (
        "        firstAvailable:\n        - name: big\n          deviceClassName: gpu.nvidia.com\n"
        "          tolerations: [{key: k, operator: Exists, effect: PreferNoSchedule}]\n"
    )
    found = _check(tmp_path, _template("resource.k8s.io/v1", subs) + POD, "1.36")
    assert [f[:4] for f in found] == [("unknown-resource-claim", 22, 32, "error")]
    assert "spec.spec.devices.requests[0].firstAvailable[0].tolerations[0].effect: Unsupported value" in found[0][4]
    flat = "        deviceClassName: gpu.nvidia.com\n        tolerations: [{key: k, operator: Exists, value: v}]\n"
    found = _check(tmp_path, _template("resource.k8s.io/v1beta1", flat) + POD, "1.36")
    assert [f[:4] for f in found] == [("unknown-resource-claim", 20, 32, "error")]
    assert found[0][4].endswith(
        'spec.spec.devices.requests[0].tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`'
    )


def test_device_tolerations_are_dropped_before_1_36_and_valid_ones_pass(tmp_path):
    """DRADeviceTaints is alpha and off in 1.34 and 1.35: the API server drops the tolerations, so the same
    template is valid and its GPU counts. Valid tolerations (an empty key with Exists, Equal without a value,
    the None effect, tolerationSeconds on any effect, which validation does not check) pass at 1.37."""
    share = ("gpu-memory-share-mismatch", 26, 36, "warning", "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
    bad = (
        "        exactly:\n          deviceClassName: gpu.nvidia.com\n          tolerations: [{key: k, operator: In}]\n"
    )
    text = _template("resource.k8s.io/v1", bad) + POD
    for version in ("1.34", "1.35"):
        assert _check(tmp_path, text, version) == [share], version
    good = (
        "        exactly:\n          deviceClassName: gpu.nvidia.com\n          tolerations:\n"
        "          - {operator: Exists}\n          - {key: gpu.example.com/maintenance}\n"
        "          - {key: k, operator: Equal, value: v1.2_x, effect: None}\n"
        "          - {key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}\n"
        "          - {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 300}\n"
    )
    share = ("gpu-memory-share-mismatch", 31, 36, "warning", share[4])
    assert _check(tmp_path, _template("resource.k8s.io/v1", good) + POD, "1.37") == [share]
