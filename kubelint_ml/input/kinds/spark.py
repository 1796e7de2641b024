"""Spark operator (``sparkoperator.k8s.io/v1beta2`` SparkApplication and ScheduledSparkApplication; kubeflow/spark-operator
v2.5 (38082f33), ``api/v1beta2``, ``internal/controller/sparkapplication``): the driver's and executors' pods with
the resources the operator computes from ``cores``, ``coreLimit``, ``memory``, ``memoryOverhead`` and
``gpu``, and the custom resources (GPUs) ``sparkConf`` asks for as Spark on Kubernetes makes them; a
role's ``template`` (spark-operator v2, given to Spark as ``spark.kubernetes.<role>.podTemplateFile``)
is the pod Spark builds on (``KubernetesDriverBuilder``/``KubernetesExecutorBuilder``: the template's
first container is the role's, its cpu and memory Spark's own, its other resources kept)."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, listed, none
from kubelint_ml.input.objects import K8sObject, dig

_SPARK_MB = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _jvm_mib(text: Any) -> float | None:
    """A JVM memory string ("512m", "4g", "1024") in MiB (no suffix: MiB, as spark.driver.memory)."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    t = str(text).strip().lower().removesuffix("b")
    unit = t[-1:] if t[-1:] in _SPARK_MB else "m"
    digits = t[:-1] if t[-1:] in _SPARK_MB else t
    if not digits.isdigit():
        return None
    return int(digits) * _SPARK_MB[unit]


def _conf_resources(conf: Any, role: str) -> list[tuple[str, Any, str]]:
    """(resource, amount, key) of the custom resources ``sparkConf`` asks for the role: Spark on
    Kubernetes makes ``spark.<role>.resource.<name>.amount`` with ``...<name>.vendor`` a limit of
    ``<vendor>/<name>`` (``KubernetesUtils.buildResourcesQuantities``; without a vendor Spark refuses
    to start). The amount as written, a whole number (Spark reads it as a Long)."""
    if not isinstance(conf, dict):
        return []
    prefix = f"spark.{role}.resource."
    out = []
    for key, amount in conf.items():
        if not (isinstance(key, str) and key.startswith(prefix) and key.endswith(".amount")):
            continue
        name = key[len(prefix) : -len(".amount")]
        vendor = conf.get(f"{prefix}{name}.vendor")
        if not name or "." in name or not isinstance(vendor, str) or not vendor:
            continue
        if isinstance(amount, str) and amount.strip().isdigit():
            amount = int(amount.strip())
        if isinstance(amount, int) and not isinstance(amount, bool):
            out.append((f"{vendor}/{name}", amount, key))
    return out


