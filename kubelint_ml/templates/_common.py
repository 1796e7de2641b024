"""Helpers shared by check templates."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import Any

from kubelint_ml.engine.api import gpu_share_annotated, is_accelerator_template, template_devices, template_placeholders
from kubelint_ml.input.objects import dig
from kubelint_ml.input.workloads import ContainerView, PodTemplate, VolumeView, is_runtime_trainer_job
from kubelint_ml.k8s.dra import ANY_GPU
from kubelint_ml.k8s.nodes import NEURON_RESOURCES, neuron_on_node
from kubelint_ml.k8s.quantity import (
    DECIMAL_SI,
    Quantity,
    QuantityError,
    format_bytes,
    format_cpu,
    is_placeholder,
    parse_manifest_quantity,
)
from kubelint_ml.k8s.quantity import PLACEHOLDER as PLACEHOLDER  # the templates' name for it
from kubelint_ml.k8s.resources import (
    NEWEST_GATES,
    PodLevelGates,
    accelerator_requests,
    container_requests_limits,
    is_extended_resource,
    pod_level_resources,
)
from kubelint_ml.k8s.signals import container_signals, signals_for_template
from kubelint_ml.records import Record

LIMITRANGE_NOTE = "unless a namespace LimitRange supplies a default"


class QuantityField(Record):
    path: tuple  # from the object's root
    resource: str  # "memory", "nvidia.com/gpu", or "sizeLimit"
    part: str  # "requests" | "limits" | "sizeLimit"
    raw: Any
    container: ContainerView | None  # None for pod-level values and volumes
    where: str  # human description: "container 'trainer'", "pod-level resources", "emptyDir volume 'shm'"
    parsed: Quantity | None
    error: str | None
    placeholder: bool  # an unrendered variable ($GPUS, {{inputs.parameters.mem}}): not judged
    empty: bool  # YAML null, which Kubernetes reads as 0
    __slots__ = _fields = (
        "path",
        "resource",
        "part",
        "raw",
        "container",
        "where",
        "parsed",
        "error",
        "placeholder",
        "empty",
    )

    def __init__(
        self,
        path: tuple,
        resource: str,
        part: str,
        raw: Any,
        container: ContainerView | None,
        where: str,
        parsed: Quantity | None,
        error: str | None,
        placeholder: bool = False,
        empty: bool = False,
    ) -> None:
        self.path = path
        self.resource = resource
        self.part = part
        self.raw = raw
        self.container = container
        self.where = where
        self.parsed = parsed
        self.error = error
        self.placeholder = placeholder
        self.empty = empty


_ZERO = Quantity(Fraction(0), DECIMAL_SI)


def _field(
    path: tuple, resource: str, part: str, raw: Any, container: ContainerView | None, where: str
) -> QuantityField:
    if raw is None:  # JSON null decodes to a zero Quantity
        return QuantityField(path, resource, part, raw, container, where, _ZERO, None, empty=True)
    if is_placeholder(raw):
        return QuantityField(path, resource, part, raw, container, where, None, None, placeholder=True)
    try:
        return QuantityField(path, resource, part, raw, container, where, parse_manifest_quantity(raw), None)
    except QuantityError as e:
        return QuantityField(path, resource, part, raw, container, where, None, str(e))


def _quantities(tpl: PodTemplate) -> Iterator[tuple[ContainerView | VolumeView | None, str, Any, Any]]:
    """``(owner, part, name, raw)`` of every resource quantity of a template: containers' requests and
    limits, pod-level ones (owner None) and emptyDir sizeLimits (owner the volume)."""
    for c in tpl.all_containers:
        for part in ("requests", "limits"):
            values = c.resources.get(part)
            if isinstance(values, dict):
                for name, raw in values.items():
                    yield c, part, name, raw
    pod_res = tpl.spec.get("resources")
    if isinstance(pod_res, dict):
        for part in ("requests", "limits"):
            values = pod_res.get(part)
            if isinstance(values, dict):
                for name, raw in values.items():
                    yield None, part, name, raw
    for v in tpl.volumes:
        ed = v.data.get("emptyDir")
        if isinstance(ed, dict) and ed.get("sizeLimit") is not None:
            yield v, "sizeLimit", "sizeLimit", ed["sizeLimit"]


def _container_field(c: ContainerView, part: str, name: Any, raw: Any) -> QuantityField:
    return _field(c.path + ("resources", part, name), str(name), part, raw, c, c.describe())


def quantity_fields(tpl: PodTemplate) -> list[QuantityField]:
    """Every resource quantity of a pod template, parsed once and cached."""
    found = tpl.cache.get("quantities")
    if found is not None:
        return found
    out: list[QuantityField] = []
    for owner, part, name, raw in _quantities(tpl):
        if isinstance(owner, ContainerView):
            out.append(_container_field(owner, part, name, raw))
        elif owner is None:
            out.append(
                _field(tpl.spec_path + ("resources", part, name), str(name), part, raw, None, "pod-level resources")
            )
        else:
            path = owner.path + ("emptyDir", "sizeLimit")
            out.append(_field(path, "sizeLimit", "sizeLimit", raw, None, f"emptyDir volume '{owner.name}'"))
    tpl.cache["quantities"] = out
    return out


def container_quantity(c: ContainerView, part: str, name: str) -> QuantityField | None:
    """The field ``resources.<part>.<name>`` of one container, parsed (None when absent)."""
    values = c.resources.get(part)
    if not isinstance(values, dict) or name not in values:
        return None
    return _container_field(c, part, name, values[name])


_TRAINING_RUNTIMES = ("TrainingRuntime", "ClusterTrainingRuntime")


def resources_unknown(tpl: PodTemplate) -> bool:
    """Resource rules stay quiet on a template whose resources are not known here.

    * Quantities that are invalid or unrendered placeholders: the API server
      would reject the first kind (invalid-quantity reports it); the second is
      a template whose real values are unknown.
    * The trainer job of a Kubeflow Trainer runtime (``TrainingRuntime``,
      ``ClusterTrainingRuntime``): each TrainJob that uses the runtime sets the
      ``node`` container's resources with ``spec.trainer.resourcesPerNode``
      (and may patch the pod template too). The initializer and launcher jobs
      get no resources from the TrainJob and are judged as written.
    * A partial template (:func:`is_fragment`): what it leaves out is set elsewhere.
    """
    return bool(why_resources_unknown(tpl))


def is_fragment(tpl: PodTemplate) -> bool:
    """A partial pod template: no containers at all, or an app container without an image.

    The API server would reject such a pod outright: it is a kustomize patch, or a
    template another tool completes (Spark's driver and executor templates). Rules
    about fields that are *missing* stay quiet on it, since what completes it sets them.
    """
    found = tpl.cache.get("fragment")
    if found is None:
        found = not tpl.containers or any(not c.data.get("image") for c in tpl.containers)
        tpl.cache["fragment"] = found
    return found


def why_resources_unknown(tpl: PodTemplate) -> str:
    """Why :func:`resources_unknown` holds ("" when it does not), for skip notes."""
    found = tpl.cache.get("resources-unknown")
    if found is None:
        if _trainer_job(tpl):
            found = "resources set by each TrainJob (spec.trainer.resourcesPerNode)"
        elif is_fragment(tpl):
            found = "a partial pod template (no containers, or one without an image): what completes it sets them"
        elif tpl.shared and not tpl.cache.get("resources_its_own") and not _sets_resources(tpl):
            found = (
                "a shared definition that sets no resources: the objects built from it set them (an "
                "LLMInferenceService over its LLMInferenceServiceConfig, an InferenceService over its ServingRuntime)"
            )
        elif _any_unjudgeable(tpl):
            found = "invalid or unrendered resource quantities"
        else:
            found = ""
        tpl.cache["resources-unknown"] = found
    return found


def _sets_resources(tpl: PodTemplate) -> bool:
    """Some container, or the pod, sets requests or limits."""
    pod = tpl.spec.get("resources")
    if isinstance(pod, dict) and any(pod.get(part) for part in ("requests", "limits")):
        return True
    return any(any(c.resources.get(part) for part in ("requests", "limits")) for c in tpl.all_containers)


def _any_unjudgeable(tpl: PodTemplate) -> bool:
    """Some quantity of the template is invalid, an unrendered placeholder or negative; judged by value,
    without building :func:`quantity_fields` (most templates have no such quantity). A count of an
    extended resource that is a placeholder is not one: the cpu, memory and storage are known. An
    accelerator's (``nvidia.com/gpu: $GPUS``) is asked for by the rules that need it
    (:func:`uncounted_accelerators`); another device's (``vpc.amazonaws.com/efa: PLACEHOLDER_NUM_EFA``)
    is read by no rule these quiet."""
    return any(
        not _judgeable(raw) and not (is_placeholder(raw) and is_extended_resource(str(name)))
        for _, _, name, raw in _quantities(tpl)
    )


def _judgeable(raw: Any) -> bool:
    """A valid, non-negative quantity and not a placeholder (null reads as 0); remembered by value."""
    key = (type(raw), raw)
    try:
        found = _JUDGEABLE.get(key)
    except TypeError:  # a mapping or a list: not a quantity
        return False
    if found is None:
        f = _field((), "", "", raw, None, "")
        found = f.error is None and not f.placeholder and (f.parsed is None or f.parsed.value >= 0)
        if len(_JUDGEABLE) >= 1024:
            _JUDGEABLE.clear()
        _JUDGEABLE[key] = found
    return found


_JUDGEABLE: dict[tuple, bool] = {}


def _trainer_job(tpl: PodTemplate) -> bool:
    """Whether the template is that of the replicated job a runtime runs the trainer in."""
    if tpl.obj.kind not in _TRAINING_RUNTIMES or tpl.obj.group != "trainer.kubeflow.org" or len(tpl.path) < 3:
        return False
    return is_runtime_trainer_job(dig(tpl.obj.data, *tpl.path[:-3]))


def accelerator_note(tpl: PodTemplate) -> str:
    """`` (GPU pod)`` or `` (accelerator pod)`` for a pod that uses accelerators, else ""."""
    if not is_accelerator_template(tpl):
        return ""
    names = [*accelerators(tpl), *_placeholder_accelerators(tpl)]  # counts or placeholders
    # a MIG instance (nvidia.com/mig-<profile>) is a slice of a GPU; a KAI GPU share is by annotation
    gpu = any("gpu" in r or r.startswith("nvidia.com/mig-") for r in names) or (not names and gpu_share_annotated(tpl))
    return " (GPU pod)" if gpu else " (accelerator pod)"


def show(resource: str, value: Fraction) -> str:
    if resource == "cpu":
        return format_cpu(value)
    if resource in ("memory", "ephemeral-storage", "sizeLimit") or resource.startswith("hugepages-"):
        return format_bytes(value)
    return str(value)  # a Fraction prints "3" or "3/2"


def raw_text(raw: Any) -> str:
    """A value as written, quoted, cut at 60 characters."""
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def requests_limits(c: ContainerView) -> tuple[dict, dict]:
    """``container_requests_limits(c.data)``, computed once per container for all rules (do not mutate)."""
    found = c.cache.get("requests_limits")
    if found is None:
        found = c.cache["requests_limits"] = container_requests_limits(c.data)
    return found


def gates(tpl: PodTemplate) -> PodLevelGates:
    """The pod-level resources gates of the profile's Kubernetes version (``pod_level_gates``)."""
    return tpl.cache.get("gates") or NEWEST_GATES


def pod_level(tpl: PodTemplate) -> tuple[dict, dict] | None:
    """``pod_level_resources(tpl.spec)`` as the profile's Kubernetes version has it (None before
    1.34: the API server drops the field), computed once per template (do not mutate)."""
    if "pod_level_resources" not in tpl.cache:  # None is an answer too
        enabled, _, defaulting = gates(tpl)
        tpl.cache["pod_level_resources"] = pod_level_resources(tpl.spec, enabled=enabled, limit_defaulting=defaulting)
    return tpl.cache["pod_level_resources"]


# Kinds whose pod template the API server validates as written, before any pod exists (PodTemplateSpec
# validation: no pod defaulting, which ``SetDefaults_Pod`` keeps to Pods); a JobSet's and a Trainer
# runtime's become Jobs. Other kinds' pods are judged as created: defaulted.
_TEMPLATE_VALIDATED = {
    "apps": ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"),
    "batch": ("Job", "CronJob"),
    "": ("ReplicationController", "PodTemplate"),
    "jobset.x-k8s.io": ("JobSet",),
    "trainer.kubeflow.org": ("TrainingRuntime", "ClusterTrainingRuntime"),
}


def validated_as_template(tpl: PodTemplate) -> bool:
    """The API server validates this pod template as written (a Deployment's, a Job's...), not only
    the pods made from it."""
    return tpl.obj.kind in _TEMPLATE_VALIDATED.get(tpl.obj.group, ())


def accelerators(tpl: PodTemplate) -> dict[str, Any]:
    """``accelerator_requests(tpl.spec)`` and the GPUs its DRA claims hold (counted as the device
    plugin's resource: a claimed ``gpu.nvidia.com`` device is one ``nvidia.com/gpu``), computed once
    per template (do not mutate). A claim with ``allocationMode: All`` adds the resource with 0
    here; :func:`counts_on` counts it as the node's number of devices. Claimed MIG partitions of a
    known profile count as a Fraction of a GPU (int otherwise), and so does a device plugin's MIG name
    (``nvidia.com/mig-1g.12gb``) a MIG DeviceClass serves as a DRA extended resource."""
    found = tpl.cache.get("accelerator_requests")
    if found is None:
        found = accelerator_requests(tpl.spec)
        devices = template_devices(tpl)
        if devices is not None and devices.counts:
            # (a MIG name a DRA DeviceClass serves is counted there, as its class's claim)
            found = {r: n for r, n in found.items() if r not in devices.served}
            for resource, n in devices.counts.items():
                total = found.get(resource, 0) + n  # MIG partitions claimed: a fraction of a GPU
                found[resource] = total.numerator if total.denominator == 1 else total
        tpl.cache["accelerator_requests"] = found
    return found


def counts_on(
    tpl: PodTemplate,
    accel: dict[str, Any],
    gpu_resource: str,
    gpus: int,
    model: str | None = None,
    fewest: bool = False,
) -> dict[str, Any]:
    """``accel`` on a node with ``gpus`` devices of ``gpu_resource`` (of GPU ``model``): a DRA claim
    with ``allocationMode: All`` gets every one of them, GPUs of a class with no vendor resource
    (``ANY_GPU``) are that node's GPUs, MIG partitions whose profile does not tell their GPU take
    their share of the model's compute slices, a ``firstAvailable`` request of GPUs is its largest
    alternative the node can hold, and Neuron cores and devices are counted in the node's Neuron
    resource (``neuron_on_node``; ``fewest``: the fewest they may be there)."""
    if gpu_resource in NEURON_RESOURCES:
        accel = neuron_on_node(accel, gpu_resource, model, fewest)
    devices = template_devices(tpl)
    if devices is None:
        return accel
    out = devices.on_model(accel, gpu_resource, model) if model else accel
    if ANY_GPU in accel:
        out = {r: n for r, n in out.items() if r != ANY_GPU}
        out[gpu_resource] = out.get(gpu_resource, 0) + accel[ANY_GPU]
    if devices.alternatives:
        out = devices.most_on(out, gpu_resource, gpus)
    if gpu_resource in devices.all_of or ANY_GPU in devices.all_of:
        # (a shared ResourceClaim of them all: each of the pods sharing it holds its part)
        part = devices.all_part.get(gpu_resource, devices.all_part.get(ANY_GPU, 1))
        out = {**out, gpu_resource: out.get(gpu_resource, 0) + gpus * part}
    return out


def counted_at_most(tpl: PodTemplate) -> bool:
    """Some of the template's claimed devices are counted at the most they can be (MIG devices of no
    named profile, each as a whole GPU; ``firstAvailable`` alternatives, as the largest)."""
    devices = template_devices(tpl)
    return devices is not None and bool(devices.upper or devices.alternatives)


def share_assumed_on(tpl: PodTemplate, model: str | None) -> bool:
    """On a node of GPU ``model``, some claimed MIG partition's share is assumed (the largest it can be)."""
    devices = template_devices(tpl)
    return devices is not None and devices.assumes_on(model)


_placeholder_accelerators = template_placeholders  # computed once per template (do not mutate)


def uncounted_accelerators(tpl: PodTemplate) -> str | None:
    """Why the template's accelerator count is not known (an unrendered placeholder, DRA devices of
    classes no node counts, alternatives), or None."""
    placeholders = _placeholder_accelerators(tpl)
    devices = template_devices(tpl)
    if not placeholders and (devices is None or not devices.uncounted):
        return None
    why = [f"the {name} count is an unrendered placeholder" for name in placeholders]
    return "; ".join(why + (devices.uncounted if devices is not None else []))


@cache
def param_fraction(value: Any) -> Fraction:
    """A numeric rule parameter as an exact fraction (``0.1`` is 1/10), parsed once."""
    return Fraction(str(value))


def signals_of(c: ContainerView, tpl: PodTemplate) -> list:
    """``container_signals(c.data)``, computed once per container for all rules (do not mutate); a
    container that names a claim of the pod's DRA TPUs holds TPUs (its model parallel degrees are one
    process there, as with ``google.com/tpu``)."""
    found = c.cache.get("signals")
    if found is None:
        found = c.cache["signals"] = container_signals(c.data, _claims_tpus(c, tpl))
    return found


def _claims_tpus(c: ContainerView, tpl: PodTemplate) -> bool:
    if not c.resources.get("claims") or not tpl.spec.get("resourceClaims"):
        return False
    devices = template_devices(tpl)
    return devices is not None and "google.com/tpu" in devices.held


def template_signals(tpl: PodTemplate) -> list:
    """The workload-level signals that apply to ``tpl``, computed once per template."""
    found = tpl.cache.get("signals")
    if found is None:
        found = tpl.cache["signals"] = signals_for_template(tpl.obj.data, tpl.path)
    return found
