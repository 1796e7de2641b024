import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from reservations import (
    aks_allocatable_memory_mib,
    aks_reserved_cpu_millicores,
    gke_allocatable_memory_mib,
    karpenter_allocatable_memory_mib,
    tiered_reserved_cpu_millicores,
)

from kubelint_ml.k8s import nodes
from kubelint_ml.k8s.nodes import (
    NodePool,
    NodeType,
    catalog,
    catalog_labels,
    node_pool_from_config,
    node_type_candidates,
    pools_for_pod,
    profile_quantity,
    resolve_node_type,
    smallest,
)

MI = 1 << 20
GI = 1 << 30


def affinity(*terms, preferred=None):
    aff = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"affinity": {"nodeAffinity": aff}}


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return {"matchExpressions": [e]}


# ---------------------------------------------------------------- formulas


def test_gke_memory_formula():
    # 16 GiB: 25% of 4 + 20% of 4 + 10% of 8 = 2.6 GiB = 2662.4 MiB, + 100 MiB eviction
    assert gke_allocatable_memory_mib(16) == 13621
    # 85 GiB: 2.6 GiB + 6% of 69 GiB = 6.74 GiB = 6901.76 MiB
    assert gke_allocatable_memory_mib(85) == 80038
    # 1872 GiB: 2.6 + 6.72 + 2% of 1744 = 44.2 GiB = 45260.8 MiB
    assert gke_allocatable_memory_mib(1872) == 1871567


def test_tiered_cpu_matches_karpenter_values():
    # Karpenter lists 3920m / 95690m / 191450m for 4 / 96 / 192 vCPU.
    assert 4000 - tiered_reserved_cpu_millicores(4) == 3920
    assert 96000 - tiered_reserved_cpu_millicores(96) == 95690
    assert 192000 - tiered_reserved_cpu_millicores(192) == 191450


def test_aks_formulas():
    assert [aks_reserved_cpu_millicores(n) for n in (1, 2, 4, 8, 16, 32, 64)] == [
        60,
        100,
        140,
        180,
        260,
        420,
        740,
    ]
    assert aks_reserved_cpu_millicores(96) == 1060
    # 900 GiB: min(20*110+50, 25%) = 2250 MiB, + 100 MiB eviction
    assert aks_allocatable_memory_mib(900) == 921600 - 2250 - 100
    # small VM: 25% of RAM is the smaller reservation (documented example: 4 GB, 70 pods)
    assert aks_allocatable_memory_mib(4, max_pods=70) == 4096 - 1024 - 100


# ---------------------------------------------------------------- catalog


def test_catalog_rows_exact():
    c = catalog()
    assert len(c) == 183
    p4d = c["p4d.24xlarge"]
    assert p4d == NodeType(
        name="p4d.24xlarge",
        gpus=8,
        gpu_resource="nvidia.com/gpu",
        gpu_model="NVIDIA A100 40GB",
        memory=Fraction(1082712 * MI),
        cpu=Fraction(9569, 100),
        ephemeral_storage=Fraction(8000 * 10**9),
        source="catalog",
    )
    assert c["p5en.48xlarge"].memory == 1937332 * MI
    assert c["g6e.2xlarge"].memory == 59627 * MI
    assert c["g6e.48xlarge"].gpus == 8
    assert c["a2-highgpu-1g"].memory == 80038 * MI
    assert c["a2-highgpu-1g"].ephemeral_storage is None
    assert c["a3-highgpu-8g"].ephemeral_storage == 6000 * GI
    assert c["Standard_ND96isr_H100_v5"].memory == (1900 * 1024 - 2250 - 100) * MI
    assert c["Standard_NC24ads_A100_v4"].ephemeral_storage == (960 + 64) * GI
    assert c["Standard_NC96ads_A100_v4"].cpu == Fraction(96000 - 1060, 1000)


def test_every_row_follows_its_rule():
    rows = nodes._load_rows()
    for row in rows:
        if row["memory_rule"] == "gke-standard":
            assert row["allocatable_memory_mib"] == gke_allocatable_memory_mib(row["ram_gb_listed"])
        elif row["memory_rule"] == "aks-1.29":
            assert row["allocatable_memory_mib"] == aks_allocatable_memory_mib(row["ram_gib"])
        elif row["memory_rule"] == "karpenter-formula":
            assert row["allocatable_memory_mib"] == karpenter_allocatable_memory_mib(row["ram_gib"], row["max_pods"])
        elif row["memory_rule"] == "karpenter-formula-unknown-pods":  # no max pods published: an upper bound
            assert "max_pods" not in row
            assert row["allocatable_memory_mib"] == karpenter_allocatable_memory_mib(row["ram_gib"], 0)
        elif row["memory_rule"] == "oci-listed":
            assert row["allocatable_memory_mib"] == row["ram_gb_listed"] * 1024 - 100
        else:
            assert row["memory_rule"] == "karpenter" and row["provider"] == "aws"
            assert row["allocatable_memory_mib"] < row["ram_gib"] * 1024
        if row["cpu_rule"] == "aks-table":
            expected = row["vcpu"] * 1000 - aks_reserved_cpu_millicores(row["vcpu"])
        elif row["cpu_rule"] == "listed":
            expected = row["vcpu"] * 1000
        else:
            expected = row["vcpu"] * 1000 - tiered_reserved_cpu_millicores(row["vcpu"])
        assert row["allocatable_cpu_millicores"] == expected, row["name"]


