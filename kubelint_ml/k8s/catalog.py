"""The GPU node catalog, generated: ``python -m kubelint_ml.k8s.catalog > kubelint_ml/data/gpu-catalog.yaml``.

``kubelint_ml/data/gpu-catalog-sources.yaml`` holds what each provider publishes for a node type
(vCPUs, RAM, accelerators, local disk), each row with its source and the date it was read; this
module adds the allocatable memory and cpu the documented reservation formulas give (or copies
Karpenter's own estimate where that is the source) and writes the catalog the run reads
(``kubelint_ml.k8s.nodes``; ``python -m kubelint_ml.k8s.nodes`` makes its JSON rows).
tests/test_nodes.py holds the shipped file equal to this module's output. Never imported by a run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from fractions import Fraction

_DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
SOURCES = os.path.join(_DATA, "gpu-catalog-sources.yaml")


def _tiered(total: Fraction, tiers: Sequence[tuple[Fraction | None, Fraction]]) -> Fraction:
    """Sum of rate x amount over consecutive tiers (width None = the rest)."""
    reserved = Fraction(0)
    left = total
    for width, rate in tiers:
        part = left if width is None else min(left, width)
        if part <= 0:
            break
        reserved += part * rate
        left -= part
    return reserved


_MEMORY_TIERS_GIB = (
    (Fraction(4), Fraction(25, 100)),
    (Fraction(4), Fraction(20, 100)),
    (Fraction(8), Fraction(10, 100)),
    (Fraction(112), Fraction(6, 100)),
    (None, Fraction(2, 100)),
)

_CPU_TIERS_CORES = (
    (Fraction(1), Fraction(6, 100)),
    (Fraction(1), Fraction(1, 100)),
    (Fraction(2), Fraction(5, 1000)),
    (None, Fraction(25, 10000)),
)


def gke_allocatable_memory_mib(ram_gib: int | Fraction) -> int:
    """GKE Standard: capacity minus kube-reserved (25% of the first 4 GiB,
    20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above
    128 GiB) minus the 100 MiB eviction threshold; floored to whole MiB."""
    ram = Fraction(ram_gib)
    if ram < 1:
        reserved_mib = Fraction(255)
    else:
        reserved_mib = _tiered(ram, _MEMORY_TIERS_GIB) * 1024
    return math.floor(ram * 1024 - reserved_mib - 100)


def tiered_reserved_cpu_millicores(vcpu: int) -> Fraction:
    """kube-reserved cpu documented by GKE and by the EKS AMIs (Karpenter
    uses the same): 6% of the first core, 1% of the second, 0.5% of the
    next two, 0.25% of every core above four."""
    return _tiered(Fraction(vcpu), _CPU_TIERS_CORES) * 1000


def aks_reserved_cpu_millicores(vcpu: int) -> int:
    """AKS kube-reserved cpu.  AKS publishes a table for 1/2/4/8/16/32/64
    cores (60/100/140/180/260/420/740m); every point above four cores lies
    on 140m + 10m per core above four, which is used for other sizes."""
    table = {1: 60, 2: 100, 4: 140}
    if vcpu in table:
        return table[vcpu]
    if vcpu < 4:
        return 100 if vcpu < 2 else 140
    return 140 + 10 * (vcpu - 4)


AKS_MAX_PODS = 110


def aks_allocatable_memory_mib(ram_gib: int | Fraction, max_pods: int = AKS_MAX_PODS) -> int:
    """AKS >= 1.29: kube-reserved = min(20 MiB x max pods + 50 MiB, 25% of
    RAM), plus the 100 MiB eviction threshold; floored to whole MiB."""
    ram_mib = Fraction(ram_gib) * 1024
    reserved = min(Fraction(20 * max_pods + 50), ram_mib / 4)
    return math.floor(ram_mib - reserved - 100)


def karpenter_allocatable_memory_mib(ram_gib: int, max_pods: int) -> int:
    """Karpenter's estimate for an instance type it does not list: capacity minus the VM overhead
    (7.5%, rounded up to a MiB), minus kube-reserved memory (11 MiB x max pods + 255 MiB), minus the
    100 MiB eviction threshold (as every row it lists does: p3dn.24xlarge, 737 pods, gives 718987)."""
    capacity = ram_gib * 1024
    return capacity - math.ceil(capacity * 0.075) - (11 * max_pods + 255) - 100


def oci_allocatable_memory_mib(ram_gb: int) -> int:
    """OCI bare metal: the shape's memory minus the 100 MiB eviction threshold (OKE does not publish
    its kube-reserved memory; the node's share is therefore at most this)."""
    return ram_gb * 1024 - 100


