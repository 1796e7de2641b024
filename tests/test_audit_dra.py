"""`kubelint-ml audit` of a cluster that hands out GPUs through Dynamic Resource Allocation, on dumps as a
1.34+ API server returns them: pods naming ResourceClaimTemplates in ``spec.resourceClaims``, the
ResourceClaims the resourceclaim controller made for them (``<pod>-<claim>-<suffix>``, owned by the pod,
the template's spec copied, ``status.allocation.devices.results`` and ``status.reservedFor``), the pod's
``status.resourceClaimStatuses`` naming them, NVIDIA's DeviceClasses (k8s-dra-driver-gpu) and a NIC
driver's, and Nodes whose allocatable has no GPU resource (the devices are in ResourceSlices).

A pod is judged by its claims as `check` judges its template with the ResourceClaimTemplate beside it."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from clusterdump import container, kubectl_list, node, obj, owner, pod  # noqa: E402

from kubelint_ml.cli import main  # noqa: E402

NS = "ml"
GPU_SEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
CHANNEL_SEL = (
    "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel'"
)
MEMORY_1800 = {"requests": {"cpu": "8", "memory": "1800Gi"}, "limits": {"memory": "1800Gi"}}


def device_class(name: str, expression: str) -> dict:
    return obj("resource.k8s.io/v1", "DeviceClass", name, None, {"selectors": [{"cel": {"expression": expression}}]})


def template(name: str, cls: str, count: int, request: str) -> dict:
    req = {"name": request, "exactly": {"allocationMode": "ExactCount", "count": count, "deviceClassName": cls}}
    return obj("resource.k8s.io/v1", "ResourceClaimTemplate", name, NS, {"spec": {"devices": {"requests": [req]}}})


CLASSES = [
    device_class("gpu.nvidia.com", GPU_SEL),
    device_class("compute-domain-default-channel.nvidia.com", CHANNEL_SEL),
    device_class("dranet", "device.driver == 'dra.net'"),
]
TEMPLATES = {
    t["metadata"]["name"]: t
    for t in (
        template("single-gpu", "gpu.nvidia.com", 1, "gpu"),
        template("rdma-nic", "dranet", 1, "nic"),
        template("imex-channel", "compute-domain-default-channel.nvidia.com", 1, "channel"),
    )
}
# p5.48xlarge (8 H100): the GPU driver's devices are published in ResourceSlices, not in allocatable.
NODES = [
    node("gpu-node-1", {"node.kubernetes.io/instance-type": "p5.48xlarge"}, {"cpu": "191450m", "memory": "2002Gi"}),
    node("cpu-node-1", {"node.kubernetes.io/instance-type": "m6i.4xlarge"}, {"cpu": "15890m", "memory": "60Gi"}),
]


# A DeviceClass over NVIDIA's GPUs whose devices containers may ask for as example.com/gpu (KEP-5004)
EXTENDED_GPU_CLASS = obj(
    "resource.k8s.io/v1",
    "DeviceClass",
    "gpu.example.com",
    None,
    {"selectors": [{"cel": {"expression": GPU_SEL}}], "extendedResourceName": "example.com/gpu"},
)


def dra_pod(
    name: str,
    claims: list[tuple[str, str, str, str]],
    container_resources: dict,
    *,
    on: str,
    owned_by=None,
    labels=None,
    **spec,
) -> list[dict]:
    """A running pod with its generated claims: ``claims`` are (claim, template, driver, device)."""
    c = container(
        "main", "nvcr.io/nvidia/pytorch:25.01-py3", {**container_resources, "claims": [{"name": n} for n, *_ in claims]}
    )
    entries = [{"name": n, "resourceClaimTemplateName": t} for n, t, *_ in claims]
    p = pod(name, NS, [c], owned_by=owned_by, labels=labels, node=on, extra_spec={"resourceClaims": entries, **spec})
    made, statuses = [], []
    for n, t, driver, device in claims:
        spec_copy = copy.deepcopy(TEMPLATES[t]["spec"]["spec"])
        request = spec_copy["devices"]["requests"][0]["name"]
        claim = obj(
            "resource.k8s.io/v1",
            "ResourceClaim",
            f"{name}-{n}-q8x2v",
            NS,
            spec_copy,
            annotations={"resource.kubernetes.io/pod-claim-name": n},
            ownerReferences=[
                {
                    "apiVersion": "v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Pod",
                    "name": name,
                    "uid": p["metadata"]["uid"],
                }
            ],
        )
        claim["status"] = {
            "allocation": {
                "devices": {"results": [{"device": device, "driver": driver, "pool": on, "request": request}]},
                "nodeSelector": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [on]}]}]
                },
            },
            "reservedFor": [{"name": name, "resource": "pods", "uid": p["metadata"]["uid"]}],
        }
        made.append(claim)
        statuses.append({"name": n, "resourceClaimName": claim["metadata"]["name"]})
    p["status"]["resourceClaimStatuses"] = statuses
    return [p, *made]


def job_items() -> list[dict]:
    """An Indexed Job (in the dump) whose 2 pods claim 1 GPU each and request 1800Gi of a p5.48xlarge."""
    spec = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "resources": MEMORY_1800}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
    }
    spec["containers"][0]["resources"] = {**MEMORY_1800, "claims": [{"name": "gpu"}]}
    job = obj(
        "batch/v1",
        "Job",
        "trainer",
        NS,
        {"completionMode": "Indexed", "completions": 2, "parallelism": 2, "template": {"spec": spec}},
    )
    items = [job]
    for i in range(2):
        items += dra_pod(
            f"trainer-{i}-x7k2p",
            [("gpu", "single-gpu", "gpu.nvidia.com", f"gpu-{i}")],
            MEMORY_1800,
            on="gpu-node-1",
            owned_by=owner("batch/v1", "Job", "trainer"),
            labels={"job-name": "trainer"},
            restartPolicy="Never",
        )
    return items


def deployment_items(name: str, tpl: str, driver: str, resources: dict, on: str) -> list[dict]:
    """A Deployment (not in the dump) with one pod through its ReplicaSet."""
    return dra_pod(
        f"{name}-5d8f7b9c4-abcde",
        [("dev", tpl, driver, "dev-0")],
        resources,
        on=on,
        owned_by=owner("apps/v1", "ReplicaSet", f"{name}-5d8f7b9c4"),
        labels={"app": name, "pod-template-hash": "5d8f7b9c4"},
    )


def _audit(tmp_path: Path, items: list[dict], name: str = "dump.json") -> tuple[str, list[dict]]:
    text = kubectl_list(items)
    path = tmp_path / name
    path.write_text(text)
    r = CliRunner().invoke(main, ["audit", str(path), "-f", "json"], catch_exceptions=False)
    out = r.stdout
    return text, json.loads(out[: out.rindex("}") + 1])["findings"]


def _line_of(text: str, needle: str, after: str | int) -> int:
    """1-based line of the first ``needle`` after ``after`` (a text, or an offset), found by text."""
    start = after if isinstance(after, int) else text.index(after)
    return text[: text.index(needle, start)].count("\n") + 1


def _seen(findings: list[dict]) -> list[tuple]:
    return sorted((f["object"]["kind"], f["object"]["name"], f["rule"], f["severity"], f["line"]) for f in findings)


def test_a_claimed_gpu_pod_is_judged_as_check_judges_its_template(tmp_path: Path) -> None:
    """The Job's pods: one GPU of eight with 90% of the node's memory, filed under the Job; check of the
    Job with its template and the same Nodes says the same, with the same severities."""
    items = CLASSES + list(TEMPLATES.values()) + NODES + job_items()
    text, found = _audit(tmp_path, items)
    pod_at = text.index('"name": "trainer-0-x7k2p"')
    share = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', pod_at))
    assert [(f["rule"], f["severity"], f["line"], f["object"]["kind"]) for f in found] == [
        ("missing-priority-class", "warning", _line_of(text, '"spec": {', pod_at), "Job"),
        ("gpu-memory-share-mismatch", "warning", share, "Job"),
    ]
    assert found[1]["message"].startswith("1 of 8 GPUs but 89.9% of node pool gpu-node-1")
    assert found[1]["message"].endswith("[2 pods]")

    manifests = tmp_path / "job.yaml"
    context = tmp_path / "context.yaml"
    manifests.write_text(yaml.safe_dump(_manifest(next(i for i in items if i["kind"] == "Job"))))
    context.write_text(yaml.safe_dump_all(CLASSES + list(TEMPLATES.values()) + NODES))
    r = CliRunner().invoke(
        main, ["check", str(manifests), "--context", str(context), "-f", "json"], catch_exceptions=False
    )
    checked = json.loads(r.stdout)["findings"]
    assert [(f["rule"], f["severity"]) for f in checked] == [(f["rule"], f["severity"]) for f in found]


def _manifest(job: dict) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "trainer", "namespace": NS},
        "spec": job["spec"],
    }


def test_a_running_pod_is_judged_by_its_generated_claims_when_the_template_is_not_in_the_dump(
    tmp_path: Path,
) -> None:
    """`kubectl get pods,jobs,resourceclaims` (no templates; or the template deleted since): the pods run
    with the claims made for them, so no unknown-resource-claim, and their GPU is judged from the
    ResourceClaim the pod's status names."""
    items = CLASSES + NODES + job_items()
    text, found = _audit(tmp_path, items)
    assert [(f["rule"], f["severity"]) for f in found] == [
        ("missing-priority-class", "warning"),
        ("gpu-memory-share-mismatch", "warning"),
    ]
    pod_at = text.index('"name": "trainer-0-x7k2p"')
    assert found[1]["line"] == _line_of(text, '"memory": "1800Gi"', text.index('"requests"', pod_at))


