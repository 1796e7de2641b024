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
from typing import Any

from kubelint_ml.input.objects import HasMetadata, K8sObject, clip, dig
from kubelint_ml.records import Frozen, Record

# ----------------------------------------------------------------------------
# Views


class ContainerView(Record):
    role: str  # "container" | "initContainer" | "sidecar"
    index: int
    data: dict
    path: tuple  # from the object's root
    name: str
    # ``data["resources"]`` when it is a mapping, else an empty one (read by most rules: looked up once).
    resources: dict
    # Per-container results shared by every rule (e.g. templates/_common.py requests_limits).
    cache: dict
    __slots__ = _fields = ("role", "index", "data", "path", "name", "resources", "cache")

    def __init__(
        self,
        role: str,
        index: int,
        data: dict,
        path: tuple,
        name: str,
        resources: dict | None = None,
        cache: dict | None = None,
    ) -> None:
        self.role = role
        self.index = index
        self.data = data
        self.path = path
        self.name = name
        self.resources = {} if resources is None else resources
        self.cache = {} if cache is None else cache

    def describe(self) -> str:
        """``container 'trainer'``: said in most messages about the container (remembered)."""
        found = self.cache.get("describe")
        if found is None:
            found = self.cache["describe"] = f"{_ROLE_LABELS[self.role]} '{clip(self.name)}'"
        return found


_ROLE_LABELS = {"container": "container", "initContainer": "init container", "sidecar": "sidecar"}


class VolumeView(Record):
    index: int
    data: dict
    path: tuple
    name: str
    __slots__ = _fields = ("index", "data", "path", "name")

    def __init__(self, index: int, data: dict, path: tuple, name: str) -> None:
        self.index = index
        self.data = data
        self.path = path
        self.name = name


class ShapeProblem(Record):
    path: tuple  # from the object's root
    message: str
    __slots__ = _fields = ("path", "message")

    def __init__(self, path: tuple, message: str) -> None:
        self.path = path
        self.message = message


class PodTemplate(HasMetadata, Record):
    obj: K8sObject
    path: tuple  # the PodTemplateSpec (metadata + spec); () for a Pod
    spec_path: tuple
    spec: dict
    metadata: dict
    role: str  # e.g. "Worker", a replicated job's name, "head"; "" for single-template kinds
    replicas: int | None
    containers: list[ContainerView]
    init_containers: list[ContainerView]
    volumes: list[VolumeView]
    problems: list[ShapeProblem]
    cache: dict
    # Set when the kind's usual place held no template and the generic search found this one.
    found_by_search: bool
    # Pods a controller builds from other fields (KServe, Argo, Tekton, Spark, Dynamo; see
    # docs/kinds.md): where a field of the pod spec the rules read is written in the user's file,
    # as (pod path prefix, file path prefix), longest first; and, where a fix at the pod's field
    # would not be the user's edit, why not.
    renames: tuple[tuple[tuple, tuple], ...]
    fix_note: str | None
    # A reusable definition (a Tekton Task, a ServingRuntime): what uses it sets the pods'
    # priority, so the priority rules leave it alone.
    shared: bool
    __slots__ = _fields = (
        "obj",
        "path",
        "spec_path",
        "spec",
        "metadata",
        "role",
        "replicas",
        "containers",
        "init_containers",
        "volumes",
        "problems",
        "cache",
        "found_by_search",
        "renames",
        "fix_note",
        "shared",
    )

    def __init__(
        self,
        obj: K8sObject,
        path: tuple,
        spec_path: tuple,
        spec: dict,
        metadata: dict,
        role: str,
        replicas: int | None,
        containers: list[ContainerView] | None = None,
        init_containers: list[ContainerView] | None = None,
        volumes: list[VolumeView] | None = None,
        problems: list[ShapeProblem] | None = None,
        cache: dict | None = None,
        found_by_search: bool = False,
        renames: tuple[tuple[tuple, tuple], ...] = (),
        fix_note: str | None = None,
        shared: bool = False,
    ) -> None:
        self.obj = obj
        self.path = path
        self.spec_path = spec_path
        self.spec = spec
        self.metadata = metadata
        self.role = role
        self.replicas = replicas
        self.containers = [] if containers is None else containers
        self.init_containers = [] if init_containers is None else init_containers
        self.volumes = [] if volumes is None else volumes
        self.problems = [] if problems is None else problems
        self.cache = {} if cache is None else cache
        self.found_by_search = found_by_search
        self.renames = renames
        self.fix_note = fix_note
        self.shared = shared

    @property
    def broken(self) -> bool:
        return bool(self.problems)

    @property
    def all_containers(self) -> list[ContainerView]:
        """Init containers and sidecars first, in order, then app containers."""
        return self.init_containers + self.containers

    def describe(self) -> str:
        """``PyTorchJob/ns/bert (Worker)``: said in most messages about the template (remembered)."""
        found = self.cache.get("describe")
        if found is None:
            found = self.obj.ref.display()
            if self.role:
                found += f" ({clip(self.role)})"
            self.cache["describe"] = found
        return found

    def real_path(self, path: tuple) -> tuple:
        """Where the field at ``path`` (from the object's root, as the rules see the pod) is
        written in the user's file."""
        for pod, real in self.renames:
            if path[: len(pod)] == pod:
                return real + tuple(path[len(pod) :])
        return path


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


