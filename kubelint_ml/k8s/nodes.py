"""GPU node types: the built-in catalog, profile node pools, and resolving
which node type a pod template is pinned to.

The catalog (``kubelint_ml/data/gpu-catalog.yaml``; a run reads its rows from
``gpu-catalog.json`` beside it) holds whole numbers:
memory in MiB, cpu in millicores, local storage in bytes.  ``NodeType``
carries them as exact ``Fraction`` bytes / cores.

Resolution reads only hard constraints: ``nodeSelector`` and
``nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` (never
preferred terms).  When several node types remain possible, the *smallest*
one is taken: the fewest allocatable memory bytes per GPU, then the fewest
GPUs, then the least allocatable memory, then the name.  A pod that may land
on a node type the catalog does not know is left unresolved rather than
guessed at.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubelint_ml.k8s.quantity import parse_manifest_quantity
from kubelint_ml.records import Frozen

MI = 1 << 20
GI = 1 << 30

# --------------------------------------------------------------------------
# Public records


class NodeType(Frozen):
    name: str  # "p4d.24xlarge" or profile pool name
    gpus: int
    gpu_resource: str  # "nvidia.com/gpu"
    gpu_model: str
    memory: Fraction | None  # allocatable memory in bytes
    cpu: Fraction | None  # allocatable cpu in cores
    ephemeral_storage: Fraction | None  # local NVMe / SSD bytes
    source: str  # "catalog" | "profile"
    _fields = ("name", "gpus", "gpu_resource", "gpu_model", "memory", "cpu", "ephemeral_storage", "source")

    def __init__(
        self,
        name: str,
        gpus: int,
        gpu_resource: str,
        gpu_model: str,
        memory: Fraction | None,
        cpu: Fraction | None,
        ephemeral_storage: Fraction | None,
        source: str,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "gpu_resource", gpu_resource)
        object.__setattr__(self, "gpu_model", gpu_model)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "cpu", cpu)
        object.__setattr__(self, "ephemeral_storage", ephemeral_storage)
        object.__setattr__(self, "source", source)


class NodePool(Frozen):
    """A node pool from the user's cluster profile."""

    name: str
    labels: dict[str, str]
    gpus: int | None
    gpu_resource: str
    memory: Fraction | None
    cpu: Fraction | None
    ephemeral_storage: Fraction | None
    kubelet_version: str | None
    cgroup_version: int | None
    os: str | None
    kubelet_config: str | None
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect) of a cluster's Node
    nodes: tuple[str, ...]  # the names of a cluster's Nodes of this shape
    _fields = (
        "name",
        "labels",
        "gpus",
        "gpu_resource",
        "memory",
        "cpu",
        "ephemeral_storage",
        "kubelet_version",
        "cgroup_version",
        "os",
        "kubelet_config",
        "taints",
        "nodes",
    )

    def __init__(
        self,
        name: str,
        labels: dict[str, str] | None = None,
        gpus: int | None = None,
        gpu_resource: str = "nvidia.com/gpu",
        memory: Fraction | None = None,
        cpu: Fraction | None = None,
        ephemeral_storage: Fraction | None = None,
        kubelet_version: str | None = None,
        cgroup_version: int | None = None,
        os: str | None = None,
        kubelet_config: str | None = None,
        taints: tuple[tuple[str, str, str], ...] = (),
        nodes: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "labels", {} if labels is None else labels)
        object.__setattr__(self, "taints", taints)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "gpu_resource", gpu_resource)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "cpu", cpu)
        object.__setattr__(self, "ephemeral_storage", ephemeral_storage)
        object.__setattr__(self, "kubelet_version", kubelet_version)
        object.__setattr__(self, "cgroup_version", cgroup_version)
        object.__setattr__(self, "os", os)
        object.__setattr__(self, "kubelet_config", kubelet_config)


# --------------------------------------------------------------------------
# Catalog

# Labels whose values pick out node types: a constraint term needs at least
# one of these (with operator In) to resolve through the catalog.
IDENTIFYING_KEYS = frozenset(
    {
        "node.kubernetes.io/instance-type",
        "beta.kubernetes.io/instance-type",
        "cloud.google.com/gke-accelerator",
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-gpu-name",
        "eks.amazonaws.com/instance-family",
        "eks.amazonaws.com/instance-gpu-name",
        "nvidia.com/gpu.product",
    }
)

