"""Argo Workflows (``argoproj.io/v1alpha1`` Workflow, WorkflowTemplate, ClusterWorkflowTemplate,
CronWorkflow; argoproj/argo-workflows v4.1, ``pkg/apis/workflow/v1alpha1`` at f016ad89): each
template with a ``container``, ``script`` or ``containerSet`` is one pod; the workflow's pod fields
are its defaults (docs/kinds.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, listed, none, text
from kubelint_ml.input.objects import K8sObject, dig

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

# Template fields that are pod spec fields under another name (Argo 4.0): (template field, pod
# field, workflow field).
_ARGO_RENAMED = (("podResources", "resources", "podResources"), ("resourceClaims", "resourceClaims", "resourceClaims"))

# Fields Argo adds to the Container it embeds (pkg/apis/workflow/v1alpha1), where it embeds it: not
# fields of the pod's container. A plain ``container`` has none.
_SCRIPT_FIELDS = frozenset({"source"})  # ScriptTemplate (``script``)
_NODE_FIELDS = frozenset({"dependencies"})  # ContainerNode (``containerSet.containers``)
_USER_FIELDS = frozenset({"mirrorVolumeMounts"})  # UserContainer (``initContainers``, ``sidecars``)


def _containers(node: Any, path: tuple, argo_fields: frozenset[str]) -> list[tuple[Any, tuple]]:
    """The containers listed at ``node``, each without the fields Argo reads itself."""
    return [(_pod_container(c, argo_fields), p) for c, p in listed(node, path)]


def _set_containers(container_set: dict, path: tuple) -> list[tuple[Any, tuple]]:
    """A ``containerSet``'s containers: the set's ``volumeMounts`` are each one's too
    (``ContainerSetTemplate.GetContainers``)."""
    out = _containers(container_set.get("containers"), path + ("containers",), _NODE_FIELDS)
    mounts = container_set.get("volumeMounts")
    if not isinstance(mounts, list) or not mounts:
        return out
    return [
        ({**c, "volumeMounts": [*(c["volumeMounts"] if isinstance(c.get("volumeMounts"), list) else []), *mounts]}, p)
        if isinstance(c, dict)
        else (c, p)
        for c, p in out
    ]


def _pod_container(c: Any, argo_fields: frozenset[str]) -> Any:
    if not isinstance(c, dict) or argo_fields.isdisjoint(c):
        return c
    return {k: v for k, v in c.items() if k not in argo_fields}


def _pod_fields(
    t: dict, wf: dict, path: tuple, prefix: tuple
) -> tuple[dict, list[tuple[tuple, tuple]], list[tuple[tuple, tuple]], list[tuple[tuple, str]]]:
    """The pod spec fields of template ``t`` (at ``path``) and where each is written: the template's
    own, else ``templateDefaults``' (merged into every template), else the workflow's default. Of a
    ``nodeSelector`` in both the template and ``templateDefaults``, the keys of both (a strategic merge,
    the template's value first); of the other structured fields, the template's. A field set to Go's
    zero value is unset (:func:`_given`).

    Also where a fix sets each field: the template's own (the template's value is taken over a
    default's, so the other templates keep theirs), and the fields no fix may set there (the
    workflow's pod-level resources, which a template's own would replace whole)."""
    spec: dict = {}
    renames: list[tuple[tuple, tuple]] = []
    fix_renames: list[tuple[tuple, tuple]] = []
    foreign: list[tuple[tuple, str]] = []
    defaults: Any = wf.get("templateDefaults") if isinstance(wf.get("templateDefaults"), dict) else {}
    fields = [(f, f, wf_f) for f, wf_f in _ARGO_POD_FIELDS.items()] + list(_ARGO_RENAMED)
    for field_name, pod_field, wf_field in fields:
        if _given(t.get(field_name)):
            value = t[field_name]
            if field_name == "nodeSelector" and isinstance(value, dict) and isinstance(defaults.get(field_name), dict):
                value = {**defaults[field_name], **value}
            spec[pod_field] = value
            if pod_field != field_name:
                renames.append((path + (pod_field,), path + (field_name,)))
            continue
        own = (path + (pod_field,), path + (field_name,))
        if pod_field != field_name:
            fix_renames.append(own)
        if _given(defaults.get(field_name)):
            spec[pod_field] = defaults[field_name]
            renames.append((path + (pod_field,), prefix + ("templateDefaults", field_name)))
        elif _given(wf.get(wf_field)):
            spec[pod_field] = wf[wf_field]
            renames.append((path + (pod_field,), prefix + (wf_field,)))
            if pod_field == "resources":
                foreign.append((path + (pod_field,), f"the pod-level resources are the workflow's {wf_field}"))
    if "priorityClassName" not in spec and "priorityClassName" in wf:  # the older spelling
        spec["priorityClassName"] = wf["priorityClassName"]
        renames.append((path + ("priorityClassName",), prefix + ("priorityClassName",)))
    fix_renames += [r for r in renames if r[1][: len(path)] == path]  # the template's own renamed fields
    return spec, renames, fix_renames, foreign


# The lists of a Container that a strategic merge merges by key (k8s.io/api core/v1 patchMergeKey);
# the others (command, args...) the patch replaces.
_MERGE_KEYS = {"env": "name", "volumeMounts": "mountPath", "ports": "containerPort", "envFrom": None}


def _merged(default: Any, own: Any) -> Any:
    """``own`` strategic-merged over ``default``, as Argo merges ``templateDefaults`` into a template
    (``mergedTemplateDefaultsInto``: ``strategicpatch.StrategicMergePatch(defaults, template)``): maps
    key by key, a Container's keyed lists by their merge key, anything else ``own``'s."""
    if not isinstance(default, dict) or not isinstance(own, dict):
        return own
    out = dict(default)
    for key, value in own.items():
        base = out.get(key)
        merge_key = _MERGE_KEYS.get(key) if isinstance(key, str) else None
        if isinstance(value, dict) and isinstance(base, dict):
            out[key] = _merged(base, value)
        elif merge_key and isinstance(value, list) and isinstance(base, list):
            keys = {item.get(merge_key) for item in value if isinstance(item, dict)}
            out[key] = [*value, *(b for b in base if not (isinstance(b, dict) and b.get(merge_key) in keys))]
        else:
            out[key] = value
    return out


def _with_defaults(t: dict, kind: str, defaults: dict, path: tuple, prefix: tuple) -> tuple[dict, list]:
    """Template ``t``'s ``container`` or ``script`` with the same type's ``templateDefaults`` merged in,
    and the renames of the fields it takes from them whole (findings there point at the default)."""
    own = t[kind]
    default = defaults.get(kind)
    if not isinstance(default, dict) or not default:
        return own, []
    renames: list[tuple[tuple, tuple]] = []
    stack: list[tuple[dict, Any, tuple]] = [(default, own, (kind,))]
    while stack:  # the maps' keys only the default has, however deep (resources.requests.memory)
        d, o, at = stack.pop()
        for key, value in d.items():
            if not isinstance(key, str):
                continue
            if key not in o:
                renames.append((path + at + (key,), prefix + ("templateDefaults", *at, key)))
            elif isinstance(value, dict) and isinstance(o[key], dict):
                stack.append((value, o[key], at + (key,)))
    return _merged(default, own), renames


def _main(container: dict) -> dict:
    """A ``container`` or ``script`` template's container, named ``main`` where it has no name of its
    own (Argo names it so: workflow/controller/workflowpod.go, ``common.MainContainerName``; the
    Kubeflow Pipelines compiler writes ``name: ""``)."""
    name = container.get("name")
    return container if isinstance(name, str) and name else {**container, "name": "main"}


def _given(value: Any) -> bool:
    """Set, as Argo reads a field: Go's zero values (an empty string, false, an empty map or list) are
    left out when templates are merged, and the controller takes an empty field as unset."""
    return (
        value is not None and value is not False and value != "" and not (isinstance(value, (dict, list)) and not value)
    )


def _argo(prefix: tuple) -> Callable[[K8sObject], list[Pod]]:
    def build(obj: K8sObject) -> list[Pod]:
        wf = dig(obj.data, *prefix)
        templates = wf.get("templates") if isinstance(wf, dict) else None
        if not isinstance(templates, list):
            return []
        defaults: Any = wf.get("templateDefaults") if isinstance(wf.get("templateDefaults"), dict) else {}
        out = []
        for i, t in enumerate(templates):
            if not isinstance(t, dict):
                continue
            path = prefix + ("templates", i)
            containers: list[tuple[Any, tuple]] = []
            inherited: list[tuple[tuple, tuple]] = []
            if isinstance(t.get("container"), dict):
                container, inherited = _with_defaults(t, "container", defaults, path, prefix)
                containers.append((_main(container), path + ("container",)))
            elif isinstance(t.get("script"), dict):
                script, inherited = _with_defaults(t, "script", defaults, path, prefix)
                containers.append((_main(_pod_container(script, _SCRIPT_FIELDS)), path + ("script",)))
            elif isinstance(t.get("containerSet"), dict):
                containers += _set_containers(t["containerSet"], path + ("containerSet",))
            else:
                continue  # steps, dag, resource, suspend, http, plugin: no pod of their own
            containers += _containers(t.get("sidecars"), path + ("sidecars",), _USER_FIELDS)
            spec, renames, fix_renames, foreign = _pod_fields(t, wf, path, prefix)
            renames += inherited
            meta: Any = t.get("metadata") if isinstance(t.get("metadata"), dict) else {}
            pod_meta: Any = wf.get("podMetadata") if isinstance(wf.get("podMetadata"), dict) else {}
            merged = {
                k: {**(pod_meta.get(k) or {}), **(meta.get(k) or {})}
                for k in ("labels", "annotations")
                if isinstance(pod_meta.get(k) or {}, dict) and isinstance(meta.get(k) or {}, dict)
            }
            name = text(t.get("name"), f"templates[{i}]")
            pod = Pod(
                path,
                spec,
                name,
                1,
                containers,
                init=_containers(t.get("initContainers"), path + ("initContainers",), _USER_FIELDS),
                volumes=listed(wf.get("volumes"), prefix + ("volumes",))
                + listed(t.get("volumes"), path + ("volumes",)),
                metadata=merged,
                renames=renames,
                shared=obj.kind in ("WorkflowTemplate", "ClusterWorkflowTemplate"),
            )
            # Its containers and volumes are written as the pod's (Argo's own fields left out) and its
            # spec holds pod fields only: unknown-field reads them even where fields are inherited.
            pod.cache["fields_as_written"] = True
            # A WorkflowTemplate's containers are the pods' as written: the Workflows that run it do
            # not set their resources (a templateDefaults aside; unlike a ServingRuntime's services),
            # so one that sets none is judged with none.
            pod.cache["resources_its_own"] = True
            if len(fix_renames) != len(renames):  # some field is a default's: a fix sets the template's own
                pod.cache["fix_renames"] = tuple(sorted(set(fix_renames), key=lambda r: -len(r[0])))
            if foreign:
                pod.cache["foreign"] = foreign
            out.append(pod)
        return out

    return build


KINDS: dict[tuple[str, str], KindInfo] = {
    ("argoproj.io", "CronWorkflow"): KindInfo(none, False, _argo(("spec", "workflowSpec"))),
}
for _kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"):
    KINDS[("argoproj.io", _kind)] = KindInfo(none, False, _argo(("spec",)))


def workflow_with_template(obj: K8sObject, name: str, template: dict) -> list[Pod]:
    """The pods of a Workflow or CronWorkflow that runs the (Cluster)WorkflowTemplate ``template``
    (its data) by ``workflowTemplateRef``: the template's spec with the workflow's own fields over it
    (Argo's JoinWorkflowSpec: the workflow's spec merged over the template's; its pod fields such as
    ``podPriorityClassName`` win). What comes from the template is found at ``workflowTemplateRef``,
    with no fix offered there (fix it in the template, or override it in the workflow)."""
    prefix = ("spec", "workflowSpec") if obj.kind == "CronWorkflow" else ("spec",)
    own = dig(obj.data, *prefix)
    spec = template.get("spec")
    if not isinstance(own, dict) or not isinstance(spec, dict):
        return []
    merged = {**spec, **{k: v for k, v in own.items() if k != "workflowTemplateRef"}}
    data = dict(obj.data)
    if obj.kind == "CronWorkflow":
        data["spec"] = {**data["spec"], "workflowSpec": merged}
    else:
        data["spec"] = merged
    view = K8sObject(data, obj.root, obj.base, obj.ref, obj.file, obj.document)
    ref = prefix + ("workflowTemplateRef",)
    pods = _argo(prefix)(view)
    for pod in pods:
        # the workflow's own fields keep their place; the template's are found at the reference
        pod.renames = [(p, t if dig(obj.data, *t) is not None else ref) for p, t in pod.renames]
        pod.renames.append((prefix, ref))
        kind = template.get("kind") if isinstance(template.get("kind"), str) else "WorkflowTemplate"
        pod.cache["assumed"] = f"as Argo runs the {kind} {name}"
        pod.cache["run_of"] = (kind, name, ref)
        pod.cache["foreign"] = [(prefix + ("templates",), f"the template's: fix it in {name}, or override it here")]
        pod.shared = False
    return pods