RULES = {
    "karpenter": "Karpenter allocatable estimate, copied as listed",
    "karpenter-formula": "RAM - ceil(7.5% VM overhead) - (11 MiB x max pods + 255 MiB) - 100 MiB eviction",
    "karpenter-formula-unknown-pods": "RAM - ceil(7.5% VM overhead) - 255 MiB - 100 MiB eviction (max pods not "
    "published: an upper bound, by 11 MiB x max pods)",
    "eks-tiered": "vCPU - (6% of core 1 + 1% of core 2 + 0.5% of cores 3-4 + 0.25% of cores above 4)",
    "gke-standard": "RAM - (25% of first 4 GiB + 20% of next 4 + 10% of next 8 + 6% of next 112 + 2% above 128 GiB) "
    "- 100 MiB eviction",
    "gke-tiered": "vCPU - (6% of core 1 + 1% of core 2 + 0.5% of cores 3-4 + 0.25% of cores above 4)",
    "aks-1.29": "RAM - min(20 MiB x 110 pods + 50 MiB, 25% of RAM) - 100 MiB eviction",
    "aks-table": "vCPU - AKS kube-reserved cpu table (140m + 10m per core above 4)",
    "oci-listed": "RAM - 100 MiB eviction (OKE's kube-reserved is not published)",
    "listed": "vCPU as listed (no kube-reserved cpu published)",
}


def allocatable(row: dict) -> tuple[int, int]:
    """(allocatable memory MiB, allocatable cpu millicores) of a source row, by its rules."""
    rule = row["memory_rule"]
    if rule == "karpenter":
        memory = int(row["allocatable_memory_mib"])
    elif rule == "karpenter-formula":
        memory = karpenter_allocatable_memory_mib(int(row["ram_gib"]), int(row["max_pods"]))
    elif rule == "karpenter-formula-unknown-pods":
        # No published max pods (the VPC CNI's and the EKS AMI's tables leave the type out; nodeadm asks
        # EC2 at boot): kube-reserved's 11 MiB per pod is left out, so the node's share is at most this.
        memory = karpenter_allocatable_memory_mib(int(row["ram_gib"]), 0)
    elif rule == "gke-standard":
        memory = gke_allocatable_memory_mib(row["ram_gb_listed"])
    elif rule == "aks-1.29":
        memory = aks_allocatable_memory_mib(row["ram_gib"])
    elif rule == "oci-listed":
        memory = oci_allocatable_memory_mib(int(row["ram_gb_listed"]))
    else:
        raise ValueError(f"{row['name']}: unknown memory_rule {rule!r}")
    vcpu = int(row["vcpu"])
    cpu_rule = row["cpu_rule"]
    if cpu_rule in ("eks-tiered", "gke-tiered"):
        cpu = vcpu * 1000 - tiered_reserved_cpu_millicores(vcpu)
    elif cpu_rule == "aks-table":
        cpu = Fraction(vcpu * 1000 - aks_reserved_cpu_millicores(vcpu))
    elif cpu_rule == "listed":
        cpu = Fraction(vcpu * 1000)
    else:
        raise ValueError(f"{row['name']}: unknown cpu_rule {cpu_rule!r}")
    if cpu.denominator != 1:
        raise ValueError(f"{row['name']}: cpu {cpu} is not whole millicores")
    return memory, int(cpu)