_AWS_LABEL_FIELDS = {
    "instance-family": "family",
    "instance-size": "size",
    "instance-gpu-name": "gpu_name",
    "instance-gpu-count": "gpus",
    "instance-gpu-manufacturer": "gpu_manufacturer",
    "instance-gpu-memory": "gpu_memory_mib",
    "instance-cpu": "vcpu",
    "instance-memory": "ram_mib",
    "instance-local-nvme": "local_nvme_gb",
}

# Every label key the catalog can answer for; other keys (pool names,
# capacity type, zone...) are ignored when matching catalog types.
KNOWN_KEYS = frozenset(
    {"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}
    | {f"karpenter.k8s.aws/{k}" for k in _AWS_LABEL_FIELDS}
    | {f"eks.amazonaws.com/{k}" for k in _AWS_LABEL_FIELDS}
    | {
        "cloud.google.com/gke-accelerator",
        "cloud.google.com/gke-accelerator-count",
        "cloud.google.com/machine-family",
        "nvidia.com/gpu.product",
        "nvidia.com/gpu.count",
        "nvidia.com/gpu.memory",
    }
)


class _Entry(Frozen):
    node: NodeType
    provider: str
    labels: dict[str, str]
    _fields = ("node", "provider", "labels")

    def __init__(self, node: NodeType, provider: str, labels: dict[str, str]) -> None:
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "labels", labels)


_ENTRIES: dict[str, _Entry] | None = None
_CATALOG: dict[str, NodeType] | None = None


_DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
CATALOG_ROWS = "gpu-catalog.json"


def _load_rows() -> list[dict[str, Any]]:
    """The catalog's rows, from ``gpu-catalog.json``: the YAML's ``types``, made by :func:`catalog_rows`
    (a test keeps it equal to the YAML). One JSON read is 0.5 ms; parsing the commented YAML, 10 ms
    of every run with an accelerator pod."""
    import json

    # A plain path: the package ships as files (importlib.resources costs 4 ms of start-up).
    with open(os.path.join(_DATA, CATALOG_ROWS), "rb") as fh:
        return list(json.load(fh)["types"])


def catalog_rows() -> str:
    """``gpu-catalog.json``: the rows of ``gpu-catalog.yaml`` (the file people edit, with its comments)."""
    import json

    from kubelint_ml.input.loader import load_single  # the project's own (safe) YAML loader

    with open(os.path.join(_DATA, "gpu-catalog.yaml"), "rb") as fh:
        data = load_single(fh.read())
    return json.dumps({"types": data["types"]}, indent=1, ensure_ascii=True) + "\n"


def _entry(row: Mapping[str, Any]) -> _Entry:
    name = str(row["name"])
    provider = str(row["provider"])
    node = NodeType(
        name=name,
        gpus=int(row["gpus"]),
        gpu_resource=str(row.get("gpu_resource", "nvidia.com/gpu")),
        gpu_model=str(row["gpu_model"]),
        memory=Fraction(int(row["allocatable_memory_mib"]) * MI),
        cpu=Fraction(int(row["allocatable_cpu_millicores"]), 1000),
        ephemeral_storage=(
            Fraction(int(row["local_storage_bytes"])) if row.get("local_storage_bytes") is not None else None
        ),
        source="catalog",
    )
    labels = {
        "node.kubernetes.io/instance-type": name,
        "beta.kubernetes.io/instance-type": name,
        "nvidia.com/gpu.count": str(node.gpus),
        "nvidia.com/gpu.product": str(row["gpu_product"]),
        "nvidia.com/gpu.memory": str(row["gpu_memory_mib"]),
    }
    if provider == "aws":
        values = dict(row)
        values["ram_mib"] = int(row["ram_gib"]) * 1024
        values["gpu_manufacturer"] = "nvidia"
        for label, key in _AWS_LABEL_FIELDS.items():
            if values.get(key) is not None:
                labels[f"karpenter.k8s.aws/{label}"] = str(values[key])
                labels[f"eks.amazonaws.com/{label}"] = str(values[key])
    elif provider == "gcp":
        labels["cloud.google.com/gke-accelerator"] = str(row["gke_accelerator"])
        labels["cloud.google.com/gke-accelerator-count"] = str(node.gpus)
        labels["cloud.google.com/machine-family"] = name.split("-", 1)[0]
    return _Entry(node, provider, labels)


