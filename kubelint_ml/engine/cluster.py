"""Cluster objects as facts: what the cluster itself says about how a workload will be treated.

Read in the first pass from the inputs and the context files (``--context``, a
``kubectl get`` dump), summarised once per run and asked by the rules:

* Nodes: labels, allocatable (GPU counts among them) and taints, as node pools
  that come before the built-in catalogue (:meth:`ClusterFacts.node_pools`);
* ResourceSlices: a node's GPUs published by a DRA driver (which a Node's allocatable does not show);
* LimitRanges, ResourceQuotas, Namespaces, PersistentVolumeClaims, per namespace;
* Kueue ResourceFlavors, ClusterQueues, LocalQueues; Volcano Queues and PodGroups;
* Kubernetes' own Workloads and PodGroups (``scheduling.k8s.io``, the GenericWorkload gate): the gangs
  that pods name by ``spec.workloadRef`` (1.35) or ``spec.schedulingGroup`` (from 1.36).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.input.objects import K8sObject
from kubelint_ml.k8s.dra import GPU as DRA_GPU
from kubelint_ml.k8s.dra import classify_name
from kubelint_ml.k8s.limitrange import LimitRange, parse_limit_range, quota_hard, quota_required
from kubelint_ml.k8s.nodes import NodePool
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.records import Record

KUEUE = "kueue.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
SCHEDULING = "scheduling.k8s.io"
# kind -> API group, for the objects read as cluster facts.
CLUSTER_KINDS = {
    "Node": "",
    "LimitRange": "",
    "ResourceQuota": "",
    "Namespace": "",
    "PersistentVolumeClaim": "",
    "ResourceFlavor": KUEUE,
    "ClusterQueue": KUEUE,
    "LocalQueue": KUEUE,
    "Queue": VOLCANO,
    "PodGroup": VOLCANO,
    "ResourceSlice": "resource.k8s.io",
    "Workload": SCHEDULING,
}
# Kinds read from a second group too: PodGroup is also scheduling.k8s.io's (from 1.36).
_ALSO = {("PodGroup", SCHEDULING)}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Labels set on every node, never a node pool's: a shape is the rest.
_PER_NODE_LABELS = ("kubernetes.io/hostname",)


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_manifest_quantity(value).value
    except (QuantityError, ValueError, TypeError):
        return None


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


def _sub(data: Any, key: str) -> Mapping:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _ns(obj: K8sObject) -> str:
    return obj.ref.namespace or "default"


def gang_min_count(policy: Mapping) -> int | None:
    """A pod group's gang ``minCount`` (its ``policy``/``schedulingPolicy``), or None (basic, or not a
    positive count)."""
    count = _sub(policy, "gang").get("minCount")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def workload_groups(spec: Mapping) -> dict[str, int | None]:
    """A Workload's pod groups by name: ``spec.podGroups[].policy`` (v1alpha1, 1.35) or
    ``spec.podGroupTemplates[].schedulingPolicy`` (v1alpha2 from 1.36, v1beta1 from 1.37)."""
    out: dict[str, int | None] = {}
    for key, policy in (("podGroups", "policy"), ("podGroupTemplates", "schedulingPolicy")):
        groups = spec.get(key)
        for group in groups if isinstance(groups, list) else ():
            if isinstance(group, dict) and isinstance(group.get("name"), str):
                out.setdefault(group["name"], gang_min_count(_sub(group, policy)))
    return out


class Quota(Record):
    """One flavor's quota of one resource in a ClusterQueue."""

    flavor: str
    nominal: Fraction
    borrowing: Fraction | None  # None: unset
    __slots__ = _fields = ("flavor", "nominal", "borrowing")

    def __init__(self, flavor: str, nominal: Fraction, borrowing: Fraction | None) -> None:
        self.flavor = flavor
        self.nominal = nominal
        self.borrowing = borrowing


class ClusterQueueFact(Record):
    name: str
    cohort: str | None
    source: str
    # resource -> the quotas of the flavors of the resource group that covers it
    quotas: dict[str, list[Quota]]
    __slots__ = _fields = ("name", "cohort", "source", "quotas")

    def __init__(self, name: str, cohort: str | None, source: str, quotas: dict[str, list[Quota]]) -> None:
        self.name = name
        self.cohort = cohort
        self.source = source
        self.quotas = quotas


