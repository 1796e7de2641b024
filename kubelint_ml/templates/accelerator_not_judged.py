"""A document that asks for an accelerator, whose pods kubelint-ml could not build: said, never
passed in silence."""

from __future__ import annotations

import re
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.loader import render_path
from kubelint_ml.input.objects import clip, dig
from kubelint_ml.input.workloads import NO_TEMPLATES, kind_info, qualified_kind
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.lazyre import LazyPattern

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
}
# Kinds that ask for accelerators through a name the cluster defines (a KubeAI resource profile):
# the field, and what to do about it.
_NAMED_PROFILES = {
    ("kubeai.org", "Model"): (
        ("spec", "resourceProfile"),
        "its resource profile {name!r} is not one the KubeAI chart ships; give it in the config "
        "(kinds.kubeai.resourceProfiles) so its pods can be built",
    ),
}
_ACCELERATOR_WORDS = LazyPattern(r"gpu|tpu|neuron|trainium|inferentia|gaudi|habana|mi[0-9]{3}", re.I)


def _asked(root: Any) -> tuple[tuple, str] | None:
    """The first accelerator resource named as a key (``nvidia.com/gpu: 8``) anywhere in the object,
    or as the name of a Spark-style ``{name: nvidia.com/gpu, quantity: 1}``: its path and name."""
    stack: list[tuple[Any, tuple]] = [(root, ())]
    seen = 0
    while stack and seen < _MOST_NODES:
        node, path = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for key in node:
                if isinstance(key, str) and "/" in key and is_accelerator_resource(key):
                    return path + (key,), key
            name = node.get("name")
            if isinstance(name, str) and "/" in name and "quantity" in node and is_accelerator_resource(name):
                return path + ("name",), name
            for key in reversed(list(node)):
                value = node[key]
                if isinstance(value, (dict, list)):
                    stack.append((value, path + (key,)))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    stack.append((node[i], path + (i,)))
    return None


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    if (obj.group, obj.kind) in _NOT_ASKING:
        return None
    templates = unit.templates()
    if any(not t.broken for t in templates):
        return None
    found = _asked(obj.data)
    profiled = _NAMED_PROFILES.get((obj.group, obj.kind))
    if found is None and profiled is not None and not templates:
        value = dig(obj.data, *profiled[0])
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
        return None
    path, resource = found
    return [
        Hit(
            path,
            f"asks for {resource} but its pods were not judged: {short}",
            detail=f"{obj.ref.display()} asks for {resource} at {render_path(path)}, but {why}; no rule judged its "
            "pods (memory limits, QoS, /dev/shm, priority).",
        )
    ]
