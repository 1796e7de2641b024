"""A document that asks for an accelerator, whose pods kubelint-ml could not build: said, never
passed in silence."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kubelint_ml.engine.api import Hit, Unit, is_accelerator_template
from kubelint_ml.input.kinds.kubeai import PROFILE as KUBEAI_PROFILE
from kubelint_ml.input.loader import DEFAULT_LIMITS, load, render_path
from kubelint_ml.input.objects import clip, dig
from kubelint_ml.input.workloads import NO_TEMPLATES, kind_info, qualified_kind
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.templates._common import is_fragment

UNIT = "object"
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

# Objects that name accelerator resources without asking for them (capacity, quota, classes).
# DRA's objects describe devices that pods claim (kubelint_ml/k8s/dra.py reads them), not pods.
_NOT_ASKING = NO_TEMPLATES | {
    ("", "Node"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("resource.k8s.io", "ResourceClaim"),
    ("resource.k8s.io", "ResourceClaimTemplate"),
    ("resource.nvidia.com", "ComputeDomain"),
}
_MOST_NODES = 20_000  # a bound on the search in one object
# Kinds whose pods are made from another object it names: (the reference's path, what it names).
_PODS_ELSEWHERE = {
    ("trainer.kubeflow.org", "TrainJob"): (("spec", "runtimeRef", "name"), "runtime"),
    ("trainer.kubeflow.org", "OptimizationJob"): (
        ("spec", "trainJobTemplate", "spec", "runtimeRef", "name"),
        "runtime",
    ),
}
# Kinds that ask for accelerators through a name the cluster defines (a KubeAI resource profile):
# the field, and what to do about it.
# the form the controller accepts, and what to say of one it refuses.
_NAMED_PROFILES = {
    ("kubeai.org", "Model"): (
        ("spec", "resourceProfile"),
        "its resource profile {name!r} is not one the KubeAI chart ships; give it in the config "
        "(kinds.kubeai.resourceProfiles) so its pods can be built",
        KUBEAI_PROFILE,
        "resourceProfile {value!r} is not <name>:<count> (e.g. nvidia-gpu-l4:2): the KubeAI controller "
        "refuses the Model (getModelConfig) and makes no pod",
    ),
}
# Kinds whose pods a controller generates at run time, always on accelerators: the fields that size
# the accelerators, where given, else the field that makes the pods (where the finding points), the
# finding's message, and its why. An accelerator resource named in the object (``prefer_found``)
# points there instead.
#
# NVIDIA Dynamo's DynamoGraphDeploymentRequest (ai-dynamo/dynamo deploy/operator, v1alpha1 and
# v1beta1) runs a profiling job on GPUs and deploys the DynamoGraphDeployment it generates (GPU
# workers). The fields that size the GPUs, where given (v1beta1 ``hardware``, v1alpha1
# ``profilingConfig.config.hardware``), else the model it serves.
#
# The NIM Operator's NemoCustomizer (NVIDIA/k8s-nim-operator v3.1, api/apps/v1alpha1/
# nemo_customizer_types.go, internal/controller/nemocustomizer_controller.go addTrainingConfig): the
# operator makes the customizer API (a CPU Deployment) and hands ``trainingConfig`` (image,
# nodeSelector, tolerations, affinity, resources, the ``dshm`` size) to it; the customizer makes a
# GPU fine-tuning job per customization request (a NemoTrainingJob run as a Volcano Job, or a Run:ai
# workload with ``scheduler.type: runai``), its GPU and node count from the model's customization
# config. Its NIMBuild (nimbuild_types.go, nimbuild_controller.go): an engine-build Job pod with
# ``resources``, or as many ``nvidia.com/gpu`` as the NIMCache profile's tensorParallelism.
_GENERATED: dict[tuple[str, str], tuple[tuple[tuple, ...], bool, str, str]] = {
    ("nvidia.com", "DynamoGraphDeploymentRequest"): (
        (("spec", "hardware"), ("spec", "profilingConfig", "config", "hardware"), ("spec", "model")),
        False,
        "deploys GPU workers its profiling sizes at run time: their pods were not judged",
        "the Dynamo operator profiles the model on GPUs (a profiling Job) and deploys the "
        "DynamoGraphDeployment it generates (GPU workers, autoApply), none of them in this file; no rule "
        "judged those pods (memory limits, QoS, /dev/shm, priority): lint the generated "
        "DynamoGraphDeployment (kubectl get dynamographdeployment -o yaml).",
    ),
    ("apps.nvidia.com", "NemoCustomizer"): (
        (("spec", "trainingConfig"),),
        True,
        "runs GPU fine-tuning jobs the customizer makes at run time: their pods were not judged",
        "the NeMo Customizer makes a GPU training job per customization request (a NemoTrainingJob run as "
        "a Volcano Job, or a Run:ai workload with scheduler.type runai), its GPUs and nodes from the "
        "model's customization config, its nodeSelector, tolerations, affinity, resources and /dev/shm "
        "size from spec.trainingConfig; none of those pods is in this file, so no rule judged them "
        "(memory limits, QoS, /dev/shm, priority): set trainingConfig.resources (memory request and "
        "limit) and sharedMemorySizeLimit, and check a running job's pod (kubectl get pod -o yaml).",
    ),
    ("apps.nvidia.com", "NIMBuild"): (
        (("spec", "nimCache"),),
        True,
        "builds its engine in a GPU pod the operator sizes from the NIMCache profile: not judged",
        "the NIM Operator builds the engine in a Job whose pod asks for spec.resources, or for as many "
        "nvidia.com/gpu as the tensor parallelism of the NIMCache profile it builds from, which is not "
        "in this file; no rule judged that pod (memory limits, QoS, /dev/shm, priority): check the "
        "build pod (kubectl get pod -o yaml).",
    ),
}
_ACCELERATOR_WORDS = LazyPattern(r"gpu|tpu|neuron|trainium|inferentia|gaudi|habana|mi[0-9]{3}", re.I)


def _mappings(root: Any) -> Iterator[tuple[dict, tuple]]:
    """The mappings of ``root`` with their paths, depth first in document order, at most
    ``_MOST_NODES`` nodes looked at."""
    stack: list[tuple[Any, tuple]] = [(root, ())]
    seen = 0
    while stack and seen < _MOST_NODES:
        node, path = stack.pop()
        seen += 1
        if isinstance(node, dict):
            yield node, path
            for key in reversed(list(node)):
                value = node[key]
                if isinstance(value, (dict, list)):
                    stack.append((value, path + (key,)))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    stack.append((node[i], path + (i,)))


def _asked(root: Any) -> tuple[tuple, str] | None:
    """The first accelerator resource named as a key (``nvidia.com/gpu: 8``) anywhere in the object,
    or as the name of a Spark-style ``{name: nvidia.com/gpu, quantity: 1}``: its path and name."""
    for node, path in _mappings(root):
        for key in node:
            if isinstance(key, str) and "/" in key and is_accelerator_resource(key):
                return path + (key,), key
        name = node.get("name")
        if isinstance(name, str) and "/" in name and "quantity" in node and is_accelerator_resource(name):
            return path + ("name",), name
    return None


# Keys whose string value names the accelerator resource an operator asks for (`gpuType:
# nvidia.com/gpu`, as production-stack's VLLMRuntime writes it): read only where no key names one.
_RESOURCE_NAME_KEYS = LazyPattern(r"(?:type|resourcename)$", re.I)
# API groups whose kinds ask for accelerators by the node type their controller provisions for the
# pods: Kaito's Workspace, InferenceSet and MultiRoleInference `instanceType` (kaito-project/kaito
# api/v1beta1/workspace_types.go, ResourceSpec.InstanceType). Elsewhere a node type names where nodes
# come from (Cluster API machine templates, GKE ComputeClasses), not what a workload asks for.
_NODE_TYPE_GROUPS = frozenset(("kaito.sh",))


def _asked_by_value(root: Any, node_types: bool) -> tuple[tuple, str] | None:
    """The first field whose value names an accelerator resource (a key ending in ``type`` or
    ``resourceName``) or, with ``node_types``, an accelerator node type of the catalog
    (``instanceType``): its path and what it asks for."""
    for node, path in _mappings(root):
        for key, value in node.items():
            if not isinstance(key, str) or not isinstance(value, str):
                continue
            if "/" in value and _RESOURCE_NAME_KEYS.search(key) and is_accelerator_resource(value):
                return path + (key,), value
            if node_types and key == "instanceType":
                from kubelint_ml.k8s.nodes import catalog  # only for an unknown kind naming a node type

                node_type = catalog().get(value)
                if node_type is not None:
                    return path + (key,), (f"instance type {clip(value)} ({node_type.gpus} {node_type.gpu_model})")
    return None


# Argo Workflows kinds and where their workflow spec is.
_ARGO = {
    ("argoproj.io", "Workflow"): ("spec",),
    ("argoproj.io", "WorkflowTemplate"): ("spec",),
    ("argoproj.io", "ClusterWorkflowTemplate"): ("spec",),
    ("argoproj.io", "CronWorkflow"): ("spec", "workflowSpec"),
}
# The Argo template types that run a pod of their own (kubelint_ml/input/kinds/argo.py).
_ARGO_POD_TEMPLATES = ("container", "script", "containerSet")
# A key of a YAML or JSON text that names an extended resource (the text when it is no YAML as
# written: an Argo parameter in place of a value, `nvidia.com/gpu: {{inputs.parameters.gpus}}`).
_RESOURCE_KEY = LazyPattern(
    r"""(?:^|[\s{,])["']?([A-Za-z0-9][A-Za-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9._-]*)["']?\s*:""", re.M
)


def _asked_in_text(text: str) -> tuple[str, Any] | None:
    """The first accelerator resource a YAML or JSON text asks for (safely loaded; a text that is no
    YAML as written is searched line by line, comments left out), and the object it is in."""
    loaded = load(text.encode(), DEFAULT_LIMITS)
    if not loaded.problems:
        for doc in loaded.documents:
            found = _asked(doc.data)
            if found is not None:
                return found[1], doc.data
        return None
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for m in _RESOURCE_KEY.finditer(line):
            if is_accelerator_resource(m.group(1)):
                return m.group(1), None
    return None


# A Kubeflow Pipelines v2 component's accelerator, as the compiler writes the component's container
# spec into a workflow parameter (kubeflow/pipelines backend/src/v2/compiler/argocompiler: the
# ``implementations-<hash>`` arguments, ``PipelineContainerSpec.resources.accelerator``); its driver
# turns it into the ``pod-spec-patch`` the executor template applies at run time.
_KFP_ACCELERATOR = LazyPattern(r'"accelerator"\s*:\s*\{[^{}]*?"(?:resourceType|type)"\s*:\s*"([^"]{1,253})"')


def _parameter_accelerators(spec: dict, spec_path: tuple) -> Iterator[tuple[tuple, str]]:
    """The workflow's argument parameters whose value names an accelerator a pipeline component asks
    for (Kubeflow Pipelines' compiled ``resources.accelerator``): (the value's path, the resource)."""
    params = dig(spec, "arguments", "parameters")
    for i, p in enumerate(params if isinstance(params, list) else []):
        value = p.get("value") if isinstance(p, dict) else None
        if not isinstance(value, str) or "accelerator" not in value:
            continue
        for m in _KFP_ACCELERATOR.finditer(value):
            if is_accelerator_resource(m.group(1)):
                yield spec_path + ("arguments", "parameters", i, "value"), m.group(1)
                break


def _argo_hits(unit: Unit, spec_path: tuple) -> list[Hit]:
    """An Argo resource template whose ``manifest`` creates an object that asks for an accelerator
    (its pods are made at run time, from a string), and a ``podSpecPatch`` that adds one to a pod the
    rules judged without it (the patch is applied at run time, often templated)."""
    obj = unit.obj
    spec = dig(obj.data, *spec_path)
    if not isinstance(spec, dict):
        return []
    hits: list[Hit] = []
    pods = [t for t in unit.templates() if not t.broken]
    judged_with = {t.path for t in pods if is_accelerator_template(t)}  # pods judged as accelerator pods
    templates = spec.get("templates")
    # (the patch's path, the patch, whose pods it patches, their paths)
    patches: list[tuple[tuple, Any, str, set[tuple]]] = [
        (spec_path + ("podSpecPatch",), spec.get("podSpecPatch"), "the workflow's pods were", {t.path for t in pods})
    ]
    for i, t in enumerate(templates if isinstance(templates, list) else []):
        if not isinstance(t, dict):
            continue
        path = spec_path + ("templates", i)
        name = clip(t["name"]) if isinstance(t.get("name"), str) else f"templates[{i}]"
        if any(isinstance(t.get(k), dict) for k in _ARGO_POD_TEMPLATES):
            patches.append(
                (path + ("podSpecPatch",), t.get("podSpecPatch"), f"the pod of template '{name}' was", {path})
            )
        resource = t.get("resource")
        manifest = resource.get("manifest") if isinstance(resource, dict) else None
        found = _asked_in_text(manifest) if isinstance(manifest, str) else None
        if found is None:
            continue
        asked, inner = found
        made = "an object"
        if isinstance(inner, dict) and isinstance(inner.get("kind"), str):
            meta = inner.get("metadata")
            named = meta.get("name") if isinstance(meta, dict) else None
            made = clip(inner["kind"]) + (f" '{clip(named)}'" if isinstance(named, str) else "")
        hits.append(
            Hit(
                path + ("resource", "manifest"),
                f"asks for {asked} but its pods were not judged: created by the resource manifest of template '{name}'",
                detail=f"{obj.ref.display()}: template '{name}' creates {made} from resource.manifest, which asks "
                f"for {asked}; the manifest is a string Argo applies at run time, so no rule judged the pods it "
                "makes (memory limits, QoS, /dev/shm, priority): lint the manifest as a file of its own.",
            )
        )
    unknown: list[str] = []  # the templates whose podSpecPatch is a parameter, unknown until run time
    for path, patch, whose, patched in patches:
        if not patched or patched <= judged_with or not isinstance(patch, str):
            continue  # no pod, or judged as accelerator pods already
        found = _asked_in_text(patch)
        if found is None:
            if "{{" in patch:
                unknown.append(whose)
            continue
        hits.append(
            Hit(
                path,
                f"podSpecPatch asks for {found[0]}: {whose} judged without it",
                detail=f"{obj.ref.display()}: the podSpecPatch at {render_path(path)} asks for {found[0]}, but Argo "
                f"applies it at run time (often templated), so {whose} judged as written, without the "
                "accelerator (priority, QoS and memory rules judge a GPU pod more strictly): ask for it in the "
                "container's resources.",
            )
        )
    if unknown:
        for path, asked in _parameter_accelerators(spec, spec_path):
            hits.append(
                Hit(
                    path,
                    f"asks for {asked} through a podSpecPatch set at run time: {unknown[0]} judged without it",
                    detail=f"{obj.ref.display()}: the workflow parameter at {render_path(path)} gives a pipeline "
                    f"component {asked} (Kubeflow Pipelines' resources.accelerator), which its driver writes into "
                    f"a podSpecPatch at run time; {unknown[0]} judged as written, without the accelerator "
                    "(priority, QoS and memory rules judge a GPU pod more strictly): set the component's memory "
                    "and cpu requests and limits, and its priority, in the pipeline.",
                )
            )
            break
    return hits


def _fragment_hits(obj: Any, templates: list) -> list[Hit]:
    """A partial pod template (no containers, or an app container without an image: a kustomize patch,
    Spark's driver or executor template) that asks for an accelerator: the rules about missing fields
    leave it to what completes it, so the accelerator is said here, at the field that asks for it."""
    hits: list[Hit] = []
    for tpl in templates:
        if tpl.broken or not is_fragment(tpl) or not is_accelerator_template(tpl):
            continue
        found = next(
            (
                (c.path + ("resources", part, name), name, c)
                for c in tpl.all_containers
                for part in ("limits", "requests")
                for name in _mapping(_mapping(c.data.get("resources")).get(part))
                if isinstance(name, str) and is_accelerator_resource(name)
            ),
            None,
        )
        if found is None:
            continue  # a DRA claim: the claim's findings say what it holds
        path, resource, c = found
        lacking = next((x for x in tpl.all_containers if not x.data.get("image")), None)
        why = f"{lacking.describe()} has no image" if lacking is not None else "it has no containers"
        hits.append(
            Hit(
                path,
                f"asks for {resource} in a partial pod template ({why}): its pod was not fully judged",
                container=c.name,
                detail=f"{obj.ref.display()}: the pod template at {render_path(tpl.path) or 'the root'} asks for "
                f"{resource} but {why}, so it is a fragment another tool completes (a kustomize base, Spark's "
                "driver or executor pod template, an operator); the rules about missing fields (memory limits, "
                "QoS, priority, backoff) left it to what completes it: lint the completed pod.",
            )
        )
    return hits


def _unbuilt(obj: Any, templates: list) -> list[Hit]:
    """The pods a controller makes beside the ones built, which could not be built (a KServe multi-node
    predictor's workers, of a runtime not among the inputs): (path, message, why) in the template's cache."""
    return [
        Hit(found[0], found[1], detail=f"{obj.ref.display()}: {found[2]}")
        for found in (t.cache.get("unjudged") for t in templates if not t.broken)
        if found is not None
    ]


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    if (obj.group, obj.kind) in _NOT_ASKING:
        return None
    argo = _ARGO.get((obj.group, obj.kind))
    embedded = _argo_hits(unit, argo) if argo is not None else []
    templates = unit.templates()
    if any(not t.broken for t in templates):
        return embedded + _fragment_hits(obj, templates) + _unbuilt(obj, templates) or None
    found = _asked(obj.data)
    if found is None and not templates and kind_info(obj) is None:
        found = _asked_by_value(obj.data, obj.group in _NODE_TYPE_GROUPS)
    profiled = _NAMED_PROFILES.get((obj.group, obj.kind))
    if found is None and profiled is not None and not templates:
        value = dig(obj.data, *profiled[0])
        if isinstance(value, str) and _ACCELERATOR_WORDS.search(value) and profiled[2].fullmatch(value) is None:
            return [
                Hit(
                    profiled[0],
                    f"asks for an accelerator (resource profile {clip(value)}) but makes no pod: not <name>:<count>",
                    detail=f"{obj.ref.display()}: " + profiled[3].format(value=clip(value)) + "; no rule judged its "
                    "pods (memory limits, QoS, /dev/shm, priority).",
                )
            ]
        if isinstance(value, str) and _ACCELERATOR_WORDS.search(value):
            name = value.partition(":")[0]
            return [
                Hit(
                    profiled[0],
                    f"asks for an accelerator (resource profile {clip(value)}) but its pods were not judged: "
                    "profile unknown",
                    detail=f"{obj.ref.display()}: " + profiled[1].format(name=clip(name)) + "; no rule judged its pods "
                    "(memory limits, QoS, /dev/shm, priority).",
                )
            ]
    generated = _GENERATED.get((obj.group, obj.kind))
    if generated is not None and not templates and (found is None or generated[1]):
        paths, _, message, why = generated
        if found is not None:
            path = found[0]
        else:
            path = next((p for p in paths if dig(obj.data, *p) is not None), ("spec",))
        return [Hit(path, message, detail=f"{obj.ref.display()}: {why}")]
    kind = qualified_kind(obj)
    elsewhere = _PODS_ELSEWHERE.get((obj.group, obj.kind))
    if templates:
        why = "its pod templates have fields of the wrong type (see the parse errors)"
        short = "pod templates unreadable"
    elif elsewhere is not None:
        ref = dig(obj.data, *elsewhere[0])
        named = f" '{clip(ref)}'" if isinstance(ref, str) and ref else ""
        why = (
            f"its pods are made from the {elsewhere[1]}{named} it names ({'.'.join(elsewhere[0])}), not in this object"
        )
        short = f"made from {elsewhere[1]}{named}"
    elif kind_info(obj) is None:
        why = "kubelint-ml does not know how this kind makes its pods, and found nothing shaped like a pod template"
        short = f"kind {kind} unknown"
    else:
        why = f"no pod template where a {kind} has one"
        short = "no pod template found"
    if ctx is not None and getattr(ctx, "wants_notes", False) and not templates:
        ctx.note(f"{obj.file}: {obj.ref.display()}: {kind} skipped: {why}")
    if found is None:
        return embedded or None
    path, resource = found
    return embedded + [
        Hit(
            path,
            f"asks for {resource} but its pods were not judged: {short}",
            detail=f"{obj.ref.display()} asks for {resource} at {render_path(path)}, but {why}; no rule judged its "
            "pods (memory limits, QoS, /dev/shm, priority).",
        )
    ]