# The catalog's columns, in order; a row writes the ones it has.
COLUMNS = (
    "name",
    "provider",
    "family",
    "size",
    "gpus",
    "gpu_resource",
    "gpu_model",
    "gpu_product",
    "gpu_name",
    "accelerator_name",
    "gke_accelerator",
    "gke_tpu_accelerator",
    "tpu_topologies",
    "explicit_only",
    "gpu_memory_mib",
    "vcpu",
    "ram_gib",
    "ram_gb_listed",
    "max_pods",
    "allocatable_memory_mib",
    "memory_rule",
    "allocatable_cpu_millicores",
    "cpu_rule",
    "local_nvme_gb",
    "local_storage_bytes",
    "local_storage_listed",
    "source",
    "date",
)

HEADER = """\
# Built-in GPU, TPU and Neuron node catalog (docs/k8s-facts.md §9).
#
# GENERATED: python -m kubelint_ml.k8s.catalog > kubelint_ml/data/gpu-catalog.yaml
# from kubelint_ml/data/gpu-catalog-sources.yaml (what each provider publishes, each row with
# its source and the date it was read); edit that file, then regenerate this one and the JSON
# rows a run reads (python -m kubelint_ml.k8s.nodes > kubelint_ml/data/gpu-catalog.json).
#
# Units, explicitly:
#   ram_gib                    GiB (2^30 bytes) as AWS/Azure list it.
#   ram_gb_listed              GCP, OCI: "GB" as Compute Engine and OCI list it. Compute
#                              Engine's GB is binary (its API reports
#                              memoryMb = GB x 1024), so the formulas below
#                              take it as GiB.
#   allocatable_memory_mib     allocatable memory in MiB (2^20 bytes).
#   allocatable_cpu_millicores allocatable cpu in millicores.
#   gpu_memory_mib             memory of one GPU (TPU chip, Neuron device) in MiB.
#   local_nvme_gb              AWS instance store in GB (10^9 bytes).
#   local_storage_bytes        local NVMe / Local SSD / temp disk, in bytes;
#                              the most local disk the machine has, which
#                              is the kubelet's ephemeral storage only when
#                              the node is set up to use it. null = none
#                              listed (optional add-on).
#
# gpus counts the devices of gpu_resource (nvidia.com/gpu unless named: amd.com/gpu,
# google.com/tpu chips, aws.amazon.com/neuron devices). memory_rule / cpu_rule name how a
# number was produced (see rules). gpu_product is the nvidia.com/gpu.product value GPU Feature
# Discovery sets (the CUDA device name with spaces as '-'); gpu_name / accelerator_name the
# Karpenter / EKS instance-gpu-name / instance-accelerator-name value; gke_accelerator the
# cloud.google.com/gke-accelerator value; gke_tpu_accelerator the
# cloud.google.com/gke-tpu-accelerator value, and tpu_topologies the
# cloud.google.com/gke-tpu-topology values whose nodes are this machine type ("*": every other
# topology of the accelerator, the multi-host slices). explicit_only: a node type the node
# constraints reach only by naming it (node.kubernetes.io/instance-type), as GKE autoprovisions
# its -nolssd, fractional G4 and tpu7x-ultranet-4t machine types only for a pod that names them;
# an accelerator, machine-family or TPU topology selector alone does not make it a candidate.
"""


# AWS families whose rows are read from Karpenter's generated instance-type list by
# :func:`karpenter_rows`, with what the list does not say: the accelerator's model, GPU Feature
# Discovery's product name where a source gives it (the same GPU's row of another provider), and
# the device plugin's resource when it is not nvidia.com/gpu.
KARPENTER_FAMILIES: dict[str, dict[str, str]] = {
    "p6-b300": {"gpu_model": "NVIDIA B300", "gpu_product": "NVIDIA-B300"},
    "g7e": {
        "gpu_model": "NVIDIA RTX PRO 6000",
        "gpu_product": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
    },
    "g7": {"gpu_model": "NVIDIA RTX PRO 4500"},
    "gr6": {"gpu_model": "NVIDIA L4", "gpu_product": "NVIDIA-L4"},
    "g5g": {"gpu_model": "NVIDIA T4G"},
    "g4ad": {"gpu_model": "AMD Radeon Pro V520", "gpu_resource": "amd.com/gpu"},
    "inf1": {"gpu_model": "AWS Inferentia", "gpu_resource": "aws.amazon.com/neuron"},
}
KARPENTER_LIST = "aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md"