def test_catalog_file_documents_rules_and_loads_once():
    text = (Path(nodes.__file__).parent.parent / "data" / "gpu-catalog.yaml").read_text()
    data = yaml.safe_load(text)
    assert set(data["rules"]) == {
        "karpenter",
        "karpenter-formula",
        "karpenter-formula-unknown-pods",
        "eks-tiered",
        "gke-standard",
        "gke-tiered",
        "aks-1.29",
        "aks-table",
        "oci-listed",
        "listed",
    }
    assert nodes._entries() is nodes._entries()
    c = catalog()
    c.clear()  # callers get a copy
    assert len(catalog()) == 183


def test_the_catalog_rows_are_the_yaml():
    """data/gpu-catalog.json (what a run reads) holds exactly the YAML's rows."""
    shipped = (Path(nodes.__file__).parent.parent / "data" / nodes.CATALOG_ROWS).read_text()
    assert shipped == nodes.catalog_rows(), (
        "regenerate: python -m kubelint_ml.k8s.nodes > kubelint_ml/data/gpu-catalog.json"
    )
    assert (
        nodes._load_rows()
        == yaml.safe_load((Path(nodes.__file__).parent.parent / "data" / "gpu-catalog.yaml").read_text())["types"]
    )


def test_catalog_labels():
    labels = catalog_labels("p5.48xlarge")
    assert labels["karpenter.k8s.aws/instance-family"] == "p5"
    assert labels["eks.amazonaws.com/instance-gpu-name"] == "h100"
    assert labels["karpenter.k8s.aws/instance-memory"] == str(2048 * 1024)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert catalog_labels("a3-megagpu-8g")["cloud.google.com/gke-accelerator"] == "nvidia-h100-mega-80gb"
    assert catalog_labels("nope") == {}


# ---------------------------------------------------------------- resolution


def test_node_selector_instance_type():
    node, how = resolve_node_type({"nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"}})
    assert node.name == "p4d.24xlarge"
    assert how == "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge"


def test_beta_label_and_hyperpod_alias():
    node, how = resolve_node_type({"nodeSelector": {"beta.kubernetes.io/instance-type": "g5.12xlarge"}})
    assert node.name == "g5.12xlarge" and node.gpus == 4
    node, how = resolve_node_type({"nodeSelector": {"node.kubernetes.io/instance-type": "ml.g5.8xlarge"}})
    assert node.name == "g5.8xlarge"
    assert how == "nodeSelector node.kubernetes.io/instance-type=ml.g5.8xlarge -> g5.8xlarge"


def test_unknown_instance_type_is_unresolved():
    assert resolve_node_type({"nodeSelector": {"node.kubernetes.io/instance-type": "m5.large"}}) == (
        None,
        "node.kubernetes.io/instance-type=m5.large is not in the built-in GPU catalog",
    )
    # one unknown value among In candidates: it might be the smallest
    pod = affinity(expr("node.kubernetes.io/instance-type", "In", "p5.48xlarge", "p6e-gb300.36xlarge"))
    node, how = resolve_node_type(pod)
    assert node is None and "p6e-gb300.36xlarge" in how


