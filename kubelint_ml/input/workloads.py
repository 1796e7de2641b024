"""Pod templates, found once for every kind, with their path, count and role.

Every rule sees the same view: a :class:`PodTemplate` with its containers and
volumes. Kinds are looked up by (API group, kind) in one table
(``kubelint_ml.input.kinds.KINDS``, one module per controller family); objects of
kinds not in the table are searched for anything shaped like a pod template,
so a new CRD is not silently skipped.

Wrong types inside a pod spec (``containers: 3``, ``resources: "big"``) are
found here, once, and reported as ``parse-error``; a template with such a
problem is not evaluated further, but every other template is.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from typing import Any

from kubelint_ml.input.kinds import KINDS, PLATFORM_KINDS
from kubelint_ml.input.kinds.base import Finder, KindInfo, Pod, TemplateSpot, integer
from kubelint_ml.input.kinds.base import text as _text
from kubelint_ml.input.kinds.kserve import KSERVE_FRAMEWORKS, KSERVE_LIMITS, KSERVE_REQUESTS
from kubelint_ml.input.kinds.kubeflow import KUBEFLOW_REPLICA_SPECS, TRAINER_ANCESTOR_LABEL, is_runtime_trainer_job
from kubelint_ml.input.objects import HasMetadata, K8sObject, clip, dig
from kubelint_ml.records import Record

# Importable from here as they always were: the table and what the rules ask of the families.
__all__ = [
    "KINDS",
    "KSERVE_FRAMEWORKS",
    "KSERVE_LIMITS",
    "KSERVE_REQUESTS",
    "KUBEFLOW_REPLICA_SPECS",
    "NO_TEMPLATES",
    "PLATFORM_KINDS",
    "TRAINER_ANCESTOR_LABEL",
    "ContainerView",
    "Finder",
    "KindInfo",
    "PodTemplate",
    "ShapeProblem",
    "TemplateSpot",
    "VolumeView",
    "is_runtime_trainer_job",
    "is_training_kind",
    "kind_info",
    "pod_templates",
    "qualified_kind",
    "render_role",
    "search_note",
]

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
                yield cpath, render_role(cpath), integer(node.get("replicas"), None)
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
_LIST_KEYS = frozenset(_CONTAINER_LISTS)
_SPEC_MAPS = ("nodeSelector", "affinity", "securityContext", "resources")
_SPEC_LISTS = ("tolerations", "volumes", "imagePullSecrets", "resourceClaims")
_POD_LISTS = ("containers", "initContainers") + _SPEC_LISTS


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
        if not _LIST_KEYS.isdisjoint(c):  # most containers have a few of them
            for lk in _CONTAINER_LISTS:
                value = c.get(lk)
                if value is not None and not isinstance(value, list):
                    _expect(problems, value, list, cpath + (lk,), f"container '{name}' {lk}")
        env = c.get("env")
        if isinstance(env, list) and not all(map(isinstance, env, repeat(dict, len(env)))):
            for j, e in enumerate(env):
                if not isinstance(e, dict):
                    problems.append(
                        ShapeProblem(
                            cpath + ("env", j), f"container '{name}' env[{j}] must be a mapping, found {_type_name(e)}"
                        )
                    )
        mounts = c.get("volumeMounts")
        if isinstance(mounts, list) and not all(map(isinstance, mounts, repeat(dict, len(mounts)))):
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
                value = meta.get(key)
                if value is not None and not isinstance(value, dict):
                    _expect(problems, value, dict, path + ("metadata", key), f"metadata.{key}")
        spec = node.get("spec")
        if not _expect(problems, spec, dict, path + ("spec",), "pod spec") or spec is None:
            spec = {}
    tpl = PodTemplate(obj, path, path + ("spec",), spec, meta, role, replicas)
    if spec:
        for key in _SPEC_MAPS:
            value = spec.get(key)
            if value is not None and not isinstance(value, dict):
                _expect(problems, value, dict, tpl.spec_path + (key,), key)
        for key in _SPEC_LISTS:
            value = spec.get(key)
            if value is not None and not isinstance(value, list):
                _expect(problems, value, list, tpl.spec_path + (key,), key)
        pod_res = spec.get("resources")
        if isinstance(pod_res, dict):
            for part in ("requests", "limits"):
                value = pod_res.get(part)
                if value is not None and not isinstance(value, dict):
                    _expect(problems, value, dict, tpl.spec_path + ("resources", part), f"pod resources.{part}")
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
        return [_synth(obj, pod) for pod in info.builder(obj)]
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


def train_job_templates(job: K8sObject, runtime: Any) -> list[PodTemplate]:
    """A Kubeflow TrainJob's trainer pod, made from the (Cluster)TrainingRuntime ``runtime`` it names
    (:func:`~kubelint_ml.input.kinds.kubeflow.train_job_pod`); marked ``from-runtime`` in its cache."""
    from kubelint_ml.input.kinds.kubeflow import train_job_pod

    pod = train_job_pod(job, runtime)
    if pod is None:
        return []
    tpl = _synth(job, pod)
    tpl.cache["from-runtime"] = True
    return [tpl]


def llm_service_templates(service: K8sObject, bases: list[tuple[str, Any]]) -> list[PodTemplate]:
    """A KServe LLMInferenceService's pods with the LLMInferenceServiceConfigs its ``baseRefs`` name
    (name, spec) merged under it (:func:`~kubelint_ml.input.kinds.kserve.llm_service_with_bases`)."""
    from kubelint_ml.input.kinds.kserve import llm_service_with_bases

    return [_synth(service, pod) for pod in llm_service_with_bases(service, bases)]


def argo_run_templates(workflow: K8sObject, name: str, template: dict) -> list[PodTemplate]:
    """An Argo Workflow's pods from the WorkflowTemplate it runs (name, data), read as context
    (:func:`~kubelint_ml.input.kinds.argo.workflow_with_template`)."""
    from kubelint_ml.input.kinds.argo import workflow_with_template

    return [_synth(workflow, pod) for pod in workflow_with_template(workflow, name, template)]


def kserve_service_templates(service: K8sObject, name: str, runtime: Any) -> list[PodTemplate]:
    """A KServe InferenceService's pods with the serving runtime its model names (name, spec) merged in
    (:func:`~kubelint_ml.input.kinds.kserve.inference_service_with_runtime`)."""
    from kubelint_ml.input.kinds.kserve import inference_service_with_runtime

    return [_synth(service, pod) for pod in inference_service_with_runtime(service, name, runtime)]


def ome_service_templates(service: K8sObject, name: str, runtime: Any) -> list[PodTemplate]:
    """An OME InferenceService's pods merged over the runtime it names (name, spec)
    (:func:`~kubelint_ml.input.kinds.ome.service_with_runtime`)."""
    from kubelint_ml.input.kinds.ome import service_with_runtime

    return [_synth(service, pod) for pod in service_with_runtime(service, name, runtime)]


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


# ----------------------------------------------------------------------------
# Platform kinds: pods a controller builds from fields that are not a pod template
# (KServe, Argo Workflows, Tekton, Spark, Dynamo). Each family's builder (kubelint_ml/input/kinds/)
# describes the pod as the controller makes it, from the user's fields; docs/kinds.md says kind
# by kind what is modelled and what is not.


def _synth(obj: K8sObject, pod: Pod) -> PodTemplate:
    """The pod template of a :class:`~kubelint_ml.input.kinds.base.Pod` (its spec, read by the
    rules, put together from the user's fields): each container and volume keeps the path it has
    in the file."""
    spec_path = pod.spec_path
    problems: list[ShapeProblem] = []
    meta: Any = pod.metadata if isinstance(pod.metadata, dict) else {}
    for key in ("labels", "annotations"):
        if not isinstance(meta.get(key), (dict, type(None))):
            problems.append(ShapeProblem(spec_path, f"metadata.{key} must be a mapping, found {_type_name(meta[key])}"))
    spec = dict(pod.spec)
    containers, init = pod.containers, pod.init
    spec["containers"] = [c for c, _ in containers]
    if init:
        spec["initContainers"] = [c for c, _ in init]
    vols = [(v, p) for v, p in pod.volumes if v is not None]
    if vols:
        spec["volumes"] = [v for v, _ in vols]
    else:
        spec.pop("volumes", None)
    tpl = PodTemplate(obj, spec_path, spec_path, spec, meta, pod.role, pod.replicas)
    tpl.renames = tuple(sorted(pod.renames, key=lambda r: -len(r[0])))
    tpl.fix_note = pod.fix_note
    tpl.shared = pod.shared
    if pod.cache:
        tpl.cache.update(pod.cache)
    for key in _SPEC_MAPS:
        _expect(problems, spec.get(key), dict, tpl.real_path(spec_path + (key,)), key)
    for key in _POD_LISTS:  # as the user wrote them (the controller's are lists): a mapping is refused
        value = pod.spec.get(key)
        if value is not None and not isinstance(value, list):
            _expect(problems, value, list, tpl.real_path(spec_path + (key,)), key)
    tpl.init_containers = _views(list(init), "initContainers", problems)
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