def _spark_role(obj: K8sObject, role: str, base: tuple = ("spec",)) -> Pod | None:
    """The ``role`` pod of the SparkApplicationSpec at ``base`` (a ScheduledSparkApplication's ``spec.template``)."""
    path = base + (role,)
    node = dig(obj.data, *path)
    if not isinstance(node, dict):
        return None
    found: Any = dig(obj.data, *base)
    spec: Any = found if isinstance(found, dict) else {}
    requests: dict = {}
    limits: dict = {}
    renames: list[tuple[tuple, tuple]] = []
    cores = node.get("cores", 1)
    if isinstance(cores, (int, float)) and not isinstance(cores, bool):
        requests["cpu"] = str(cores)
        renames.append((path + ("resources", "requests", "cpu"), path + ("cores",)))
    # spark.kubernetes.<role>.request.cores, which Spark's pod request takes over <role>.cores
    # (BasicDriverFeatureStep, BasicExecutorFeatureStep; the operator's coreRequest for either role)
    if node.get("coreRequest") is not None:
        requests["cpu"] = node["coreRequest"]
        renames.append((path + ("resources", "requests", "cpu"), path + ("coreRequest",)))
    if isinstance(node.get("coreLimit"), str):
        limits["cpu"] = node["coreLimit"]
        renames.append((path + ("resources", "limits", "cpu"), path + ("coreLimit",)))
    memory = _jvm_mib(node.get("memory", "1g"))
    if memory is not None:
        overhead = _jvm_mib(node.get("memoryOverhead")) if node.get("memoryOverhead") is not None else None
        if overhead is None:
            non_jvm = spec.get("type") in ("Python", "R")
            factor = spec.get("memoryOverheadFactor")
            try:
                f = float(factor) if factor is not None else (0.4 if non_jvm else 0.1)
            except (TypeError, ValueError):
                f = 0.1
            overhead = max(384.0, memory * f)
        total = f"{int(memory + overhead)}Mi"
        requests["memory"] = limits["memory"] = total
        for part in ("requests", "limits"):
            renames.append((path + ("resources", part, "memory"), path + ("memory",)))
    gpu = node.get("gpu")
    if isinstance(gpu, dict) and isinstance(gpu.get("name"), str):
        limits[gpu["name"]] = gpu.get("quantity", 1)
        renames.append((path + ("resources", "limits", gpu["name"]), path + ("gpu",)))
    for resource, amount, key in _conf_resources(spec.get("sparkConf"), role):
        if resource not in limits:
            limits[resource] = amount
            renames.append((path + ("resources", "limits", resource), base + ("sparkConf", key)))
    # The role's pod template (`template`, spark-operator v2): Spark builds the pod from it
    # (spark.kubernetes.<role>.podTemplateFile), its first container the role's, whose cpu and memory
    # Spark sets and whose other resources (a GPU) it keeps; the role's own fields are laid over it.
    tpl_spec, tpl_meta, tpl_main, tpl_sidecars = _role_template(node)
    tpl_path = path + ("template", "spec")
    container = {k: v for k, v in tpl_main.items() if k not in ("name", "resources")}
    for key in container:
        renames.append((path + (key,), tpl_path + ("containers", 0, key)))
    for part, values in (("requests", requests), ("limits", limits)):
        own = dig(tpl_main, "resources", part)
        for name, value in own.items() if isinstance(own, dict) else ():
            # Spark sets memory, the cpu request and (with coreLimit) the cpu limit over the template's
            # (BasicExecutorFeatureStep, BasicDriverFeatureStep: editOrNewResources().addTo...)
            if name != "memory" and (name != "cpu" or part == "limits") and name not in values:
                values[name] = value
                renames.append(
                    (path + ("resources", part, name), tpl_path + ("containers", 0, "resources", part, name))
                )
    container.update(
        {k: v for k, v in node.items() if k in ("image", "env", "envFrom", "volumeMounts", "securityContext")}
    )
    container["name"] = "spark-kubernetes-driver" if role == "driver" else "executor"
    container.setdefault("image", spec.get("image") or "spark")
    container["resources"] = {"requests": requests, "limits": limits}
    pod = {k: v for k, v in tpl_spec.items() if k not in ("containers", "initContainers", "volumes")}
    for key in pod:
        renames.append((path + (key,), tpl_path + (key,)))
    for k in ("nodeSelector", "affinity", "tolerations", "schedulerName", "priorityClassName"):
        if k not in node:
            continue
        if k == "nodeSelector" and isinstance(pod.get(k), dict) and isinstance(node[k], dict):
            pod[k] = {**pod[k], **node[k]}  # the operator adds the role's selector to the template's
        elif k == "tolerations" and isinstance(pod.get(k), list) and isinstance(node[k], list):
            pod[k] = [*pod[k], *node[k]]
        else:
            pod[k] = node[k]
            renames.append((path + (k,), path + (k,)))
    if "priorityClassName" not in pod and isinstance(dig(spec, "batchSchedulerOptions", "priorityClassName"), str):
        pod["priorityClassName"] = spec["batchSchedulerOptions"]["priorityClassName"]
        renames.append((path + ("priorityClassName",), base + ("batchSchedulerOptions", "priorityClassName")))
    renames.append((path + ("metadata",), path))
    replicas = integer(node.get("instances"), 1) if role == "executor" else 1
    labels, annotations = (_merged_map(tpl_meta.get(k), node.get(k)) for k in ("labels", "annotations"))
    out = Pod(
        path,
        pod,
        role,
        replicas,
        [(container, path), *((c, tpl_path + ("containers", i)) for i, c in tpl_sidecars)],
        init=listed(tpl_spec.get("initContainers"), tpl_path + ("initContainers",))
        + listed(node.get("initContainers"), path + ("initContainers",)),
        volumes=listed(tpl_spec.get("volumes"), tpl_path + ("volumes",))
        + listed(spec.get("volumes"), base + ("volumes",)),
        metadata={"labels": labels, "annotations": annotations},
        renames=renames,
        fix_note="the Spark operator builds the pod's resources from cores, coreLimit, memory, memoryOverhead, "
        "gpu and sparkConf's spark.<role>.resource.*: change those",
    )
    # The role's pod template and the application's volumes are native pod fields Spark keeps as written:
    # a fix of them alone (a sidecar's memory, a disk emptyDir's sizeLimit) is the user's edit.
    out.cache["fixable"] = (tpl_path, base + ("volumes",))
    return out