def test_gke_accelerator_with_and_without_count():
    node, how = resolve_node_type(
        {
            "nodeSelector": {
                "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
                "cloud.google.com/gke-accelerator-count": "2",
            }
        }
    )
    assert node.name == "a3-highgpu-2g"
    node, how = resolve_node_type({"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}})
    assert node.name == "g2-standard-4"
    assert how.startswith(
        "nodeSelector cloud.google.com/gke-accelerator=nvidia-l4 -> g2-standard-4 (smallest of 8 candidates: g2-standard-4, g2-standard-8,"
    )
    node, how = resolve_node_type({"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}})
    assert node is None
    assert how == "cloud.google.com/gke-accelerator=nvidia-tesla-t4 is not in the built-in GPU catalog"


def test_placeholder_node_label_is_said_as_one():
    # GoogleCloudPlatform/kubernetes-engine-samples ai-ml/verl-on-gke/ray-cluster-auto.yaml (at
    # 2b5036514162): the worker group's selector is filled in by envsubst before it is applied
    pod = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": "${GPU_TYPE}", "cloud.google.com/gke-accelerator-count": 8}
    }
    assert resolve_node_type(pod) == (
        None,
        "cloud.google.com/gke-accelerator=${GPU_TYPE} is a placeholder, not a node type: render it to resolve the node",
    )


def test_gke_accelerator_count_as_integer_yaml_value():
    pod = {
        "nodeSelector": {
            "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb",
            "cloud.google.com/gke-accelerator-count": 8,
        }
    }
    assert resolve_node_type(pod)[0].name == "a3-megagpu-8g"


def test_karpenter_family_size_and_in_lists():
    pod = affinity(
        {
            "matchExpressions": [
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]},
                {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["12xlarge", "48xlarge"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            ]
        }
    )
    node, how = resolve_node_type(pod)
    # 12xlarge: 360157 Mi / 4 GPUs; 48xlarge: 1449132 Mi / 8 GPUs
    assert node.name == "g6e.12xlarge"
    assert how == (
        "required node affinity karpenter.k8s.aws/instance-family=g6e, "
        "karpenter.k8s.aws/instance-size In [12xlarge, 48xlarge] -> g6e.12xlarge "
        "(smallest of 2 candidates: g6e.12xlarge, g6e.48xlarge)"
    )


def test_eks_auto_mode_gpu_name_and_count():
    pod = {"nodeSelector": {"eks.amazonaws.com/instance-gpu-name": "h100", "eks.amazonaws.com/instance-gpu-count": "8"}}
    assert resolve_node_type(pod)[0].name == "p5.48xlarge"


def test_gfd_product_and_count():
    pod = {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A10G", "nvidia.com/gpu.count": "4"}}
    node, how = resolve_node_type(pod)
    assert node.name == "g5.12xlarge"  # 173398 Mi < 360157 Mi for 4 GPUs
    pod = {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S", "nvidia.com/gpu.count": "4"}}
    assert resolve_node_type(pod) == (None, "candidate node types span providers (aws, oci)")
    # the same product on several clouds: no guess
    node, how = resolve_node_type({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}})
    assert node is None
    assert how == "candidate node types span providers (aws, azure, gcp, oci)"


def test_several_terms_are_a_union_and_preferred_terms_are_ignored():
    pod = affinity(
        expr("node.kubernetes.io/instance-type", "In", "p5.48xlarge"),
        expr("node.kubernetes.io/instance-type", "In", "p4d.24xlarge"),
        preferred=[{"weight": 1, "preference": expr("node.kubernetes.io/instance-type", "In", "g4dn.xlarge")}],
    )
    node, how = resolve_node_type(pod)
    assert node.name == "p4d.24xlarge"
    assert "smallest of 2 candidates: p4d.24xlarge, p5.48xlarge" in how
    only_preferred = {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": expr("node.kubernetes.io/instance-type", "In", "p5.48xlarge")}
                ]
            }
        }
    }
    assert resolve_node_type(only_preferred) == (None, "no nodeSelector or required node affinity")


def test_term_without_node_type_label_makes_pod_unresolved():
    pod = affinity(
        expr("node.kubernetes.io/instance-type", "In", "p5.48xlarge"),
        expr("topology.kubernetes.io/zone", "In", "us-east-1a"),
    )
    assert resolve_node_type(pod) == (None, "no node type label (instance type, accelerator or GPU product)")


def test_node_selector_and_affinity_combine():
    pod = {"nodeSelector": {"karpenter.k8s.aws/instance-family": "g5"}}
    pod.update(affinity(expr("karpenter.k8s.aws/instance-gpu-count", "Gt", "4")))
    node, how = resolve_node_type(pod)
    assert node.name == "g5.48xlarge"
    pod.update(affinity(expr("karpenter.k8s.aws/instance-size", "NotIn", "48xlarge", "12xlarge")))
    node, how = resolve_node_type(pod)
    assert node.name == "g5.xlarge"  # 14162 Mi for one GPU
    conflicting = {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}
    conflicting.update(affinity(expr("node.kubernetes.io/instance-type", "In", "p4d.24xlarge")))
    node, how = resolve_node_type(conflicting)
    assert node is None and how.startswith("no catalog node type satisfies")


@pytest.mark.parametrize(
    "pod",
    [
        None,
        "x",
        {"nodeSelector": "x"},
        {"nodeSelector": ["a"]},
        {"nodeSelector": {"node.kubernetes.io/instance-type": ["p5.48xlarge"]}},
        {"nodeSelector": {1: 2, "node.kubernetes.io/instance-type": None}},
        {"affinity": 3},
        {"affinity": {"nodeAffinity": []}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "x"}}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": 5}}}},
        affinity(3, {"matchExpressions": 3}, {"matchExpressions": [3, {"key": 1}, {"key": "a", "operator": "Bogus"}]}),
        affinity(
            {
                "matchExpressions": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": "p5.48xlarge"}
                ]
            }
        ),
        {"containers": "x", "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
        {"containers": [3, {"resources": 4}, {"resources": {"limits": [1]}}]},
    ],
)
def test_wrong_types_never_crash(pod):
    node, how = resolve_node_type(pod)
    assert node is None or node.name == "p5.48xlarge"
    assert isinstance(how, str) and how
    assert isinstance(pools_for_pod(pod, [NodePool("a")]), list)
    tainted = NodePool("t", taints=(("dedicated", "x", "NoSchedule"),), nodes=("n1",))
    assert isinstance(pools_for_pod(pod, [tainted]), list)