def _entries() -> dict[str, _Entry]:
    global _ENTRIES
    if _ENTRIES is None:
        _ENTRIES = {e.node.name: e for e in map(_entry, _load_rows())}
    return _ENTRIES


def catalog() -> dict[str, NodeType]:
    """Every built-in GPU node type by name (loaded once)."""
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = {name: e.node for name, e in _entries().items()}
    return dict(_CATALOG)


def catalog_labels(name: str) -> dict[str, str]:
    """The well-known node labels a catalog type carries ({} if unknown)."""
    entry = _entries().get(name)
    return dict(entry.labels) if entry else {}


# --------------------------------------------------------------------------
# Profile values


def profile_quantity(value: Any) -> Fraction | None:
    """A profile quantity ("640Gi", "96", 1.5, Fraction) as a Fraction, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value)) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    try:
        return parse_manifest_quantity(value).value
    except ValueError:  # QuantityError among them
        return None


def node_pool_from_config(name: str, data: Mapping[str, Any]) -> NodePool:
    """Build a NodePool from one profile entry; unusable values become None."""
    labels_raw = data.get("labels")
    labels = (
        {str(k): str(v) for k, v in labels_raw.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
        if isinstance(labels_raw, Mapping)
        else {}
    )
    gpus = data.get("gpus")
    cgroup = data.get("cgroupVersion", data.get("cgroup_version"))
    version = data.get("kubeletVersion", data.get("kubelet_version"))
    resource = data.get("gpuResource", data.get("gpu_resource"))
    return NodePool(
        name=name,
        labels=labels,
        gpus=gpus if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus >= 0 else None,
        gpu_resource=resource if isinstance(resource, str) and resource else "nvidia.com/gpu",
        memory=profile_quantity(data.get("memory")),
        cpu=profile_quantity(data.get("cpu")),
        ephemeral_storage=profile_quantity(data.get("ephemeralStorage", data.get("ephemeral_storage"))),
        kubelet_version=str(version)
        if isinstance(version, (str, int, float)) and not isinstance(version, bool)
        else None,
        cgroup_version=cgroup if cgroup in (1, 2) and not isinstance(cgroup, bool) else None,
        os=data.get("os") if isinstance(data.get("os"), str) else None,
        kubelet_config=(
            data.get("kubeletConfig", data.get("kubelet_config"))
            if isinstance(data.get("kubeletConfig", data.get("kubelet_config")), str)
            else None
        ),
    )


# --------------------------------------------------------------------------
# Node constraints of a pod


class _Req(Frozen):
    key: str
    op: str
    values: tuple[str, ...]
    origin: str  # or "nodeSelector"
    _fields = ("key", "op", "values", "origin")

    def __init__(self, key: str, op: str, values: tuple[str, ...], origin: str = "nodeAffinity") -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "origin", origin)

    def text(self) -> str:
        if self.op == "In" and len(self.values) == 1:
            return f"{self.key}={self.values[0]}"
        return f"{self.key} {self.op} [{', '.join(self.values)}]"


_OPS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}


def _label_value(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def _term_reqs(term: Any) -> list[_Req]:
    reqs: list[_Req] = []
    if not isinstance(term, dict):
        return reqs
    exprs = term.get("matchExpressions")
    if not isinstance(exprs, list):
        return reqs
    for expr in exprs:
        if not isinstance(expr, dict):
            continue
        key, op = expr.get("key"), expr.get("operator")
        if not isinstance(key, str) or op not in _OPS:
            continue
        raw = expr.get("values")
        vals = tuple(v for v in map(_label_value, raw) if v is not None) if isinstance(raw, list) else ()
        reqs.append(_Req(key, op, vals))
    return reqs


def _pod_terms(pod_spec: Any) -> list[list[_Req]] | None:
    """The pod's hard node constraints as OR-ed terms of AND-ed requirements;
    None when the pod has none."""
    if not isinstance(pod_spec, dict):
        return None
    base: list[_Req] = []
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, dict):
        for k, v in selector.items():
            value = _label_value(v)
            if isinstance(k, str) and value is not None:
                base.append(_Req(k, "In", (value,), "nodeSelector"))
    terms: list[list[_Req]] = []
    affinity = pod_spec.get("affinity")
    node_aff = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_aff, dict) else None
    raw_terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if isinstance(raw_terms, list):
        for term in raw_terms:
            terms.append(base + _term_reqs(term))
    if not terms:
        terms = [base]
    if all(not t for t in terms):
        return None
    return terms


def _satisfies(req: _Req, labels: Mapping[str, str]) -> bool:
    value = labels.get(req.key)
    if req.op == "In":
        return value is not None and value in req.values
    if req.op == "NotIn":
        return value is None or value not in req.values
    if req.op == "Exists":
        return value is not None
    if req.op == "DoesNotExist":
        return value is None
    # Gt / Lt: one integer value, compared with the label as an integer.
    if value is None or len(req.values) != 1:
        return False
    try:
        have, want = int(value), int(req.values[0])
    except ValueError:
        return False
    return have > want if req.op == "Gt" else have < want


def _term_matches(term: Sequence[_Req], labels: Mapping[str, str], known: frozenset[str] | None) -> bool:
    """All requirements hold; with `known`, keys outside it are ignored."""
    return all(_satisfies(r, labels) for r in term if known is None or r.key in known)


def tolerates(pod_spec: Mapping[str, Any], taints: Sequence[tuple[str, str, str]]) -> bool:
    """The pod tolerates every NoSchedule and NoExecute taint (``ToleratesTaint``). A taint named
    after an extended resource the pod asks for counts as tolerated: the ExtendedResourceToleration
    admission plugin adds that toleration."""
    hard = [t for t in taints if t[2] in ("NoSchedule", "NoExecute")]
    if not hard or not isinstance(pod_spec, Mapping):
        return True
    tolerations = pod_spec.get("tolerations")
    tols = [t for t in tolerations if isinstance(t, Mapping)] if isinstance(tolerations, list) else []
    wanted = _requested_extended(pod_spec)
    for key, value, effect in hard:
        if key in wanted:
            continue
        for t in tols:
            if t.get("effect") not in (None, "", effect):
                continue
            op = t.get("operator") or "Equal"
            tkey = t.get("key") or ""
            if op == "Exists" and (tkey == "" or tkey == key):
                break
            if op == "Equal" and tkey == key and str(t.get("value") or "") == value:
                break
        else:
            return False
    return True


def pools_for_pod(pod_spec: Mapping[str, Any], pools: Sequence[NodePool]) -> list[NodePool]:
    """Pools whose labels satisfy the pod's node constraints (all pools when
    the pod has none) and whose taints it tolerates; a pod bound to a known Node
    (``spec.nodeName``: a running pod) is on that Node's pool."""
    bound = pod_spec.get("nodeName") if isinstance(pod_spec, Mapping) else None
    if isinstance(bound, str) and bound:
        pinned = [p for p in pools if bound in p.nodes]
        if pinned:
            return pinned
    terms = _pod_terms(pod_spec)
    pools = [p for p in pools if not p.taints or tolerates(pod_spec, p.taints)]
    if terms is None:
        return list(pools)
    return [p for p in pools if any(_term_matches(t, p.labels, None) for t in terms)]