class KindInfo(Frozen):
    finder: Finder
    training: bool  # a training workload whatever its pods request
    # Kinds whose pods a controller builds from fields that are not a pod template (the
    # platform kinds below): the templates, built as that controller builds them.
    builder: Callable[[K8sObject], list[PodTemplate]] | None
    __slots__ = _fields = ("finder", "training", "builder")

    def __init__(
        self, finder: Finder, training: bool, builder: Callable[[K8sObject], list[PodTemplate]] | None = None
    ) -> None:
        object.__setattr__(self, "finder", finder)
        object.__setattr__(self, "training", training)
        object.__setattr__(self, "builder", builder)


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
    yield from _walk(obj.get("spec"), ("spec",), 0, limit_depth)


def _walk(node: Any, path: tuple, depth: int, limit_depth: int) -> Iterator[TemplateSpot]:
    # a module function, not a closure: a recursive closure is a cycle left for the collector
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
            yield from _walk(child, cpath, depth + 1, limit_depth)
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _walk(child, path + (i,), depth + 1, limit_depth)


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
    if not _expect(problems, items, list, base, key) or items is None:
        return []
    return _views([(c, base + (i,)) for i, c in enumerate(items)], key, problems)


def _views(items: list[tuple[Any, tuple]], key: str, problems: list[ShapeProblem]) -> list[ContainerView]:
    """Container views of ``(container, its path)`` pairs; ``key`` is ``containers`` or
    ``initContainers`` (a restartable init container is a sidecar)."""
    out: list[ContainerView] = []
    for i, (c, cpath) in enumerate(items):
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
        out.append(ContainerView(role, i, c, cpath, name, res if isinstance(res, dict) else {}))
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
    if info is not None and info.builder is not None:
        return info.builder(obj)
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


# ----------------------------------------------------------------------------
# Platform kinds: pods a controller builds from fields that are not a pod template
# (KServe, Argo Workflows, Tekton, Seldon, Spark, Dynamo). Each builder makes the pod as
# the controller does, from the user's fields; docs/kinds.md says kind by kind what is
# modelled and what is not.


