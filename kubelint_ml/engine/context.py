"""Cross-object facts: what every rule may know about the whole run.

Like OPA's ``data``, rules see more than their own object: the
PriorityClasses and Kueue WorkloadPriorityClasses defined among the inputs or
in the profile, the KubeletConfigurations found among the inputs or named in
the profile, and CRDs (for schema validation).

Collecting them must not cost a second parse of every file, and must not
keep every parse tree in memory. A cheap byte scan picks out the files that
can hold such objects; only those are parsed in the first pass, and only
small summaries are kept.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.engine.cluster import CLUSTER_KINDS, ClusterFacts
from kubelint_ml.input.kinds.kubeflow import train_job_spec_path
from kubelint_ml.input.objects import K8sObject, dig
from kubelint_ml.k8s.dra import DRA_CLAIM_KINDS, DraFacts
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Record

CONTEXT_KINDS = (
    "PriorityClass",
    "WorkloadPriorityClass",
    "KubeletConfiguration",
    "CustomResourceDefinition",
    "TrainJob",
    "OptimizationJob",  # Trainer: its trials are TrainJobs
    "TrainingRuntime",
    "ClusterTrainingRuntime",
    "Workflow",  # Argo: for the (Cluster)WorkflowTemplates it runs
    "CronWorkflow",
    "WorkflowTemplate",  # Argo: for the Workflows that run one given only as context
    "ClusterWorkflowTemplate",
    "LLMInferenceServiceConfig",  # KServe: for the LLMInferenceServices whose baseRefs name it
    "ServingRuntime",  # OME: for the InferenceServices that name it
    "ClusterServingRuntime",
    *DRA_CLAIM_KINDS,
    *CLUSTER_KINDS,  # kubelint_ml/engine/cluster.py
)
# It starts with the literal "kind" (a quote before it changes nothing a search finds), so the regex
# engine skips from one "kind" to the next with a fast literal scan: one pass over a file's bytes costs
# less than a substring test per kind.
_CONTEXT_RE = LazyPattern(rb"""kind["']?\s*:\s*["']?(""" + "|".join(CONTEXT_KINDS).encode() + rb""")\b""")


# The same without CustomResourceDefinition: CRDs are read only for --schema (a bundle of them can be most
# of a repository's bytes, and the first pass need not build them).
_CONTEXT_RE_NO_CRD = LazyPattern(
    rb"""kind["']?\s*:\s*["']?("""
    + "|".join(k for k in CONTEXT_KINDS if k != "CustomResourceDefinition").encode()
    + rb""")\b"""
)


def may_hold_context(data: bytes, crds: bool = True) -> bool:
    """Whether ``data`` may hold a context object; with ``crds=False`` a CustomResourceDefinition is none."""
    return (_CONTEXT_RE if crds else _CONTEXT_RE_NO_CRD).search(data) is not None


# Built-in classes every cluster has (pkg/apis/scheduling/types.go).
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
SYSTEM_PREFIX = "system-"
HIGHEST_USER_PRIORITY = 1_000_000_000


def object_key(obj: K8sObject) -> tuple:
    """Identity of an object across the two parses of a run (facts, then lint)."""
    return (obj.file, obj.document, obj.base)


def _int_value(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class PriorityClassFact(Record):
    name: str
    value: int | None
    global_default: bool
    source: str  # file path, or "profile"
    obj: K8sObject | None
    preemption_policy: str  # or "Never": the class never preempts
    __slots__ = _fields = ("name", "value", "global_default", "source", "obj", "preemption_policy")

    def __init__(
        self,
        name: str,
        value: int | None,
        global_default: bool,
        source: str,
        obj: K8sObject | None = None,
        preemption_policy: str = "PreemptLowerPriority",
    ) -> None:
        self.name = name
        self.value = value
        self.global_default = global_default
        self.source = source
        self.obj = obj
        self.preemption_policy = preemption_policy

    @property
    def key(self) -> tuple | None:
        return object_key(self.obj) if self.obj is not None else None

    @property
    def admissible(self) -> bool:
        """False when the API server would reject the definition (so the class never exists)."""
        if self.name.startswith(SYSTEM_PREFIX):
            return False
        return self.value is None or self.value <= HIGHEST_USER_PRIORITY


class KubeletConfigFact(Record):
    source: str  # file path
    data: dict
    obj: K8sObject | None
    __slots__ = _fields = ("source", "data", "obj")

    def __init__(self, source: str, data: dict, obj: K8sObject | None = None) -> None:
        self.source = source
        self.data = data
        self.obj = obj


class TrainJobFact(Record):
    """A Kubeflow TrainJob, for the runtime it names: whether it gives its pods a priority, and whether
    its pod overrides write a ``priorityClassName`` (not a field Trainer patches: dropped)."""

    name: str
    namespace: str | None
    source: str  # file path
    runtime_kind: str
    runtime_name: str
    gives_priority: bool  # the Kueue priority label
    patch_names_priority: bool  # a priorityClassName in runtimePatches/podTemplateOverrides/podSpecOverrides
    kind: str  # TrainJob, or an OptimizationJob whose trials are TrainJobs
    __slots__ = _fields = (
        "name",
        "namespace",
        "source",
        "runtime_kind",
        "runtime_name",
        "gives_priority",
        "patch_names_priority",
        "kind",
    )

    def __init__(
        self,
        name: str,
        namespace: str | None,
        source: str,
        runtime_kind: str,
        runtime_name: str,
        gives_priority: bool,
        patch_names_priority: bool = False,
        kind: str = "TrainJob",
    ) -> None:
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.source = source
        self.runtime_kind = runtime_kind
        self.runtime_name = runtime_name
        self.gives_priority = gives_priority
        self.patch_names_priority = patch_names_priority


_KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"
# The TrainJob fields that patch the runtime's pods (v2.0 podSpecOverrides, then podTemplateOverrides,
# then runtimePatches).
_OVERRIDES = ("runtimePatches", "podTemplateOverrides", "podSpecOverrides")


def _names_priority(node: Any, depth: int = 0) -> bool:
    """A non-empty ``priorityClassName`` string anywhere in ``node`` (bounded depth)."""
    if depth > 16:
        return False
    if isinstance(node, dict):
        value = node.get("priorityClassName")
        if isinstance(value, str) and value.strip():
            return True
        return any(_names_priority(v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
    if isinstance(node, list):
        return any(_names_priority(v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return False


def _train_job(obj: K8sObject) -> TrainJobFact | None:
    base = train_job_spec_path(obj.kind) or ("spec",)
    spec: Any = dig(obj.data, *base)
    if not isinstance(spec, dict):
        return None
    ref = spec.get("runtimeRef")
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        return None
    kind: str = ref["kind"] if isinstance(ref.get("kind"), str) else "ClusterTrainingRuntime"
    own: Any = spec.get("labels")
    labels: list[dict] = [obj.labels, own if isinstance(own, dict) else {}]
    if obj.kind == "OptimizationJob":  # its trials are TrainJobs with the template's labels, not its own
        made: Any = dig(obj.data, "spec", "trainJobTemplate", "metadata", "labels")
        labels[0] = made if isinstance(made, dict) else {}
    gives = any(isinstance(m.get(_KUEUE_PRIORITY), str) and m[_KUEUE_PRIORITY].strip() for m in labels)
    # Trainer's pod patches (PodSpecPatch, and v2.0's PodSpecOverride) have no priorityClassName: the API
    # server prunes one written there, so it gives the pods nothing (said in the finding).
    dropped = any(_names_priority(spec.get(k)) for k in _OVERRIDES)
    return TrainJobFact(
        obj.ref.name or "", obj.ref.namespace, obj.file, kind, ref["name"], bool(gives), dropped, obj.kind
    )


class ArgoRunFact(Record):
    """An Argo Workflow or CronWorkflow that runs a (Cluster)WorkflowTemplate's templates, its whole
    spec (``workflowTemplateRef``) or one template (a step's or task's ``templateRef``): whether it
    gives their pods a priority."""

    name: str
    namespace: str | None
    source: str  # file path
    kind: str  # "WorkflowTemplate" or "ClusterWorkflowTemplate"
    ref_name: str
    template: str | None  # the template a templateRef runs; None: all (workflowTemplateRef)
    gives_all: bool  # to every pod it runs (_argo_gives_all)
    gives: frozenset[str]  # the templates it patches with a priorityClassName (workflowTemplateRef)
    __slots__ = _fields = ("name", "namespace", "source", "kind", "ref_name", "template", "gives_all", "gives")

    def __init__(
        self,
        name: str,
        namespace: str | None,
        source: str,
        kind: str,
        ref_name: str,
        template: str | None,
        gives_all: bool,
        gives: frozenset[str],
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.source = source
        self.kind = kind
        self.ref_name = ref_name
        self.template = template
        self.gives_all = gives_all
        self.gives = gives

    def gives_priority(self, template: str) -> bool:
        return self.gives_all or template in self.gives


def _argo_gives_all(spec: dict) -> bool:
    """The workflow spec gives every pod it runs a priority: ``podPriorityClassName`` (or the older
    ``priorityClassName``), ``templateDefaults.priorityClassName``, a ``podSpecPatch`` that sets one, or
    the Kueue priority label in ``podMetadata``."""
    defaults, meta, patch = spec.get("templateDefaults"), spec.get("podMetadata"), spec.get("podSpecPatch")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return (
        _named(spec.get("podPriorityClassName"))
        or _named(spec.get("priorityClassName"))
        or (isinstance(defaults, dict) and _named(defaults.get("priorityClassName")))
        or (isinstance(patch, str) and "priorityClassName" in patch)
        or (isinstance(labels, dict) and _named(labels.get(_KUEUE_PRIORITY)))
    )


def _named(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _argo_refs(node: Any, depth: int = 0) -> list[dict]:
    """The ``templateRef`` mappings of a workflow's steps and DAG tasks (and their hooks), bounded in depth."""
    if depth > 12:
        return []
    out: list[dict] = []
    if isinstance(node, dict):
        ref = node.get("templateRef")
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            out.append(ref)
        for key, value in node.items():
            if key != "templateRef" and isinstance(value, (dict, list)):
                out += _argo_refs(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, (dict, list)):
                out += _argo_refs(value, depth + 1)
    return out


def _argo_runs(obj: K8sObject) -> list[ArgoRunFact]:
    spec: Any = obj.data.get("spec")
    if obj.kind == "CronWorkflow" and isinstance(spec, dict):
        spec = spec.get("workflowSpec")
    if not isinstance(spec, dict):
        return []
    name, namespace = obj.ref.name or "", obj.ref.namespace
    gives_all = _argo_gives_all(spec)
    out = []
    ref = spec.get("workflowTemplateRef")
    if isinstance(ref, dict) and isinstance(ref.get("name"), str):
        templates = spec.get("templates")
        gives = frozenset(
            t["name"]
            for t in (templates if isinstance(templates, list) else [])
            if isinstance(t, dict) and isinstance(t.get("name"), str) and _named(t.get("priorityClassName"))
        )
        kind = "ClusterWorkflowTemplate" if ref.get("clusterScope") is True else "WorkflowTemplate"
        out.append(ArgoRunFact(name, namespace, obj.file, kind, ref["name"], None, gives_all, gives))
    for step in _argo_refs(spec.get("templates")):
        kind = "ClusterWorkflowTemplate" if step.get("clusterScope") is True else "WorkflowTemplate"
        template = step.get("template") if isinstance(step.get("template"), str) else None
        out.append(ArgoRunFact(name, namespace, obj.file, kind, step["name"], template, gives_all, frozenset()))
    return out


def _serving_runtime(table: dict, service: K8sObject, name: Any) -> tuple[str, Any] | None:
    """The (name, spec) of the runtime ``name`` in ``table``: a ServingRuntime in the service's namespace
    (or one that says none), else the ClusterServingRuntime of that name; None otherwise."""
    if not isinstance(name, str) or not name or not table:
        return None
    for key in (
        ("ServingRuntime", service.ref.namespace, name),
        ("ServingRuntime", None, name),
        ("ClusterServingRuntime", None, name),
    ):
        if key in table:
            return name, table[key]
    return None


class Facts(Record):
    priority_classes: dict[str, PriorityClassFact]
    priority_class_objects: list[PriorityClassFact]
    workload_priority_classes: dict[str, int | None]
    workload_priority_class_files: dict[str, str]  # name -> file it came from
    kubelet_configs: list[KubeletConfigFact]
    crds: list[dict]
    cluster: ClusterFacts  # Nodes, LimitRanges, quotas, PVCs, Kueue and Volcano objects
    # Answers computed from all the facts, asked once per pod template: kept
    # until the next fact arrives (thousands of classes and pods stay linear).
    _memo: dict
    _fields = (
        "priority_classes",
        "priority_class_objects",
        "workload_priority_classes",
        "workload_priority_class_files",
        "kubelet_configs",
        "crds",
        "train_jobs",
        "training_runtimes",
        "argo_runs",
        "_memo",
        "cluster",
    )

    def __init__(
        self,
        priority_classes: dict[str, PriorityClassFact] | None = None,
        priority_class_objects: list[PriorityClassFact] | None = None,
        workload_priority_classes: dict[str, int | None] | None = None,
        workload_priority_class_files: dict[str, str] | None = None,
        kubelet_configs: list[KubeletConfigFact] | None = None,
        crds: list[dict] | None = None,
        train_jobs: list[TrainJobFact] | None = None,
        training_runtimes: dict[tuple[str, str | None, str], Any] | None = None,
        argo_runs: list[ArgoRunFact] | None = None,
        _memo: dict | None = None,
        cluster: ClusterFacts | None = None,
    ) -> None:
        self.priority_classes = {} if priority_classes is None else priority_classes
        self.priority_class_objects = [] if priority_class_objects is None else priority_class_objects
        self.workload_priority_classes = {} if workload_priority_classes is None else workload_priority_classes
        self.workload_priority_class_files = (
            {} if workload_priority_class_files is None else workload_priority_class_files
        )
        self.kubelet_configs = [] if kubelet_configs is None else kubelet_configs
        self.crds = [] if crds is None else crds
        self.train_jobs = [] if train_jobs is None else train_jobs
        # (kind, namespace of a TrainingRuntime, name) -> the runtime's data, for the TrainJobs that name it
        self.training_runtimes = {} if training_runtimes is None else training_runtimes
        self.training_runtime_files: dict[tuple[str, str | None, str], str] = {}  # the same keys -> file
        self.argo_runs = [] if argo_runs is None else argo_runs
        self._memo = {} if _memo is None else _memo
        self.cluster = ClusterFacts() if cluster is None else cluster
        # Dynamic Resource Allocation: claims, templates and device classes (kubelint_ml/k8s/dra.py).
        self.dra = DraFacts()
        # (namespace, name) -> the spec of a KServe LLMInferenceServiceConfig, for the services whose
        # baseRefs name it
        self.llm_configs: dict[tuple[str | None, str], Any] = {}
        # (kind, namespace, name) -> the spec of an OME (Cluster)ServingRuntime, for the InferenceServices
        # that name it
        self.ome_runtimes: dict[tuple[str, str | None, str], Any] = {}
        # (kind, namespace, name) -> the spec of a KServe (Cluster)ServingRuntime, for the
        # InferenceServices whose model names it
        self.kserve_runtimes: dict[tuple[str, str | None, str], Any] = {}
        # (kind, namespace of a WorkflowTemplate, name) -> (its data, its file), for the Workflows that
        # run one by workflowTemplateRef
        self.argo_templates: dict[tuple[str, str | None, str], tuple[dict, str]] = {}

    def context_objects(self) -> list[dict]:
        """The context objects themselves (what CEL rules see as ``objects``; do not mutate)."""
        found = self._memo.get("context_objects")
        if found is None:
            found = [f.obj.data for f in self.priority_class_objects if f.obj is not None]
            found += [k.data for k in self.kubelet_configs]
            self._memo["context_objects"] = found
        return found

    def add_object(self, obj: K8sObject) -> None:
        self._memo.clear()
        kind, group = obj.kind, obj.group
        data = obj.data
        name = obj.ref.name
        if kind == "PriorityClass" and group == "scheduling.k8s.io":
            policy = data.get("preemptionPolicy")
            fact = PriorityClassFact(
                name,
                _int_value(data.get("value", 0)),  # left out, it is 0 (the API server accepts that)
                data.get("globalDefault") is True,
                obj.file,
                obj,
                "Never" if policy == "Never" else "PreemptLowerPriority",
            )
            self.priority_class_objects.append(fact)
            if name:
                self.priority_classes.setdefault(name, fact)
        elif kind == "WorkloadPriorityClass" and group == "kueue.x-k8s.io":
            if name:
                self.workload_priority_classes.setdefault(name, _int_value(data.get("value")))
                self.workload_priority_class_files.setdefault(name, obj.file)
        elif kind == "KubeletConfiguration" and group == "kubelet.config.k8s.io":
            self.kubelet_configs.append(KubeletConfigFact(obj.file, data, obj))
        elif kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            self.crds.append(data)
        elif kind in ("TrainJob", "OptimizationJob") and group == "trainer.kubeflow.org":
            job = _train_job(obj)
            if job is not None:
                self.train_jobs.append(job)
        elif kind in ("TrainingRuntime", "ClusterTrainingRuntime") and group == "trainer.kubeflow.org":
            namespace = obj.ref.namespace if kind == "TrainingRuntime" else None
            if name:
                self.training_runtimes.setdefault((kind, namespace, name), data)
                self.training_runtime_files.setdefault((kind, namespace, name), obj.file)
        elif kind == "LLMInferenceServiceConfig" and group == "serving.kserve.io":
            if name:
                self.llm_configs.setdefault((obj.ref.namespace, name), data.get("spec"))
        elif kind in ("ServingRuntime", "ClusterServingRuntime") and group == "ome.io":
            if name:
                namespace = obj.ref.namespace if kind == "ServingRuntime" else None
                self.ome_runtimes.setdefault((kind, namespace, name), data.get("spec"))
        elif kind in ("ServingRuntime", "ClusterServingRuntime") and group == "serving.kserve.io":
            if name:
                namespace = obj.ref.namespace if kind == "ServingRuntime" else None
                self.kserve_runtimes.setdefault((kind, namespace, name), data)
        elif kind in ("Workflow", "CronWorkflow") and group == "argoproj.io":
            self.argo_runs += _argo_runs(obj)
        elif kind in ("WorkflowTemplate", "ClusterWorkflowTemplate") and group == "argoproj.io":
            if name:
                namespace = obj.ref.namespace if kind == "WorkflowTemplate" else None
                self.argo_templates.setdefault((kind, namespace, name), (data, obj.file))
        elif kind in DRA_CLAIM_KINDS:
            self.dra.add_object(kind, group, data, name, obj.ref.namespace, obj.file)
        else:
            if kind == "ResourceSlice" and group == "resource.k8s.io" and isinstance(data.get("spec"), dict):
                self.dra.add_slice(data["spec"])  # its MIG devices, for the claims allocated from them
            self.cluster.add_object(obj)

    def runtime_of(self, job: K8sObject) -> Any:
        """The data of the (Cluster)TrainingRuntime a TrainJob names, among the inputs (a TrainingRuntime:
        in the TrainJob's namespace, or one that says none), or None."""
        key = self._runtime_key(job)
        return None if key is None else self.training_runtimes[key]

    def runtime_file_of(self, job: K8sObject) -> str | None:
        """The file the (Cluster)TrainingRuntime a TrainJob names comes from, or None."""
        key = self._runtime_key(job)
        return None if key is None else self.training_runtime_files.get(key)

    def _runtime_key(self, job: K8sObject) -> tuple[str, str | None, str] | None:
        fact = _train_job(job)
        if fact is None:
            return None
        keys: list[tuple[str, str | None, str]] = [(fact.runtime_kind, None, fact.runtime_name)]
        if fact.runtime_kind != "ClusterTrainingRuntime":
            keys.insert(0, (fact.runtime_kind, fact.namespace, fact.runtime_name))
            if fact.namespace is None:
                keys.pop()
        return next((k for k in keys if k in self.training_runtimes), None)

    def llm_bases_of(self, service: K8sObject) -> list[tuple[str, Any]] | None:
        """The LLMInferenceServiceConfigs a KServe LLMInferenceService's ``baseRefs`` name, in order, as
        (name, spec), when every one is among the inputs: in the service's namespace, else in KServe's
        (``kserve``), as getConfig looks; one that says no namespace matches any, and a service that says
        none (applied to the current namespace) matches the one config of that name. None otherwise."""
        refs = dig(service.data, "spec", "baseRefs")
        if not isinstance(refs, list) or not refs or not self.llm_configs:
            return None
        out = []
        for ref in refs:
            name = ref.get("name") if isinstance(ref, dict) else None
            if not isinstance(name, str):
                return None
            for namespace in (service.ref.namespace, "kserve", None):
                if (namespace, name) in self.llm_configs:
                    out.append((name, self.llm_configs[(namespace, name)]))
                    break
            else:
                anywhere = [spec for (_, n), spec in self.llm_configs.items() if n == name]
                if service.ref.namespace or len(anywhere) != 1:
                    return None
                out.append((name, anywhere[0]))
        return out

    def ome_runtime_of(self, service: K8sObject) -> tuple[str, Any] | None:
        """The (name, spec) of the runtime an OME InferenceService's ``spec.runtime.name`` names, among
        the inputs: a ServingRuntime in the service's namespace (or one that says none), else the
        ClusterServingRuntime of that name (GetRuntime). None otherwise (also for a runtime OME would
        select by the model: the selection is not modelled)."""
        return _serving_runtime(self.ome_runtimes, service, dig(service.data, "spec", "runtime", "name"))

    def kserve_runtime_of(self, service: K8sObject) -> tuple[str, Any, str] | None:
        """The (name, spec, multi-node executor) of the serving runtime a KServe InferenceService's
        ``predictor.model.runtime`` names, among the inputs: a ServingRuntime in the service's namespace
        (or one that says none), else the ClusterServingRuntime of that name (GetServingRuntime). None
        otherwise (also for a runtime KServe selects by the model's format: the selection is not
        modelled). The executor is the runtime's ``multinode/executor-backend`` annotation, ``ray``
        when unset."""
        name = dig(service.data, "spec", "predictor", "model", "runtime")
        found = _serving_runtime(self.kserve_runtimes, service, name)
        if found is None:
            return None
        executor = dig(found[1], "metadata", "annotations", "multinode/executor-backend")
        return found[0], found[1].get("spec"), executor if isinstance(executor, str) else "ray"

    def context_template_of(self, workflow: K8sObject) -> tuple[str, dict] | None:
        """The (name, data) of the (Cluster)WorkflowTemplate an Argo Workflow or CronWorkflow runs by
        ``workflowTemplateRef``, when it is read only as context (a linted one is judged itself, with
        the Workflows that run it): a WorkflowTemplate in the workflow's namespace, or one that says
        none. None otherwise."""
        spec = dig(workflow.data, "spec", "workflowSpec") if workflow.kind == "CronWorkflow" else None
        ref = dig(spec if isinstance(spec, dict) else workflow.data.get("spec"), "workflowTemplateRef")
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str) or not self.argo_templates:
            return None
        name = ref["name"]
        keys: list[tuple[str, str | None, str]] = [("ClusterWorkflowTemplate", None, name)]
        if ref.get("clusterScope") is not True:
            keys = [("WorkflowTemplate", workflow.ref.namespace, name), ("WorkflowTemplate", None, name)]
        for key in keys:
            found = self.argo_templates.get(key)
            if found is not None and found[1] in self.cluster.context_files:
                return name, found[0]
        return None

    def train_jobs_using(self, runtime: K8sObject) -> list[TrainJobFact]:
        """The TrainJobs among the inputs that name this (Cluster)TrainingRuntime (a TrainingRuntime:
        in its namespace, where both say one)."""
        name, namespace = runtime.ref.name, runtime.ref.namespace
        return [
            t
            for t in self.train_jobs
            if t.runtime_kind == runtime.kind
            and t.runtime_name == name
            and (runtime.kind != "TrainingRuntime" or not (t.namespace and namespace) or t.namespace == namespace)
        ]

    def argo_runs_of(self, template: K8sObject, name: str) -> list[ArgoRunFact]:
        """The Argo Workflows and CronWorkflows among the inputs that run the template ``name`` of this
        (Cluster)WorkflowTemplate (a WorkflowTemplate: in its namespace, where both say one)."""
        ref_name, namespace = template.ref.name, template.ref.namespace
        return [
            r
            for r in self.argo_runs
            if r.kind == template.kind
            and r.ref_name == ref_name
            and r.template in (None, name)
            and (template.kind != "WorkflowTemplate" or not (r.namespace and namespace) or r.namespace == namespace)
        ]

    def add_profile(self, profile: Any) -> None:
        self._memo.clear()
        if profile is None:
            return
        self.dra.add_profile(
            getattr(profile, "accelerator_device_classes", None),
            getattr(profile, "kubernetes_version", None),
            getattr(profile, "feature_gates", None),
        )
        for name, value in profile.priority_classes.items():
            self.priority_classes.setdefault(name, PriorityClassFact(name, value, False, "profile"))

    # ------------------------------------------------------------------

    @property
    def defines_priority_classes(self) -> bool:
        return bool(self.priority_classes)

    @property
    def defines_workload_priority_classes(self) -> bool:
        return bool(self.workload_priority_classes)

    def workload_priority_classes_seen_from(self, file: str) -> list[str]:
        """The WorkloadPriorityClasses that speak for a workload in ``file`` (``ClusterFacts.speaks_for``:
        the cluster's, and those in its directory or one above it)."""
        files = self.workload_priority_class_files
        return [n for n in self.workload_priority_classes if self.cluster.speaks_for(files.get(n, ""), file)]

    def knows_priority_class(self, name: str) -> bool:
        """Defined among the inputs or in the profile, or a ``system-*`` class."""
        return name in self.priority_classes or name.startswith(SYSTEM_PREFIX)

    def priority_value(self, name: str) -> int | None:
        if name in SYSTEM_PRIORITY_CLASSES:
            return SYSTEM_PRIORITY_CLASSES[name]
        fact = self.priority_classes.get(name)
        return fact.value if fact else None

    def highest_preempting(self) -> PriorityClassFact | None:
        """The known class with the highest value that may preempt (not ``preemptionPolicy: Never``).

        Only classes from the inputs and the profile count: the built-in
        ``system-*`` classes outrank every user class by construction, and
        definitions the API server rejects never exist.
        """
        if "highest_preempting" not in self._memo:
            self._memo["highest_preempting"] = self._highest_preempting()
        return self._memo["highest_preempting"]

    def _highest_preempting(self) -> PriorityClassFact | None:
        best: PriorityClassFact | None = None
        for f in self.priority_classes.values():
            if f.value is None or f.preemption_policy == "Never" or not f.admissible:
                continue
            if best is None or f.value > best.value:  # type: ignore[operator]
                best = f
        return best

    def lowest_preempting_above(self, value: int) -> PriorityClassFact | None:
        """The known class that may preempt with the lowest value above ``value`` (the first of them
        in input order on a tie): the nearest class whose pods preempt pods at ``value``."""
        best: PriorityClassFact | None = None
        for f in self.priority_classes.values():
            if f.value is None or f.preemption_policy == "Never" or not f.admissible or f.value <= value:
                continue
            if best is None or f.value < best.value:  # type: ignore[operator]
                best = f
        return best

    def global_defaults(self) -> list[PriorityClassFact]:
        """PriorityClass objects with ``globalDefault: true``, one per name, in input order (do not mutate)."""
        found = self._memo.get("global_defaults")
        if found is None:
            seen: set[str] = set()
            found = []
            for f in self.priority_class_objects:
                if f.global_default and f.name not in seen:
                    seen.add(f.name)
                    found.append(f)
            self._memo["global_defaults"] = found
        return found

    def global_default_keys(self) -> frozenset:
        """:func:`object_key` of every class in :meth:`global_defaults`."""
        found = self._memo.get("global_default_keys")
        if found is None:
            found = self._memo["global_default_keys"] = frozenset(f.key for f in self.global_defaults())
        return found

    def global_default(self) -> PriorityClassFact | None:
        """The class pods without a priorityClassName get: with several, the lowest value wins."""
        if "global_default" not in self._memo:
            self._memo["global_default"] = self._global_default()
        return self._memo["global_default"]

    def _global_default(self) -> PriorityClassFact | None:
        found = self.global_defaults()
        if not found:
            return None
        valued = [f for f in found if f.value is not None]
        return min(valued, key=lambda f: f.value) if valued else found[0]  # type: ignore[arg-type, return-value]