# --------------------------------------------------------------------------
# Resolution


def size_key(node: NodeType) -> tuple:
    mem = node.memory
    per_gpu = mem / node.gpus if mem is not None and node.gpus > 0 else None
    return (
        per_gpu is None,
        per_gpu if per_gpu is not None else 0,
        node.gpus,
        mem if mem is not None else 0,
        node.name,
    )


def smallest(nodes: Sequence[NodeType]) -> NodeType:
    """The smallest node type: fewest allocatable memory bytes per GPU, then
    fewest GPUs, then least memory, then name (unknown memory sorts last)."""
    return min(nodes, key=size_key)


def _requested_extended(pod_spec: Mapping[str, Any]) -> set[str]:
    """Extended resource names any container requests or limits (non-zero)."""
    names: set[str] = set()
    for group in ("containers", "initContainers"):
        containers = pod_spec.get(group)
        if not isinstance(containers, list):
            continue
        for c in containers:
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            for kind in ("limits", "requests"):
                values = res.get(kind)
                if not isinstance(values, dict):
                    continue
                for k, v in values.items():
                    if isinstance(k, str) and "/" in k and "kubernetes.io/" not in k and v not in (0, "0"):
                        names.add(k)
    return names


def _pool_node_type(pool: NodePool) -> NodeType | None:
    base: NodeType | None = None
    for key in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
        name = pool.labels.get(key)
        if name and name in _entries():
            base = _entries()[name].node
            break
    gpus = pool.gpus if pool.gpus is not None else (base.gpus if base else None)
    if not gpus:
        return None
    model = (
        base.gpu_model
        if base
        else (
            pool.labels.get("nvidia.com/gpu.product")
            or pool.labels.get("karpenter.k8s.aws/instance-gpu-name")
            or pool.labels.get("cloud.google.com/gke-accelerator")
            or ""
        )
    )
    return NodeType(
        name=pool.name,
        gpus=gpus,
        gpu_resource=pool.gpu_resource,
        gpu_model=model,
        memory=pool.memory if pool.memory is not None else (base.memory if base else None),
        cpu=pool.cpu if pool.cpu is not None else (base.cpu if base else None),
        ephemeral_storage=(
            pool.ephemeral_storage if pool.ephemeral_storage is not None else (base.ephemeral_storage if base else None)
        ),
        source="profile",
    )


