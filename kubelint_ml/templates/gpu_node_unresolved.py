"""An accelerator pod whose node type neither the profile nor the built-in
catalog resolves: the share checks cannot run for it."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.input.objects import dig
from kubelint_ml.k8s.dra import ANY_GPU
from kubelint_ml.k8s.nodes import NEURON_RESOURCES, catalog
from kubelint_ml.templates._accel import placement
from kubelint_ml.templates._common import accelerators, uncounted_accelerators

UNIT = "podTemplate"
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def _where(tpl) -> tuple:
    """The node selection that did not resolve, or where a nodeSelector would go."""
    spec = tpl.spec
    if isinstance(spec.get("nodeSelector"), dict) and spec["nodeSelector"]:
        return tpl.spec_path + ("nodeSelector",)
    affinity = spec.get("affinity")
    if isinstance(affinity, dict) and isinstance(affinity.get("nodeAffinity"), dict):
        return tpl.spec_path + ("affinity", "nodeAffinity")
    return tpl.spec_path + ("nodeSelector",)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    accel = accelerators(tpl)
    if not accel:
        raise SkipUnit(
            uncounted_accelerators(tpl) or "no counted accelerator devices: the share check does not judge them"
        )
    place, why = placement(tpl, ctx)
    if place is not None:
        return None
    devices = ", ".join(f"{n} {'GPUs (DRA claims)' if r == ANY_GPU else r}" for r, n in accel.items())
    in_catalog = {n.gpu_resource for n in catalog().values()}
    if in_catalog & NEURON_RESOURCES:  # Neuron nodes offer their cores and devices under every name
        in_catalog |= NEURON_RESOURCES
    missing = [r for r in accel if r not in in_catalog and r != ANY_GPU]  # (a DRA GPU: the node's own)
    if accel and len(missing) == len(accel):
        # The real reason comes first: no node type in the catalog offers this accelerator at all.
        first = missing[0]
        family = _FAMILIES.get(first, first)
        chosen = _selection(tpl.spec)
        on = f" (the pod selects {chosen})" if chosen else ""
        short = f"no {family} node types in the built-in catalog: GPU-share checks skipped for {devices}"
        message = (
            f"{tpl.describe()}: accelerator pod ({devices}): the built-in catalog has no {family} node types, "
            f"so its node type cannot be resolved{on}; the GPU-share checks did not run. Describe the node "
            f"pool (labels, gpus, gpuResource: {first}, memory, cpu) under profile.nodePools in the config"
        )
    else:
        message = (
            f"{tpl.describe()}: accelerator pod ({devices}) on a node type that cannot be resolved: {why}; "
            "the GPU-share checks did not run. Pin the node type (e.g. nodeSelector "
            "node.kubernetes.io/instance-type) or describe the node pool under profile.nodePools in the config"
        )
        short = f"node type unknown for {devices}: GPU-share checks skipped"
    return [Hit(_where(tpl), short, detail=message)]


_FAMILIES = {
    "google.com/tpu": "TPU",
    "aws.amazon.com/neuron": "AWS Neuron",
    "aws.amazon.com/neuroncore": "AWS Neuron",
    "aws.amazon.com/neurondevice": "AWS Neuron",
    "habana.ai/gaudi": "Gaudi",
    "amd.com/gpu": "AMD GPU",
}


def _selection(spec: dict) -> str:
    """The pod's node selection as written: nodeSelector pairs and every value of required affinity terms."""
    parts = []
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        parts += [f"{k}={v}" for k, v in selector.items()]
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    for term in terms if isinstance(terms, list) else ():
        for expr in (term.get("matchExpressions") if isinstance(term, dict) else None) or ():
            if not isinstance(expr, dict) or expr.get("operator") != "In":
                continue
            raw = expr.get("values")
            values: list = raw if isinstance(raw, list) else []
            parts.append(
                f"{expr.get('key')}={values[0]}"
                if len(values) == 1
                else f"{expr.get('key')} in ({', '.join(map(str, values))})"
            )
    return ", ".join(parts)