def _cluster_queue(obj: K8sObject) -> ClusterQueueFact:
    spec = _sub(obj.data, "spec")
    cohort = spec.get("cohort") or spec.get("cohortName")
    quotas: dict[str, list[Quota]] = {}
    groups = spec.get("resourceGroups")
    for group in groups if isinstance(groups, list) else ():
        flavors = group.get("flavors") if isinstance(group, dict) else None
        for flavor in flavors if isinstance(flavors, list) else ():
            if not isinstance(flavor, dict):
                continue
            resources = flavor.get("resources")
            for r in resources if isinstance(resources, list) else ():
                if not isinstance(r, dict) or not isinstance(r.get("name"), str):
                    continue
                nominal = _quantity(r.get("nominalQuota"))
                if nominal is None:
                    continue
                borrowing = _quantity(r.get("borrowingLimit")) if r.get("borrowingLimit") is not None else None
                quotas.setdefault(r["name"], []).append(Quota(str(flavor.get("name", "")), nominal, borrowing))
    return ClusterQueueFact(obj.ref.name, str(cohort) if cohort else None, obj.file, quotas)


class ClusterFacts(Record):
    nodes: list[tuple[K8sObject, str]]  # (node, file)
    limit_ranges: dict[str, list[LimitRange]]  # namespace -> its LimitRanges, by name
    quotas: dict[str, list[tuple[str, str]]]  # namespace -> (hard name, "ResourceQuota ns/name")
    quota_hard: dict[str, list[tuple[str, dict]]]  # namespace -> ("ResourceQuota ns/name", spec.hard)
    namespaces: dict[str, dict[str, str]]  # name -> labels
    pvcs: dict[tuple[str, str], tuple[tuple[str, ...], str | None, str]]  # (ns, name) -> (modes, class, file)
    flavors: dict[str, dict[str, str]]  # ResourceFlavor -> nodeLabels
    cluster_queues: dict[str, ClusterQueueFact]
    local_queues: dict[tuple[str, str], str]  # (ns, name) -> ClusterQueue
    local_queue_files: dict[tuple[str, str], str]  # (ns, name) -> the file it came from
    context_files: set[str]  # files read as the cluster (--context): their objects hold for every input
    volcano_queues: dict[str, dict[str, Fraction]]  # Volcano Queue -> its capability
    pod_groups: dict[tuple[str, str], int | None]  # (ns, name) -> minMember
    # scheduling.k8s.io Workloads: (ns, name) -> {pod group (template) name: gang minCount, None: basic}
    workloads: dict[tuple[str, str], dict[str, int | None]]
    native_pod_groups: dict[tuple[str, str], int | None]  # scheduling.k8s.io PodGroups: (ns, name) -> minCount
    # (node, driver, pool) -> (the pool's generation, GPU device-plugin resource, GPUs its slices publish)
    slices: dict[tuple[str, str, str], tuple[int, str, int]]
    _pools: list[NodePool] | None
    _queues_by_ns: dict[str, list[str]] | None  # namespace -> its LocalQueues, sorted (made when first asked)
    _pvc_namespaces: frozenset[str] | None
    _seen_from: dict[tuple[str, str, int], list[str]]  # local_queues_seen_from's answers (cleared with _queues_by_ns)
    __slots__ = _fields = (
        "nodes",
        "limit_ranges",
        "quotas",
        "quota_hard",
        "namespaces",
        "pvcs",
        "flavors",
        "cluster_queues",
        "local_queues",
        "local_queue_files",
        "context_files",
        "volcano_queues",
        "pod_groups",
        "workloads",
        "native_pod_groups",
        "slices",
        "_pools",
        "_queues_by_ns",
        "_pvc_namespaces",
        "_seen_from",
    )

    def __init__(self) -> None:
        self.nodes = []
        self.limit_ranges = {}
        self.quotas = {}
        self.quota_hard = {}
        self.namespaces = {}
        self.pvcs = {}
        self.flavors = {}
        self.cluster_queues = {}
        self.local_queues = {}
        self.local_queue_files = {}
        self.context_files = set()
        self.volcano_queues = {}
        self.pod_groups = {}
        self.workloads = {}
        self.native_pod_groups = {}
        self.slices = {}
        self._pools = None
        self._queues_by_ns = None
        self._pvc_namespaces = None
        self._seen_from = {}

    def __bool__(self) -> bool:
        return any(
            (
                self.nodes,
                self.limit_ranges,
                self.quotas,
                self.quota_hard,
                self.namespaces,
                self.pvcs,
                self.flavors,
                self.cluster_queues,
                self.local_queues,
                self.volcano_queues,
                self.pod_groups,
                self.workloads,
                self.native_pod_groups,
                self.slices,
            )
        )

    def add_object(self, obj: K8sObject) -> bool:
        """Take ``obj`` if it is a cluster fact; False when it is not one."""
        kind = obj.kind
        if CLUSTER_KINDS.get(kind) != obj.group and (kind, obj.group) not in _ALSO:
            return False
        data, name = obj.data, obj.ref.name
        spec = _sub(data, "spec")
        if kind == "Node":
            self.nodes.append((obj, obj.file))
            self._pools = None
        elif kind == "LimitRange":
            found = self.limit_ranges.setdefault(_ns(obj), [])
            found.append(parse_limit_range(data, _ns(obj), name, obj.file))
            found.sort(key=lambda lr: lr.name)
        elif kind == "ResourceQuota":
            ref = f"ResourceQuota {_ns(obj)}/{name}"
            self.quotas.setdefault(_ns(obj), []).extend((hard, ref) for hard in quota_required(data))
            hard = quota_hard(data)
            if hard:
                self.quota_hard.setdefault(_ns(obj), []).append((ref, hard))
        elif kind == "Namespace":
            self.namespaces[name] = _str_map(obj.metadata.get("labels"))
        elif kind == "PersistentVolumeClaim":
            modes = spec.get("accessModes")
            sc = spec.get("storageClassName")
            self.pvcs[(_ns(obj), name)] = (
                tuple(m for m in modes if isinstance(m, str)) if isinstance(modes, list) else (),
                sc if isinstance(sc, str) else None,
                obj.file,
            )
            self._pvc_namespaces = None
        elif kind == "ResourceFlavor":
            self.flavors[name] = _str_map(spec.get("nodeLabels"))
        elif kind == "ClusterQueue":
            self.cluster_queues[name] = _cluster_queue(obj)
        elif kind == "LocalQueue":
            cq = spec.get("clusterQueue")
            self.local_queues[(_ns(obj), name)] = str(cq) if cq else ""
            self.local_queue_files[(_ns(obj), name)] = obj.file
            self._queues_by_ns = None
            self._seen_from = {}
        elif kind == "Queue":
            capability = _sub(spec, "capability")
            self.volcano_queues[name] = {
                str(k): q for k, q in ((k, _quantity(v)) for k, v in capability.items()) if q is not None
            }
        elif obj.group == SCHEDULING:
            if kind == "Workload":
                self.workloads[(_ns(obj), name)] = workload_groups(spec)
            else:
                self.native_pod_groups[(_ns(obj), name)] = gang_min_count(_sub(spec, "schedulingPolicy"))
        elif kind == "PodGroup":
            mm = spec.get("minMember")
            self.pod_groups[(_ns(obj), name)] = mm if isinstance(mm, int) and not isinstance(mm, bool) else None
        elif kind == "ResourceSlice":
            self._slice(spec)
        return True

    def _slice(self, spec: Mapping) -> None:
        """A ResourceSlice of a node's GPU driver (``spec.nodeName``, ``spec.driver``, ``spec.pool``,
        ``spec.devices``; k8s.io/api/resource/v1): its whole GPUs, the devices whose ``type`` attribute
        (NVIDIA's k8s-dra-driver-gpu: gpu, mig) is not a MIG partition. The slices of a pool's newest
        generation count (older ones are being replaced)."""
        node, driver = spec.get("nodeName"), spec.get("driver")
        if not isinstance(node, str) or not node or not isinstance(driver, str):
            return
        info = classify_name(driver)
        if info is None or info.kind != DRA_GPU or not info.resource or "/" not in info.resource:
            return  # not a GPU driver, or one whose device-plugin resource is not known
        pool = _sub(spec, "pool")
        generation = pool.get("generation")
        generation = generation if isinstance(generation, int) and not isinstance(generation, bool) else 0
        gpus = 0
        parents: set[str] = set()  # the physical GPUs (PCI addresses) that partitions and GPUs are of
        devices = spec.get("devices")
        for device in devices if isinstance(devices, list) else ():
            if not isinstance(device, dict):
                continue
            attributes = device.get("attributes")
            if not isinstance(attributes, dict):  # v1beta1: under basic
                attributes = _sub(_sub(device, "basic"), "attributes")
            value = _string_attribute(attributes, driver, "type")
            kind = value.lower() if isinstance(value, str) else ""
            if kind == "mig":
                continue
            # A partition of a GPU (AMD's amdgpu-partition: pre-partitioned GPUs, or the virtual devices of
            # its auto-partition mode, several per GPU) is not a GPU: it counts as the GPU whose PCI address
            # it shares (resource.kubernetes.io/pciBusID, the parent's), a GPU once whatever its devices.
            bus = _string_attribute(attributes, "resource.kubernetes.io", "pciBusID")
            if isinstance(bus, str) and bus:
                parents.add(bus)
            elif "partition" not in kind:
                gpus += 1
        gpus += len(parents)
        key = (node, driver, str(pool.get("name") or ""))
        known = self.slices.get(key)
        if known is None or generation > known[0]:
            self.slices[key] = (generation, info.resource, gpus)
        elif generation == known[0]:
            self.slices[key] = (generation, info.resource, known[2] + gpus)
        self._pools = None

    def slice_gpus(self) -> dict[str, tuple[str, int]]:
        """Node name -> (GPU resource, GPUs) its DRA drivers' ResourceSlices publish."""
        out: dict[str, tuple[str, int]] = {}
        for (node, _, _), (_, resource, gpus) in sorted(self.slices.items()):
            if gpus:
                had = out.get(node)
                out[node] = (resource, gpus + (had[1] if had and had[0] == resource else 0))
        return out

    def describe(self) -> str:
        """What the run knows of the cluster, for -v: "cluster facts: 16 Nodes (2 node pools), 3 LimitRanges..."."""
        counts = [
            (len(self.nodes), "Node", _pools_text(len(self.node_pools())) if self.nodes else ""),
            (sum(len(v) for v in self.limit_ranges.values()), "LimitRange", ""),
            (sum(len(v) for v in self.quota_hard.values()), "ResourceQuota", ""),
            (len(self.namespaces), "Namespace", ""),
            (len(self.pvcs), "PersistentVolumeClaim", ""),
            (len(self.flavors), "ResourceFlavor", ""),
            (len(self.cluster_queues), "ClusterQueue", ""),
            (len(self.local_queues), "LocalQueue", ""),
            (len(self.volcano_queues), "Volcano Queue", ""),
            (len(self.pod_groups), "PodGroup", ""),
            (len(self.workloads), "Workload", ""),
            (len(self.native_pod_groups), "scheduling.k8s.io PodGroup", ""),
            (len(self.slices), "DRA GPU pool", ""),  # (node, driver, pool) of GPU drivers' ResourceSlices
        ]
        parts = [f"{n} {what}{'s' if n != 1 else ''}{extra}" for n, what, extra in counts if n]
        return "cluster facts: " + ", ".join(parts)

    # ------------------------------------------------------------------

    def limit_ranges_in(self, namespace: str | None) -> tuple[LimitRange, ...]:
        return tuple(self.limit_ranges.get(namespace, ())) if namespace else ()

    def quotas_in(self, namespace: str | None) -> list[tuple[str, str]]:
        return self.quotas.get(namespace, []) if namespace else []

    def quota_hard_in(self, namespace: str | None) -> list[tuple[str, dict]]:
        return self.quota_hard.get(namespace, []) if namespace else []

    def local_queues_seen_from(self, namespace: str, file: str) -> list[str]:
        """The namespace's LocalQueues that speak for a workload in ``file``: those of the cluster
        (``--context``, an audit's dump) and those defined in the workload's directory or one above
        it. A tree of unrelated projects (samples from many repositories) does not make another
        project's queues this workload's."""
        queues = self.local_queues_in(namespace)
        if not queues:
            return queues
        key = (namespace, file, len(self.context_files))  # a context file read later changes the answer
        found = self._seen_from.get(key)
        if found is None:
            if len(self._seen_from) >= 4096:  # a server linting ever new files
                self._seen_from.clear()
            found = self._seen_from[key] = self._seen_from_dir(queues, namespace, file)
        return found

    def _seen_from_dir(self, queues: list[str], namespace: str, file: str) -> list[str]:
        return [name for name in queues if self.speaks_for(self.local_queue_files.get((namespace, name), ""), file)]

    def speaks_for(self, source: str, file: str) -> bool:
        """An object defined in ``source`` speaks for a workload in ``file``: it is the cluster's
        (``--context``, an audit's dump), in the same file, or in the workload's directory or one above
        it; not in a sibling tree (another project's samples linted with it)."""
        if source in self.context_files or source == file:
            return True
        here, there = os.path.dirname(file), os.path.dirname(source)
        return not there or here == there or here.startswith(there.rstrip(os.sep) + os.sep)

    def pvc_namespaces(self) -> frozenset[str]:
        """The namespaces that have a PersistentVolumeClaim."""
        found = self._pvc_namespaces
        if found is None:
            found = self._pvc_namespaces = frozenset(ns for ns, _ in self.pvcs)
        return found

    def local_queues_in(self, namespace: str) -> list[str]:
        by_ns = self._queues_by_ns
        if by_ns is None:
            by_ns = {}
            for ns, name in self.local_queues:
                by_ns.setdefault(ns, []).append(name)
            for names in by_ns.values():
                names.sort()
            self._queues_by_ns = by_ns
        return by_ns.get(namespace, [])

    def node_pools(self) -> list[NodePool]:
        """One pool per node shape (labels but the hostname, allocatable, taints, kubelet version and OS from
        ``status.nodeInfo``), named by its first node and where it came from:
        ``dgx-01 (4 Nodes alike from cluster.yaml)``."""
        if self._pools is None:
            self._pools = _pools(self.nodes, self.slice_gpus() if self.slices else {})
        return self._pools