def _merged_map(template: Any, own: Any) -> Any:
    """The role's labels or annotations over the template's (either may be unset)."""
    if isinstance(template, dict) and isinstance(own, dict):
        return {**template, **own}
    return own if own is not None else template


def _role_template(node: dict) -> tuple[dict, dict, dict, list[tuple[int, Any]]]:
    """A role's ``template`` (a PodTemplateSpec): its pod spec, metadata, first container (the one
    Spark makes the driver's or executor's) and the others with their index; empty where unset."""
    template = node.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return {}, {}, {}, []
    spec, meta = template["spec"], template.get("metadata")
    containers = spec.get("containers")
    items = list(enumerate(containers)) if isinstance(containers, list) else []
    main = items[0][1] if items and isinstance(items[0][1], dict) else {}
    return spec, meta if isinstance(meta, dict) else {}, main, items[1:]


def _spark(obj: K8sObject, base: tuple = ("spec",)) -> list[Pod]:
    return [t for t in (_spark_role(obj, "driver", base), _spark_role(obj, "executor", base)) if t is not None]


def _scheduled_spark(obj: K8sObject) -> list[Pod]:
    """A ScheduledSparkApplication: each run is a SparkApplication of its ``spec.template``."""
    return _spark(obj, ("spec", "template"))


def _connect_server(obj: K8sObject) -> Pod | None:
    """A SparkConnect's server pod: its ``server.template`` as written (the controller's
    ``mutateServerPod`` takes the template's spec, finds the ``spark-kubernetes-driver`` container,
    else the first, else adds one, and sets only its image where empty, its command and probes);
    ``server.cores`` and ``memory`` are the in-process driver's Spark settings, not the pod's."""
    path = ("spec", "server")
    node = dig(obj.data, *path)
    if not isinstance(node, dict):
        return None
    tpl_spec, tpl_meta, _, _ = _role_template(node)
    tpl_path = path + ("template", "spec")
    containers = listed(tpl_spec.get("containers"), tpl_path + ("containers",))
    image = dig(obj.data, "spec", "image") or "spark"
    if not containers:
        containers = [({"name": "spark-kubernetes-driver", "image": image}, path)]
    else:
        main = next((i for i, (c, _) in enumerate(containers) if dig(c, "name") == "spark-kubernetes-driver"), 0)
        c, cpath = containers[main]
        if isinstance(c, dict) and not c.get("image"):
            containers[main] = ({**c, "image": image}, cpath)
    pod = {k: v for k, v in tpl_spec.items() if k not in ("containers", "initContainers", "volumes")}
    return Pod(
        tpl_path,
        pod,
        "server",
        1,
        containers,
        init=listed(tpl_spec.get("initContainers"), tpl_path + ("initContainers",)),
        volumes=listed(tpl_spec.get("volumes"), tpl_path + ("volumes",)),
        metadata={k: tpl_meta.get(k) for k in ("labels", "annotations")},
        renames=[(tpl_path + ("metadata",), path + ("template", "metadata"))],
    )


def _spark_connect(obj: K8sObject) -> list[Pod]:
    """A SparkConnect (``sparkoperator.k8s.io/v1alpha1``; kubeflow/spark-operator
    ``internal/controller/sparkconnect``): the server pod, and the executors Spark starts from
    ``executor`` as it does a SparkApplication's (``spark.executor.cores``/``memory`` and the
    executor pod template file the controller writes from ``executor.template``)."""
    return [t for t in (_connect_server(obj), _spark_role(obj, "executor")) if t is not None]


KINDS: dict[tuple[str, str], KindInfo] = {
    ("sparkoperator.k8s.io", "SparkApplication"): KindInfo(none, False, _spark),
    ("sparkoperator.k8s.io", "ScheduledSparkApplication"): KindInfo(none, False, _scheduled_spark),
    ("sparkoperator.k8s.io", "SparkConnect"): KindInfo(none, False, _spark_connect),
}