def _synth(
    obj: K8sObject,
    spec_path: tuple,
    spec: dict,
    role: str,
    replicas: int | None,
    containers: list[tuple[Any, tuple]],
    *,
    init: list[tuple[Any, tuple]] | None = None,
    volumes: list[tuple[Any, tuple]] | None = None,
    metadata: Any = None,
    renames: list[tuple[tuple, tuple]] | None = None,
    fix_note: str | None = None,
    shared: bool = False,
) -> PodTemplate:
    """A pod template whose spec (``spec``, read by the rules) was put together from the user's
    fields: each container and volume keeps the path it has in the file."""
    problems: list[ShapeProblem] = []
    meta: Any = metadata if isinstance(metadata, dict) else {}
    for key in ("labels", "annotations"):
        if not isinstance(meta.get(key), (dict, type(None))):
            problems.append(ShapeProblem(spec_path, f"metadata.{key} must be a mapping, found {_type_name(meta[key])}"))
    spec = dict(spec)
    spec["containers"] = [c for c, _ in containers]
    if init:
        spec["initContainers"] = [c for c, _ in init]
    vols = [(v, p) for v, p in volumes or [] if v is not None]
    if vols:
        spec["volumes"] = [v for v, _ in vols]
    else:
        spec.pop("volumes", None)
    tpl = PodTemplate(obj, spec_path, spec_path, spec, meta, role, replicas)
    tpl.renames = tuple(sorted(renames or (), key=lambda r: -len(r[0])))
    tpl.fix_note = fix_note
    tpl.shared = shared
    for key in _SPEC_MAPS:
        _expect(problems, spec.get(key), dict, tpl.real_path(spec_path + (key,)), key)
    tpl.init_containers = _views(list(init or []), "initContainers", problems)
    tpl.containers = _views(containers, "containers", problems)
    for i, (v, vpath) in enumerate(vols):
        if not isinstance(v, dict):
            problems.append(ShapeProblem(vpath, f"volumes[{i}] must be a mapping, found {_type_name(v)}"))
            continue
        if "emptyDir" in v and v["emptyDir"] is not None:
            _expect(
                problems, v["emptyDir"], dict, vpath + ("emptyDir",), f"volume '{_text(v.get('name'), '')}' emptyDir"
            )
        tpl.volumes.append(VolumeView(i, v, vpath, _text(v.get("name"), f"volumes[{i}]")))
    tpl.problems = problems
    return tpl


def _listed(node: Any, path: tuple) -> list[tuple[Any, tuple]]:
    """The items of the list at ``node`` with their paths (nothing when it is not a list)."""
    return [(item, path + (i,)) for i, item in enumerate(node)] if isinstance(node, list) else []


def _with_resources(container: dict, requests: dict, limits: dict) -> dict:
    """A copy of ``container`` whose resources have these requests and limits added where it
    sets none (a controller's defaults)."""
    res = container.get("resources")
    res = dict(res) if isinstance(res, dict) else {}
    for part, defaults in (("requests", requests), ("limits", limits)):
        have = res.get(part)
        merged = dict(have) if isinstance(have, dict) else {}
        for k, v in defaults.items():
            merged.setdefault(k, v)
        if merged:
            res[part] = merged
    out = dict(container)
    out["resources"] = res
    return out


# --- KServe ------------------------------------------------------------------

# The model-framework specs of a v1beta1 component: one container each (KServe names it
# kserve-container). The webhook's defaulter sets the inferenceservice-config `resource`
# defaults on these (pkg/apis/serving/v1beta1/predictor_*.go, explainer_art.go) and on the
# first container of a custom component; not on `model` (the runtime's resources apply).
KSERVE_FRAMEWORKS = (
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
    "model",
    "art",
    "alibi",
)
_KSERVE_DEFAULTED = frozenset(KSERVE_FRAMEWORKS) - {"model", "alibi"}
# config/configmap/inferenceservice.yaml `inferenceService.resource` as KServe ships it.
KSERVE_REQUESTS = {"cpu": "1", "memory": "2Gi"}
KSERVE_LIMITS = {"cpu": "1", "memory": "2Gi"}