def _describe(terms: Sequence[Sequence[_Req]]) -> str:
    """E.g. "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge"."""
    selector = [r.text() for r in terms[0] if r.origin == "nodeSelector" and r.key in KNOWN_KEYS]
    affinity = [
        ", ".join(r.text() for r in term if r.origin != "nodeSelector" and r.key in KNOWN_KEYS) for term in terms
    ]
    affinity = [a for a in affinity if a]
    parts = []
    if selector:
        parts.append("nodeSelector " + ", ".join(selector))
    if affinity:
        parts.append("required node affinity " + " | ".join(affinity))
    return "; ".join(parts)


_INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _unalias(req: _Req) -> _Req:
    """SageMaker HyperPod nodes label instance types "ml.<EC2 type>"; they
    resolve to the EC2 type."""
    if req.key not in _INSTANCE_TYPE_KEYS:
        return req
    entries = _entries()
    values = tuple(
        v[3:] if v.startswith("ml.") and v[3:] in entries and entries[v[3:]].provider == "aws" else v
        for v in req.values
    )
    return _Req(req.key, req.op, values, req.origin)


_RESOLVED_TERMS: dict[tuple[_Req, ...], tuple[tuple[_Entry, ...], str | None]] = {}
_RESOLVED_TERMS_MAX = 1024


def _resolve_term(term: Sequence[_Req]) -> tuple[tuple[_Entry, ...], str | None]:
    """Catalog entries a term allows, or ((), reason) when it cannot say; remembered: the same
    few selectors (an instance type, a GPU product) come back template after template, and
    each is matched against every catalog entry."""
    key = tuple(term)
    found = _RESOLVED_TERMS.get(key)
    if found is None:
        if len(_RESOLVED_TERMS) >= _RESOLVED_TERMS_MAX:
            _RESOLVED_TERMS.clear()
        entries, reason = _match_term(key)
        found = _RESOLVED_TERMS[key] = (tuple(entries), reason)
    return found


def _match_term(term: Sequence[_Req]) -> tuple[list[_Entry], str | None]:
    term = [_unalias(r) for r in term]
    identifying = [r for r in term if r.key in IDENTIFYING_KEYS and r.op == "In"]
    if not identifying:
        return [], "no node type label (instance type, accelerator or GPU product)"
    entries = _entries().values()
    for req in identifying:
        unknown = [v for v in req.values if not any(e.labels.get(req.key) == v for e in entries)]
        if not unknown:
            continue
        if len(req.values) == 1:
            return [], f"{req.key}={unknown[0]} is not in the built-in GPU catalog"
        which = (
            "none of them is"
            if len(unknown) == len(req.values)
            else ", ".join(unknown) + (" is" if len(unknown) == 1 else " are")
        )
        return [], f"{req.key} in ({', '.join(req.values)}): {which} not in the built-in GPU catalog"
    found = [e for e in entries if _term_matches(term, e.labels, KNOWN_KEYS)]
    if not found:
        return [], f"no catalog node type satisfies {_describe([term])}"
    return found, None