def test_corpus_deployment_resolves(corpus):
    path = (
        corpus
        / "GoogleCloudPlatform__kubernetes-engine-samples"
        / ("ai-ml__nemo-rl-on-gke__nemoRL__gemma3-27b-it__nim-gemma-deployment.yaml")
    )
    doc = next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "Deployment")
    node, how = resolve_node_type(doc["spec"]["template"]["spec"])
    assert node.name == "a3-megagpu-8g"
    assert how == "nodeSelector cloud.google.com/gke-accelerator=nvidia-h100-mega-80gb -> a3-megagpu-8g"


def test_smallest_definition():
    a = NodeType("a", 8, "nvidia.com/gpu", "", Fraction(800), None, None, "catalog")
    b = NodeType("b", 1, "nvidia.com/gpu", "", Fraction(100), None, None, "catalog")
    c = NodeType("c", 2, "nvidia.com/gpu", "", Fraction(180), None, None, "catalog")
    unknown = NodeType("u", 1, "nvidia.com/gpu", "", None, None, None, "profile")
    assert smallest([a, b, c, unknown]).name == "c"  # 90 bytes per GPU
    assert smallest([a, b]).name == "b"  # tie at 100 per GPU: fewer GPUs
    assert smallest([unknown, a]).name == "a"


# ---------------------------------------------------------------- profile pools


def gpu_pod(**spec):
    spec.setdefault("containers", [{"name": "t", "resources": {"limits": {"nvidia.com/gpu": 1}}}])
    return spec


def test_pool_matches_and_overrides_catalog():
    pools = [
        NodePool("cpu", labels={"pool": "cpu"}, gpus=0),
        NodePool(
            "h100",
            labels={"pool": "h100", "node.kubernetes.io/instance-type": "p5.48xlarge"},
            memory=Fraction(1800 * GI),
        ),
    ]
    pod = gpu_pod(nodeSelector={"node.kubernetes.io/instance-type": "p5.48xlarge"})
    node, how = resolve_node_type(pod, pools)
    assert how == "profile pool h100"
    assert node == NodeType(
        name="h100",
        gpus=8,  # from the catalog entry of its instance type
        gpu_resource="nvidia.com/gpu",
        gpu_model="NVIDIA H100 80GB",
        memory=Fraction(1800 * GI),  # from the profile
        cpu=Fraction(191450, 1000),
        ephemeral_storage=Fraction(30400 * 10**9),
        source="profile",
    )


def test_no_matching_pool_falls_back_to_catalog():
    pools = [NodePool("a100", labels={"pool": "a100"}, gpus=8, memory=Fraction(1000 * GI))]
    node, how = resolve_node_type(gpu_pod(nodeSelector={"node.kubernetes.io/instance-type": "g5.xlarge"}), pools)
    assert node.name == "g5.xlarge" and node.source == "catalog"


def test_pod_without_constraints_takes_smallest_gpu_pool():
    pools = [
        NodePool("big", gpus=8, memory=Fraction(2000 * GI)),
        NodePool("small", gpus=4, memory=Fraction(400 * GI)),
        NodePool("cpu", gpus=0, memory=Fraction(64 * GI)),
        NodePool("amd", gpus=8, gpu_resource="amd.com/gpu", memory=Fraction(100 * GI)),
        NodePool("unknown-gpus"),
    ]
    node, how = resolve_node_type(gpu_pod(), pools)
    assert node.name == "small"
    assert how == "profile pool small (smallest of 2 matching pools: small, big)"
    assert [p.name for p in pools_for_pod(gpu_pod(), pools)] == ["big", "small", "cpu", "amd", "unknown-gpus"]


def test_pools_for_pod_operators():
    pools = [
        NodePool("a", labels={"tier": "train", "gpus": "8"}),
        NodePool("b", labels={"tier": "serve", "gpus": "1"}),
        NodePool("c", labels={}),
    ]

    def names(pod):
        return [p.name for p in pools_for_pod(pod, pools)]

    assert names({"nodeSelector": {"tier": "train"}}) == ["a"]
    assert names(affinity(expr("tier", "NotIn", "train"))) == ["b", "c"]
    assert names(affinity(expr("tier", "Exists"))) == ["a", "b"]
    assert names(affinity(expr("tier", "DoesNotExist"))) == ["c"]
    assert names(affinity(expr("gpus", "Gt", "4"))) == ["a"]
    assert names(affinity(expr("gpus", "Lt", "4"))) == ["b"]
    assert names(affinity(expr("tier", "In", "serve"), expr("tier", "In", "train"))) == ["a", "b"]
    assert names({"nodeSelector": {"tier": "train"}, **affinity(expr("gpus", "In", "1"))}) == []