def _kserve_component(obj: K8sObject, path: tuple, role: str) -> PodTemplate | None:
    comp = dig(obj.data, *path)
    if not isinstance(comp, dict):
        return None
    containers: list[tuple[Any, tuple]] = []
    defaulted = False
    for fw in KSERVE_FRAMEWORKS:
        c = comp.get(fw)
        if isinstance(c, dict):
            data = dict(c)
            data.setdefault("name", "kserve-container")
            # The image is the ServingRuntime's (the model's format picks it): the pod is whole.
            data.setdefault("image", f"{fw} serving runtime")
            if fw in _KSERVE_DEFAULTED:
                data = _with_resources(data, KSERVE_REQUESTS, KSERVE_LIMITS)
                defaulted = True
            containers.append((data, path + (fw,)))
            break
    for i, c in enumerate(comp.get("containers") or [] if isinstance(comp.get("containers"), list) else []):
        if i == 0 and not containers and isinstance(c, dict):
            c = _with_resources(c, KSERVE_REQUESTS, KSERVE_LIMITS)
            defaulted = True
        containers.append((c, path + ("containers", i)))
    if not containers:
        return None
    spec = {k: v for k, v in comp.items() if k not in KSERVE_FRAMEWORKS}
    replicas = _int(comp.get("minReplicas"), 1)
    tpl = _synth(
        obj,
        path,
        spec,
        role,
        replicas,
        containers,
        init=_listed(comp.get("initContainers"), path + ("initContainers",)),
        volumes=_listed(comp.get("volumes"), path + ("volumes",)),
        metadata={"labels": comp.get("labels"), "annotations": comp.get("annotations")},
        renames=[(path + ("metadata",), path)],
    )
    if defaulted:
        tpl.cache["defaults"] = "KServe's webhook sets the inferenceservice-config resource defaults"
    return tpl


def _inference_service(obj: K8sObject) -> list[PodTemplate]:
    out = []
    for comp in ("predictor", "transformer", "explainer"):
        tpl = _kserve_component(obj, ("spec", comp), comp)
        if tpl is not None:
            out.append(tpl)
    return out


def _pod_spec_at(
    obj: K8sObject, path: tuple, role: str, replicas: int | None, shared: bool = False
) -> PodTemplate | None:
    """A PodSpec written directly at ``path`` (no template metadata around it)."""
    spec = dig(obj.data, *path)
    if not isinstance(spec, dict):
        return None
    return _synth(
        obj,
        path,
        spec,
        role,
        replicas,
        _listed(spec.get("containers"), path + ("containers",)),
        init=_listed(spec.get("initContainers"), path + ("initContainers",)),
        volumes=_listed(spec.get("volumes"), path + ("volumes",)),
        metadata={"labels": spec.get("labels"), "annotations": spec.get("annotations")},
        renames=[(path + ("metadata",), path)],
        shared=shared,
    )


def _serving_runtime(obj: K8sObject) -> list[PodTemplate]:
    out = [
        _pod_spec_at(obj, ("spec",), "", 1, shared=True),
        _pod_spec_at(obj, ("spec", "workerSpec"), "worker", None, shared=True),
    ]
    return [t for t in out if t is not None and t.containers]


def _llm_inference_service(obj: K8sObject) -> list[PodTemplate]:
    replicas = _int(dig(obj.data, "spec", "replicas"), 1)
    prefill = _int(dig(obj.data, "spec", "prefill", "replicas"), 1)
    out = [
        _pod_spec_at(obj, ("spec", "template"), "decode" if dig(obj.data, "spec", "prefill") else "", replicas),
        _pod_spec_at(obj, ("spec", "worker"), "worker", None),
        _pod_spec_at(obj, ("spec", "prefill", "template"), "prefill", prefill),
        _pod_spec_at(obj, ("spec", "prefill", "worker"), "prefill-worker", None),
    ]
    return [t for t in out if t is not None and t.containers]


# --- Argo Workflows ------------------------------------------------------------

# Template fields that are pod spec fields, and where the workflow spec gives their default.
_ARGO_POD_FIELDS = {
    "priorityClassName": "podPriorityClassName",
    "nodeSelector": "nodeSelector",
    "affinity": "affinity",
    "tolerations": "tolerations",
    "securityContext": "securityContext",
    "schedulerName": "schedulerName",
    "serviceAccountName": "serviceAccountName",
    "hostNetwork": "hostNetwork",
}