class Candidates(Frozen):
    """Every node type a pod's hard node constraints allow, smallest first."""

    nodes: tuple[NodeType, ...]
    how: str  # the constraints, e.g. "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge"
    source: str  # "profile" | "catalog"
    _fields = ("nodes", "how", "source")

    def __init__(self, nodes: tuple[NodeType, ...], how: str, source: str) -> None:
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "source", source)


def node_type_candidates(pod_spec: Mapping[str, Any], pools: Sequence[NodePool] = ()) -> tuple[Candidates | None, str]:
    """(Candidates, how) or (None, why not). Profile pools are tried first,
    then the catalog."""
    if not isinstance(pod_spec, dict):
        return None, "pod spec is not a mapping"
    terms = _pod_terms(pod_spec)

    wanted = _requested_extended(pod_spec)
    pool_types = []
    for pool in pools_for_pod(pod_spec, pools) if pools else ():
        if wanted and pool.gpu_resource not in wanted:
            continue
        node = _pool_node_type(pool)
        if node is not None:
            pool_types.append(node)
    if pool_types:
        pool_types.sort(key=size_key)
        how = _pool_label(pool_types[0].name) if len(pool_types) == 1 else "the profile pools the pod can use"
        return Candidates(tuple(pool_types), how, "profile"), how

    if terms is None:
        return None, "no nodeSelector or required node affinity"
    found: dict[str, _Entry] = {}
    for term in terms:
        entries, reason = _resolve_term(term)
        if reason is not None:
            return None, reason
        for e in entries:
            found[e.node.name] = e
    providers = sorted({e.provider for e in found.values()})
    if len(providers) > 1:
        return None, f"candidate node types span providers ({', '.join(providers)})"
    how = _describe(terms)
    return Candidates(tuple(sorted((e.node for e in found.values()), key=size_key)), how, "catalog"), how


def _pool_label(name: str) -> str:
    """A pool of a cluster's Nodes is named "<node> (Node from <file>)"; a profile's pool by its name."""
    return f"node {name}" if " (Node" in name and name.endswith(")") else f"profile pool {name}"


def pinned_pool_types(pod_spec: Mapping[str, Any], pools: Sequence[NodePool]) -> list[NodeType]:
    """Profile pools with GPUs that the pod's own node constraints select,
    whatever accelerator they offer (a pod pinned to pools offering another
    accelerator than it asks for never schedules)."""
    if not pools or _pod_terms(pod_spec) is None:
        return []
    out = []
    for pool in pools_for_pod(pod_spec, pools):
        node = _pool_node_type(pool)
        if node is not None:
            out.append(node)
    return out


def resolve_node_type(pod_spec: Mapping[str, Any], pools: Sequence[NodePool] = ()) -> tuple[NodeType | None, str]:
    """The node type a pod template lands on (the smallest candidate) and how
    that was decided, or (None, why not)."""
    cands, how = node_type_candidates(pod_spec, pools)
    if cands is None:
        return None, how
    best = cands.nodes[0]
    names = ", ".join(n.name for n in cands.nodes)
    if cands.source == "profile":
        how = _pool_label(best.name)
        if len(cands.nodes) > 1:
            how += f" (smallest of {len(cands.nodes)} matching pools: {names})"
        return best, how
    if len(cands.nodes) > 1:
        how += f" -> {best.name} (smallest of {len(cands.nodes)} candidates: {names})"
    elif not how.endswith(f"={best.name}"):
        how += f" -> {best.name}"
    return best, how


if __name__ == "__main__":  # python -m kubelint_ml.k8s.nodes > kubelint_ml/data/gpu-catalog.json
    import sys

    sys.stdout.write(catalog_rows())
