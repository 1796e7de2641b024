"""Pod templates, found once for every kind, with their path, count and role.

Every rule sees the same view: a :class:`PodTemplate` with its containers and
volumes. Kinds are looked up by (API group, kind) in one table; objects of
kinds not in the table are searched for anything shaped like a pod template,
so a new CRD is not silently skipped.

Wrong types inside a pod spec (``containers: 3``, ``resources: "big"``) are
found here, once, and reported as ``parse-error``; a template with such a
problem is not evaluated further, but every other template is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.input.objects import HasMetadata, K8sObject, clip, dig, submap

# ----------------------------------------------------------------------------
# Views


@dataclass(slots=True)
class ContainerView:
    role: str  # "container" | "initContainer" | "sidecar"
    index: int
    data: dict
    path: tuple  # from the object's root
    name: str
    # Per-container results shared by every rule (e.g. templates/_common.py requests_limits).
    cache: dict = field(default_factory=dict)

    @property
    def resources(self) -> dict:
        return submap(self.data, "resources")

    def describe(self) -> str:
        label = {"container": "container", "initContainer": "init container", "sidecar": "sidecar"}[self.role]
        return f"{label} '{clip(self.name)}'"


@dataclass(slots=True)
class VolumeView:
    index: int
    data: dict
    path: tuple
    name: str


@dataclass(slots=True)
class ShapeProblem:
    path: tuple  # from the object's root
    message: str


@dataclass(slots=True)
class PodTemplate(HasMetadata):
    obj: K8sObject
    path: tuple  # the PodTemplateSpec (metadata + spec); () for a Pod
    spec_path: tuple
    spec: dict
    metadata: dict
    role: str  # e.g. "Worker", a replicated job's name, "head"; "" for single-template kinds
    replicas: int | None
    containers: list[ContainerView] = field(default_factory=list)
    init_containers: list[ContainerView] = field(default_factory=list)
    volumes: list[VolumeView] = field(default_factory=list)
    problems: list[ShapeProblem] = field(default_factory=list)
    cache: dict = field(default_factory=dict)
    # Set when the kind's usual place held no template and the generic search found this one.
    found_by_search: bool = False

    @property
    def broken(self) -> bool:
        return bool(self.problems)

    @property
    def all_containers(self) -> list[ContainerView]:
        """Init containers and sidecars first, in order, then app containers."""
        return self.init_containers + self.containers

    def describe(self) -> str:
        text = self.obj.ref.display()
        if self.role:
            text += f" ({clip(self.role)})"
        return text


# ----------------------------------------------------------------------------
# Where templates live, per kind (docs/k8s-facts.md §7)

TemplateSpot = tuple[tuple, str, "int | None"]  # (path, role, replicas)
Finder = Callable[[dict], Iterator[TemplateSpot]]


def _text(value: Any, fallback: str) -> str:
    """``value`` when it is a string, else ``fallback``."""
    return value if isinstance(value, str) else fallback


def _int(value: Any, default: int | None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def _at(*path: Any, replicas_key: tuple | None = None, default: int | None = 1) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        if dig(obj, *path) is None:
            return
        replicas = _int(dig(obj, *replicas_key), default) if replicas_key else default
        yield tuple(path), "", replicas

    return find


def _replica_specs(field_name: str, worker_default: int = 1) -> Finder:
    """Kubeflow ``spec.<x>ReplicaSpecs.<Role>.template``."""

    def find(obj: dict) -> Iterator[TemplateSpot]:
        specs = dig(obj, "spec", field_name)
        if not isinstance(specs, dict):
            return
        for role in sorted(specs, key=str):
            rs = specs[role]
            if not isinstance(rs, dict):
                continue
            default = worker_default if str(role) == "Worker" else 1
            yield ("spec", field_name, role, "template"), str(role), _int(rs.get("replicas"), default)

    return find


def _jobset_jobs(prefix: tuple) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        jobs = dig(obj, *prefix, "replicatedJobs")
        if not isinstance(jobs, list):
            return
        for i, rj in enumerate(jobs):
            if not isinstance(rj, dict):
                continue
            name = _text(rj.get("name"), f"replicatedJobs[{i}]")
            reps = _int(rj.get("replicas"), 1) or 0
            par = _int(dig(rj, "template", "spec", "parallelism"), 1)
            yield (
                prefix + ("replicatedJobs", i, "template", "spec", "template"),
                name,
                reps * (par if par is not None else 1),
            )

    return find


def _ray(prefix: tuple) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        cluster = dig(obj, *prefix)
        if not isinstance(cluster, dict):
            return
        if isinstance(dig(cluster, "headGroupSpec"), dict):
            yield prefix + ("headGroupSpec", "template"), "head", 1
        groups = cluster.get("workerGroupSpecs")
        if isinstance(groups, list):
            for i, g in enumerate(groups):
                if not isinstance(g, dict):
                    continue
                name = _text(g.get("groupName"), f"workerGroupSpecs[{i}]")
                reps = _int(g.get("replicas"), 0)
                hosts = _int(g.get("numOfHosts"), 1)
                yield (
                    prefix + ("workerGroupSpecs", i, "template"),
                    name,
                    None if reps is None or hosts is None else reps * hosts,
                )

    return find


def _volcano_tasks(prefix: tuple) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        tasks = dig(obj, *prefix, "tasks")
        if not isinstance(tasks, list):
            return
        for i, t in enumerate(tasks):
            if not isinstance(t, dict):
                continue
            name = _text(t.get("name"), f"tasks[{i}]")
            yield prefix + ("tasks", i, "template"), name, _int(t.get("replicas"), 1)

    return find


def _chain(*finders: Finder) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        for f in finders:
            yield from f(obj)

    return find


def _lws(obj: dict) -> Iterator[TemplateSpot]:
    lwt = dig(obj, "spec", "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return
    size = _int(lwt.get("size"), 1)
    groups = _int(dig(obj, "spec", "replicas"), 1)
    if isinstance(lwt.get("leaderTemplate"), dict):
        yield ("spec", "leaderWorkerTemplate", "leaderTemplate"), "leader", groups
    if isinstance(lwt.get("workerTemplate"), dict):
        workers = None if size is None or groups is None else groups * (size - (1 if "leaderTemplate" in lwt else 0))
        yield ("spec", "leaderWorkerTemplate", "workerTemplate"), "worker", workers


def _pod(obj: dict) -> Iterator[TemplateSpot]:
    yield (), "", 1


@dataclass(frozen=True, slots=True)
class KindInfo:
    finder: Finder
    training: bool  # a training workload whatever its pods request


# Kubeflow training-operator v1 kinds and the field that holds their replica specs.
KUBEFLOW_REPLICA_SPECS = {
    "TFJob": "tfReplicaSpecs",
    "PyTorchJob": "pytorchReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}

KINDS: dict[tuple[str, str], KindInfo] = {
    ("", "Pod"): KindInfo(_pod, True),
    ("", "PodTemplate"): KindInfo(_at("template"), False),
    ("", "ReplicationController"): KindInfo(_at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("batch", "Job"): KindInfo(_at("spec", "template", replicas_key=("spec", "parallelism")), True),
    ("batch", "CronJob"): KindInfo(
        _at("spec", "jobTemplate", "spec", "template", replicas_key=("spec", "jobTemplate", "spec", "parallelism")),
        True,
    ),
    ("apps", "Deployment"): KindInfo(_at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "StatefulSet"): KindInfo(_at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "ReplicaSet"): KindInfo(_at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "DaemonSet"): KindInfo(_at("spec", "template", default=None), False),
    ("jobset.x-k8s.io", "JobSet"): KindInfo(_jobset_jobs(("spec",)), True),
    ("trainer.kubeflow.org", "TrainingRuntime"): KindInfo(_jobset_jobs(("spec", "template", "spec")), True),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): KindInfo(_jobset_jobs(("spec", "template", "spec")), True),
    ("ray.io", "RayCluster"): KindInfo(_ray(("spec",)), True),
    ("ray.io", "RayJob"): KindInfo(_chain(_ray(("spec", "rayClusterSpec")), _at("spec", "submitterPodTemplate")), True),
    ("ray.io", "RayService"): KindInfo(_ray(("spec", "rayClusterConfig")), False),
    ("batch.volcano.sh", "Job"): KindInfo(_volcano_tasks(("spec",)), True),
    ("flow.volcano.sh", "JobTemplate"): KindInfo(_volcano_tasks(("spec",)), True),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): KindInfo(_lws, False),
}
for _kind, _field in KUBEFLOW_REPLICA_SPECS.items():
    KINDS[("kubeflow.org", _kind)] = KindInfo(_replica_specs(_field, 0 if _kind == "MPIJob" else 1), True)

# Kinds that hold no pod template: never searched by the fallback.
NO_TEMPLATES = {
    ("", "Service"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "Namespace"),
    ("", "ServiceAccount"),
    ("", "PersistentVolumeClaim"),
    ("", "PersistentVolume"),
    ("", "LimitRange"),
    ("", "ResourceQuota"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("kubelet.config.k8s.io", "KubeletConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
}


def _looks_like_template(node: Any) -> bool:
    spec = node.get("spec") if isinstance(node, dict) else None
    return isinstance(spec, dict) and isinstance(spec.get("containers"), list)


def _fallback(obj: dict, limit_depth: int = 10) -> Iterator[TemplateSpot]:
    """Anything shaped like a PodTemplateSpec (``spec.containers`` list)."""

    def walk(node: Any, path: tuple, depth: int) -> Iterator[TemplateSpot]:
        if depth > limit_depth:
            return
        if isinstance(node, dict):
            for key in node:
                child = node[key]
                if not isinstance(child, (dict, list)):
                    continue
                cpath = path + (key,)
                if key != "spec" and _looks_like_template(child):
                    yield cpath, render_role(cpath), _int(node.get("replicas"), None)
                    continue
                yield from walk(child, cpath, depth + 1)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                yield from walk(child, path + (i,), depth + 1)

    yield from walk(obj.get("spec"), ("spec",), 0)


def render_role(path: tuple) -> str:
    from kubelint_ml.input.loader import render_path

    return render_path(path)


# ----------------------------------------------------------------------------
# Building the view, with shape checks


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in (
        (bool, "boolean"),
        (dict, "mapping"),
        (list, "list"),
        (str, "string"),
        (int, "integer"),
        (float, "number"),
    ):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _expect(problems: list[ShapeProblem], value: Any, kind: type, path: tuple, what: str) -> bool:
    """True when ``value`` is absent or of the right type; records a problem otherwise."""
    if value is None or isinstance(value, kind):
        return True
    want = "a mapping" if kind is dict else "a list" if kind is list else f"a {kind.__name__}"
    problems.append(ShapeProblem(path, f"{what} must be {want}, found {_type_name(value)}"))
    return False


_CONTAINER_LISTS = ("command", "args", "env", "envFrom", "ports", "volumeMounts")
_SPEC_MAPS = ("nodeSelector", "affinity", "securityContext", "resources")
_SPEC_LISTS = ("tolerations", "volumes", "imagePullSecrets", "resourceClaims")


def _containers(tpl: PodTemplate, key: str, problems: list[ShapeProblem]) -> list[ContainerView]:
    spec = tpl.spec
    items = spec.get(key)
    base = tpl.spec_path + (key,)
    out: list[ContainerView] = []
    if not _expect(problems, items, list, base, key) or items is None:
        return out
    for i, c in enumerate(items):
        cpath = base + (i,)
        if not isinstance(c, dict):
            problems.append(ShapeProblem(cpath, f"{key}[{i}] must be a mapping, found {_type_name(c)}"))
            continue
        name = c.get("name")
        name = name if isinstance(name, str) else f"{key}[{i}]"
        res = c.get("resources")
        if res is not None and not isinstance(res, dict):
            _expect(problems, res, dict, cpath + ("resources",), f"container '{name}' resources")
        elif res:
            for part in ("requests", "limits"):
                if not isinstance(res.get(part), (dict, type(None))):
                    _expect(
                        problems,
                        res.get(part),
                        dict,
                        cpath + ("resources", part),
                        f"container '{name}' resources.{part}",
                    )
            if not isinstance(res.get("claims"), (list, type(None))):
                _expect(
                    problems,
                    res.get("claims"),
                    list,
                    cpath + ("resources", "claims"),
                    f"container '{name}' resources.claims",
                )
        for lk in _CONTAINER_LISTS:
            value = c.get(lk)
            if value is not None and not isinstance(value, list):  # checked here: most containers have none of them
                _expect(problems, value, list, cpath + (lk,), f"container '{name}' {lk}")
        env = c.get("env")
        if isinstance(env, list):
            for j, e in enumerate(env):
                if not isinstance(e, dict):
                    problems.append(
                        ShapeProblem(
                            cpath + ("env", j), f"container '{name}' env[{j}] must be a mapping, found {_type_name(e)}"
                        )
                    )
        mounts = c.get("volumeMounts")
        if isinstance(mounts, list):
            for j, m in enumerate(mounts):
                if not isinstance(m, dict):
                    problems.append(
                        ShapeProblem(
                            cpath + ("volumeMounts", j),
                            f"container '{name}' volumeMounts[{j}] must be a mapping, found {_type_name(m)}",
                        )
                    )
        role = "container"
        if key == "initContainers":
            role = "sidecar" if c.get("restartPolicy") == "Always" else "initContainer"
        out.append(ContainerView(role, i, c, cpath, name))
    return out


def _volumes(tpl: PodTemplate, problems: list[ShapeProblem]) -> list[VolumeView]:
    vols = tpl.spec.get("volumes")
    base = tpl.spec_path + ("volumes",)
    out: list[VolumeView] = []
    if not isinstance(vols, list):
        return out
    for i, v in enumerate(vols):
        vpath = base + (i,)
        if not isinstance(v, dict):
            problems.append(ShapeProblem(vpath, f"volumes[{i}] must be a mapping, found {_type_name(v)}"))
            continue
        name = _text(v.get("name"), f"volumes[{i}]")
        if "emptyDir" in v and v["emptyDir"] is not None:
            _expect(problems, v["emptyDir"], dict, vpath + ("emptyDir",), f"volume '{name}' emptyDir")
        out.append(VolumeView(i, v, vpath, name))
    return out


def _build(obj: K8sObject, spot: TemplateSpot) -> PodTemplate:
    path, role, replicas = spot
    problems: list[ShapeProblem] = []
    if path == ():  # a Pod
        node: Any = obj.data
    else:
        node = dig(obj.data, *path)
    meta: Any = {}
    spec: Any = {}
    if not isinstance(node, dict):
        problems.append(ShapeProblem(path, f"pod template must be a mapping, found {_type_name(node)}"))
    else:
        meta = node.get("metadata")
        if not _expect(problems, meta, dict, path + ("metadata",), "pod template metadata") or meta is None:
            meta = {}
        else:
            for key in ("labels", "annotations"):
                _expect(problems, meta.get(key), dict, path + ("metadata", key), f"metadata.{key}")
        spec = node.get("spec")
        if not _expect(problems, spec, dict, path + ("spec",), "pod spec") or spec is None:
            spec = {}
    tpl = PodTemplate(obj, path, path + ("spec",), spec, meta, role, replicas)
    if spec:
        for key in _SPEC_MAPS:
            _expect(problems, spec.get(key), dict, tpl.spec_path + (key,), key)
        for key in _SPEC_LISTS:
            _expect(problems, spec.get(key), list, tpl.spec_path + (key,), key)
        pod_res = spec.get("resources")
        if isinstance(pod_res, dict):
            for part in ("requests", "limits"):
                _expect(problems, pod_res.get(part), dict, tpl.spec_path + ("resources", part), f"pod resources.{part}")
        tpl.init_containers = _containers(tpl, "initContainers", problems)
        tpl.containers = _containers(tpl, "containers", problems)
        tpl.volumes = _volumes(tpl, problems)
    tpl.problems = problems
    return tpl


def kind_info(obj: K8sObject) -> KindInfo | None:
    return KINDS.get((obj.group, obj.kind))


def pod_templates(obj: K8sObject) -> list[PodTemplate]:
    """Every pod template of ``obj`` (cached on first use per object).

    A known kind whose usual place holds none (an old layout, such as a
    ``kubeflow.org/v1alpha1`` MPIJob with ``spec.template``) is searched like
    an unknown kind; the templates found so say so (``found_by_search``)."""
    info = kind_info(obj)
    if info is not None:
        found = [_build(obj, spot) for spot in info.finder(obj.data)]
        if found:
            return found
        found = [_build(obj, spot) for spot in _fallback(obj.data)]
        for tpl in found:
            tpl.found_by_search = True
        return found
    if (obj.group, obj.kind) in NO_TEMPLATES:
        return []
    return [_build(obj, spot) for spot in _fallback(obj.data)]


def search_note(obj: K8sObject, templates: list[PodTemplate]) -> str | None:
    """For ``--verbose``: a known kind whose templates were found by the generic search, or none at all."""
    if kind_info(obj) is None:
        return None
    where = ", ".join(render_role(t.path) for t in templates if t.found_by_search)
    name = qualified_kind(obj)
    if where:
        return (
            f"{obj.ref.display()}: no pod template where a {name} usually has it; found by the generic "
            f"search at {where} (an older layout of the kind?)"
        )
    if not templates:
        return f"{obj.ref.display()}: no pod template found in this {name}, where it usually is nor elsewhere"
    return None


def qualified_kind(obj: K8sObject) -> str:
    return f"{obj.group}/{obj.kind}" if obj.group else obj.kind


def is_training_kind(obj: K8sObject) -> bool:
    info = kind_info(obj)
    return bool(info and info.training)


TRAINER_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def is_runtime_trainer_job(job: Any) -> bool:
    """Whether a (Cluster)TrainingRuntime's replicated job runs the trainer: its template's
    ancestor-step label says ``trainer``; without that label, it is the job named ``node``."""
    if not isinstance(job, dict):
        return False
    labels = dig(job, "template", "metadata", "labels")
    step = labels.get(TRAINER_ANCESTOR_LABEL) if isinstance(labels, dict) else None
    return step == "trainer" if step is not None else job.get("name") == "node"