def _argo(prefix: tuple) -> Callable[[K8sObject], list[PodTemplate]]:
    def build(obj: K8sObject) -> list[PodTemplate]:
        wf = dig(obj.data, *prefix)
        templates = wf.get("templates") if isinstance(wf, dict) else None
        if not isinstance(templates, list):
            return []
        out = []
        for i, t in enumerate(templates):
            if not isinstance(t, dict):
                continue
            path = prefix + ("templates", i)
            containers: list[tuple[Any, tuple]] = []
            if isinstance(t.get("container"), dict):
                containers.append(({"name": "main", **t["container"]}, path + ("container",)))
            elif isinstance(t.get("script"), dict):
                containers.append(({"name": "main", **t["script"]}, path + ("script",)))
            elif isinstance(t.get("containerSet"), dict):
                containers += _listed(t["containerSet"].get("containers"), path + ("containerSet", "containers"))
            else:
                continue  # steps, dag, resource, suspend, http, plugin: no pod of their own
            containers += _listed(t.get("sidecars"), path + ("sidecars",))
            spec: dict = {}
            renames: list[tuple[tuple, tuple]] = []
            for field_name, wf_field in _ARGO_POD_FIELDS.items():
                if field_name in t:
                    spec[field_name] = t[field_name]
                elif wf_field in wf:
                    spec[field_name] = wf[wf_field]
                    renames.append((path + (field_name,), prefix + (wf_field,)))
            if "priorityClassName" not in spec and "priorityClassName" in wf:  # the older spelling
                spec["priorityClassName"] = wf["priorityClassName"]
                renames.append((path + ("priorityClassName",), prefix + ("priorityClassName",)))
            meta: Any = t.get("metadata") if isinstance(t.get("metadata"), dict) else {}
            pod_meta: Any = wf.get("podMetadata") if isinstance(wf.get("podMetadata"), dict) else {}
            merged = {
                k: {**(pod_meta.get(k) or {}), **(meta.get(k) or {})}
                for k in ("labels", "annotations")
                if isinstance(pod_meta.get(k) or {}, dict) and isinstance(meta.get(k) or {}, dict)
            }
            name = _text(t.get("name"), f"templates[{i}]")
            out.append(
                _synth(
                    obj,
                    path,
                    spec,
                    name,
                    1,
                    containers,
                    init=_listed(t.get("initContainers"), path + ("initContainers",)),
                    volumes=_listed(wf.get("volumes"), prefix + ("volumes",))
                    + _listed(t.get("volumes"), path + ("volumes",)),
                    metadata=merged,
                    renames=renames,
                    shared=obj.kind in ("WorkflowTemplate", "ClusterWorkflowTemplate"),
                )
            )
        return out

    return build


# --- Tekton ------------------------------------------------------------------


def _merge_resources(template: Any, step: Any) -> dict:
    """A step's resources merged over the stepTemplate's, key by key, as Tekton's strategic merge does."""
    out: dict = {}
    for part in ("requests", "limits", "claims"):
        base = template.get(part) if isinstance(template, dict) else None
        own = step.get(part) if isinstance(step, dict) else None
        if part == "claims":
            if own is not None or base is not None:
                out[part] = own if own is not None else base
            continue
        if base is None and own is None:
            continue
        if not isinstance(base, (dict, type(None))) or not isinstance(own, (dict, type(None))):
            out[part] = own if own is not None else base
            continue
        out[part] = {**(base or {}), **(own or {})}
    return out


def _resources_key(node: Any, v1: bool) -> str:
    if isinstance(node, dict):
        if "computeResources" in node:
            return "computeResources"
        if "resources" in node:
            return "resources"
    return "computeResources" if v1 else "resources"