def test_node_pool_from_config_and_quantities():
    pool = node_pool_from_config(
        "h100",
        {
            "labels": {"pool": "h100", "bad": ["x"]},
            "gpus": 8,
            "memory": "1800Gi",
            "cpu": "190",
            "ephemeralStorage": "28T",
            "kubeletVersion": "1.32",
            "cgroupVersion": 2,
            "os": "linux",
            "kubeletConfig": "kubelet.yaml",
        },
    )
    assert pool == NodePool(
        name="h100",
        labels={"pool": "h100"},
        gpus=8,
        gpu_resource="nvidia.com/gpu",
        memory=Fraction(1800 * GI),
        cpu=Fraction(190),
        ephemeral_storage=Fraction(28 * 10**12),
        kubelet_version="1.32",
        cgroup_version=2,
        os="linux",
        kubelet_config="kubelet.yaml",
    )
    bad = node_pool_from_config("x", {"labels": 3, "gpus": True, "memory": "lots", "cgroupVersion": 3})
    assert (bad.labels, bad.gpus, bad.memory, bad.cgroup_version) == ({}, None, None, None)
    assert profile_quantity("500m") == Fraction(1, 2)
    assert profile_quantity(1.5) == Fraction(3, 2)
    assert profile_quantity(True) is None


# ---------------------------------------------------------------- the generated catalog


def test_the_catalog_is_what_its_generator_makes_from_the_sources():
    """kubelint_ml/data/gpu-catalog.yaml is the output of kubelint_ml/k8s/catalog.py for
    gpu-catalog-sources.yaml, byte for byte; every row names its source and date."""
    from kubelint_ml.k8s import catalog as generator

    shipped = (Path(nodes.__file__).parent.parent / "data" / "gpu-catalog.yaml").read_text()
    assert shipped == generator.generate(), (
        "regenerate: python -m kubelint_ml.k8s.catalog > kubelint_ml/data/gpu-catalog.yaml"
    )
    for row in yaml.safe_load(shipped)["types"]:
        assert row["source"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(row["date"])), row["name"]


def test_current_accelerators_are_in_the_catalog():
    c = catalog()
    assert (c["p6-b200.48xlarge"].gpus, c["p6-b200.48xlarge"].memory) == (8, 1937332 * MI)  # Karpenter's list
    assert (c["p6-b300.48xlarge"].gpus, c["p6-b300.48xlarge"].memory) == (8, 3877198 * MI)  # Karpenter's list
    assert catalog_labels("p6-b300.48xlarge")["karpenter.k8s.aws/instance-gpu-name"] == "b300"
    gb300 = c["Standard_ND128isr_GB300_v6"]
    assert (gb300.gpus, gb300.gpu_model, gb300.gpu_resource) == (4, "NVIDIA GB300", "nvidia.com/gpu")
    assert gb300.memory == c["Standard_ND128isr_NDR_GB200_v6"].memory  # the same 864 GB as GB200 v6
    assert (c["trn2.48xlarge"].gpu_resource, c["trn2.48xlarge"].gpus) == ("aws.amazon.com/neuron", 16)
    assert c["p3.2xlarge"].memory == (61 * 1024 - math.ceil(61 * 1024 * 0.075) - (11 * 58 + 255) - 100) * MI
    assert (c["a4x-highgpu-4g"].gpus, c["a4x-highgpu-4g"].gpu_model) == (4, "NVIDIA GB200")
    assert (c["Standard_ND96isr_MI300X_v5"].gpu_resource, c["Standard_ND96isr_MI300X_v5"].gpus) == ("amd.com/gpu", 8)
    assert c["ct6e-standard-4t"].gpu_resource == "google.com/tpu"
    assert catalog_labels("trn1.32xlarge")["karpenter.k8s.aws/instance-accelerator-name"] == "trainium"
    assert "karpenter.k8s.aws/instance-gpu-count" not in catalog_labels("trn1.32xlarge")
    assert catalog_labels("BM.GPU.H100.8")["node.kubernetes.io/instance-type"] == "BM.GPU.H100.8"


def test_blackwell_oci_shapes_and_a4x_max():
    """OCI's B200, GB200 and GB300 bare-metal shapes (memory less the eviction threshold, vCPU as
    listed: 2 x OCPU on x86, OCPU on Grace) and GKE's a4x-maxgpu-4g-metal (GKE's reservation formula)."""
    c = catalog()
    for name, gpus, model, vcpu, ram_gb in (
        ("BM.GPU.B200.8", 8, "NVIDIA B200", 256, 4096),
        ("BM.GPU.GB200.4", 4, "NVIDIA GB200", 144, 960),
        ("BM.GPU.GB300.4", 4, "NVIDIA GB300", 144, 960),
        # the GB200 shape's hardware on OCI's other two RDMA fabrics (OCI's GB200 quick start)
        ("BM.GPU.GB200-v2.4", 4, "NVIDIA GB200", 144, 960),
        ("BM.GPU.GB200-v3.4", 4, "NVIDIA GB200", 144, 960),
    ):
        node = c[name]
        assert (node.gpus, node.gpu_resource, node.gpu_model) == (gpus, "nvidia.com/gpu", model), name
        assert (node.memory, node.cpu) == ((ram_gb * 1024 - 100) * MI, vcpu), name
        assert node.ephemeral_storage == 30720000000000, name
    a4x_max = c["a4x-maxgpu-4g-metal"]
    assert (a4x_max.gpus, a4x_max.gpu_model, a4x_max.ephemeral_storage) == (4, "NVIDIA GB300", None)
    assert a4x_max.memory == 956356 * MI and a4x_max.cpu == Fraction(143570, 1000)
    assert catalog_labels("a4x-maxgpu-4g-metal")["cloud.google.com/gke-accelerator"] == "nvidia-gb300"
    for name in ("BM.GPU.GB300.4", "a4x-maxgpu-4g-metal", "Standard_ND128isr_GB300_v6"):
        assert catalog_labels(name)["nvidia.com/gpu.memory"] == "284208", name  # nvidia-smi on a GB300


