"""Argo Workflows (``argoproj.io/v1alpha1`` Workflow, WorkflowTemplate, ClusterWorkflowTemplate,
CronWorkflow; argoproj/argo-workflows ``pkg/apis/workflow/v1alpha1``): each template with a
``container``, ``script`` or ``containerSet`` is one pod; the workflow's pod fields are its
defaults (docs/kinds.md)."""

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


def _pod_fields(t: dict, wf: dict, path: tuple, prefix: tuple) -> tuple[dict, list[tuple[tuple, tuple]]]:
    """The pod spec fields of template ``t`` (at ``path``) and where each is written: the template's
    own, else ``templateDefaults``' (merged into every template), else the workflow's default. Of a
    ``nodeSelector`` in both the template and ``templateDefaults``, the keys of both (a strategic merge,
    the template's value first); of the other structured fields, the template's. A field set to Go's
    zero value is unset (:func:`_given`)."""
    spec: dict = {}
    renames: list[tuple[tuple, tuple]] = []
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
        elif _given(defaults.get(field_name)):
            spec[pod_field] = defaults[field_name]
            renames.append((path + (pod_field,), prefix + ("templateDefaults", field_name)))
        elif _given(wf.get(wf_field)):
            spec[pod_field] = wf[wf_field]
            renames.append((path + (pod_field,), prefix + (wf_field,)))
    if "priorityClassName" not in spec and "priorityClassName" in wf:  # the older spelling
        spec["priorityClassName"] = wf["priorityClassName"]
        renames.append((path + ("priorityClassName",), prefix + ("priorityClassName",)))
    return spec, renames


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
        out = []
        for i, t in enumerate(templates):
            if not isinstance(t, dict):
                continue
            path = prefix + ("templates", i)
            containers: list[tuple[Any, tuple]] = []
            if isinstance(t.get("container"), dict):
                containers.append(({"name": "main", **t["container"]}, path + ("container",)))
            elif isinstance(t.get("script"), dict):
                script = _pod_container(t["script"], _SCRIPT_FIELDS)
                containers.append(({"name": "main", **script}, path + ("script",)))
            elif isinstance(t.get("containerSet"), dict):
                containers += _set_containers(t["containerSet"], path + ("containerSet",))
            else:
                continue  # steps, dag, resource, suspend, http, plugin: no pod of their own
            containers += _containers(t.get("sidecars"), path + ("sidecars",), _USER_FIELDS)
            spec, renames = _pod_fields(t, wf, path, prefix)
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
            out.append(pod)
        return out

    return build


KINDS: dict[tuple[str, str], KindInfo] = {
    ("argoproj.io", "CronWorkflow"): KindInfo(none, False, _argo(("spec", "workflowSpec"))),
}
for _kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"):
    KINDS[("argoproj.io", _kind)] = KindInfo(none, False, _argo(("spec",)))