def _tekton_task(obj: K8sObject, path: tuple, role: str, shared: bool) -> PodTemplate | None:
    spec = dig(obj.data, *path)
    if not isinstance(spec, dict) or not isinstance(spec.get("steps"), list):
        return None
    v1 = obj.data.get("apiVersion") == "tekton.dev/v1"
    template: Any = spec.get("stepTemplate") if isinstance(spec.get("stepTemplate"), dict) else {}
    t_res = template.get(_resources_key(template, v1))
    containers: list[tuple[Any, tuple]] = []
    renames: list[tuple[tuple, tuple]] = []
    for i, step in enumerate(spec["steps"]):
        spath = path + ("steps", i)
        if not isinstance(step, dict):
            containers.append((step, spath))
            continue
        key = _resources_key(step, v1)
        data = {k: v for k, v in template.items() if k not in ("computeResources", "resources")}
        data.update({k: v for k, v in step.items() if k not in ("computeResources", "resources")})
        data.setdefault("name", f"step-{i}")
        data["resources"] = _merge_resources(t_res, step.get(key))
        containers.append((data, spath))
        renames.append((spath + ("resources",), spath + (key,)))
    for i, sc in enumerate(spec.get("sidecars") or [] if isinstance(spec.get("sidecars"), list) else []):
        scpath = path + ("sidecars", i)
        if isinstance(sc, dict) and "computeResources" in sc:
            sc = {**sc, "resources": sc["computeResources"]}
            renames.append((scpath + ("resources",), scpath + ("computeResources",)))
        containers.append((sc, scpath))
    return _synth(
        obj,
        path,
        {},
        role,
        1,
        containers,
        volumes=_listed(spec.get("volumes"), path + ("volumes",)),
        renames=renames,
        shared=shared,
    )


def _tekton(obj: K8sObject) -> list[PodTemplate]:
    kind = obj.kind
    found: list[PodTemplate | None] = []
    if kind in ("Task", "ClusterTask"):
        found.append(_tekton_task(obj, ("spec",), "", True))
    elif kind == "TaskRun":
        found.append(_tekton_task(obj, ("spec", "taskSpec"), "", False))
    else:
        prefix = ("spec",) if kind == "Pipeline" else ("spec", "pipelineSpec")
        for section in ("tasks", "finally"):
            tasks = dig(obj.data, *prefix, section)
            if not isinstance(tasks, list):
                continue
            for i, t in enumerate(tasks):
                if isinstance(t, dict):
                    name = _text(t.get("name"), f"{section}[{i}]")
                    found.append(_tekton_task(obj, prefix + (section, i, "taskSpec"), name, kind == "Pipeline"))
    out = [t for t in found if t is not None]
    pod = dig(obj.data, "spec", "podTemplate")
    if kind == "PipelineRun" and not isinstance(pod, dict):
        pod = dig(obj.data, "spec", "taskRunTemplate", "podTemplate")
    if isinstance(pod, dict) and kind in ("TaskRun", "PipelineRun"):
        where = (
            ("spec", "podTemplate")
            if dig(obj.data, "spec", "podTemplate") is pod
            else ("spec", "taskRunTemplate", "podTemplate")
        )
        for tpl in out:
            for field_name in ("priorityClassName", "nodeSelector", "tolerations", "affinity", "schedulerName"):
                if field_name in pod:
                    tpl.spec[field_name] = pod[field_name]
            tpl.renames = tuple(
                sorted(
                    (*tpl.renames, (tpl.spec_path + ("priorityClassName",), where + ("priorityClassName",))),
                    key=lambda r: -len(r[0]),
                )
            )
    return out


# --- Seldon ------------------------------------------------------------------


def _seldon(obj: dict) -> Iterator[TemplateSpot]:
    default = _int(dig(obj, "spec", "replicas"), 1)
    predictors = dig(obj, "spec", "predictors")
    if not isinstance(predictors, list):
        return
    for i, p in enumerate(predictors):
        if not isinstance(p, dict) or not isinstance(p.get("componentSpecs"), list):
            continue
        name = _text(p.get("name"), f"predictors[{i}]")
        for j, cs in enumerate(p["componentSpecs"]):
            if isinstance(cs, dict):
                replicas = _int(cs.get("replicas"), _int(p.get("replicas"), default))
                yield ("spec", "predictors", i, "componentSpecs", j), f"{name}[{j}]", replicas


# --- Spark -------------------------------------------------------------------

