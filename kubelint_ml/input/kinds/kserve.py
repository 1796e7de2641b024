"""KServe (``serving.kserve.io``; kserve/kserve v0.15, ``pkg/apis/serving/v1beta1``, ``v1alpha1``):
InferenceService components, ServingRuntime and ClusterServingRuntime, LLMInferenceService. What is
modelled, kind by kind, is in docs/kinds.md."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, listed, none, pod_spec_at, with_resources
from kubelint_ml.input.objects import K8sObject, dig

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


def _kserve_component(obj: K8sObject, path: tuple, role: str) -> Pod | None:
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
                data = with_resources(data, KSERVE_REQUESTS, KSERVE_LIMITS)
                defaulted = True
            containers.append((data, path + (fw,)))
            break
    for i, c in enumerate(comp.get("containers") or [] if isinstance(comp.get("containers"), list) else []):
        if i == 0 and not containers and isinstance(c, dict):
            c = with_resources(c, KSERVE_REQUESTS, KSERVE_LIMITS)
            defaulted = True
        containers.append((c, path + ("containers", i)))
    if not containers:
        return None
    spec = {k: v for k, v in comp.items() if k not in KSERVE_FRAMEWORKS}
    replicas = integer(comp.get("minReplicas"), 1)
    tpl = Pod(
        path,
        spec,
        role,
        replicas,
        containers,
        init=listed(comp.get("initContainers"), path + ("initContainers",)),
        volumes=listed(comp.get("volumes"), path + ("volumes",)),
        metadata={"labels": comp.get("labels"), "annotations": comp.get("annotations")},
        renames=[(path + ("metadata",), path)],
    )
    if defaulted:
        tpl.cache["defaults"] = "KServe's webhook sets the inferenceservice-config resource defaults"
    return tpl


def _inference_service(obj: K8sObject) -> list[Pod]:
    out = []
    for comp in ("predictor", "transformer", "explainer"):
        tpl = _kserve_component(obj, ("spec", comp), comp)
        if tpl is not None:
            out.append(tpl)
    return out


def _serving_runtime(obj: K8sObject) -> list[Pod]:
    out = [
        pod_spec_at(obj, ("spec",), "", 1, shared=True),
        pod_spec_at(obj, ("spec", "workerSpec"), "worker", None, shared=True),
    ]
    return [t for t in out if t is not None and t.has_containers]


def _llm_inference_service(obj: K8sObject) -> list[Pod]:
    replicas = integer(dig(obj.data, "spec", "replicas"), 1)
    prefill = integer(dig(obj.data, "spec", "prefill", "replicas"), 1)
    out = [
        pod_spec_at(obj, ("spec", "template"), "decode" if dig(obj.data, "spec", "prefill") else "", replicas),
        pod_spec_at(obj, ("spec", "worker"), "worker", None),
        pod_spec_at(obj, ("spec", "prefill", "template"), "prefill", prefill),
        pod_spec_at(obj, ("spec", "prefill", "worker"), "prefill-worker", None),
    ]
    return [t for t in out if t is not None and t.has_containers]


KINDS: dict[tuple[str, str], KindInfo] = {
    ("serving.kserve.io", "InferenceService"): KindInfo(none, False, _inference_service),
    ("serving.kserve.io", "ServingRuntime"): KindInfo(none, False, _serving_runtime),
    ("serving.kserve.io", "ClusterServingRuntime"): KindInfo(none, False, _serving_runtime),
    ("serving.kserve.io", "LLMInferenceService"): KindInfo(none, False, _llm_inference_service),
    ("serving.kserve.io", "LLMInferenceServiceConfig"): KindInfo(none, False, _llm_inference_service),
}
