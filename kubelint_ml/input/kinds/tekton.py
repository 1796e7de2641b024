"""Tekton Pipelines (``tekton.dev/v1`` and ``v1beta1`` Task, ClusterTask, TaskRun, Pipeline,
PipelineRun; tektoncd/pipeline v1.15, ``pkg/apis/pipeline/v1`` at 3ee1745a): each embedded task spec is one pod,
its steps merged over the ``stepTemplate`` as ``pkg/apis/pipeline/v1/merge.go`` does; a step that runs a
StepAction (``ref``) has that StepAction's image, its resources the step's own."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, listed, none, text
from kubelint_ml.input.objects import K8sObject, dig


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


def _tekton_task(obj: K8sObject, path: tuple, role: str, shared: bool) -> Pod | None:
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
        ref = step.get("ref")
        if isinstance(ref, dict) and not data.get("image"):
            # A step that runs a StepAction gets its image, command, script, env and volume mounts from it
            # (Tekton refuses a step with both ref and image); its computeResources stay the step's.
            named = ref.get("name")
            data["image"] = f"the image of StepAction {named}" if isinstance(named, str) else "a StepAction's image"
        data["resources"] = _merge_resources(t_res, step.get(key))
        containers.append((data, spath))
        renames.append((spath + ("resources",), spath + (key,)))
    for i, sc in enumerate(spec.get("sidecars") or [] if isinstance(spec.get("sidecars"), list) else []):
        scpath = path + ("sidecars", i)
        # a v1 Sidecar's resources are computeResources (v1beta1: resources), as a step's
        if isinstance(sc, dict) and _resources_key(sc, v1) == "computeResources":
            if "computeResources" in sc:
                sc = {**sc, "resources": sc["computeResources"]}
            renames.append((scpath + ("resources",), scpath + ("computeResources",)))
        containers.append((sc, scpath))
    pod = Pod(
        path,
        {},
        role,
        1,
        containers,
        volumes=listed(spec.get("volumes"), path + ("volumes",)),
        renames=renames,
        shared=shared,
    )
    # A Task's steps are the pod's containers as written (the runs' task-level computeResources
    # and stepSpecs are not modelled): a Task that sets no resources is judged with none.
    pod.cache["resources_its_own"] = True
    return pod


def _tekton(obj: K8sObject) -> list[Pod]:
    kind = obj.kind
    found: list[Pod | None] = []
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
                    name = text(t.get("name"), f"{section}[{i}]")
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
            tpl.renames.append((tpl.spec_path + ("priorityClassName",), where + ("priorityClassName",)))
    return out


KINDS: dict[tuple[str, str], KindInfo] = {
    ("tekton.dev", kind): KindInfo(none, False, _tekton)
    for kind in ("Task", "ClusterTask", "TaskRun", "Pipeline", "PipelineRun")
}