_SPARK_MB = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _jvm_mib(text: Any) -> float | None:
    """A JVM memory string ("512m", "4g", "1024") in MiB (no suffix: MiB, as spark.driver.memory)."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    t = str(text).strip().lower().removesuffix("b")
    unit = t[-1:] if t[-1:] in _SPARK_MB else "m"
    digits = t[:-1] if t[-1:] in _SPARK_MB else t
    if not digits.isdigit():
        return None
    return int(digits) * _SPARK_MB[unit]


def _spark_role(obj: K8sObject, role: str) -> PodTemplate | None:
    path = ("spec", role)
    node = dig(obj.data, *path)
    if not isinstance(node, dict):
        return None
    spec: Any = obj.data.get("spec") if isinstance(obj.data.get("spec"), dict) else {}
    requests: dict = {}
    limits: dict = {}
    renames: list[tuple[tuple, tuple]] = []
    cores = node.get("cores", 1)
    if isinstance(cores, (int, float)) and not isinstance(cores, bool):
        requests["cpu"] = str(cores)
        renames.append((path + ("resources", "requests", "cpu"), path + ("cores",)))
    if node.get("coreRequest") is not None and role == "executor":
        requests["cpu"] = node["coreRequest"]
        renames.append((path + ("resources", "requests", "cpu"), path + ("coreRequest",)))
    if isinstance(node.get("coreLimit"), str):
        limits["cpu"] = node["coreLimit"]
        renames.append((path + ("resources", "limits", "cpu"), path + ("coreLimit",)))
    memory = _jvm_mib(node.get("memory", "1g"))
    if memory is not None:
        overhead = _jvm_mib(node.get("memoryOverhead")) if node.get("memoryOverhead") is not None else None
        if overhead is None:
            non_jvm = spec.get("type") in ("Python", "R")
            factor = spec.get("memoryOverheadFactor")
            try:
                f = float(factor) if factor is not None else (0.4 if non_jvm else 0.1)
            except (TypeError, ValueError):
                f = 0.1
            overhead = max(384.0, memory * f)
        total = f"{int(memory + overhead)}Mi"
        requests["memory"] = limits["memory"] = total
        for part in ("requests", "limits"):
            renames.append((path + ("resources", part, "memory"), path + ("memory",)))
    gpu = node.get("gpu")
    if isinstance(gpu, dict) and isinstance(gpu.get("name"), str):
        limits[gpu["name"]] = gpu.get("quantity", 1)
        renames.append((path + ("resources", "limits", gpu["name"]), path + ("gpu",)))
    container = {k: v for k, v in node.items() if k in ("image", "env", "envFrom", "volumeMounts", "securityContext")}
    container["name"] = "spark-kubernetes-driver" if role == "driver" else "executor"
    container.setdefault("image", spec.get("image") or "spark")
    container["resources"] = {"requests": requests, "limits": limits}
    pod = {
        k: node[k]
        for k in ("nodeSelector", "affinity", "tolerations", "schedulerName", "priorityClassName")
        if k in node
    }
    if "priorityClassName" not in pod and isinstance(dig(spec, "batchSchedulerOptions", "priorityClassName"), str):
        pod["priorityClassName"] = spec["batchSchedulerOptions"]["priorityClassName"]
        renames.append((path + ("priorityClassName",), ("spec", "batchSchedulerOptions", "priorityClassName")))
    renames.append((path + ("metadata",), path))
    replicas = _int(node.get("instances"), 1) if role == "executor" else 1
    return _synth(
        obj,
        path,
        pod,
        role,
        replicas,
        [(container, path)],
        init=_listed(node.get("initContainers"), path + ("initContainers",)),
        volumes=_listed(spec.get("volumes"), ("spec", "volumes")),
        metadata={"labels": node.get("labels"), "annotations": node.get("annotations")},
        renames=renames,
        fix_note="the Spark operator builds the pod's resources from cores, coreLimit, memory, memoryOverhead and "
        "gpu: change those",
    )


def _spark(obj: K8sObject) -> list[PodTemplate]:
    return [t for t in (_spark_role(obj, "driver"), _spark_role(obj, "executor")) if t is not None]


# --- NVIDIA Dynamo -------------------------------------------------------------


def _dynamo_resources(res: Any) -> dict:
    """Dynamo's ``resources`` ({requests, limits}: cpu, memory, gpu, custom) as a container's."""
    out: dict = {}
    if not isinstance(res, dict):
        return out
    for part in ("requests", "limits"):
        given = res.get(part)
        if not isinstance(given, dict):
            continue
        found = {}
        for k, v in given.items():
            if k == "gpu":
                found["nvidia.com/gpu"] = v
            elif k == "custom" and isinstance(v, dict):
                found.update(v)
            elif k in ("cpu", "memory", "ephemeral-storage"):
                found[k] = v
        out[part] = found
    return out


def _dynamo(obj: K8sObject) -> list[PodTemplate]:
    services = dig(obj.data, "spec", "services")
    if not isinstance(services, dict):
        return []
    out = []
    for name in sorted(services, key=str):
        svc = services[name]
        if not isinstance(svc, dict):
            continue
        path = ("spec", "services", name)
        extra: Any = svc.get("extraPodSpec") if isinstance(svc.get("extraPodSpec"), dict) else {}
        main: Any = extra.get("mainContainer") if isinstance(extra.get("mainContainer"), dict) else {}
        container = {**main, "name": _text(main.get("name"), "main")}
        container.setdefault("image", "the Dynamo runtime image")
        own = main.get("resources") if isinstance(main.get("resources"), dict) else {}
        res = _dynamo_resources(svc.get("resources"))
        for part in ("requests", "limits"):
            if isinstance(own.get(part), dict):
                res[part] = {**res.get(part, {}), **own[part]}
        container["resources"] = res
        renames = [
            (path + ("resources", "requests", "nvidia.com/gpu"), path + ("resources", "requests", "gpu")),
            (path + ("resources", "limits", "nvidia.com/gpu"), path + ("resources", "limits", "gpu")),
            (path + ("resources",), path + ("resources",)),
            (path + ("metadata",), path + ("extraPodSpec",)),
        ]
        spec = {k: v for k, v in extra.items() if k not in ("mainContainer", "containers", "volumes", "initContainers")}
        containers = [(container, path)] + _listed(extra.get("containers"), path + ("extraPodSpec", "containers"))
        out.append(
            _synth(
                obj,
                path,
                spec,
                str(name),
                _int(svc.get("replicas"), 1),
                containers,
                init=_listed(extra.get("initContainers"), path + ("extraPodSpec", "initContainers")),
                volumes=_listed(extra.get("volumes"), path + ("extraPodSpec", "volumes")),
                renames=renames + [(path + (k,), path + ("extraPodSpec", k)) for k in spec],
                fix_note="the Dynamo operator builds the main container's resources from the service's resources "
                "(gpu, cpu, memory): change those",
            )
        )
    return out


def _none(obj: dict) -> Iterator[TemplateSpot]:
    return iter(())


PLATFORM_KINDS: dict[tuple[str, str], KindInfo] = {
    ("serving.kserve.io", "InferenceService"): KindInfo(_none, False, _inference_service),
    ("serving.kserve.io", "ServingRuntime"): KindInfo(_none, False, _serving_runtime),
    ("serving.kserve.io", "ClusterServingRuntime"): KindInfo(_none, False, _serving_runtime),
    ("serving.kserve.io", "LLMInferenceService"): KindInfo(_none, False, _llm_inference_service),
    ("serving.kserve.io", "LLMInferenceServiceConfig"): KindInfo(_none, False, _llm_inference_service),
    ("machinelearning.seldon.io", "SeldonDeployment"): KindInfo(_seldon, False),
    ("sparkoperator.k8s.io", "SparkApplication"): KindInfo(_none, False, _spark),
    ("sparkoperator.k8s.io", "ScheduledSparkApplication"): KindInfo(_none, False, lambda o: []),
    ("nvidia.com", "DynamoGraphDeployment"): KindInfo(_none, False, _dynamo),
}
for _kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"):
    PLATFORM_KINDS[("argoproj.io", _kind)] = KindInfo(_none, False, _argo(("spec",)))
PLATFORM_KINDS[("argoproj.io", "CronWorkflow")] = KindInfo(_none, False, _argo(("spec", "workflowSpec")))
for _kind in ("Task", "ClusterTask", "TaskRun", "Pipeline", "PipelineRun"):
    PLATFORM_KINDS[("tekton.dev", _kind)] = KindInfo(_none, False, _tekton)
KINDS.update(PLATFORM_KINDS)