def test_fractional_l4_and_gb200_rows():
    """g6f/gr6f: one vGPU (an L4 profile) per node, as the device plugin advertises it, with Karpenter's
    figures; p6e-gb200: 4 GB200, 144 vCPU, 960 GiB, and max pods unpublished (an upper bound)."""
    c = catalog()
    for name, profile, gpu_mib, memory in (
        ("g6f.large", "L4-3Q", 2861, 7002),
        ("g6f.xlarge", "L4-3Q", 2861, 14162),
        ("g6f.2xlarge", "L4-6Q", 5722, 29317),
        ("g6f.4xlarge", "L4-12Q", 11444, 57691),
        ("gr6f.4xlarge", "L4-12Q", 11444, 118312),
    ):
        node = c[name]
        assert (node.gpus, node.gpu_resource, node.memory) == (1, "nvidia.com/gpu", memory * MI), name
        labels = catalog_labels(name)
        assert labels["nvidia.com/gpu.product"] == f"NVIDIA-{profile}"
        assert labels["nvidia.com/gpu.memory"] == str(gpu_mib)
        assert labels["karpenter.k8s.aws/instance-gpu-name"] == "l4"
    assert c["g6f.large"].cpu == Fraction(1930, 1000)  # Karpenter lists 1930m
    gb200 = c["p6e-gb200.36xlarge"]
    assert (gb200.gpus, gb200.gpu_model, gb200.ephemeral_storage) == (4, "NVIDIA GB200", None)
    assert gb200.memory == (960 * 1024 - math.ceil(960 * 1024 * 0.075) - 255 - 100) * MI
    assert gb200.cpu == Fraction(144000 - 430, 1000)
    assert catalog_labels("p6e-gb200.36xlarge")["karpenter.k8s.aws/instance-family"] == "p6e-gb200"
    # a GPU product pin picks the profile: the 1/8-L4 sizes, not the whole L4s
    node, how = resolve_node_type({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4-3Q"}})
    assert node is not None and node.name == "g6f.large", how


@pytest.mark.parametrize(
    ("accelerator", "topology", "machine"),
    [
        ("tpu-v6e-slice", "1x1", "ct6e-standard-1t"),
        ("tpu-v6e-slice", "2x2", "ct6e-standard-4t"),
        # one 8-chip host or two 4-chip ones: GKE picks by the pod's google.com/tpu request
        ("tpu-v6e-slice", "2x4", ("ct6e-standard-4t", "ct6e-standard-8t")),
        ("tpu-v6e-slice", "8x16", "ct6e-standard-4t"),  # multi-host: 4-chip hosts
        ("tpu-v5-lite-podslice", "2x4", ("ct5lp-hightpu-4t", "ct5lp-hightpu-8t")),
        ("tpu-v5p-slice", "2x2x1", "ct5p-hightpu-4t"),
        ("tpu7x", "2x2x2", "tpu7x-standard-4t"),
        ("tpu7x", "1x1x1", "tpu7x-standard-1t"),  # the 1-chip host, not a quarter of the 4-chip one
        ("tpu7x", "2x2x1", "tpu7x-standard-4t"),
        ("tpu7x", "4x4x8", "tpu7x-standard-4t"),
        ("tpu-v5p-slice", "4x4x8", "ct5p-hightpu-4t"),
        ("tpu-v6e-slice", "16x16", "ct6e-standard-4t"),
        ("tpu-v5-lite-device", "1x1", "ct5l-hightpu-1t"),
        ("tpu-v5-lite-device", "2x2", "ct5l-hightpu-4t"),
        ("tpu-v5-lite-device", "2x4", "ct5l-hightpu-8t"),
        ("tpu-v4-podslice", "2x2x1", "ct4p-hightpu-4t"),
        ("tpu-v4-podslice", "4x4x4", "ct4p-hightpu-4t"),
        ("tpu7", "1x1x1", "tpu7-standard-1t"),
        ("tpu7", "2x2x4", "tpu7-standard-4t"),
    ],
)
def test_tpu_slices_resolve_through_accelerator_and_topology(accelerator, topology, machine):
    pod = {
        "nodeSelector": {
            "cloud.google.com/gke-tpu-accelerator": accelerator,
            "cloud.google.com/gke-tpu-topology": topology,
        }
    }
    cands, how = node_type_candidates(pod)
    assert cands is not None, how
    assert tuple(n.name for n in cands.nodes) == (machine if isinstance(machine, tuple) else (machine,)), how
    assert f"cloud.google.com/gke-tpu-topology={topology}" in how


def test_aws_rows_read_from_karpenters_list_are_the_shipped_ones():
    """The AWS families added from Karpenter's generated instance-type list (RTX PRO 6000 and 4500
    Blackwell g7e and g7, L4 gr6, T4G g5g, Radeon g4ad, Inferentia inf1, B300 p6-b300): what
    ``karpenter_rows`` reads from an excerpt of that list is the row the sources ship, field for field."""
    from kubelint_ml.k8s import catalog as generator

    excerpt = (
        Path(__file__).parent.parent / "fixtures" / "accelerators" / "karpenter-instance-types-excerpt.md"
    ).read_text()
    commit = "1d927085dd81a9df9301e613f371dac5b4d16bfe"
    read = {r["name"]: r for r in generator.karpenter_rows(excerpt, commit, "2026-11-27")}
    assert sorted(read) == sorted(
        [
            "g7e.2xlarge",
            "g7e.48xlarge",
            "g7.2xlarge",
            "gr6.4xlarge",
            "g5g.xlarge",
            "g4ad.8xlarge",
            "inf1.xlarge",
            "p6-b300.48xlarge",
        ]
    )  # r3.large: no family of the table
    with open(generator.SOURCES, "rb") as fh:
        shipped = {r["name"]: r for r in yaml.safe_load(fh)["types"]}
    for name, row in read.items():
        assert shipped[name] == row, name
    c = catalog()
    assert (c["g7e.48xlarge"].gpus, c["g7e.48xlarge"].gpu_model) == (8, "NVIDIA RTX PRO 6000")
    assert (c["g4ad.8xlarge"].gpu_resource, c["g4ad.8xlarge"].gpus) == ("amd.com/gpu", 2)
    assert catalog_labels("g4ad.8xlarge")["karpenter.k8s.aws/instance-gpu-manufacturer"] == "amd"
    assert (c["inf1.xlarge"].gpu_resource, c["inf1.xlarge"].memory) == ("aws.amazon.com/neuron", 6804 * MI)
    # an RTX PRO 6000 pod pinned by Karpenter's GPU name resolves to the g7e sizes
    node, how = resolve_node_type({"nodeSelector": {"karpenter.k8s.aws/instance-gpu-name": "rtx-pro-server-6000"}})
    assert node is not None and node.name.startswith("g7e."), how


def test_tpu_hosts_from_gkes_autoscaler_table():
    """Chips, vCPU and memory of the TPU hosts GKE's autoscaler lists; ct6e-standard-8t runs with one
    thread per core on GKE (180 vCPU, not the 360 the Compute Engine API lists for two)."""
    c = catalog()
    for name, chips, vcpu, ram_gb in (
        ("ct4p-hightpu-4t", 4, 240, 407),
        ("ct5l-hightpu-1t", 1, 24, 48),
        ("ct5l-hightpu-8t", 8, 224, 384),
        ("tpu7x-standard-1t", 1, 56, 240),
        ("tpu7-standard-4t", 4, 224, 960),
        ("ct6e-standard-8t", 8, 180, 1440),
    ):
        node = c[name]
        assert (node.gpus, node.gpu_resource) == (chips, "google.com/tpu"), name
        assert node.memory == gke_allocatable_memory_mib(ram_gb) * MI, name
        assert node.cpu == Fraction(vcpu * 1000 - tiered_reserved_cpu_millicores(vcpu), 1000), name
    assert c["ct6e-standard-8t"].cpu == Fraction(179_480, 1000)  # 180 cores less 60m + 10m + 2 x 5m + 176 x 2.5m


def test_nolssd_machine_types_are_reached_only_by_name():
    """GKE autoprovisions an -nolssd machine type only for a pod that names it: an accelerator or
    machine-family pin keeps resolving to the machine types with Local SSD; the name resolves to the
    same GPUs, vCPU and memory without local storage."""
    node, how = resolve_node_type({"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}})
    assert node is not None and "nolssd" not in how, how
    cands, _ = node_type_candidates(
        {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-b200", "cloud.google.com/machine-family": "a4"}}
    )
    assert cands is not None and [n.name for n in cands.nodes] == ["a4-highgpu-8g"]
    c = catalog()
    for base in ("a3-highgpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a2-ultragpu-1g"):
        bare = c[base + "-nolssd"]
        assert (bare.gpus, bare.gpu_model, bare.memory, bare.cpu) == (
            c[base].gpus,
            c[base].gpu_model,
            c[base].memory,
            c[base].cpu,
        ), base
        assert bare.ephemeral_storage is None and c[base].ephemeral_storage, base
        node, how = resolve_node_type(
            {"nodeSelector": {"node.kubernetes.io/instance-type": base + "-nolssd"}, "containers": []}
        )
        assert node is not None and node.name == base + "-nolssd", how


def test_trainium2_and_mi355x_rows():
    c = catalog()
    trn = c["trn2.3xlarge"]
    assert (trn.gpus, trn.gpu_resource) == (1, "aws.amazon.com/neuron")
    assert trn.memory == (128 * 1024 - math.ceil(128 * 1024 * 0.075) - (11 * 30 + 255) - 100) * MI
    assert trn.cpu == Fraction(11900, 1000)  # 12 cores less 60m + 10m + 2 x 5m + 8 x 2.5m
    assert catalog_labels("trn2.3xlarge")["karpenter.k8s.aws/instance-accelerator-name"] == "trainium2"
    trnu = c["trn2u.48xlarge"]
    assert (trnu.gpus, trnu.cpu) == (16, c["trn2.48xlarge"].cpu)
    assert trnu.memory == (2048 * 1024 - math.ceil(2048 * 1024 * 0.075) - 255 - 100) * MI
    for name in ("BM.GPU.MI355X.8", "BM.GPU.MI355X-v1.8"):
        mi = c[name]
        assert (mi.gpus, mi.gpu_resource, mi.gpu_model) == (8, "amd.com/gpu", "AMD Instinct MI355X"), name
        assert (mi.memory, mi.cpu) == ((3072 * 1024 - 100) * MI, 256), name


def test_b300_confidential_h100_fractional_g4_and_ultranet_rows():
    """OCI's B300 shape (the OCI quick start's figures, memory less the eviction threshold), Azure's
    confidential NCC H100 v5 (AKS's formulas), GKE's fractional G4 types (one vGPU each) and the
    TPU7x Ultranet host (GKE's formulas), with the GPU memory their sources give."""
    c = catalog()
    b300 = c["BM.GPU.B300.8"]
    assert (b300.gpus, b300.gpu_resource, b300.gpu_model) == (8, "nvidia.com/gpu", "NVIDIA B300")
    assert (b300.memory, b300.cpu, b300.ephemeral_storage) == ((4096 * 1024 - 100) * MI, 256, 28 * 10**12)
    assert catalog_labels("BM.GPU.B300.8")["nvidia.com/gpu.memory"] == "275040"  # nvidia-smi, as p6-b300's
    ncc = c["Standard_NCC40ads_H100_v5"]
    assert (ncc.gpus, ncc.gpu_model, ncc.ephemeral_storage) == (1, "NVIDIA H100 NVL", 800 * 1024**3)
    assert ncc.memory == aks_allocatable_memory_mib(320) * MI == 325330 * MI
    assert ncc.cpu == Fraction(40000 - aks_reserved_cpu_millicores(40), 1000) == Fraction(395, 10)
    rows = {r["name"]: r for r in nodes._load_rows()}
    for name, vcpu, ram_gb, gpu_gb in (
        ("g4-standard-6", 6, 22, 12),
        ("g4-standard-12", 12, 45, 24),
        ("g4-standard-24", 24, 90, 48),
    ):
        assert rows[name]["gpu_memory_mib"] == gpu_gb * 1024, name  # 1/8, 1/4, 1/2 of the 96 GB GPU
        node = c[name]
        assert (node.gpus, node.gpu_resource, node.ephemeral_storage) == (1, "nvidia.com/gpu", None), name
        assert node.memory == gke_allocatable_memory_mib(ram_gb) * MI, name
        assert node.cpu == Fraction(vcpu * 1000 - tiered_reserved_cpu_millicores(vcpu), 1000), name
        labels = catalog_labels(name)
        assert labels["cloud.google.com/gke-accelerator"] == "nvidia-rtx-pro-6000", name
        assert "nvidia.com/gpu.product" not in labels, name  # the vGPU's product name is not published
    assert c["g4-standard-12"].memory == 41535 * MI
    ultranet = c["tpu7x-ultranet-4t"]
    assert (ultranet.gpus, ultranet.gpu_resource) == (4, "google.com/tpu")
    assert ultranet.memory == gke_allocatable_memory_mib(992) * MI == 988469 * MI
    assert ultranet.cpu == c["tpu7x-standard-4t"].cpu == Fraction(223370, 1000)


def test_fractional_g4_and_ultranet_hosts_are_reached_only_by_name():
    """GKE makes the fractional G4 types and tpu7x-ultranet-4t only for a pod that names them
    (withExplicitReqOnly): an accelerator pin or a TPU7x slice's labels keep resolving to the whole-GPU
    G4 types and to tpu7x-standard-4t."""
    cands, how = node_type_candidates({"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-rtx-pro-6000"}})
    assert cands is not None, how
    assert [n.name for n in cands.nodes] == ["g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384"]
    tpu7x = {"cloud.google.com/gke-tpu-accelerator": "tpu7x", "cloud.google.com/gke-tpu-topology": "4x4x4"}
    cands, how = node_type_candidates({"nodeSelector": tpu7x})
    assert cands is not None and [n.name for n in cands.nodes] == ["tpu7x-standard-4t"], how
    named = {**tpu7x, "node.kubernetes.io/instance-type": "tpu7x-ultranet-4t"}
    cands, how = node_type_candidates({"nodeSelector": named})
    assert cands is not None and [n.name for n in cands.nodes] == ["tpu7x-ultranet-4t"], how
    for name in ("g4-standard-6", "g4-standard-12", "g4-standard-24", "tpu7x-ultranet-4t"):
        node, how = resolve_node_type({"nodeSelector": {"node.kubernetes.io/instance-type": name}, "containers": []})
        assert node is not None and node.name == name, how