def test_a_changed_template_does_not_change_what_a_running_pod_holds(tmp_path: Path) -> None:
    """The template now asks for 8 GPUs; the running pods' claims were made when it asked for 1."""
    eight = template("single-gpu", "gpu.nvidia.com", 8, "gpu")
    items = CLASSES + [eight] + NODES + job_items()
    _, found = _audit(tmp_path, items)
    share = [f["message"] for f in found if f["rule"] == "gpu-memory-share-mismatch"]
    assert len(share) == 1 and share[0].startswith("1 of 8 GPUs but 89.9%")


def test_a_pending_pod_whose_template_is_missing_is_reported_at_its_name(tmp_path: Path) -> None:
    """No claim was made (the template does not exist): the pod cannot schedule."""
    items = CLASSES + list(TEMPLATES.values()) + NODES
    p = pod(
        "waiting",
        NS,
        [container("main", "img", {**MEMORY_1800, "claims": [{"name": "gpu"}]})],
        node="",
        priority_class="high",
        extra_spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "singel-gpu"}]},
    )
    del p["spec"]["nodeName"]
    p["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    text, found = _audit(tmp_path, [*items, p])
    missing = [f for f in found if f["rule"] == "unknown-resource-claim"]
    assert [(f["severity"], f["line"]) for f in missing] == [("error", _line_of(text, '"singel-gpu"', '"waiting"'))]


def test_a_deployments_pods_with_a_claimed_gpu_are_judged_as_accelerator_pods(tmp_path: Path) -> None:
    """A Deployment's pods get the training rules when a DRA claim gives them a GPU, as check judges the
    Deployment; a NIC claim does not, and keeps the warning severities."""
    items = CLASSES + list(TEMPLATES.values()) + NODES
    items += deployment_items("llm", "single-gpu", "gpu.nvidia.com", MEMORY_1800, "gpu-node-1")
    items += deployment_items("netsvc", "rdma-nic", "dra.net", {}, "cpu-node-1")
    text, found = _audit(tmp_path, items)
    llm = text.index('"name": "llm-5d8f7b9c4-abcde"')
    net = text.index('"name": "netsvc-5d8f7b9c4-abcde"')
    assert _seen(found) == sorted(
        [
            ("Deployment", "llm", "missing-priority-class", "warning", _line_of(text, '"spec": {', llm)),
            (
                "Deployment",
                "llm",
                "gpu-memory-share-mismatch",
                "warning",
                _line_of(text, '"memory": "1800Gi"', text.index('"requests"', llm)),
            ),
            ("Deployment", "netsvc", "besteffort-qos", "warning", _line_of(text, '"spec": {', net)),
            ("Deployment", "netsvc", "missing-memory-limit", "warning", _line_of(text, '"resources": {', net)),
            ("Deployment", "netsvc", "missing-memory-request", "warning", _line_of(text, '"resources": {', net)),
        ]
    )


def test_imex_channels_do_not_raise_severities_and_gpus_beside_them_do(tmp_path: Path) -> None:
    """A bare pod with an IMEX channel only is no GPU pod; with 1 GPU beside the channel it is."""
    items = CLASSES + list(TEMPLATES.values()) + NODES
    no_memory = {"requests": {"cpu": "4"}}
    items += dra_pod(
        "imex-only",
        [("channel", "imex-channel", "compute-domain.nvidia.com", "channel-0")],
        no_memory,
        on="cpu-node-1",
        priorityClassName="high",
    )
    items += dra_pod(
        "imex-gpu",
        [
            ("gpu", "single-gpu", "gpu.nvidia.com", "gpu-0"),
            ("channel", "imex-channel", "compute-domain.nvidia.com", "channel-0"),
        ],
        no_memory,
        on="gpu-node-1",
        priorityClassName="high",
    )
    _, found = _audit(tmp_path, items)
    assert sorted((f["object"]["name"], f["rule"], f["severity"]) for f in found) == [
        ("imex-gpu", "missing-memory-limit", "error"),
        ("imex-gpu", "missing-memory-request", "warning"),
        ("imex-only", "missing-memory-limit", "warning"),
        ("imex-only", "missing-memory-request", "warning"),
    ]


def resource_slice(name: str, node_name: str, driver: str, generation: int, devices: list[tuple[str, str]]) -> dict:
    """A ResourceSlice as a DRA driver's kubelet plugin publishes it (one pool per node)."""
    spec = {
        "devices": [{"attributes": {"type": {"string": t}}, "name": n} for n, t in devices],
        "driver": driver,
        "nodeName": node_name,
        "pool": {"generation": generation, "name": node_name, "resourceSliceCount": 1},
    }
    return obj("resource.k8s.io/v1", "ResourceSlice", name, None, spec)


# An on-premises DGX: no catalog type, and no GPU in allocatable (the DRA driver, not the device plugin).
DGX = node(
    "dgx-01", {"node.kubernetes.io/instance-type": "dgx-h100", "pool": "dgx"}, {"cpu": "224", "memory": "2000Gi"}
)
SLICES = [
    resource_slice(
        "dgx-01-gpu.nvidia.com-7xq2c", "dgx-01", "gpu.nvidia.com", 2, [(f"gpu-{i}", "gpu") for i in range(7)]
    ),
    resource_slice(
        "dgx-01-gpu.nvidia.com-mig", "dgx-01", "gpu.nvidia.com", 2, [("gpu-7", "gpu"), ("gpu-7-mig-0", "mig")]
    ),
    # an older generation being replaced, and IMEX channels: not GPUs of the node
    resource_slice("dgx-01-gpu.nvidia.com-old", "dgx-01", "gpu.nvidia.com", 1, [("gpu-0", "gpu"), ("gpu-1", "gpu")]),
    resource_slice("dgx-01-compute-domain", "dgx-01", "compute-domain.nvidia.com", 2, [("channel-0", "channel")]),
]


def test_a_nodes_gpus_from_its_dra_drivers_resource_slices(tmp_path: Path) -> None:
    """The GPUs a DRA driver publishes in ResourceSlices are the node's: 8 GPUs (type gpu, the newest
    generation of the pool), so 1 claimed GPU with 1800Gi of 2000Gi is judged, in audit as in check."""
    pods = [
        *dra_pod(
            "solo",
            [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-0")],
            MEMORY_1800,
            on="dgx-01",
            priorityClassName="high",
        )
    ]
    _, without = _audit(tmp_path, CLASSES + list(TEMPLATES.values()) + [DGX] + pods, "without.json")
    assert without == []  # how many GPUs the node has is not known, and -v says why
    r = CliRunner().invoke(main, ["audit", str(tmp_path / "without.json"), "-v", "-f", "json"], catch_exceptions=False)
    assert (
        "gpu-memory-share-mismatch skipped: node type not resolved: the Node it runs on (dgx-01) has no known GPU "
        "count: none in its allocatable, no GPU driver's ResourceSlice names it" in r.stderr
    )
    text, found = _audit(tmp_path, CLASSES + list(TEMPLATES.values()) + [DGX] + SLICES + pods)
    assert [(f["rule"], f["severity"], f["line"]) for f in found] == [
        (
            "gpu-memory-share-mismatch",
            "warning",
            _line_of(text, '"memory": "1800Gi"', text.index('"requests"', text.index('"name": "solo"'))),
        )
    ]
    assert found[0]["message"].startswith("1 of 8 GPUs but 90% of node pool dgx-01")

    manifest = tmp_path / "pod.yaml"
    spec = {
        "priorityClassName": "high",
        "nodeSelector": {"pool": "dgx"},
        "containers": [{"name": "main", "image": "img", "resources": {**MEMORY_1800, "claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
    }
    mtext = yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "namespace": NS}, "spec": spec}
    )
    manifest.write_text(mtext)
    context = tmp_path / "cluster.yaml"
    context.write_text(yaml.safe_dump_all(CLASSES + list(TEMPLATES.values()) + [DGX] + SLICES))
    r = CliRunner().invoke(main, ["check", str(manifest), "--context", str(context), "-f", "json"])
    checked = json.loads(r.stdout)["findings"]
    assert [(f["rule"], f["severity"], f["line"]) for f in checked] == [
        (
            "gpu-memory-share-mismatch",
            "warning",
            _line_of(mtext, "memory: 1800Gi", "requests:"),
        )
    ]
    assert checked[0]["message"].startswith("1 of 8 GPUs but 90% of node pool dgx-01")


def test_a_scheduled_pods_claims_exist_even_when_the_dump_lacks_them(tmp_path: Path) -> None:
    """`kubectl get pods,jobs,nodes` (no DRA objects): the scheduler allocated every claim of a bound pod,
    so no unknown-resource-claim; what the devices are is not known, and -v says so."""
    items = NODES + job_items()
    items = [i for i in items if i["kind"] != "ResourceClaim"]
    text, found = _audit(tmp_path, items)
    assert [(f["rule"], f["severity"]) for f in found] == [("missing-priority-class", "warning")]
    path = tmp_path / "dump.json"
    r = CliRunner().invoke(main, ["audit", str(path), "-v", "-f", "json"], catch_exceptions=False)
    assert (
        "ResourceClaimTemplate 'single-gpu' exists (the pod was scheduled with its claim) but is not among the "
        "inputs, so its devices are not known" in r.stderr
    )


def test_stored_pods_show_the_gates_on_whatever_the_profiles_version(tmp_path: Path) -> None:
    """A 1.33 profile: the API server drops spec.resourceClaims and spec.resources by default, but pods
    that carry them were admitted with the gates on. Their claimed GPU and pod-level resources count:
    no "dropped" finding, the GPU share judged as on the newest version."""
    config = tmp_path / "kubelint.yaml"
    config.write_text('profile:\n  kubernetesVersion: "1.33"\n')
    pod_level = {"requests": {"cpu": "16", "memory": "1800Gi"}, "limits": {"cpu": "16", "memory": "1800Gi"}}
    items = CLASSES + list(TEMPLATES.values()) + NODES
    items += dra_pod(
        "plr",
        [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-0")],
        {},
        on="gpu-node-1",
        priorityClassName="high",
        resources=pod_level,
    )
    text = kubectl_list(items)
    path = tmp_path / "dump.json"
    path.write_text(text)
    found = []
    for args in ([], ["-c", str(config)]):
        r = CliRunner().invoke(main, ["audit", str(path), "-f", "json", *args], catch_exceptions=False)
        found.append(
            [
                (f["rule"], f["severity"], f["line"])
                for f in json.loads(r.stdout[: r.stdout.rindex("}") + 1])["findings"]
            ]
        )
    at = text.index('"name": "plr"')
    pod_level_at = text.rindex('"resources": {', at, text.index('"status"', at))  # spec.resources, last in the spec
    share = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', pod_level_at))
    assert found[0] == found[1] == [("gpu-memory-share-mismatch", "warning", share)]
    # the same when profile.featureGates turns the gates off: the stored pods show what the cluster does
    gates = tmp_path / "gates.yaml"
    gates.write_text(
        'profile:\n  kubernetesVersion: "1.35"\n'
        "  featureGates: {DynamicResourceAllocation: false, PodLevelResources: false}\n"
    )
    r = CliRunner().invoke(main, ["audit", str(path), "-f", "json", "-v", "-c", str(gates)], catch_exceptions=False)
    out = r.stdout[: r.stdout.rindex("}") + 1]
    assert [(f["rule"], f["severity"], f["line"]) for f in json.loads(out)["findings"]] == found[0]
    assert "(DynamicResourceAllocation on), though profile.featureGates turns DynamicResourceAllocation off" in r.stderr
    assert "(PodLevelResources on), though profile.featureGates turns PodLevelResources off" in r.stderr


def test_a_pod_bound_to_a_node_with_a_dra_extended_resource_is_judged_on_that_nodes_gpus(tmp_path: Path) -> None:
    """``example.com/gpu`` of a DeviceClass over NVIDIA's driver counts as ``nvidia.com/gpu``: the Node the pod
    runs on (a p5.48xlarge, its GPUs in no allocatable) is the node the share is judged on, as a claim's is."""
    resources = {"requests": {"cpu": "8", "memory": "1800Gi"}, "limits": {"memory": "1800Gi", "example.com/gpu": "1"}}
    p = pod("ext", NS, [container("main", "x", resources)], node="gpu-node-1", extra_spec={"priorityClassName": "hi"})
    text, found = _audit(tmp_path, [EXTENDED_GPU_CLASS, *NODES, p])
    share = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', text.index('"name": "ext"')))
    assert [(f["rule"], f["severity"], f["line"], f["message"][:45]) for f in found] == [
        ("gpu-memory-share-mismatch", "warning", share, "1 of 8 GPUs but 89.9% of node pool gpu-node-1")
    ]


def test_pods_given_extended_resources_through_dra_show_the_gate_on_whatever_the_profiles_version(
    tmp_path: Path,
) -> None:
    """KEP-5004: the scheduler makes the claim of a DRA extended resource and records it in the pod's
    ``status.extendedResourceClaimStatus``; the API server keeps a DeviceClass's ``extendedResourceName`` only
    with the gate on. A 1.35 profile (DRAExtendedResource alpha, off by default): a dump that shows either
    ran with the gate on, so the pod's GPU counts (the GPU share judged) and there is no "served only from
    1.36" warning; without them, the warning at the resource."""
    config = tmp_path / "kubelint.yaml"
    config.write_text('profile:\n  kubernetesVersion: "1.35"\n')

    def audit(name: str, status: dict | None, *objects: dict) -> tuple[str, list[tuple]]:
        resources = {"requests": {"cpu": "8", "memory": "1800Gi", name: "1"}, "limits": {"memory": "1800Gi", name: "1"}}
        p = pod(
            "ext", NS, [container("main", "x", resources)], node="gpu-node-1", extra_spec={"priorityClassName": "hi"}
        )
        if status:
            p["status"]["extendedResourceClaimStatus"] = status
        text = kubectl_list([*objects, *NODES, p])
        path = tmp_path / "dump.json"
        path.write_text(text)
        r = CliRunner().invoke(main, ["audit", str(path), "-f", "json", "-c", str(config)], catch_exceptions=False)
        found = json.loads(r.stdout[: r.stdout.rindex("}") + 1])["findings"]
        return text, [(f["rule"], f["severity"], f["line"]) for f in found]

    implicit = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
    # every class may be asked for by its implicit name: only the pod's status shows the scheduler served it
    text, found = audit(implicit, None, CLASSES[0])
    assert found == [
        ("unknown-resource-claim", "warning", _line_of(text, f'"{implicit}": "1"', text.index('"limits"')))
    ]
    mapping = {"containerName": "main", "resourceName": implicit, "requestName": "container-0-request-0"}
    text, found = audit(
        implicit, {"resourceClaimName": "ext-extended-resources-x2k4z", "requestMappings": [mapping]}, CLASSES[0]
    )
    share = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', text.index('"name": "ext"')))
    assert found == [("gpu-memory-share-mismatch", "warning", share)]
    # a stored DeviceClass with an extendedResourceName shows the gate on by itself
    text, found = audit("example.com/gpu", None, EXTENDED_GPU_CLASS)
    share = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', text.index('"name": "ext"')))
    assert found == [("gpu-memory-share-mismatch", "warning", share)]


def test_a_clusters_own_class_is_known_by_the_driver_its_claims_were_allocated_from(tmp_path: Path) -> None:
    """A class named 'h100', its DeviceClass not in the dump: the running claims' allocation results name
    the driver (gpu.nvidia.com), so its devices are GPUs, as the DeviceClass would have said."""
    items = json.loads(
        json.dumps(list(TEMPLATES.values()) + NODES + job_items()).replace(
            '"deviceClassName": "gpu.nvidia.com"', '"deviceClassName": "h100"'
        )
    )
    _, found = _audit(tmp_path, items)
    assert [(f["rule"], f["severity"]) for f in found] == [
        ("missing-priority-class", "warning"),
        ("gpu-memory-share-mismatch", "warning"),
    ]
    assert found[1]["message"].startswith("1 of 8 GPUs but 89.9%")
    # without the allocation, nothing says what an 'h100' device is
    for item in items:
        if item["kind"] == "ResourceClaim":
            del item["status"]["allocation"]
    _, found = _audit(tmp_path, items, "unallocated.json")
    assert [(f["rule"], f["severity"]) for f in found] == [("missing-priority-class", "warning")]


KUBECTL = """#!{python}
import json, sys
args = sys.argv[1:]
assert args[0] == "get" and args[2:4] == ["-o", "json"], args
kinds = {{"pods": "Pod", "nodes": "Node", "jobs.batch": "Job", "deviceclasses.resource.k8s.io": "DeviceClass",
    "resourceslices.resource.k8s.io": "ResourceSlice", "resourceclaimtemplates.resource.k8s.io": "ResourceClaimTemplate",
    "resourceclaims.resource.k8s.io": "ResourceClaim"}}
if args[1] == "computedomains.resource.nvidia.com":
    sys.stderr.write('error: the server doesn\\'t have a resource type "computedomains"\\n')
    sys.exit(1)
items = [i for i in json.load(open({dump!r}))["items"] if i["kind"] == kinds.get(args[1])]
sys.stdout.write(json.dumps({{"apiVersion": "v1", "items": items, "kind": "List", "metadata": {{"resourceVersion": ""}}}}))
"""


def test_kubectl_reads_the_dra_objects(tmp_path: Path) -> None:
    """`audit --kubectl` gets DeviceClasses, ResourceSlices, ResourceClaimTemplates and ResourceClaims
    (a kind the cluster does not serve is skipped): the claimed GPU is judged as from a dump."""
    import os
    import stat

    items = CLASSES + list(TEMPLATES.values()) + [DGX] + SLICES + job_items()
    for item in items:  # the Job's pods run on the DGX
        if item["kind"] == "Pod":
            item["spec"]["nodeName"] = "dgx-01"
    dump_text, from_dump = _audit(tmp_path, items)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "kubectl"
    script.write_text(KUBECTL.format(python=sys.executable, dump=str(tmp_path / "dump.json")))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = CliRunner(env=env).invoke(main, ["audit", "--kubectl", "-A", "-f", "json", "-v"], catch_exceptions=False)
    found = json.loads(r.stdout[: r.stdout.rindex("}") + 1])["findings"]
    dumped = str(tmp_path / "dump.json")
    assert [(f["rule"], f["severity"], f["message"]) for f in found] == [
        (f["rule"], f["severity"], f["message"].replace(dumped, "kubectl get nodes")) for f in from_dump
    ]
    assert [f["rule"] for f in found] == ["missing-priority-class", "gpu-memory-share-mismatch"]
    assert found[1]["message"].startswith("1 of 8 GPUs but 90% of node pool dgx-01")
    assert "the cluster does not serve computedomains.resource.nvidia.com; skipped" in r.stderr


def test_a_running_pods_prioritized_list_is_judged_by_the_alternative_the_scheduler_chose(tmp_path: Path) -> None:
    """KEP-4816: a request of ``firstAvailable`` alternatives (two GPUs, else one) is allocated one of them,
    and the claim's ``status.allocation.devices.results[].request`` names it (``gpu/one``). The running pod
    holds one GPU, so 400Gi of the p5.48xlarge (21%) is above its share (12.5%), which it was not with two
    (25%), the most `check` can assume before scheduling."""
    alternatives = {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "two", "deviceClassName": "gpu.nvidia.com", "count": 2},
                        {"name": "one", "deviceClassName": "gpu.nvidia.com", "count": 1},
                    ],
                }
            ]
        }
    }
    fa_template = obj("resource.k8s.io/v1", "ResourceClaimTemplate", "gpus", NS, {"spec": alternatives})
    resources = {"requests": {"cpu": "8", "memory": "400Gi"}, "limits": {"memory": "400Gi"}}
    items = dra_pod("fa-0", [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-3")], resources, on="gpu-node-1")
    p, claim = items
    p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "gpus"
    p["spec"]["priorityClassName"] = "training"
    claim["spec"] = copy.deepcopy(alternatives)

    def share(result_request: str) -> list[tuple]:
        claim["status"]["allocation"]["devices"]["results"][0]["request"] = result_request
        text, found = _audit(tmp_path, CLASSES + [fa_template] + NODES + [p, claim])
        memory = _line_of(text, '"memory": "400Gi"', text.index('"requests"', text.index('"name": "fa-0"')))
        return [(f["rule"], f["severity"], f["line"] == memory, f["message"][:48]) for f in found]

    assert share("gpu/one") == [
        ("gpu-memory-share-mismatch", "warning", True, "1 of 8 GPUs but 20% of node pool gpu-node-1 (Nod")
    ]
    assert share("gpu/two") == []
    # two pods of one template, allocated different alternatives: judged as the template (any of them)
    other = copy.deepcopy(claim)
    other["metadata"]["name"] = "fa-1-gpu-k2x9p"
    other["status"]["allocation"]["devices"]["results"][0]["request"] = "gpu/two"
    p1 = copy.deepcopy(p)
    p1["metadata"]["name"] = "fa-1"
    p1["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "fa-1-gpu-k2x9p"}]
    claim["status"]["allocation"]["devices"]["results"][0]["request"] = "gpu/one"
    _, found = _audit(tmp_path, CLASSES + [fa_template] + NODES + [p, claim, p1, other])
    assert [f["rule"] for f in found] == []
    # a claim not allocated yet (no results): the largest alternative, as check counts the template
    claim["status"] = {}
    text, found = _audit(tmp_path, CLASSES + [fa_template] + NODES + [p, claim])
    assert [f["rule"] for f in found] == []


def test_a_stored_pod_level_pids_limit_shows_the_gate_on(tmp_path: Path) -> None:
    """KEP-6063: the API server drops spec.resources.limits.pids with PerPodPIDLimit off (alpha and off by
    default in 1.37), so a stored pod that has it ran with the gate on: no "dropped" warning, on a 1.37
    profile or with none; check of the same pod as a manifest warns."""
    resources = {"limits": {"cpu": "1", "memory": "1Gi", "pids": "2048"}}
    p = pod("pids", NS, [container("main", "x", {})], node="gpu-node-1", extra_spec={"resources": resources})
    p["spec"]["priorityClassName"] = "hi"
    path = tmp_path / "dump.json"
    path.write_text(kubectl_list([p]))
    config = tmp_path / "kubelint.yaml"
    config.write_text('profile:\n  kubernetesVersion: "1.37"\n')
    for args in ([], ["-c", str(config)]):
        r = CliRunner().invoke(main, ["audit", str(path), "-f", "json", *args], catch_exceptions=False)
        assert json.loads(r.stdout[: r.stdout.rindex("}") + 1])["findings"] == [], args
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(_manifest_pod(p)))
    r = CliRunner().invoke(main, ["check", str(manifest), "-f", "json"], catch_exceptions=False)
    assert [(f["rule"], f["severity"]) for f in json.loads(r.stdout)["findings"]] == [
        ("pod-level-resources-invalid", "warning")
    ]


def _manifest_pod(p: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p["metadata"]["name"]}, "spec": p["spec"]}


def test_a_running_pods_all_mode_claim_holds_the_devices_its_results_name(tmp_path: Path) -> None:
    """``allocationMode: All`` allocates every device of the node that the class's and the request's
    selectors match, which can be fewer than the node's GPUs (here the two GPUs of index 0 and 1 of a
    p5.48xlarge's eight). The allocated claim names them, one ``status.allocation.devices.results`` entry
    per device, so the running pod holds 2 GPUs, and 1800Gi of the node (90%) is far above 2/8; before
    allocation (`check`, or a claim without results), All is the node's 8, the most it can be."""
    selected = {
        "name": "gpus",
        "exactly": {
            "deviceClassName": "gpu.nvidia.com",
            "allocationMode": "All",
            "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].index < 2"}}],
        },
    }
    all_template = obj(
        "resource.k8s.io/v1", "ResourceClaimTemplate", "low-gpus", NS, {"spec": {"devices": {"requests": [selected]}}}
    )
    p, claim = dra_pod("all-0", [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-0")], MEMORY_1800, on="gpu-node-1")
    p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "low-gpus"
    p["spec"]["priorityClassName"] = "training"
    claim["spec"] = {"devices": {"requests": [copy.deepcopy(selected)]}}
    claim["status"]["allocation"]["devices"]["results"] = [
        {"device": f"gpu-{i}", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "request": "gpus"} for i in range(2)
    ]
    text, found = _audit(tmp_path, CLASSES + [all_template] + NODES + [p, claim])
    memory = _line_of(text, '"memory": "1800Gi"', text.index('"requests"', text.index('"name": "all-0"')))
    assert [(f["rule"], f["severity"], f["line"]) for f in found] == [("gpu-memory-share-mismatch", "warning", memory)]
    assert found[0]["message"].startswith("2 of 8 GPUs but 89.9% of node pool gpu-node-1")
    # not allocated yet: the node's eight, whose share 1800Gi is within
    claim["status"] = {}
    _, found = _audit(tmp_path, CLASSES + [all_template] + NODES + [p, claim])
    assert found == []


def _amd_slice(name: str, devices: list[tuple[str, str, str]]) -> dict:
    """A ResourceSlice of AMD's GPU DRA driver (ROCm/k8s-gpu-dra-driver docs/driver-attributes.md): each
    device's ``type`` (``amdgpu``, ``amdgpu-partition``) and its GPU's PCI address, which a partition
    shares with its parent (``resource.kubernetes.io/pciBusID``)."""
    spec = {
        "devices": [
            {"attributes": {"type": {"string": t}, "resource.kubernetes.io/pciBusID": {"string": bus}}, "name": n}
            for n, t, bus in devices
        ],
        "driver": "gpu.amd.com",
        "nodeName": "mi300x-01",
        "pool": {"generation": 1, "name": "mi300x-01", "resourceSliceCount": 1},
    }
    return obj("resource.k8s.io/v1", "ResourceSlice", name, None, spec)


def test_a_nodes_gpus_are_its_physical_gpus_whatever_partitions_its_slices_list(tmp_path: Path) -> None:
    """AMD's driver publishes a pre-partitioned GPU as its partitions (8 in CPX mode), and in auto-partition
    mode each GPU as one virtual device per layout (spx-nps1 of type amdgpu; dpx-nps2, cpx-nps1, cpx-nps4 of
    type amdgpu-partition). Partitions share their GPU's PCI address: the node has 8 GPUs either way, not 64
    or 32, so one claimed GPU with 1700Gi of the node's 2000Gi is 1 of 8 (85% against 12.5%)."""
    amd_class = device_class("gpu.amd.com", "device.driver == 'gpu.amd.com'")
    one = template("one-amd-gpu", "gpu.amd.com", 1, "gpu")
    TEMPLATES_AMD = {"one-amd-gpu": one}
    node_obj = node(
        "mi300x-01", {"node.kubernetes.io/instance-type": "on-prem-mi300x"}, {"cpu": "192", "memory": "2000Gi"}
    )
    buses = [f"0000:{i:02x}:00.0" for i in range(8)]
    layouts = {
        "pre-partitioned": [(f"gpu-{g}-{p}", "amdgpu-partition", bus) for g, bus in enumerate(buses) for p in range(8)],
        "auto-partition": [
            (f"gpu-{g}-{mode}", "amdgpu" if mode == "spx-nps1" else "amdgpu-partition", bus)
            for g, bus in enumerate(buses)
            for mode in ("spx-nps1", "dpx-nps2", "cpx-nps1", "cpx-nps4")
        ],
    }
    resources = {"requests": {"cpu": "8", "memory": "1700Gi"}, "limits": {"memory": "1700Gi"}}
    saved = dict(TEMPLATES)
    TEMPLATES.update(TEMPLATES_AMD)
    try:
        pods = dra_pod("solo", [("gpu", "one-amd-gpu", "gpu.amd.com", "gpu-0-128")], resources, on="mi300x-01")
    finally:
        TEMPLATES.clear()
        TEMPLATES.update(saved)
    pods[0]["spec"]["priorityClassName"] = "high"
    for layout, devices in layouts.items():
        text, found = _audit(tmp_path, [amd_class, one, node_obj, _amd_slice(f"mi300x-01-{layout}", devices), *pods])
        memory = _line_of(text, '"memory": "1700Gi"', text.index('"requests"', text.index('"name": "solo"')))
        assert [(f["rule"], f["severity"], f["line"]) for f in found] == [
            ("gpu-memory-share-mismatch", "warning", memory)
        ], layout
        assert found[0]["message"].startswith("1 of 8 GPUs but 85% of node pool mi300x-01"), (
            layout,
            found[0]["message"],
        )


def _mig_slice(devices: list[tuple[str, str, str]]) -> dict:
    """NVIDIA's ResourceSlice for the p5.48xlarge of NODES: devices (name, type, profile) with the
    attributes its kubelet plugin publishes (cmd/gpu-kubelet-plugin/deviceinfo.go)."""
    spec = {
        "devices": [
            {
                "name": n,
                "attributes": {
                    "type": {"string": t},
                    **({"profile": {"string": p}} if p else {}),
                    "productName": {"string": "NVIDIA H100 80GB HBM3"},
                },
            }
            for n, t, p in devices
        ],
        "driver": "gpu.nvidia.com",
        "nodeName": "gpu-node-1",
        "pool": {"generation": 1, "name": "gpu-node-1", "resourceSliceCount": 1},
    }
    return obj("resource.k8s.io/v1", "ResourceSlice", "gpu-node-1-gpu.nvidia.com-x", None, spec)


def test_a_running_pods_mig_claim_of_no_profile_holds_the_partition_its_slice_names(tmp_path: Path) -> None:
    """A claim of mig.nvidia.com with no profile may be allocated any MIG device, so before allocation it is
    counted as a whole GPU, the most it can be. Allocated, its result names the device, and the node's
    ResourceSlice says that device is a 1g.10gb of an H100 (1/7 of a GPU): the running pod holds 1/56 of
    the node's GPUs, so 200Gi (10% of the node) is far above its share; without the slice in the dump the
    whole GPU is kept (12.5%, within)."""
    mig_class = device_class(
        "mig.nvidia.com",
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    )
    mig_template = template("one-mig", "mig.nvidia.com", 1, "mig")
    resources = {"requests": {"cpu": "2", "memory": "200Gi"}, "limits": {"memory": "200Gi"}}
    saved = dict(TEMPLATES)
    TEMPLATES["one-mig"] = mig_template
    try:
        p, claim = dra_pod(
            "mig-0", [("mig", "one-mig", "gpu.nvidia.com", "gpu-0-mig-9-0-1")], resources, on="gpu-node-1"
        )
    finally:
        TEMPLATES.clear()
        TEMPLATES.update(saved)
    p["spec"]["priorityClassName"] = "serving"
    # (partitionable devices, KEP-4815: each GPU and the MIG devices it can be cut into)
    devices = [(f"gpu-{i}", "gpu", None) for i in range(8)]
    devices += [("gpu-0-mig-9-0-1", "mig", "1g.10gb"), ("gpu-2-mig-0-0-7", "mig", "7g.80gb")]
    text, found = _audit(tmp_path, [mig_class, mig_template, *NODES, _mig_slice(devices), p, claim])
    memory = _line_of(text, '"memory": "200Gi"', text.index('"requests"', text.index('"name": "mig-0"')))
    assert [(f["rule"], f["severity"], f["line"]) for f in found] == [("gpu-memory-share-mismatch", "warning", memory)]
    assert found[0]["message"].startswith("1/7 of 8 GPUs but 10% of node pool gpu-node-1"), found[0]["message"]
    _, found = _audit(tmp_path, [mig_class, mig_template, *NODES, p, claim])
    assert found == []


def test_a_running_pods_share_of_a_shared_gpu_is_the_capacity_it_consumed(tmp_path: Path) -> None:
    """KEP-5075 (consumable capacity, on from 1.36): a device with allowMultipleAllocations is shared by
    claims, each consuming part of its capacity. Before allocation a request of 20Gi of a GPU's memory
    is counted as the whole GPU, the most it can hold. Allocated, its result records the capacity it
    consumed (consumedCapacity), and the node's ResourceSlice the device's (80Gi): the pod holds 1/4 of
    one GPU of eight, so 200Gi (10% of the node) is above its share (3.1%)."""
    request = {
        "name": "gpu",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "20Gi"}}},
    }
    shared = obj(
        "resource.k8s.io/v1", "ResourceClaimTemplate", "gpu-share", NS, {"spec": {"devices": {"requests": [request]}}}
    )
    resources = {"requests": {"cpu": "2", "memory": "200Gi"}, "limits": {"memory": "200Gi"}}
    p, claim = dra_pod("share-0", [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-3")], resources, on="gpu-node-1")
    p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "gpu-share"
    p["spec"]["priorityClassName"] = "serving"
    claim["spec"] = {"devices": {"requests": [copy.deepcopy(request)]}}
    claim["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] = {"memory": "20Gi"}
    claim["status"]["allocation"]["devices"]["results"][0]["shareID"] = "4f1c2a9e-0000-4000-8000-000000000003"
    slice_ = obj(
        "resource.k8s.io/v1",
        "ResourceSlice",
        "gpu-node-1-gpu.nvidia.com-s",
        None,
        {
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"type": {"string": "gpu"}},
                    "allowMultipleAllocations": True,
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(8)
            ],
            "driver": "gpu.nvidia.com",
            "nodeName": "gpu-node-1",
            "pool": {"generation": 1, "name": "gpu-node-1", "resourceSliceCount": 1},
        },
    )
    text, found = _audit(tmp_path, [*CLASSES, shared, *NODES, slice_, p, claim])
    memory = _line_of(text, '"memory": "200Gi"', text.index('"requests"', text.index('"name": "share-0"')))
    assert [(f["rule"], f["severity"], f["line"]) for f in found] == [("gpu-memory-share-mismatch", "warning", memory)]
    assert found[0]["message"].startswith("1/4 of 8 GPUs but 10% of node pool gpu-node-1"), found[0]["message"]
    # the device's capacity not in the dump: the whole GPU, the most it can hold (12.5%: within)
    _, found = _audit(tmp_path, [*CLASSES, shared, *NODES, p, claim])
    assert found == []


def test_a_running_pod_whose_gpu_claim_no_container_lists(tmp_path: Path) -> None:
    """audit says of a running pod what check says of its template: the GPU claim is allocated (its
    generated ResourceClaim in the dump) but its container does not list it (accelerator-claim-unused,
    at the entry's name); the NIC claim beside it is not said."""
    items = dra_pod(
        "idle-gpu",
        [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-0"), ("nic", "rdma-nic", "dra.net", "eth1")],
        {"requests": {"cpu": "2", "memory": "20Gi"}, "limits": {"memory": "20Gi"}},
        on="gpu-node-1",
        priorityClassName="serving",
    )
    items[0]["spec"]["containers"][0]["resources"]["claims"] = []
    text, found = _audit(tmp_path, CLASSES + list(TEMPLATES.values()) + NODES + items)
    at = _line_of(text, '"name": "gpu"', text.index('"resourceClaims"', text.index('"name": "idle-gpu"')))
    assert [(f["rule"], f["severity"], f["line"]) for f in found] == [("accelerator-claim-unused", "warning", at)]


def test_a_running_pods_container_naming_a_first_available_alternative(tmp_path: Path) -> None:
    """audit reads the pod's generated claim (its spec copied from the template): a container naming the
    alternative ``gpu/one`` gets none of the devices, said as check says it, at the container's request."""
    alternatives = {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "two", "deviceClassName": "gpu.nvidia.com", "count": 2},
                        {"name": "one", "deviceClassName": "gpu.nvidia.com", "count": 1},
                    ],
                }
            ]
        }
    }
    fa_template = obj("resource.k8s.io/v1", "ResourceClaimTemplate", "gpus", NS, {"spec": alternatives})
    resources = {"requests": {"cpu": "2", "memory": "20Gi"}, "limits": {"memory": "20Gi"}}
    p, claim = dra_pod("alt-0", [("gpu", "single-gpu", "gpu.nvidia.com", "gpu-3")], resources, on="gpu-node-1")
    p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "gpus"
    p["spec"]["priorityClassName"] = "training"
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu", "request": "gpu/one"}]
    claim["spec"] = copy.deepcopy(alternatives)
    claim["status"]["allocation"]["devices"]["results"][0]["request"] = "gpu/one"
    text, found = _audit(tmp_path, CLASSES + [fa_template] + NODES + [p, claim])
    at = _line_of(text, '"request": "gpu/one"', text.index('"name": "alt-0"'))
    assert [(f["rule"], f["severity"], f["line"], f["message"]) for f in found] == [
        (
            "unknown-resource-claim",
            "error",
            at,
            "container 'main' uses 'gpu/one' of claim 'gpu', a firstAvailable alternative of request 'gpu'; "
            "containers name the request [1 pod]",
        )
    ]