def _pools_text(n: int) -> str:
    return f" ({n} node pool{'s' if n != 1 else ''})"


def _pools(nodes: list[tuple[K8sObject, str]], slice_gpus: Mapping[str, tuple[str, int]]) -> list[NodePool]:
    """The node pools of ``nodes``; a Node whose allocatable counts no accelerator has the GPUs its DRA
    drivers' ResourceSlices publish (``slice_gpus``)."""
    shapes: dict[tuple, list[str]] = {}
    first: dict[tuple, tuple[K8sObject, str]] = {}
    for obj, file in nodes:
        labels = _str_map(obj.metadata.get("labels"))
        for label in _PER_NODE_LABELS:
            labels.pop(label, None)
        status = _sub(obj.data, "status")
        alloc = _sub(status, "allocatable") or _sub(status, "capacity")
        spec = _sub(obj.data, "spec")
        taints = spec.get("taints")
        taints = taints if isinstance(taints, list) else []
        info = _sub(status, "nodeInfo")
        kubelet = info.get("kubeletVersion")
        system = info.get("operatingSystem")
        key: tuple = (
            tuple(sorted(labels.items())),
            tuple(sorted((str(k), str(v)) for k, v in alloc.items())),
            tuple(
                sorted(
                    (str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                    for t in taints
                    if isinstance(t, dict)
                )
            ),
            bool(spec.get("unschedulable")),
            str(kubelet).lstrip("v") if isinstance(kubelet, str) and kubelet else None,
            system if system in ("linux", "windows") else None,
            slice_gpus.get(obj.ref.name),
        )
        shapes.setdefault(key, []).append(obj.ref.name)
        first.setdefault(key, (obj, file))
    pools = []
    for key, names in shapes.items():
        obj, file = first[key]
        if key[3]:  # cordoned: nothing new lands there
            continue
        labels = dict(key[0])
        shape = dict(key[1])
        gpu_resource, gpus = "nvidia.com/gpu", None
        for res in sorted(shape):
            if is_accelerator_resource(res):
                count = _quantity(shape[res])
                if count:
                    gpu_resource, gpus = res, int(count)
                    break
        if gpus is None and key[6] is not None:  # GPUs handed out through DRA
            gpu_resource, gpus = key[6]
        alike = f"{len(names)} Nodes alike" if len(names) > 1 else "Node"
        pools.append(
            NodePool(
                name=f"{names[0]} ({alike} from {file})",
                labels=labels,
                gpus=gpus,
                gpu_resource=gpu_resource,
                memory=_quantity(shape.get("memory")),
                cpu=_quantity(shape.get("cpu")),
                ephemeral_storage=_quantity(shape.get("ephemeral-storage")),
                taints=key[2],
                kubelet_version=key[4],
                os=key[5],
                nodes=tuple(names),
            )
        )
    return pools


def _string_attribute(attributes: Mapping, domain: str, name: str) -> str | None:
    """A device's string attribute ``name`` (``attributes[name].string``), written bare or qualified by
    ``domain`` (``gpu.amd.com/type``, ``resource.kubernetes.io/pciBusID``)."""
    value = attributes.get(name, attributes.get(f"{domain}/{name}"))
    found = value.get("string") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None