def karpenter_rows(markdown: str, commit: str, date: str, families: dict[str, dict[str, str]] | None = None) -> list:
    """Source rows for the instance types of ``families`` (by default :data:`KARPENTER_FAMILIES`) in
    Karpenter's generated instance-type list at ``commit``, read on ``date``: the GPU count, name and
    memory, vCPU, memory, local NVMe and Karpenter's allocatable memory, as the list gives them."""
    import re

    families = KARPENTER_FAMILIES if families is None else families
    rows = []
    for name, body in re.findall(r"^### `([^`]+)`\n(.*?)(?=^### |\Z)", markdown, re.M | re.S):
        labels = dict(re.findall(r"^ \|karpenter\.k8s\.aws/([a-z-]+)\|([^|]*)\|", body, re.M))
        extra = families.get(labels.get("instance-family", ""))
        if extra is None:
            continue
        resources = dict(re.findall(r"^ \|([A-Za-z0-9./-]+)\|([^|]*)\|", body.partition("#### Resources")[2], re.M))
        resource = extra.get("gpu_resource", "nvidia.com/gpu")
        row: dict = {"name": name, "provider": "aws", "family": labels["instance-family"]}
        row["size"] = labels["instance-size"]
        row["gpus"] = int(resources[resource])
        if resource != "nvidia.com/gpu":
            row["gpu_resource"] = resource
        row["gpu_model"] = extra["gpu_model"]
        if "gpu_product" in extra:
            row["gpu_product"] = extra["gpu_product"]
        for label, key in (("instance-gpu-name", "gpu_name"), ("instance-accelerator-name", "accelerator_name")):
            if label in labels:
                row[key] = labels[label]
        if "instance-gpu-memory" in labels:
            row["gpu_memory_mib"] = int(labels["instance-gpu-memory"])
        row["vcpu"] = int(labels["instance-cpu"])
        row["ram_gib"] = int(labels["instance-memory"]) // 1024
        row["allocatable_memory_mib"] = int(resources["memory"].removesuffix("Mi"))
        row["memory_rule"] = "karpenter"
        row["cpu_rule"] = "eks-tiered"
        nvme = labels.get("instance-local-nvme")
        if nvme:
            row["local_nvme_gb"] = int(nvme)
            row["local_storage_bytes"] = int(nvme) * 10**9
            row["local_storage_listed"] = f"{nvme} GB NVMe"
        else:
            row["local_storage_bytes"] = None
            row["local_storage_listed"] = "EBS only"
        row["source"] = f"{KARPENTER_LIST} at {commit} (generated from EC2 DescribeInstanceTypes)"
        row["date"] = date
        rows.append(row)
    return rows


def generate(sources: str = SOURCES) -> str:
    """The catalog YAML for the rows in ``sources``."""
    import yaml

    with open(sources, "rb") as fh:
        data = yaml.safe_load(fh)
    rows = []
    for row in data["types"]:
        memory, cpu = allocatable(row)
        out = dict(row)
        out["allocatable_memory_mib"] = memory
        out["allocatable_cpu_millicores"] = cpu
        unknown = set(out) - set(COLUMNS)
        if unknown:
            raise ValueError(f"{row['name']}: unknown columns {sorted(unknown)}")
        rows.append({k: out[k] for k in COLUMNS if k in out})
    used = sorted({r["memory_rule"] for r in rows} | {r["cpu_rule"] for r in rows})
    body = yaml.safe_dump(
        {"version": 1, "rules": {r: RULES[r] for r in used}, "types": rows},
        sort_keys=False,
        allow_unicode=False,
        width=200,
    )
    return HEADER + body


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--karpenter"]:  # --karpenter INSTANCE_TYPES_MD COMMIT DATE: rows to add to the sources
        import yaml

        with open(sys.argv[2], encoding="utf-8") as fh:
            found = karpenter_rows(fh.read(), sys.argv[3], sys.argv[4])
        sys.stdout.write(yaml.safe_dump(found, sort_keys=False, allow_unicode=False, width=200))
    else:
        sys.stdout.write(generate())
